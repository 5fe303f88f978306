//! python.run through `Toolbox::call`: consent by default, a sandboxed run when allowed, its
//! output scrubbed and untainted, and an honest refusal (or, by the owner's word, an
//! unsandboxed run) on a machine that lacks a wall.

mod builtin_support;

use std::path::Path;
use std::sync::Arc;

use seam_gate::tools::PythonRun;
use seam_gate::{CallRequest, GovernedTool, NoLedger, Toolbox};
use seam_policy::{Policy, PolicyEnv};
use seam_protocol::{Answer, RefusalCode};
use seam_sandbox::Sandbox;
use seam_scrub::Scrubber;
use serde_json::{Value, json};

const TOKEN: &str = "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";

fn policy(dir: &Path, text: &str) -> Arc<Policy> {
    builtin_support::policy_of(dir, text)
}

fn toolbox_with(policy: Arc<Policy>, tool: PythonRun) -> Toolbox {
    let tools: Vec<Box<dyn GovernedTool>> = vec![Box::new(tool)];
    Toolbox::with_tools(policy, Arc::new(Scrubber::new()), Arc::new(NoLedger), tools).unwrap()
}

fn toolbox(policy: Arc<Policy>) -> Toolbox {
    let tool = PythonRun::new(&policy);
    toolbox_with(policy, tool)
}

fn call(tb: &Toolbox, params: Value) -> Answer {
    tb.call(CallRequest {
        tool: "python.run".into(),
        params,
        turn: Some("t".into()),
    })
    .unwrap()
}

const ALLOW: &str = "[capabilities]\n\"python.run\" = \"allow\"\n";

#[test]
fn by_default_python_run_asks_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let tb = toolbox(policy(dir.path(), ""));
    let code = format!("open({:?}, 'w').write('x')", marker.display().to_string());
    match call(&tb, json!({ "code": code })) {
        Answer::Refusal(r) => assert_eq!(r.refused.code, RefusalCode::ConsentRequired),
        Answer::Envelope(e) => panic!("ran without consent: {:?}", e.output),
    }
    assert!(!marker.exists());
}

#[test]
fn an_allowed_run_is_sandboxed_untainted_and_scrubbed() {
    let dir = tempfile::tempdir().unwrap();
    let tb = toolbox(policy(dir.path(), ALLOW));
    let code =
        format!("import sys\nprint(sys.stdin.read(), open('in.txt').read())\nprint('{TOKEN}')");
    let answer = call(
        &tb,
        json!({
            "code": code,
            "stdin": "from stdin",
            "timeout_s": 5,
            "scratch_files": [{"name": "in.txt", "text": "from a file"}],
        }),
    );
    let Answer::Envelope(env) = answer else {
        panic!("{answer:?}")
    };
    let out = &env.output;
    assert_eq!(out["exit_code"], 0, "{out}");
    assert_eq!(out["sandboxed"], true);
    assert_eq!(out["timed_out"], false);
    assert_eq!(out["limit_hit"], json!([]));
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("from stdin from a file\n"), "{stdout}");
    assert!(
        !stdout.contains(TOKEN),
        "the output was not scrubbed: {stdout}"
    );
    assert!(!env.scrubbed.is_empty());
    assert!(!env.tainted, "a sandboxed run does not taint");
    assert!(!tb.is_tainted("t"));
}

#[test]
fn a_timeout_beyond_the_cap_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let tb = toolbox(policy(dir.path(), ALLOW));
    match call(&tb, json!({"code": "print(1)", "timeout_s": 3600})) {
        Answer::Refusal(r) => assert_eq!(r.refused.code, RefusalCode::InvalidParams),
        Answer::Envelope(e) => panic!("{:?}", e.output),
    }
    match call(
        &tb,
        json!({"code": "print(1)", "scratch_files": [{"name": "../x", "text": ""}]}),
    ) {
        Answer::Refusal(r) => {
            assert_eq!(r.refused.code, RefusalCode::InvalidParams);
            assert!(r.refused.message.contains("../x"), "{}", r.refused.message);
        }
        Answer::Envelope(e) => panic!("{:?}", e.output),
    }
}

