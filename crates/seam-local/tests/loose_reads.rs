//! Two things small models get wrong that the builder meets halfway, saying
//! so in the answer's `note`: a path with a made-up directory in front of a
//! file that is there, and a snippet whose quotes or spacing are not the
//! file's.

mod common;

use common::{Fixture, builder_ok as ok, builder_refused as refused, git, params, turn};
use seam_local::{LocalTools, TurnInfo, Verdict};
use seam_protocol::RefusalCode;
use serde_json::{Value, json};

fn staged(tools: &LocalTools, t: &str, path: &str) -> String {
    let (_, wt) = tools.turn_branch(t).unwrap();
    std::fs::read_to_string(wt.join(path)).unwrap()
}

fn note(out: &Value) -> &str {
    out["note"].as_str().unwrap_or_default()
}

/// Commits `files` (path, text) to the fixture's main.
fn commit(f: &Fixture, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = f.repo().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(&f.repo(), &["add", "-A"]);
    git(&f.repo(), &["commit", "-q", "-m", "fixture files"]);
}

const CONFIG: &str = "\"\"\"Settings.\"\"\"\n\nDEFAULT_CURRENCY = \"EUR\"\nROUND_TO = 2\n";

/// The small Python project the call below was made on.
fn tally() -> Fixture {
    let f = Fixture::new();
    commit(
        &f,
        &[
            ("tally/__init__.py", ""),
            ("tally/config.py", CONFIG),
            (
                "tally/report.py",
                "from tally.config import DEFAULT_CURRENCY\n",
            ),
            (
                "tests/test_report.py",
                "def test_total():\n    assert True\n",
            ),
        ],
    );
    f
}

