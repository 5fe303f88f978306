//! The Python repairs against the real python3: what they change, python3
//! refused, and what they make of it, python3 compiles; what python3
//! compiles, they leave alone. Formats, not cases: besides the one-liners
//! seen in the dev suite's traces, a generator writes every join of simple
//! statements, headers and clauses the relayout reads.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use seam_action::{Correction, parse};
use serde_json::{Value, json};
use support::catalog_fixture;

/// The code python.run is called with after parsing, and the corrections.
fn parsed_code(code: &str) -> (String, Vec<Correction>) {
    let reply = json!({"mode": "action", "tool": "python.run", "params": {"code": code}});
    let p = parse(&reply.to_string(), &catalog_fixture()).unwrap();
    let v = serde_json::to_value(&p.action).unwrap();
    let out = v["params"]["code"].as_str().unwrap().to_owned();
    (out, p.corrections)
}

/// For each source, whether python3 compiles it (one python3 for all).
fn compiles(sources: &[String]) -> Vec<bool> {
    let script = "import json, sys\n\
        for src in json.load(sys.stdin):\n\
        \x20   try:\n\
        \x20       compile(src, '<code>', 'exec')\n\
        \x20       print('ok')\n\
        \x20   except SyntaxError:\n\
        \x20       print('syntax')\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs (the sandbox's python.run needs it too)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(sources).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<bool> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l == "ok")
        .collect();
    assert_eq!(lines.len(), sources.len());
    lines
}