/// This machine's sandbox with Landlock marked missing: what a machine without it sees.
fn sandbox_without_landlock() -> &'static Sandbox {
    let mut probe = Sandbox::shared().protections().clone();
    let landlock = probe
        .list
        .iter_mut()
        .find(|p| p.name == "Landlock (filesystem)")
        .unwrap();
    landlock.active = false;
    landlock.detail = "marked missing by the test".into();
    Box::leak(Box::new(Sandbox::from_protections(probe)))
}

#[test]
fn a_missing_wall_is_a_refusal_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let p = policy(dir.path(), ALLOW);
    let tool = PythonRun::with_sandbox(&p, sandbox_without_landlock());
    assert!(!tool.decl().egress && !tool.decl().taints);
    let tb = toolbox_with(p, tool);
    let code = format!("open({:?}, 'w').write('x')", marker.display().to_string());
    match call(&tb, json!({ "code": code })) {
        Answer::Refusal(r) => {
            assert_eq!(r.refused.code, RefusalCode::ToolFailed);
            assert!(
                r.refused
                    .message
                    .contains("Landlock (filesystem) is unavailable"),
                "{}",
                r.refused.message
            );
            assert!(r.refused.message.contains("allow-unsandboxed"));
        }
        Answer::Envelope(e) => panic!("ran without a wall: {:?}", e.output),
    }
    assert!(!marker.exists());
}

#[test]
fn allow_unsandboxed_runs_without_the_wall_and_governs_it_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let p = policy(
        dir.path(),
        "[capabilities]\n\"python.run\" = \"allow-unsandboxed\"\n",
    );
    let tool = PythonRun::with_sandbox(&p, sandbox_without_landlock());
    assert!(tool.decl().taints && tool.decl().egress);
    let tb = toolbox_with(p, tool);
    let Answer::Envelope(env) = call(&tb, json!({"code": "print(6 * 7)", "timeout_s": 5})) else {
        panic!("refused")
    };
    assert_eq!(env.output["stdout"], "42\n");
    assert_eq!(env.output["sandboxed"], false);
    assert!(
        env.output["unsandboxed_because"]
            .as_str()
            .unwrap()
            .contains("Landlock (filesystem)")
    );
    assert!(
        env.tainted,
        "an unsandboxed run could read the owner's files"
    );
}

// ---- the owner's files the code names ----

/// A throwaway owner: a home with the workspace inside it (the default read allow-list is the
/// home), python.run allowed.
struct Owner {
    dir: tempfile::TempDir,
}

impl Owner {
    fn new() -> Owner {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home/ws/data")).unwrap();
        Owner { dir }
    }

    fn home(&self) -> std::path::PathBuf {
        self.dir.path().join("home")
    }

    fn ws(&self) -> std::path::PathBuf {
        self.home().join("ws")
    }