/// qwen2.5-coder-1.5b, asked to make the default currency GBP, sent this
/// twice, was refused as not_found both times, and gave up.
#[test]
fn the_made_up_directory_and_the_single_quotes_are_read_and_said() {
    let f = tally();
    let tools = f.tools();
    let main_before = f.head("main");
    let task = TurnInfo {
        turn: "c1".into(),
        task: "Make the default currency GBP instead of EUR.".into(),
        ..TurnInfo::default()
    };
    let call = json!({"op": "replace", "path": "src/tally/config.py",
                      "old": "DEFAULT_CURRENCY = 'EUR'", "new": "DEFAULT_CURRENCY = 'GBP'"});
    let out = tools.call(&task, "builder", &params(call)).unwrap();
    assert_eq!(out["changed"], true, "{out}");
    assert_eq!(out["path"], "tally/config.py", "{out}");
    assert_eq!(out["line"], 3, "{out}");
    let n = note(&out);
    assert!(
        n.contains("src/tally/config.py does not exist; edited tally/config.py"),
        "{out}"
    );
    assert!(n.contains("line 3 of tally/config.py"), "{out}");
    assert!(n.contains(r#"params.new's ' written as ""#), "{out}");
    assert_eq!(
        staged(&tools, "c1", "tally/config.py"),
        CONFIG.replace("EUR", "GBP")
    );
    assert!(staged(&tools, "c1", "tally/config.py").contains("DEFAULT_CURRENCY = \"GBP\"\n"));
    let (_, wt) = tools.turn_branch("c1").unwrap();
    assert!(
        !wt.join("src/tally").exists(),
        "nothing made under the given path"
    );
    assert_eq!(
        git(&f.staging(), &["log", "-1", "--format=%s", "seam/c1-1"]),
        "builder: replace in tally/config.py"
    );
    // Main, its working tree and its index are as they were.
    assert_eq!(f.head("main"), main_before);
    assert_eq!(
        std::fs::read_to_string(f.repo().join("tally/config.py")).unwrap(),
        CONFIG
    );
    assert_eq!(git(&f.repo(), &["status", "--porcelain"]), "");
    let items = tools.finish_turn(&turn("c1")).unwrap();
    assert_eq!(items[0].verdict, Verdict::Pass, "{}", items[0].critic);
    assert!(
        items[0].preview.contains("+DEFAULT_CURRENCY = \"GBP\""),
        "{}",
        items[0].preview
    );

    // A directory made up in place of the real one: the file's name is
    // there once.
    let out = ok(
        &tools,
        "c2",
        json!({"op": "replace", "path": "src/config.py",
               "old": "ROUND_TO = 2", "new": "ROUND_TO = 3"}),
    );
    assert_eq!(out["path"], "tally/config.py", "{out}");
    assert!(
        note(&out).contains(
            "src/config.py does not exist; edited tally/config.py, the one file of that name"
        ),
        "{out}"
    );
    assert!(staged(&tools, "c2", "tally/config.py").contains("ROUND_TO = 3\n"));

    // No path at all: the one file that holds old loosely.
    let out = ok(
        &tools,
        "c3",
        json!({"op": "replace", "old": "DEFAULT_CURRENCY = 'EUR'", "new": "DEFAULT_CURRENCY = 'USD'"}),
    );
    assert_eq!(out["path"], "tally/config.py", "{out}");
    assert!(
        note(&out).contains("tally/config.py is the one file that holds params.old")
            && note(&out).contains(r#"params.new's ' written as ""#),
        "{out}"
    );
    assert!(staged(&tools, "c3", "tally/config.py").contains("DEFAULT_CURRENCY = \"USD\"\n"));
}

#[test]
fn a_path_two_files_could_be_is_refused_naming_both() {
    let call = json!({"op": "replace", "path": "src/config.py",
                      "old": "DEFAULT_CURRENCY = \"EUR\"", "new": "DEFAULT_CURRENCY = \"GBP\""});
    // By file name: tally/config.py and app/config.py.
    let f = tally();
    commit(&f, &[("app/config.py", "DEFAULT_CURRENCY = \"USD\"\n")]);
    let tools = f.tools();
    let e = refused(&tools, "p1", call.clone());
    assert_eq!(e.code, RefusalCode::NotFound, "{e}");
    assert!(
        e.message.starts_with(
            "src/config.py does not exist: replace edits a file (write makes one); \
             the files it could be: app/config.py, tally/config.py."
        ),
        "{e}"
    );
    let (_, wt) = tools.turn_branch("p1").unwrap();
    assert_eq!(git(&wt, &["rev-parse", "HEAD"]), f.head("main"));
    assert_eq!(git(&wt, &["status", "--porcelain"]), "");

    // By the end of the path: tally/config.py and config.py (at the top)
    // both end src/tally/config.py.
    let f = tally();
    commit(&f, &[("config.py", "DEBUG = False\n")]);
    let tools = f.tools();
    let mut call = call;
    call["path"] = json!("src/tally/config.py");
    let e = refused(&tools, "p2", call);
    assert_eq!(e.code, RefusalCode::NotFound, "{e}");
    assert!(
        e.message
            .contains("the files it could be: config.py, tally/config.py."),
        "{e}"
    );
    let (_, wt) = tools.turn_branch("p2").unwrap();
    assert_eq!(git(&wt, &["rev-parse", "HEAD"]), f.head("main"));
}

#[test]
fn a_snippet_whose_quotes_are_not_the_files_is_read_and_said() {
    let f = Fixture::new();
    commit(
        &f,
        &[(
            "app/names.py",
            "NAME = 'shelf'\nGREETING = \"hello\"\nLABEL = f'{NAME}: {GREETING}'\n",
        )],
    );
    let tools = f.tools();
    // The model's double quotes, the file's single: new is written the file's way.
    let out = ok(
        &tools,
        "q1",
        json!({"op": "replace", "path": "app/names.py",
               "old": "NAME = \"shelf\"", "new": "NAME = \"bookshelf\""}),
    );
    assert_eq!(out["line"], 1, "{out}");
    let n = note(&out);
    assert!(
        n.contains("params.old is not in app/names.py as written")
            && n.contains("line 1 of app/names.py"),
        "{out}"
    );
    assert!(n.contains(r#"params.new's " written as '"#), "{out}");
    assert!(staged(&tools, "q1", "app/names.py").starts_with("NAME = 'bookshelf'\n"));
    // Part of a line, and the other way round.
    let out = ok(
        &tools,
        "q1",
        json!({"op": "replace", "path": "app/names.py",
               "old": "{NAME}: {GREETING}\"", "new": "{NAME} says {GREETING}\""}),
    );
    assert_eq!(out["line"], 3, "{out}");
    assert!(staged(&tools, "q1", "app/names.py").ends_with("LABEL = f'{NAME} says {GREETING}'\n"));
    // A new that quotes otherwise than old is written as given.
    ok(
        &tools,
        "q1",
        json!({"op": "replace", "path": "app/names.py",
               "old": "GREETING = 'hello'", "new": "GREETING = \"hi\""}),
    );
    assert!(staged(&tools, "q1", "app/names.py").contains("\nGREETING = \"hi\"\n"));
    // A new the swap would leave unbalanced (an apostrophe) is written as given.
    let out = ok(
        &tools,
        "q1",
        json!({"op": "replace", "path": "app/names.py",
               "old": "NAME = \"bookshelf\"", "new": "NAME = \"shelf\"  # the shelf's name"}),
    );
    assert!(!note(&out).contains("written as"), "{out}");
    assert!(
        staged(&tools, "q1", "app/names.py").starts_with("NAME = \"shelf\"  # the shelf's name\n")
    );
}

#[test]
fn a_snippet_whose_spacing_is_not_the_files_is_read_and_said() {
    let f = Fixture::new();
    commit(
        &f,
        &[(
            "calc/total.py",
            "def total(price,  qty):\n    if qty:\n        return  price\t*  qty\n    return 0\n",
        )],
    );
    let tools = f.tools();
    // Part of a line, spaced otherwise.
    let out = ok(
        &tools,
        "w1",
        json!({"op": "replace", "path": "calc/total.py",
               "old": "def total(price, qty):", "new": "def total(price, qty=1):"}),
    );
    assert_eq!(out["line"], 1, "{out}");
    assert!(
        note(&out).contains("params.old is not in calc/total.py as written"),
        "{out}"
    );
    assert!(!note(&out).contains("written as"), "{out}");
    // Whole lines, flush left and spaced otherwise: new is indented like the file.
    let out = ok(
        &tools,
        "w1",
        json!({"op": "replace", "path": "calc/total.py",
               "old": "if qty:\nreturn price * qty", "new": "if qty:\nreturn round(price * qty, 2)"}),
    );
    assert!(note(&out).contains("lines 2-3 of calc/total.py"), "{out}");
    assert_eq!(
        staged(&tools, "w1", "calc/total.py"),
        "def total(price, qty=1):\n    if qty:\n        return round(price * qty, 2)\n    return 0\n"
    );
    // A line break is not a space: an old that joins two lines is not there.
    let e = refused(
        &tools,
        "w1",
        json!({"op": "replace", "path": "calc/total.py",
               "old": "return round(price * qty, 2) return 0", "new": "x"}),
    );
    assert_eq!(e.code, RefusalCode::NotFound, "{e}");
}

#[test]
fn two_loose_places_are_refused_and_counted() {
    let f = Fixture::new();
    commit(
        &f,
        &[(
            "app/money.py",
            "HOME = 'EUR'\nAWAY = 'EUR'\nLOCAL = \"GBP\"\n",
        )],
    );
    let tools = f.tools();
    let e = refused(
        &tools,
        "m1",
        json!({"op": "replace", "path": "app/money.py", "old": "\"EUR\"", "new": "\"USD\""}),
    );
    assert_eq!(e.code, RefusalCode::InvalidParams, "{e}");
    assert!(
        e.message
            .contains("2 places of app/money.py (at lines 1, 2)"),
        "{e}"
    );
    let (_, wt) = tools.turn_branch("m1").unwrap();
    assert_eq!(git(&wt, &["rev-parse", "HEAD"]), f.head("main"));
}

#[test]
fn an_exact_match_wins_and_is_read_as_before() {
    let f = Fixture::new();
    commit(&f, &[("app/money.py", "HOME = \"EUR\"\nAWAY = 'EUR'\n")]);
    let tools = f.tools();
    // 'EUR' is there once as written, and twice loosely: exactly wins.
    let out = ok(
        &tools,
        "e1",
        json!({"op": "replace", "path": "app/money.py", "old": "'EUR'", "new": "'USD'"}),
    );
    assert_eq!(out["line"], 2, "{out}");
    assert!(out.get("note").is_none(), "{out}");
    assert_eq!(
        staged(&tools, "e1", "app/money.py"),
        "HOME = \"EUR\"\nAWAY = 'USD'\n"
    );
    let out = ok(
        &tools,
        "e1",
        json!({"op": "replace", "path": "app/money.py", "old": "HOME = \"EUR\"", "new": "HOME = 'GBP'"}),
    );
    assert!(out.get("note").is_none(), "{out}");
    assert_eq!(
        staged(&tools, "e1", "app/money.py"),
        "HOME = 'GBP'\nAWAY = 'USD'\n"
    );
}

#[test]
fn write_append_and_delete_keep_to_the_path_given() {
    let f = tally();
    let tools = f.tools();
    // write makes a file: it is made where it is named.
    let out = ok(
        &tools,
        "k1",
        json!({"op": "write", "path": "src/tally/config.py", "content": "X = 1\n"}),
    );
    assert_eq!(out["path"], "src/tally/config.py");
    assert!(out.get("note").is_none(), "{out}");
    assert_eq!(staged(&tools, "k1", "src/tally/config.py"), "X = 1\n");
    assert_eq!(staged(&tools, "k1", "tally/config.py"), CONFIG);

    // append to a path that ends with a file's whole path adds to that file.
    let out = ok(
        &tools,
        "k2",
        json!({"op": "append", "path": "lib/tally/report.py", "text": "CURRENCY = DEFAULT_CURRENCY"}),
    );
    assert_eq!(out["path"], "tally/report.py", "{out}");
    assert_eq!(out["created"], false, "{out}");
    assert!(
        note(&out).contains("lib/tally/report.py does not exist; edited tally/report.py"),
        "{out}"
    );
    assert!(staged(&tools, "k2", "tally/report.py").ends_with("CURRENCY = DEFAULT_CURRENCY\n"));
    // A file's name alone is not enough for append: it makes the file, and
    // says which file of that name there is.
    let out = ok(
        &tools,
        "k2",
        json!({"op": "append", "path": "docs/config.py", "text": "# notes"}),
    );
    assert_eq!(out["path"], "docs/config.py", "{out}");
    assert_eq!(out["created"], true, "{out}");
    assert!(note(&out).contains("tally/config.py"), "{out}");
    assert_eq!(staged(&tools, "k2", "docs/config.py"), "# notes\n");

    // delete never deletes a file it was not given.
    let e = refused(
        &tools,
        "k3",
        json!({"op": "delete", "path": "src/tally/config.py"}),
    );
    assert_eq!(e.code, RefusalCode::NotFound, "{e}");
    assert_eq!(staged(&tools, "k3", "tally/config.py"), CONFIG);
}
