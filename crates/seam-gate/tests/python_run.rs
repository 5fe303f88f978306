//! python.run through `Toolbox::call`: consent by default, a sandboxed run when allowed, its
//! output scrubbed and untainted, and an honest refusal (or, by the owner's word, an
//! unsandboxed run) on a machine that lacks a wall.

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
    let env = PolicyEnv {
        owner_home: dir.join("home"),
        seam_home: dir.join("seam"),
        workspace_root: dir.join("ws"),
    };
    Arc::new(Policy::from_toml_str(text, Path::new("p.toml"), env).unwrap())
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
