//! Files shown read-only (`Job::read_only`): readable at the name the code uses, not writable,
//! and nothing else of where they came from in view.

use std::time::Duration;

use seam_sandbox::{
    Job, Limits, MAX_READ_ONLY_BYTES, MAX_READ_ONLY_FILES, ReadOnlyFile, RunOutput, Sandbox,
    SandboxError, ScratchFile,
};

fn sandbox() -> &'static Sandbox {
    let sb = Sandbox::shared();
    assert!(
        sb.available(),
        "the sandbox's walls are not all available here: {:?}",
        sb.protections().missing()
    );
    sb
}

fn job(code: &str, files: &[(&str, &str)]) -> Job {
    Job {
        limits: Limits::with_wall(Duration::from_secs(10)),
        read_only: files
            .iter()
            .map(|(name, text)| ReadOnlyFile {
                name: (*name).to_owned(),
                content: text.as_bytes().to_vec(),
            })
            .collect(),
        ..Job::new(code)
    }
}

fn run(job: &Job) -> RunOutput {
    let out = sandbox()
        .run(job)
        .expect("the sandboxed run failed to start");
    assert!(out.sandboxed);
    out
}

const CSV: &str = "name,amount\na,1.5\nb,2\nc,3.25\n";

const SUM: &str = "import csv\n\
print(sum(float(r['amount']) for r in csv.DictReader(open('data/runs.csv'))))\n";

#[test]
fn a_file_under_the_working_directory_is_read_where_the_code_names_it() {
    let code = format!("{SUM}import os\nprint(os.listdir('/'), os.listdir('data'))\n");
    let out = run(&job(&code, &[("data/runs.csv", CSV)]));
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "6.75", "{out:?}");
    // the staging place of the copies is gone from view
    assert!(!lines[1].contains(".seam-ro"), "{out:?}");
    assert!(lines[1].ends_with("['runs.csv']"), "{out:?}");
}

#[test]
fn a_read_only_file_cannot_be_written_truncated_chmodded_or_removed() {
    let code = r#"import os
for what, f in [
    ('write', lambda: open('data/runs.csv', 'a').write('x')),
    ('truncate', lambda: os.truncate('data/runs.csv', 0)),
    ('chmod', lambda: os.chmod('data/runs.csv', 0o666)),
    ('remove', lambda: os.remove('data/runs.csv')),
    ('rename', lambda: os.rename('data/runs.csv', 'x.csv')),
    ('write abs', lambda: open('/home/owner/notes/a.md', 'w').write('x')),
]:
    try:
        f()
        print(what, 'succeeded')
    except OSError as e:
        print(what, 'failed', e.errno)
print(open('data/runs.csv').read() == open('/home/owner/notes/a.md').read().upper())
open('data/beside.csv', 'w').write('a scratch file beside it')
print(open('data/beside.csv').read())
"#;
    let out = run(&job(
        code,
        &[("data/runs.csv", "ABC"), ("/home/owner/notes/a.md", "abc")],
    ));
    for what in [
        "write",
        "truncate",
        "chmod",
        "remove",
        "rename",
        "write abs",
    ] {
        assert!(
            out.stdout.contains(&format!("{what} failed")),
            "{what}: {out:?}"
        );
    }
    assert!(out.stdout.contains("True\n"), "{out:?}");
    assert!(out.stdout.contains("a scratch file beside it"), "{out:?}");
}

#[test]
fn an_absolute_name_shows_that_file_and_nothing_around_it() {
    let code = r#"import os
print(open('/home/owner/notes/a.md').read())
try:
    print(sorted(os.listdir('/home/owner/notes')))
except OSError as e:
    print('listing failed')
try:
    open('/home/owner/notes/b.md', 'w')
    print('created')
except OSError as e:
    print('create failed')
"#;
    let out = run(&job(code, &[("/home/owner/notes/a.md", "the note")]));
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "the note", "{out:?}");
    // Landlock grants the file, not its directory: listing it fails, or shows only the file
    assert!(
        lines[1] == "['a.md']" || lines[1] == "listing failed",
        "{out:?}"
    );
    assert_eq!(lines[2], "create failed", "{out:?}");
}

#[test]
fn a_name_through_dot_dot_is_walked_like_the_kernel_walks_it() {
    let code = "print(open('notes/../data/./runs.csv').read(), open('/tmp/t.txt').read())";
    let out = run(&job(
        code,
        &[
            ("notes/../data/./runs.csv", "via dot-dot"),
            ("/tmp/t.txt", "in tmp"),
        ],
    ));
    assert_eq!(out.stdout, "via dot-dot in tmp\n", "{out:?}");
}

#[test]
fn a_name_on_the_sandboxs_own_directories_is_refused() {
    for name in [
        "/usr/lib/x.txt",
        "/etc/passwd",
        "/dev/null",
        "/scratch",
        "data/",
        "../usr/x",
    ] {
        let err = sandbox()
            .run(&job("print(1)", &[(name, "x")]))
            .expect_err(name);
        assert!(matches!(err, SandboxError::InvalidJob(_)), "{name}: {err}");
        assert!(sandbox().read_only_target(name).is_err(), "{name}");
    }
    assert_eq!(
        sandbox().read_only_target("a/../data/runs.csv").unwrap(),
        "/scratch/data/runs.csv"
    );
    assert_eq!(
        sandbox().read_only_target("/home/o/a.md").unwrap(),
        "/home/o/a.md"
    );
}

#[test]
fn a_name_that_is_also_a_scratch_file_is_refused() {
    let mut j = job("print(1)", &[("data/x.csv", "a")]);
    j.files = vec![ScratchFile {
        name: "data/x.csv".into(),
        text: "b".into(),
    }];
    let err = sandbox().run(&j).unwrap_err();
    assert!(err.to_string().contains("data/x.csv"), "{err}");
    // beside each other they both work
    j.files[0].name = "data/y.csv".into();
    j.code = "print(open('data/x.csv').read() + open('data/y.csv').read())".into();
    assert_eq!(run(&j).stdout, "ab\n");
}

#[test]
fn too_many_or_too_large_files_are_refused_naming_the_limit() {
    let names: Vec<String> = (0..=MAX_READ_ONLY_FILES).map(|i| format!("f{i}")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x")).collect();
    let err = sandbox().run(&job("print(1)", &files)).unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("at most {MAX_READ_ONLY_FILES}")),
        "{err}"
    );
    let big = "x".repeat(MAX_READ_ONLY_BYTES as usize + 1);
    let err = sandbox()
        .run(&job("print(1)", &[("big", &big)]))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("at most {MAX_READ_ONLY_BYTES}")),
        "{err}"
    );
}

#[test]
fn the_largest_allowed_file_is_shown_whole() {
    let big = "y".repeat(MAX_READ_ONLY_BYTES as usize);
    let out = run(&job(
        "import os\nprint(len(open('big.txt').read()), os.listdir('.'))",
        &[("big.txt", &big)],
    ));
    assert_eq!(
        out.stdout,
        format!("{MAX_READ_ONLY_BYTES} ['big.txt']\n"),
        "{out:?}"
    );
}