    fn write(&self, rel_to_home: &str, text: &[u8]) -> std::path::PathBuf {
        let p = self.home().join(rel_to_home);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn policy(&self) -> Arc<Policy> {
        let env = PolicyEnv {
            owner_home: self.home(),
            seam_home: self.dir.path().join("seam"),
            workspace_root: self.ws(),
        };
        Arc::new(Policy::from_toml_str(ALLOW, Path::new("p.toml"), env).unwrap())
    }

    fn toolbox(&self) -> Toolbox {
        let p = self.policy();
        let tools: Vec<Box<dyn GovernedTool>> = vec![
            Box::new(PythonRun::new(&p)),
            Box::new(seam_gate::tools::FilesRead::new(1 << 20)),
        ];
        Toolbox::with_tools(p, Arc::new(Scrubber::new()), Arc::new(NoLedger), tools).unwrap()
    }
}

fn ran(answer: Answer) -> seam_protocol::Envelope {
    match answer {
        Answer::Envelope(env) => {
            assert_eq!(env.output["sandboxed"], true, "{}", env.output);
            env
        }
        Answer::Refusal(r) => panic!("refused: {:?}", r.refused),
    }
}

fn note(env: &seam_protocol::Envelope) -> &str {
    env.output["note"].as_str().unwrap_or_default()
}

const CSV: &str = "name,amount\na,1.5\nb,2\nc,3.25\n";
const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- seam-test-key-body";

#[test]
fn a_csv_named_in_the_code_is_summed_and_the_turn_is_tainted() {
    let o = Owner::new();
    let csv = o.write("ws/data/runs.csv", CSV.as_bytes());
    let tb = o.toolbox();
    let code = "import csv\n\
                print(sum(float(r['amount']) for r in csv.DictReader(open('data/runs.csv'))))";
    let env = ran(call(&tb, json!({ "code": code })));
    assert_eq!(env.output["stdout"], "6.75\n", "{}", env.output);
    let shown = &env.output["owner_files"][0];
    assert_eq!(shown["name"], "data/runs.csv");
    assert_eq!(
        shown["path"],
        csv.canonicalize().unwrap().display().to_string()
    );
    assert_eq!(shown["inside"], "/scratch/data/runs.csv");
    assert_eq!(shown["bytes"], CSV.len());
    assert!(env.tainted, "a run shown the owner's file taints");
    assert!(tb.is_tainted("t"));
}

#[test]
fn only_a_call_given_an_owner_file_taints_the_turn() {
    let o = Owner::new();
    o.write("ws/data.csv", b"the owner's");
    o.write("ws/amount", b"not a name the scan asks about");
    let tb = o.toolbox();
    // literals that are no file names, and a scratch file that shadows an owner file
    let code = "print('%.2f' % 2, 'amount', open('data.csv').read(), 'n/a', 'x/../data.csv')";
    let env = ran(call(
        &tb,
        json!({"code": code, "scratch_files": [{"name": "data.csv", "text": "the model's"}]}),
    ));
    assert_eq!(
        env.output["stdout"], "2.00 amount the model's n/a x/../data.csv\n",
        "{}",
        env.output
    );
    assert!(env.output.get("owner_files").is_none(), "{}", env.output);
    assert!(env.output.get("note").is_none(), "{}", env.output);
    assert!(!env.tainted && !tb.is_tainted("t"));
    // the same turn, now shown one of the owner's files
    let env = ran(call(&tb, json!({"code": "print(open('data.csv').read())"})));
    assert_eq!(env.output["stdout"], "the owner's\n", "{}", env.output);
    assert!(env.tainted && tb.is_tainted("t"));
}

#[test]
fn a_key_named_by_a_home_literal_is_not_there_and_the_note_names_it() {
    let o = Owner::new();
    let key = o.write(".ssh/id_ed25519", KEY.as_bytes());
    let tb = o.toolbox();
    let code = "import os\n\
                for name in [os.path.expanduser('~/.ssh/id_ed25519'), '~/.ssh/id_ed25519']:\n\
                \x20   try:\n\
                \x20       print(open(name).read())\n\
                \x20   except OSError as e:\n\
                \x20       print('missing', type(e).__name__)\n";
    let env = ran(call(&tb, json!({ "code": code })));
    let stdout = env.output["stdout"].as_str().unwrap();
    assert!(!stdout.contains("seam-test-key-body"), "{stdout}");
    // The home literal leads to the sandbox's home, where a stand-in line is; the same
    // name opened as written (a directory called `~`, which Python does not expand) leads
    // to the same line.
    assert_eq!(
        stdout,
        "[seam: ~/.ssh/id_ed25519 is withheld (protected); python.run is never shown it]\n\n\
         [seam: ~/.ssh/id_ed25519 is withheld (protected); python.run is never shown it]\n\n",
        "{}",
        env.output
    );
    let note = note(&env);
    assert!(
        note.contains("~/.ssh/id_ed25519 was not made available (protected)"),
        "{note}"
    );
    assert!(note.contains(&key.display().to_string()), "{note}");
    assert!(env.output.get("owner_files").is_none());
    assert!(!env.tainted, "nothing of the owner's entered the sandbox");
}

#[test]
fn a_home_literal_opened_as_written_reads_the_file_and_a_key_there_reads_the_stand_in() {
    let o = Owner::new();
    o.write("ws/data/runs.csv", CSV.as_bytes());
    o.write(".ssh/id_ed25519", KEY.as_bytes());
    let tb = o.toolbox();
    // `~/ws/...`: the workspace is the owner's home's `ws`; the literal is opened as
    // written, with no expanduser, and then by the expanded name.
    let code = "import csv, os\n\
                rows = list(csv.DictReader(open('~/ws/data/runs.csv')))\n\
                print(sum(float(r['amount']) for r in rows))\n\
                print(open(os.path.expanduser('~/ws/data/runs.csv')).read() == open('~/ws/data/runs.csv').read())\n\
                print(open('~/.ssh/id_ed25519').read())\n\
                print(sum(i * i for i in range(1, 101)))";
    let env = ran(call(&tb, json!({ "code": code })));
    let stdout = env.output["stdout"].as_str().unwrap();
    assert!(!stdout.contains("seam-test-key-body"), "{stdout}");
    assert_eq!(
        stdout,
        "6.75\nTrue\n[seam: ~/.ssh/id_ed25519 is withheld (protected); python.run is never \
         shown it]\n\n338350\n",
        "{}",
        env.output
    );
    // One file shown, listed once.
    assert_eq!(env.output["owner_files"].as_array().map(Vec::len), Some(1));
    assert!(
        !serde_json::to_string(&env.output)
            .unwrap()
            .contains("seam-test-key-body")
    );
}

#[test]
fn a_refused_file_is_a_stand_in_line_and_the_rest_of_the_code_runs() {
    let o = Owner::new();
    o.write(".ssh/id_rsa", KEY.as_bytes());
    let tb = o.toolbox();
    let code = "import os\nwith open(os.path.expanduser('~/.ssh/id_rsa')) as f:\n    \
                print(f.read())\nprint(7**23)";
    let env = ran(call(&tb, json!({ "code": code })));
    assert_eq!(env.output["exit_code"], 0, "{}", env.output);
    let stdout = env.output["stdout"].as_str().unwrap();
    assert!(
        stdout.starts_with("[seam: ~/.ssh/id_rsa is withheld (protected)"),
        "{stdout}"
    );
    assert!(stdout.ends_with("27368747340080916343\n"), "{stdout}");
    assert!(!stdout.contains("seam-test-key-body"), "{stdout}");
    assert!(note(&env).contains("the code read a one-line stand-in in its place"));
    assert!(env.output.get("owner_files").is_none(), "{}", env.output);
    assert!(!env.tainted, "nothing of the owner's entered the sandbox");

    // A stand-in never takes the place of what else the run is shown: a scratch file
    // below the refused name's place keeps the call whole, and the stand-in is left out.
    let code = "import os\np = os.path.expanduser('~/.ssh/id_rsa')\nprint(os.path.isdir(p))\n\
                print(open(os.path.join(p, 'x.txt')).read())";
    let env = ran(call(
        &tb,
        json!({"code": code, "scratch_files": [{"name": ".ssh/id_rsa/x.txt", "text": "mine"}]}),
    ));
    assert_eq!(env.output["stdout"], "True\nmine\n", "{}", env.output);
}

#[test]
fn a_link_in_the_workspace_to_a_protected_file_is_refused_naming_the_real_file() {
    let o = Owner::new();
    let key = o.write(".ssh/id_ed25519", KEY.as_bytes());
    std::fs::create_dir_all(o.ws().join("notes")).unwrap();
    std::os::unix::fs::symlink(&key, o.ws().join("notes/key.md")).unwrap();
    let tb = o.toolbox();
    let code =
        "try:\n    print(open('notes/key.md').read())\nexcept OSError:\n    print('missing')";
    let env = ran(call(&tb, json!({ "code": code })));
    assert_eq!(
        env.output["stdout"],
        "[seam: notes/key.md is withheld (protected); python.run is never shown it]\n\n",
        "{}",
        env.output
    );
    let note = note(&env);
    assert!(
        note.starts_with("notes/key.md was not made available (protected)"),
        "{note}"
    );
    assert!(note.contains(&key.display().to_string()), "{note}");
    assert!(!env.tainted);
}

#[test]
fn an_owner_file_is_read_only_inside_and_unchanged_outside() {
    let o = Owner::new();
    let csv = o.write("ws/data/runs.csv", CSV.as_bytes());
    let abs = o.write("notes/a.md", b"a note");
    let tb = o.toolbox();
    let code = format!(
        "import os\n\
         for name in ['data/runs.csv', {abs:?}]:\n\
         \x20   try:\n\
         \x20       open(name, 'a').write('changed')\n\
         \x20       print('wrote', name)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', e.errno)\n\
         print(open({abs:?}).read())\n",
        abs = abs.display().to_string()
    );
    let env = ran(call(&tb, json!({ "code": code })));
    let stdout = env.output["stdout"].as_str().unwrap();
    assert_eq!(stdout.matches("refused").count(), 2, "{}", env.output);
    assert!(!stdout.contains("wrote"), "{stdout}");
    assert!(stdout.ends_with("a note\n"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), CSV);
    assert_eq!(std::fs::read_to_string(&abs).unwrap(), "a note");
    assert_eq!(env.output["owner_files"].as_array().unwrap().len(), 2);
    assert!(env.tainted);
}

#[test]
fn a_path_through_dot_dot_is_normalised_and_admitted_or_refused_like_files_read() {
    let o = Owner::new();
    o.write("ws/data/runs.csv", CSV.as_bytes());
    let key = o.write(".ssh/id_ed25519", KEY.as_bytes());
    let tb = o.toolbox();
    let code = "import csv\n\
                print(sum(float(r['amount']) for r in csv.DictReader(open('notes/../data/./runs.csv'))))\n\
                print(open('../.ssh/id_ed25519').read().startswith('[seam: ../.ssh/id_ed25519 is withheld'))\n";
    let env = ran(call(&tb, json!({ "code": code })));
    // the refused name opens its stand-in line, never the key
    assert_eq!(env.output["stdout"], "6.75\nTrue\n", "{}", env.output);
    assert_eq!(
        env.output["owner_files"][0]["inside"],
        "/scratch/data/runs.csv"
    );
    // the same refusal files.read gives for the same name
    let Answer::Refusal(r) = tb
        .call(CallRequest {
            tool: "files.read".into(),
            params: json!({"path": "../.ssh/id_ed25519"}),
            turn: Some("u".into()),
        })
        .unwrap()
    else {
        panic!("files.read read the key")
    };
    assert_eq!(r.refused.code, RefusalCode::Protected);
    let note = note(&env);
    assert!(
        note.contains(&format!(
            "../.ssh/id_ed25519 was not made available (protected): {}",
            r.refused.message
        )),
        "{note}\nfiles.read: {}",
        r.refused.message
    );
    assert!(note.contains(&key.display().to_string()), "{note}");
    assert!(env.tainted);
}

#[test]
fn more_files_or_bytes_than_the_limits_are_refused_naming_them() {
    use seam_sandbox::{
        MAX_READ_ONLY_BYTES as MAX_OWNER_BYTES, MAX_READ_ONLY_FILES as MAX_OWNER_FILES,
    };
    let o = Owner::new();
    let mut names = Vec::new();
    for i in 0..=MAX_OWNER_FILES {
        o.write(&format!("ws/data/f{i}.txt"), b"x");
        names.push(format!("'data/f{i}.txt'"));
    }
    let tb = o.toolbox();
    let code = format!("print([{}])", names.join(", "));
    match call(&tb, json!({ "code": code })) {
        Answer::Refusal(r) => {
            assert_eq!(r.refused.code, RefusalCode::InvalidParams);
            assert!(
                r.refused
                    .message
                    .contains(&format!("at most {MAX_OWNER_FILES}")),
                "{}",
                r.refused.message
            );
            assert!(
                r.refused.message.contains("f16.txt"),
                "{}",
                r.refused.message
            );
        }
        Answer::Envelope(e) => panic!("ran with too many files: {}", e.output),
    }
    let big = o.write("ws/big.csv", &vec![b'1'; MAX_OWNER_BYTES as usize + 1]);
    match call(&tb, json!({"code": "print(len(open('big.csv').read()))"})) {
        Answer::Refusal(r) => {
            assert_eq!(r.refused.code, RefusalCode::InvalidParams);
            let m = &r.refused.message;
            assert!(
                m.contains(&format!("at most {MAX_OWNER_BYTES} bytes")),
                "{m}"
            );
            assert!(m.contains(&big.display().to_string()), "{m}");
        }
        Answer::Envelope(e) => panic!("ran with too many bytes: {}", e.output),
    }
    assert!(!tb.is_tainted("t"), "a refused call shows nothing");
}

#[test]
fn the_files_are_found_in_every_form_of_string_literal() {
    let o = Owner::new();
    for name in ["r", "b", "t", "f", "p", "d", "c", "i"] {
        o.write(&format!("ws/data/{name}.txt"), name.as_bytes());
    }
    let tb = o.toolbox();
    let code = r#"from pathlib import Path
x = 'i'
parts = [
    open(r'data/r.txt').read(),
    open(b'data/b.txt').read(),
    open("""data/t.txt""").read(),
    open(f'data/f.txt').read(),
    Path("data/p.txt").read_text(),
    open('data/\x64.txt').read(),
]
# open('data/c.txt')
try:
    open(f'data/{x}.txt')
except OSError:
    parts.append('-')
print(''.join(parts))
"#;
    let env = ran(call(&tb, json!({ "code": code })));
    assert_eq!(env.output["stdout"], "rbtfpd-\n", "{}", env.output);
    let mut names: Vec<&str> = env.output["owner_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["inside"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["b", "d", "f", "p", "r", "t"].map(|n| format!("/scratch/data/{n}.txt"))
    );
}

#[test]
fn an_unsandboxed_run_is_shown_the_same_files_in_its_working_directory() {
    let o = Owner::new();
    o.write("ws/data/runs.csv", CSV.as_bytes());
    let p = {
        let env = PolicyEnv {
            owner_home: o.home(),
            seam_home: o.dir.path().join("seam"),
            workspace_root: o.ws(),
        };
        Arc::new(
            Policy::from_toml_str(
                "[capabilities]\n\"python.run\" = \"allow-unsandboxed\"\n",
                Path::new("p.toml"),
                env,
            )
            .unwrap(),
        )
    };
    let tb = toolbox_with(
        Arc::clone(&p),
        PythonRun::with_sandbox(&p, sandbox_without_landlock()),
    );
    let code = "import csv, os\n\
                print(sum(float(r['amount']) for r in csv.DictReader(open('data/runs.csv'))))\n\
                print(oct(os.stat('data/runs.csv').st_mode & 0o777))";
    let Answer::Envelope(env) = call(&tb, json!({ "code": code })) else {
        panic!("refused")
    };
    assert_eq!(env.output["sandboxed"], false);
    assert_eq!(env.output["stdout"], "6.75\n0o444\n", "{}", env.output);
    assert!(env.tainted);
}

#[test]
fn a_home_literal_is_found_as_written_and_expanded_and_a_key_so_named_is_its_stand_in() {
    let o = Owner::new();
    o.write("notes/a.md", b"the owner's note");
    o.write(".ssh/id_rsa", KEY.as_bytes());
    let tb = o.toolbox();
    // As qwen2.5-coder-1.5b wrote it: `open` does not expand `~`.
    let code = "import os\n\
                print(open('~/notes/a.md').read())\n\
                print(open(os.path.expanduser('~/notes/a.md')).read())\n\
                with open('~/.ssh/id_rsa') as f:\n\
                \x20   print(f.read())\n\
                print(sum(i*i for i in range(1, 101)))";
    let env = ran(call(&tb, json!({ "code": code })));
    assert_eq!(env.output["exit_code"], 0, "{}", env.output);
    assert_eq!(
        env.output["stdout"],
        "the owner's note\nthe owner's note\n\
         [seam: ~/.ssh/id_rsa is withheld (protected); python.run is never shown it]\n\n\
         338350\n",
        "{}",
        env.output
    );
    let shown = env.output["owner_files"].as_array().unwrap();
    assert_eq!(
        shown.len(),
        1,
        "one file shown, listed once: {}",
        env.output
    );
    assert_eq!(shown[0]["inside"], "/scratch/notes/a.md");
    assert_eq!(shown[0]["also_inside"], "/scratch/~/notes/a.md");
    let note = note(&env);
    assert!(
        note.contains("~/.ssh/id_rsa was not made available (protected)")
            && note.contains("the code read a one-line stand-in in its place"),
        "{note}"
    );
    let all = serde_json::to_string(&env.output).unwrap();
    assert!(!all.contains("seam-test-key-body"), "{all}");
    assert!(!all.contains("OPENSSH"), "{all}");
}

#[test]
fn a_second_place_of_a_home_literal_never_costs_the_run_a_file() {
    use seam_sandbox::MAX_READ_ONLY_FILES as MAX_OWNER_FILES;
    let o = Owner::new();
    let half = MAX_OWNER_FILES / 2;
    let names = |n: usize| {
        (0..n)
            .map(|i| {
                o.write(&format!("ws/data/f{i}.txt"), format!("{i}").as_bytes());
                format!("open('~/ws/data/f{i}.txt').read()")
            })
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let tb = o.toolbox();
    // Half the limit: every file at both places, read as written.
    let code = format!("print({})", names(half));
    let env = ran(call(&tb, json!({ "code": code })));
    let want: String = (0..half).map(|i| i.to_string()).collect();
    assert_eq!(env.output["stdout"], format!("{want}\n"), "{}", env.output);
    let shown = env.output["owner_files"].as_array().unwrap();
    assert_eq!(shown.len(), half);
    assert!(shown.iter().all(|f| f["also_inside"].is_string()));
    // The whole limit: every file shown, none refused; no room is left for the second
    // places, and the note says where each file is instead.
    let code = format!(
        "import os\nprint({})",
        names(MAX_OWNER_FILES)
            .replace("open('~", "open(os.path.expanduser('~")
            .replace(".txt').read()", ".txt')).read()")
    );
    let env = ran(call(&tb, json!({ "code": code })));
    let want: String = (0..MAX_OWNER_FILES).map(|i| i.to_string()).collect();
    assert_eq!(env.output["stdout"], format!("{want}\n"), "{}", env.output);
    let shown = env.output["owner_files"].as_array().unwrap();
    assert_eq!(shown.len(), MAX_OWNER_FILES);
    assert!(shown.iter().all(|f| f.get("also_inside").is_none()));
    let note = note(&env);
    assert!(
        note.contains("~/ws/data/f0.txt is at /scratch/ws/data/f0.txt (where os.path.expanduser leads), and not also at the name as written, /scratch/~/ws/data/f0.txt"),
        "{note}"
    );
    assert!(!note.contains("was not made available"), "{note}");
}