/// Runs one source with python3 and returns its stdout.
fn run(src: &str) -> String {
    let out = Command::new("python3").args(["-c", src]).output().unwrap();
    assert!(
        out.status.success(),
        "{src}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// One-liners of the shapes small models write, each with what it prints.
const BROKEN: &[(&str, &str)] = &[
    (
        "rows = [3, 4.5, 2]; total = 0; for r in rows: total += r; print(total)",
        "3\n7.5\n9.5\n",
    ),
    (
        "import math; for n in [1, 4]: if n > 1: print(math.sqrt(n))",
        "2.0\n",
    ),
    (
        "data = {'a': 1, 'b': 2}; for k, v in data.items(): if v > 1: print(k); else: print('-')",
        "-\nb\n",
    ),
    (
        "try: x = int('q'); except ValueError: x = 0; print(x)",
        "0\n",
    ),
    ("n = 21; def f(v): return v * 2", ""),
    ("n = 3; while n: n -= 1; print(n)", "2\n1\n0\n"),
    (
        "import io; with io.StringIO('a,1\\nb,2') as f: lines = f.read().splitlines(); for l in lines: print(l.split(',')[1])",
        "1\n2\n",
    ),
    ("import json\\nprint(json.dumps([1, 2]))", "[1, 2]\n"),
    ("x = 'a\\nb'\\nprint(len(x))", "3\n"),
    ("print(\\\"q\\\")\\nprint(\\\"t\\\\tu\\\")", "q\nt\tu\n"),
    (
        "s = 0\\nfor i in range(4): s += i; if i == 3: print(s)",
        "6\n",
    ),
];

#[test]
fn what_python3_refuses_is_laid_out_so_it_compiles_and_runs() {
    let originals: Vec<String> = BROKEN.iter().map(|(c, _)| (*c).to_owned()).collect();
    let fixed: Vec<(String, Vec<Correction>)> = originals.iter().map(|c| parsed_code(c)).collect();
    let before = compiles(&originals);
    let after = compiles(&fixed.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>());
    for (i, (src, want)) in BROKEN.iter().enumerate() {
        let (code, fixes) = &fixed[i];
        assert!(!before[i], "python3 should refuse {src:?}");
        assert!(after[i], "{src:?} became {code:?}, which python3 refuses");
        assert!(
            fixes.contains(&Correction::PythonOneLineRelaid)
                || fixes.contains(&Correction::PythonEscapesUnescaped),
            "{src:?}: {fixes:?}"
        );
        assert_eq!(run(code), *want, "{src:?} became {code:?}");
    }
}

#[test]
fn what_python3_compiles_is_left_alone() {
    let valid: Vec<String> = [
        "print(1); print(2)",
        "for x in range(3): print(x); print(-x)",
        "d = {'k: v; w': 1}; print(d)",
        "f = lambda x: x + 1; print(f(1))",
        "y: int = 3; print(y)",
        "s = 'if a: b; for c in d: e'; print(s)",
        "print('a\\nb'); print(r'\\d+')",
        "import os\nfor name in sorted(os.listdir('.'))[:1]:\n    print(name)",
        "if (n := 4) > 3: print(n)",
        "print([i for i in range(4) if i % 2])",
        "v = 1 if True else 2; print(v)",
        "x = 1 \\\n    + 2; print(x)",
        "print(\"\"\"a; for b in c: d\"\"\")",
        "# for a in b: c; if d: e\nprint(0)",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert!(
        compiles(&valid).iter().all(|ok| *ok),
        "the samples are valid Python"
    );
    for src in &valid {
        let (code, fixes) = parsed_code(src);
        assert_eq!(&code, src);
        assert!(
            !fixes.contains(&Correction::PythonOneLineRelaid)
                && !fixes.contains(&Correction::PythonEscapesUnescaped),
            "{src:?}: {fixes:?}"
        );
    }
}

/// A small deterministic generator (no seed to chase in a failure: the case
/// is printed).
struct Lcg(u64);

impl Lcg {
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        from[((self.0 >> 33) as usize) % from.len()]
    }
}

#[test]
fn every_join_of_statements_and_headers_compiles_once_laid_out() {
    const SIMPLE: &[&str] = &[
        "x = 1",
        "print(x)",
        "y = [1, 2]",
        "s = 'a; b: c'",
        "z = {'k': (1, 2)}",
        "f = lambda v: v",
        "pass",
        "import os",
    ];
    const HEADERS: &[&str] = &[
        "if x:",
        "for i in y:",
        "while False:",
        "with open('/dev/null') as fh:",
        "def g(a: int) -> int:",
        "class C:",
    ];
    let mut rng = Lcg(7);
    let mut cases = Vec::new();
    for _ in 0..400 {
        let mut parts: Vec<String> = vec!["x = 1; y = [1]".to_owned()];
        let mut last_if = false;
        for _ in 0..6 {
            let sep = if parts.last().is_some_and(|p| p.ends_with(':')) {
                " "
            } else {
                "; "
            };
            let piece = match rng.pick(&["simple", "simple", "header", "else"]) {
                "header" => {
                    let h = rng.pick(HEADERS);
                    last_if = h.starts_with("if");
                    h.to_owned()
                }
                "else" if last_if && !parts.last().unwrap().ends_with(':') => {
                    last_if = false;
                    rng.pick(&["else:", "elif y:"]).to_owned()
                }
                _ => rng.pick(SIMPLE).to_owned(),
            };
            parts.push(format!("{sep}{piece}"));
        }
        cases.push(parts.concat());
    }
    let fixed: Vec<String> = cases.iter().map(|c| parsed_code(c).0).collect();
    let before = compiles(&cases);
    let after = compiles(&fixed);
    let mut relaid = 0;
    for i in 0..cases.len() {
        assert!(
            after[i],
            "{:?} became {:?}, which python3 refuses",
            cases[i], fixed[i]
        );
        if before[i] {
            assert_eq!(fixed[i], cases[i], "valid Python was changed");
        } else {
            relaid += 1;
        }
    }
    assert!(
        relaid > 100,
        "the generator must write broken joins ({relaid})"
    );
}

#[test]
fn a_param_not_marked_as_python_is_never_relaid() {
    // web.search's query is a string too: the same text stays as written.
    let q = "for x in y: if z: print(1)";
    let reply = json!({"mode": "action", "tool": "web.search", "params": {"query": q}});
    let p = parse(&reply.to_string(), &catalog_fixture()).unwrap();
    let v: Value = serde_json::to_value(&p.action).unwrap();
    assert_eq!(v["params"]["query"], q);
    assert!(!p.corrections.contains(&Correction::PythonOneLineRelaid));
}
