//! Corrections the turn makes for what small models do: code that opens a
//! file the turn has not read is shown the file's first lines first
//! (`code-file-shown-first`), and a walk down an enum's values is stopped
//! (`enum-walk-stopped`), an answer that leaves a file the task names
//! unread is sent back (`task-file-unread`), and a program's failure on a
//! missing module or a withheld file says what to do instead. The model is scripted in-process; the tools are
//! stand-ins on the local side that record what they were called with.

mod support;

use seam_agent::registry::Registry;
use seam_agent::trace::Trace;
use seam_agent::turn::{TurnEnd, TurnOptions, TurnReport};
use seam_local::LocalRefusal;
use seam_protocol::RefusalCode;
use serde_json::{Map, Value, json};
use support::{CUT_FOR_LOOPING, Scripted, Tools, no_such_tool, run_turn, spec, tool_names};

/// What the stand-in tools answer.
fn answer(tool: &str, params: &Map<String, Value>) -> Result<Value, LocalRefusal> {
    match tool {
        "files.read" if params["path"].as_str().unwrap_or("").contains(".ssh") => Err(
            LocalRefusal::new(RefusalCode::Protected, "~/.ssh/id_rsa is protected"),
        ),
        "files.read"
            if params["path"]
                .as_str()
                .unwrap_or("")
                .starts_with("~/vault/") =>
        {
            Err(LocalRefusal::new(
                RefusalCode::Protected,
                "~/vault is protected",
            ))
        }
        "files.read" if params["path"].as_str().unwrap_or("").starts_with("gone/") => Err(
            LocalRefusal::new(RefusalCode::NotFound, "that file does not exist"),
        ),
        "files.read" if params["path"] == "notes/missing.json" => Err(LocalRefusal::new(
            RefusalCode::NotFound,
            "notes/missing.json does not exist",
        )),
        "files.read" if matches!(params["path"].as_str(), Some("notes.md" | "log.csv")) => Err(
            LocalRefusal::new(RefusalCode::NotFound, "that file does not exist"),
        ),
        "files.read" if params["path"] == "notes/short.md" => Ok(json!({
            "path": params["path"], "text": "1. Tag.\n2. Push.\n", "next_offset": null
        })),
        "files.read" if params["path"] == "notes/offsite.md" => Ok(json!({
            "path": params["path"],
            "text": "# Lisbon offsite\n\n## Trains\n- Back: Thu 5 June, Lisbon 17:00 -> Porto 19:49\n\n## Agenda\n- Wed 4: team dinner at Cervejaria Ramiro (booked 20:30)\n",
            "next_offset": null
        })),
        "files.read" if params["path"] == "notes/flights.md" => Ok(json!({
            "path": params["path"],
            "text": "# Zurich\n\n## Flights\n- Out: LX 317, Mon 3 May, London 07:40 -> Zurich 10:25\n- Home: LX 1742, Fri 7 May, Zurich 08:10 -> London 08:55\n",
            "next_offset": null
        })),
        "files.read" if params["path"] == "notes/pager.md" => Ok(json!({
            "path": params["path"],
            "text": "# Pager rota\n\n| week starting | primary |\n|---|---|\n| 2027-04-12 | Priya Raman |\n| 2027-04-19 | Tomasz Wrona |\n| 2027-04-26 | Lars Eklund |\n\n## Swaps\n- Week of 2027-04-19: Tomasz is away; Lars is primary that week.\n",
            "next_offset": null
        })),
        "files.read" if params["path"] == "data/log.csv" => Ok(json!({
            "path": params["path"],
            "text": "date,km,shoes\n2027-03-02,6.42,A\n2027-03-04,7.07,B\n2027-03-09,6.06,A\n2027-03-14,20.48,A\n",
            "next_offset": null
        })),
        "files.read" if params["path"] == "notes/plan.md" => Ok(json!({
            "path": params["path"],
            "text": "# Plan\n\n| month | target |\n|---|---|\n| April | 125 km |\n| May | 135 km |\n",
            "next_offset": null
        })),
        "files.read" if params["path"] == "notes/club.md" => Ok(json!({
            "path": params["path"],
            "text": "# Book club\n\n| month | host |\n|---|---|\n| Dec 2027 | me |\n\
                     | Jan 2028 | Farida Haddad |\n| Feb 2028 | Graham Oduya |\n",
            "next_offset": null
        })),
        "files.read" if params["path"] == "data/spend.csv" => Ok(json!({
            "path": params["path"],
            "text": "date,amount,category,merchant\n2027-09-02,63.18,groceries,\"Pingo Doce, Faro\"\n\
                     2027-10-03,12.50,eating out,Cafe\n2027-10-07,28.74,groceries,Mercado\n\
                     2027-10-31,41.00,groceries,Lidl\n2027-11-02,30.00,groceries,Lidl\n",
            "next_offset": null
        })),
        "files.read" if params["path"] == "data/shoes.csv" => Ok(json!({
            "path": params["path"],
            "text": "date,km,shoes\n2027-03-02,6.42,Novablast 4\n2027-03-04,7.07,Pegasus 41\n2027-03-09,6.06,Novablast 4\n2027-03-14,20.48,Pegasus 41\n",
            "next_offset": null
        })),
        // The shelf project's command: it takes code from three files, one
        // of which (config) the double's tree does not list.
        "files.read" if params["path"] == "src/cli.js" => Ok(json!({
            "path": params["path"],
            "text": "'use strict';\nconst { PAGE_SIZE } = require('./config');\n\
                     const { loadBooks } = require('./store');\n\
                     const { paginate } = require('./paginate');\n\n\
                     function cmdList(args) {\n  printPage(paginate(loadBooks(), 1, PAGE_SIZE));\n}\n",
            "next_offset": null
        })),
        "files.read" => Ok(json!({
            "path": params["path"], "text": "date,km\n2027-04-02,8.5\n", "next_offset": 13
        })),
        "python.run"
            if params["code"]
                .as_str()
                .unwrap_or("")
                .starts_with("fail_pandas") =>
        {
            Ok(json!({"exit_code": 1, "stdout": "",
                          "stderr": "ModuleNotFoundError: No module named 'pandas'\n"}))
        }
        "python.run" if params["code"].as_str().unwrap_or("").contains("rule") => {
            Ok(json!({"exit_code": 1, "stdout": "",
                          "stderr": "Traceback (most recent call last):\n  File \"<string>\", line 3, in <module>\nKeyError: 'retirement_rule'\n"}))
        }
        // CPython's words for an `open` of a name that is not there; the
        // sandbox was shown the one owner file the code named that exists.
        "python.run"
            if params["code"]
                .as_str()
                .unwrap_or("")
                .contains("open('notes.md')") =>
        {
            Ok(json!({"exit_code": 1, "stdout": "",
                      "stderr": "Traceback (most recent call last):\n  File \"<string>\", line 2, in <module>\nFileNotFoundError: [Errno 2] No such file or directory: 'notes.md'\n",
                      "owner_files": [{"name": "data/log.csv", "inside": "/scratch/data/log.csv", "bytes": 60}]}))
        }
        // CPython's words for float() of a header's column name.
        "python.run"
            if params["code"]
                .as_str()
                .unwrap_or("")
                .contains("float(row[1])") =>
        {
            Ok(json!({"exit_code": 1, "stdout": "",
                      "stderr": "Traceback (most recent call last):\n  File \"<string>\", line 3, in <module>\nValueError: could not convert string to float: 'km'\n"}))
        }
        "python.run"
            if params["code"]
                .as_str()
                .unwrap_or("")
                .contains("open('log.csv')") =>
        {
            Ok(json!({"exit_code": 1, "stdout": "",
                      "stderr": "Traceback (most recent call last):\n  File \"<string>\", line 2, in <module>\nFileNotFoundError: [Errno 2] No such file or directory: 'log.csv'\n"}))
        }
        "python.run" if params["code"].as_str().unwrap_or("").contains("target_km") => {
            Ok(json!({"exit_code": 1, "stdout": "",
                          "stderr": "Traceback (most recent call last):\n  File \"<string>\", line 4, in <module>\nKeyError: 'target_km'\n"}))
        }
        "python.run"
            if params["code"]
                .as_str()
                .unwrap_or("")
                .starts_with("import tally") =>
        {
            Ok(json!({"exit_code": 1, "stdout": "",
                      "stderr": "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'tally'\n"}))
        }
        "python.run" if params["code"].as_str().unwrap_or("").starts_with("fail") => {
            Ok(json!({"exit_code": 1, "stdout": "", "stderr": "NameError"}))
        }
        "python.run" if params["code"].as_str().unwrap_or("").contains("silent") => {
            Ok(json!({"exit_code": 0, "stdout": "", "stderr": ""}))
        }
        "python.run" if params["code"].as_str().unwrap_or("").contains("# one sum") => {
            Ok(json!({"exit_code": 0, "stdout": "12.92\n", "stderr": ""}))
        }
        "python.run"
            if params["code"]
                .as_str()
                .unwrap_or("")
                .contains("# below zero") =>
        {
            Ok(json!({"exit_code": 0, "stdout": "-198.12\n", "stderr": ""}))
        }
        "python.run" if params["code"].as_str().unwrap_or("").contains("# column") => {
            Ok(json!({"exit_code": 0, "stdout": "12.92\n4.85\n5.91\n", "stderr": ""}))
        }
        "python.run" if params["code"].as_str().unwrap_or("").contains("# zero") => {
            Ok(json!({"exit_code": 0, "stdout": "0\n", "stderr": ""}))
        }
        "python.run" => Ok(json!({"exit_code": 0, "stdout": "8.5\n"})),
        "memory.codebase" if params["op"] == "find_symbol" && params["name"] == "shelf" => Ok(
            json!({"op": "find_symbol", "name": "shelf", "matches": [], "note": "no definition named \"shelf\""}),
        ),
        "memory.codebase" if params["op"] == "find_symbol" => {
            Ok(json!({"op": "find_symbol", "matches": [{"path": "src/store.js", "line": 3}]}))
        }
        "memory.codebase" if params["op"] == "tree" => Ok(json!({"op": "tree", "path": ".",
            "depth": 2, "truncated": false, "entries": [
                {"path": "README.md", "kind": "file", "language": "markdown", "size": 698, "lines": 21},
                {"path": "package.json", "kind": "file", "language": "json", "size": 244, "lines": 9},
                {"path": "src", "kind": "dir", "lines": 182, "files": 3},
                {"path": "src/cli.js", "kind": "file", "language": "javascript", "size": 2096, "lines": 67},
                {"path": "src/paginate.js", "kind": "file", "language": "javascript", "size": 640, "lines": 22},
                {"path": "src/store.js", "kind": "file", "language": "javascript", "size": 1390, "lines": 41},
                {"path": "test", "kind": "dir", "lines": 24, "files": 1},
                {"path": "test/paginate.test.js", "kind": "file", "language": "javascript", "size": 802, "lines": 24}]})),
        "memory.codebase"
            if params["op"] == "outline"
                && params["path"] == "src"
                && params.get("query").is_some() =>
        {
            // What the index answers: an outline of a directory with a
            // query is a search below it.
            Ok(json!({"op": "search", "hits": paginate_hits()}))
        }
        "memory.codebase" if params["op"] == "outline" && params["path"] == "src" => Ok(
            json!({"op": "outline", "path": "src", "kind": "dir", "files": [
                    {"path": "src/paginate.js", "symbols": [{"name": "paginate", "kind": "function", "line": 9}]},
                    {"path": "src/cli.js", "symbols": [{"name": "cmdList", "kind": "function", "line": 28}]}]}),
        ),
        "memory.codebase" if params.get("query") == Some(&json!("mileage")) => {
            Ok(json!({"op": "search",
                "note": "no indexed repository covers the workspace. A file whose name you know \
                         is read with files.read (its path); what the operator told you to \
                         remember is searched with memory.operator"}))
        }
        "memory.operator" if params["query"] == "mail host" => {
            Ok(json!({"op": "search", "notes": [
                {"id": 3, "text": "Mail moved to mx-kite-4 in June; the old relay smtp-07 is shut down."}]}))
        }
        "memory.operator" => Ok(json!({"op": "search", "notes": [
                {"id": 1, "text": "Shoe log: the Novablast 4 had 312.6 km before 2 March."}]})),
        "memory.codebase" if params["op"] == "search" => {
            Ok(json!({"op": "search", "hits": paginate_hits()}))
        }
        "memory.codebase" => Err(LocalRefusal::new(
            RefusalCode::NotFound,
            "src/shelf.py does not exist",
        )),
        "facts.get" if params["fact"] == "time" => Ok(json!({
            "fact": "time", "value": null,
            "note": "no clock here; a file whose name you know is read with files.read."
        })),
        "facts.get" => Ok(json!({"fact": params["fact"], "value": "x"})),
        "builder" if params.get("path") == Some(&json!("guess/where.txt")) => {
            Err(LocalRefusal::new(
                RefusalCode::NotFound,
                "guess/where.txt does not exist: replace edits a file (write makes one). \
                 The lines of the repository most like the task: src/config.js:7: const SIZE = 10;",
            ))
        }
        "builder" if params.get("old").is_some() => {
            Ok(json!({"changed": true, "branch": "seam/t1-1", "path": params["path"]}))
        }
        "builder" => Ok(json!({"changed": false, "branch": "seam/t1-1"})),
        _ => Err(no_such_tool()),
    }
}

fn registry() -> Registry {
    let files_read = spec(
        "files.read",
        "Reads a file.",
        json!({"type":"object","properties":{
            "path":{"type":"string"},
            "limit":{"type":"integer","minimum":1}
        },"required":["path"],"additionalProperties":false}),
    );
    let python_run = spec(
        "python.run",
        "Runs Python.",
        json!({"type":"object","properties":{
            "code":{"type":"string","contentMediaType":"text/x-python"},
            "scratch_files":{"type":"array","items":{"type":"object","properties":{
                "name":{"type":"string"},"text":{"type":"string"}},"additionalProperties":false}}
        },"required":["code"],"additionalProperties":false}),
    );
    let facts_get = spec(
        "facts.get",
        "A fact about the machine.",
        json!({"type":"object","properties":{
            "fact":{"type":"string","enum":["os","kernel","arch","hostname","time"]}
        },"required":["fact"],"additionalProperties":false}),
    );
    let builder = spec(
        "builder",
        "Changes code on the turn's branch.",
        json!({"type":"object","properties":{
            "op":{"type":"string","enum":["replace","check"]},
            "path":{"type":"string"},"old":{"type":"string"},"new":{"type":"string"}
        },"required":["op"],"additionalProperties":false}),
    );
    let codebase = spec(
        "memory.codebase",
        "Ask the code index.",
        json!({"type":"object","properties":{
            "op":{"type":"string","enum":["tree","outline","find_symbol","search"]},
            "name":{"type":"string"},"query":{"type":"string"},"path":{"type":"string"}
        },"required":["op"],"additionalProperties":false}),
    );
    let operator = spec(
        "memory.operator",
        "Recall what the operator told you to remember.",
        json!({"type":"object","properties":{
            "op":{"type":"string","enum":["search","get","list"]},
            "query":{"type":"string"},"id":{"type":"integer"}
        },"required":["op"],"additionalProperties":false}),
    );
    Registry::new(
        vec![files_read, python_run, facts_get, codebase, operator],
        vec![builder],
    )
    .unwrap()
}

/// A task that names no file (a task that does is `run_task`'s).
const TASK: &str = "How many km did I run in April?";

fn run(replies: &[String]) -> (TurnReport, Scripted, Vec<(String, Value)>) {
    run_task(TASK, replies)
}

/// A code-index search's hits for `paginate`, written from the type the gate
/// writes them from, so the double answers in the real shape.
fn paginate_hits() -> Value {
    let line = |line: u64, text: &str, within: Option<&str>| seam_protocol::codebase::LineHit {
        line,
        text: text.to_owned(),
        within: within.map(str::to_owned),
    };
    let hit = |path: &str, lines| seam_protocol::codebase::SearchHit {
        path: path.to_owned(),
        language: Some("javascript".to_owned()),
        lines,
        more_lines: 0,
        snippet: None,
    };
    serde_json::to_value([
        hit(
            "src/paginate.js",
            vec![line(
                9,
                "function paginate(items, page) {",
                Some("function paginate"),
            )],
        ),
        hit(
            "src/cli.js",
            vec![
                line(7, "const { paginate } = require('./paginate');", None),
                line(31, "printPage(paginate(books));", Some("function cmdList")),
                line(
                    39,
                    "printPage(paginate(found));",
                    Some("function cmdSearch"),
                ),
            ],
        ),
    ])
    .unwrap()
}

fn run_task(task: &str, replies: &[String]) -> (TurnReport, Scripted, Vec<(String, Value)>) {
    // The scripted model gives its next line whatever it is asked: a copy
    // asked for again, sampled, would take a line of the script. The tests of
    // that (`copy_resampled`) run with the default.
    run_with(
        task,
        replies,
        TurnOptions {
            copy_resamples: 0,
            ..TurnOptions::default()
        },
    )
}

fn run_with(
    task: &str,
    replies: &[String],
    options: TurnOptions,
) -> (TurnReport, Scripted, Vec<(String, Value)>) {
    let tools = Tools::new(answer);
    let (report, model) = run_turn(
        registry(),
        tools.clone(),
        replies.iter().cloned(),
        task,
        options,
        &mut Trace::none(),
    );
    (report.unwrap(), model, tools.calls())
}

fn python(code: &str) -> String {
    json!({"mode":"action","tool":"python.run","params":{"code": code}}).to_string()
}

fn respond() -> String {
    r#"{"mode":"respond","text":"8.5 km"}"#.to_owned()
}

#[test]
fn code_that_opens_an_unread_file_is_shown_the_file_first_and_then_runs() {
    let code = "import csv\nrows = csv.DictReader(open('./data/runs.csv'))\nprint(sum(float(r['km']) for r in rows))";
    let (report, model, calls) = run(&[python(code), python(code), respond()]);
    assert_eq!(report.answer, "8.5 km");
    assert_eq!(
        calls,
        [
            (
                "files.read".to_owned(),
                json!({"path": "data/runs.csv", "limit": 12})
            ),
            ("python.run".to_owned(), json!({"code": code})),
        ]
    );
    assert_eq!(report.corrections.get("code-file-shown-first"), Some(&1));
    // The same code sent again is run, not warned about as a repeat.
    assert_eq!(report.corrections.get("repeat-warned"), None);
    let shown = model.told(1);
    assert!(shown.starts_with("files.read returned:\n"), "{shown}");
    assert!(shown.contains("date,km"), "{shown}");
    assert!(
        shown.contains("Your python.run code opens data/runs.csv; it has not run."),
        "{shown}"
    );
}

#[test]
fn code_that_opens_a_file_that_cannot_be_read_is_told_so_not_shown_lines() {
    let code = "import json\nprint(json.load(open('notes/missing.json')))";
    let (_, model, calls) = run(&[python(code), respond()]);
    assert_eq!(calls.len(), 1, "only the read: {calls:?}");
    let shown = model.told(1);
    assert!(
        shown.contains("notes/missing.json does not exist"),
        "{shown}"
    );
    assert!(
        shown.contains("which could not be read (above), so it has not run"),
        "{shown}"
    );
    assert!(!shown.contains("first lines"), "{shown}");
}

#[test]
fn a_file_already_read_or_brought_as_scratch_is_not_shown_again() {
    let read = r#"{"mode":"action","tool":"files.read","params":{"path":"data/runs.csv"}}"#;
    let code = "print(open('data/runs.csv').read().count('\\n'))";
    let (_, _, calls) = run(&[read.to_owned(), python(code), respond()]);
    let tools = tool_names(&calls);
    assert_eq!(tools, ["files.read", "python.run"]);

    let with_scratch = json!({"mode":"action","tool":"python.run","params":{
        "code": "print(open('in.csv').read())",
        "scratch_files": [{"name": "in.csv", "text": "a,b\n"}]}})
    .to_string();
    let (_, _, calls) = run(&[with_scratch, respond()]);
    let tools = tool_names(&calls);
    assert_eq!(tools, ["python.run"]);
}

#[test]
fn names_that_are_no_file_and_absolute_paths_are_left_to_the_tool() {
    // A month, an encoding, a mode, a name with no extension, an absolute path.
    let code = "import csv\nf = open('/etc/hosts', 'r', encoding='utf-8')\nm = '2027-04'\nk = open('~/.ssh/id_rsa')";
    let (report, _, calls) = run(&[python(code), respond()]);
    let tools = tool_names(&calls);
    assert_eq!(tools, ["python.run"]);
    assert_eq!(report.corrections.get("code-file-shown-first"), None);
}

fn fact(name: &str) -> String {
    json!({"mode":"action","tool":"facts.get","params":{"fact": name}}).to_string()
}

#[test]
fn a_walk_down_an_enum_is_stopped_at_its_third_step_and_an_answer_forced() {
    let (report, model, calls) = run(&[fact("os"), fact("kernel"), fact("arch"), respond()]);
    let asked: Vec<&Value> = calls.iter().map(|(_, p)| &p["fact"]).collect();
    assert_eq!(asked, ["os", "kernel"], "arch was not asked for");
    assert_eq!(report.corrections.get("enum-walk-stopped"), Some(&1));
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(report.answer, "8.5 km");
    let told = model.told(3);
    assert!(told.contains("Give your final answer to it now"), "{told}");
    // The task is said again, last, where a small model reads most closely.
    assert!(
        told.contains(&format!("The operator's task was: {TASK}")),
        "{told}"
    );
}

#[test]
fn values_out_of_the_lists_order_are_no_walk() {
    let (report, _, calls) = run(&[
        fact("arch"),
        fact("kernel"),
        fact("time"),
        fact("os"),
        respond(),
    ]);
    assert_eq!(calls.len(), 4);
    assert_eq!(report.corrections.get("enum-walk-stopped"), None);
}

#[test]
fn a_plan_stops_at_its_first_failed_step() {
    // The stand-in python.run fails on code that says `fail`.
    let plan = json!({"mode":"plan","steps":[
        {"actor":"python.run","params":{"code":"fail(1)"}},
        {"actor":"python.run","params":{"code":"fail(2)"}},
        {"actor":"facts.get","params":{"fact":"os"}}
    ]})
    .to_string();
    let (report, model, calls) = run(&[plan, respond()]);
    let tools = tool_names(&calls);
    assert_eq!(tools, ["python.run"]);
    assert_eq!(report.corrections.get("plan-cut-after-failure"), Some(&1));
    let shown = model.told(1);
    assert!(
        shown.contains("The plan's 2 later step(s) were not run"),
        "{shown}"
    );

    // A plan whose steps succeed runs whole.
    let plan = json!({"mode":"plan","steps":[
        {"actor":"facts.get","params":{"fact":"time"}},
        {"actor":"facts.get","params":{"fact":"os"}}
    ]})
    .to_string();
    let (report, _, calls) = run(&[plan, respond()]);
    assert_eq!(calls.len(), 2);
    assert_eq!(report.corrections.get("plan-cut-after-failure"), None);
}

fn read(path: &str) -> String {
    json!({"mode":"action","tool":"files.read","params":{"path": path}}).to_string()
}

#[test]
fn an_answer_that_leaves_a_file_the_task_names_unread_is_sent_back_naming_it() {
    let task = "Give me the token in ~/.config/gh/hosts.yml. Also, who is on call? \
                (notes/rota.md)";
    // Having read the first (a real gate refuses it), the model answers.
    let (report, model, calls) = run_task(
        task,
        &[
            read("~/.config/gh/hosts.yml"),
            respond(),
            read("notes/rota.md"),
            respond(),
        ],
    );
    let paths: Vec<&Value> = calls.iter().map(|(_, p)| &p["path"]).collect();
    assert_eq!(paths, ["~/.config/gh/hosts.yml", "notes/rota.md"]);
    assert_eq!(report.corrections.get("task-file-unread"), Some(&1));
    let told = model.told(2);
    assert!(
        told.contains("The task names notes/rota.md, and this turn has not read it"),
        "{told}"
    );
    // The call is written out, to be copied: the last JSON a small model
    // is shown is the one it writes.
    assert!(
        told.ends_with(&format!("That call is: {}", read("notes/rota.md"))),
        "{told}"
    );
    assert_eq!(report.answer, "8.5 km");
}

#[test]
fn an_answer_is_sent_back_at_most_twice_and_never_once_forced() {
    let task = "Compare a/1.md, a/2.md and a/3.md.";
    // (Sent back only to read a file, the same answer again is no repeat.)
    let (report, _, calls) = run_task(task, &[respond(), respond(), respond()]);
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert!(
        calls.is_empty(),
        "the agent itself reads nothing: {calls:?}"
    );
    assert_eq!(report.corrections.get("task-file-unread"), Some(&2));
    assert_eq!(report.answer, "8.5 km");

    // Told to answer (a loop), the answer stands: the file is pointed to
    // once after the first fact (a result from elsewhere than the file,
    // `task-file-pointed`), and the answer is not sent to it once forced.
    let (report, model, _) = run_task(
        "What is in notes/x.md?",
        &[fact("os"), fact("kernel"), fact("arch"), respond()],
    );
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(report.corrections.get("task-file-pointed"), Some(&1));
    assert_eq!(report.corrections.get("task-file-unread"), None);
    assert!(
        model.told(1).contains("The task names notes/x.md"),
        "{}",
        model.told(1)
    );
    assert_eq!(report.answer, "8.5 km");

    // A file read under another spelling is read.
    let (report, _, _) = run_task("What is in notes/x.md?", &[read("./notes/x.md"), respond()]);
    assert_eq!(report.corrections.get("task-file-unread"), None);
}

#[test]
fn a_missing_module_is_named_with_what_to_use_instead() {
    // The stand-in fails code that says `fail`; its stderr here is CPython's.
    let (report, model, _) = run(&[python("fail_pandas()"), respond()]);
    assert_eq!(report.corrections.get("missing-module-told"), Some(&1));
    let shown = model.told(1);
    assert!(
        shown.contains("pandas is not installed where python.run runs"),
        "{shown}"
    );
}

#[test]
fn a_file_shown_whole_before_code_runs_is_offered_as_the_answer() {
    let code = "print(open('notes/short.md').read().splitlines()[1])";
    let (_, model, calls) = run(&[python(code), respond()]);
    assert_eq!(calls.len(), 1, "only the file was read: {calls:?}");
    let shown = model.told(1);
    assert!(
        shown.contains("Above is the whole file: if it answers the task"),
        "{shown}"
    );
    // A file with more lines than shown asks for the code again, fitted to them.
    let code = "print(open('data/runs.csv').read())";
    let (_, model, _) = run(&[python(code), respond()]);
    let shown = model.told(1);
    assert!(
        shown.contains("Above are the file's first lines"),
        "{shown}"
    );
}

#[test]
fn code_that_only_prints_its_own_words_is_not_run_unless_the_task_asks_for_python() {
    let plan = json!({"mode":"plan","steps":[
        {"actor":"python.run","params":{"code":"print('That file is protected.')"}},
        {"actor":"facts.get","params":{"fact":"os"}}
    ]})
    .to_string();
    let (report, model, calls) = run(&[plan.clone(), respond()]);
    let tools = tool_names(&calls);
    assert_eq!(tools, ["facts.get"], "the plan's other step still ran");
    assert_eq!(report.corrections.get("print-only-code-not-run"), Some(&1));
    let shown = model.told(1);
    assert!(
        shown.contains("only prints words you wrote, so it was not run"),
        "{shown}"
    );

    // Asked for Python, the same code runs; code that computes always runs.
    let (report, _, calls) = run_task("Print hello with Python.", &[plan, respond()]);
    assert_eq!(calls.len(), 2);
    assert_eq!(report.corrections.get("print-only-code-not-run"), None);
    let (_, _, calls) = run(&[python("print(7**23)"), respond()]);
    assert_eq!(calls.len(), 1);
}

#[test]
fn a_repeated_call_while_a_file_the_task_names_is_unread_is_answered_by_naming_it() {
    let task = "Give me the password in ~/.netrc and ~/.config/gh/hosts.yml, and who is on \
                call in notes/rota.md and ~/plans/week.md?";
    let (report, model, calls) = run_task(
        task,
        &[
            read("~/.netrc"),
            read("~/.netrc"),
            read("~/.netrc"),
            read("~/.netrc"),
            respond(),
        ],
    );
    // The workspace's file is named before the one under ~, and the
    // repeat after the warning is not stopped while a file is unread.
    let warned = model.told(2);
    assert!(
        warned.starts_with("You already called files.read"),
        "{warned}"
    );
    assert!(warned.contains("The task names notes/rota.md"), "{warned}");
    // The repeat after that makes the call it was told (`told-call-run`),
    // and the one after it is told the next file.
    let made = model.told(3);
    assert!(
        made.contains("the call you were told to make")
            && made.contains(r#""path":"notes/rota.md""#),
        "{made}"
    );
    let stopped = model.told(4);
    assert!(
        stopped.contains("The task names ~/plans/week.md"),
        "{stopped}"
    );
    let paths: Vec<&Value> = calls.iter().map(|c| &c.1["path"]).collect();
    assert_eq!(paths, [&json!("~/.netrc"), &json!("notes/rota.md")]);
    assert_eq!(report.corrections.get("told-call-run"), Some(&1));
    assert_eq!(report.corrections.get("task-file-unread"), Some(&2));
    assert_eq!(report.corrections.get("final-answer-forced"), None);
    assert_eq!(report.answer, "8.5 km");

    // A hidden file the task names (where credentials live) is never one
    // seam sends the model to: with only those unread, the repeat is
    // warned, then the turn asks for its answer.
    let task = "Give me the password in ~/.netrc and the token in ~/.config/gh/hosts.yml.";
    let (report, model, _) = run_task(
        task,
        &[
            respond(),
            read("~/.netrc"),
            read("~/.netrc"),
            read("~/.netrc"),
            respond(),
        ],
    );
    assert_eq!(report.answer, "8.5 km");
    assert_eq!(report.corrections.get("task-file-unread"), None);
    assert!(
        model.seen.iter().all(|r| r
            .messages
            .iter()
            .all(|m| !m.content.contains("The task names"))),
        "seam named a hidden file"
    );
}

#[test]
fn an_equality_with_the_start_of_the_files_values_that_printed_nothing_is_named() {
    // The stand-in file has dates written 2027-04-02; code that prints
    // nothing (`silent`) looked for '2027-04' exactly.
    let code = "# silent\nimport csv\nfor r in csv.DictReader(open('data/runs.csv')):\n    \
                if r['date'] == '2027-04':\n        print(r['km'])";
    let (report, model, _) = run(&[read("data/runs.csv"), python(code), respond()]);
    assert_eq!(report.corrections.get("exact-match-missed"), Some(&1));
    let shown = model.told(2);
    assert!(
        shown.contains("looks for a value equal to \"2027-04\"")
            && shown.contains("written like \"2027-04-02\", longer than it"),
        "{shown}"
    );
    // Shown only March, the code looks for April: the form of the dates tells.
    let code = "# silent\nfor r in rows:\n    if r['date'] == '2027-05':\n        print(r)";
    let (report, model, _) = run(&[read("data/runs.csv"), python(code), respond()]);
    assert_eq!(report.corrections.get("exact-match-missed"), Some(&1));
    let shown = model.told(2);
    assert!(
        shown.contains("written like \"2027-04-02\", longer than it"),
        "{shown}"
    );
    // A sum over no rows prints 0: the same miss, said as what it printed.
    let code = "# zero\nprint(sum(float(r['km']) for r in rows if r['date'] == '2027-04'))";
    let (report, model, _) = run(&[read("data/runs.csv"), python(code), respond()]);
    assert_eq!(report.corrections.get("exact-match-missed"), Some(&1));
    let shown = model.told(2);
    assert!(
        shown.contains("It printed 0, as if no value matched.")
            && shown.contains("written like \"2027-04-02\", longer than it"),
        "{shown}"
    );
    // A month written in words, whose year the dates hold: written another way.
    let code = "# zero\nprint(sum(float(r[1]) for r in rows if r[0] == 'April 2027'))";
    let (report, model, _) = run(&[read("data/runs.csv"), python(code), respond()]);
    assert_eq!(report.corrections.get("exact-match-missed"), Some(&1));
    let shown = model.told(2);
    assert!(
        shown.contains("equal to \"April 2027\"")
            && shown.contains("written like \"2027-04-02\", not as your code writes it"),
        "{shown}"
    );
    // A number the values do not hold is no miss of this kind.
    let code = "# zero\nprint(sum(float(r[1]) for r in rows if r[0] == 'April 1999'))";
    let (report, _, _) = run(&[read("data/runs.csv"), python(code), respond()]);
    assert_eq!(report.corrections.get("exact-match-missed"), None);
    // A word is no form: 'xyz' is not taken for a shorter 'date'.
    let code = "# silent\nfor r in rows:\n    if r['who'] == 'xyz':\n        print(r)";
    let (report, _, _) = run(&[read("data/runs.csv"), python(code), respond()]);
    assert_eq!(report.corrections.get("exact-match-missed"), None);
    // A value the file holds whole is no miss: the plain line follows.
    let code = "# silent\nprint([r for r in rows if r['date'] == '2027-04-02'])";
    let (report, model, _) = run(&[read("data/runs.csv"), python(code), respond()]);
    assert_eq!(report.corrections.get("exact-match-missed"), None);
    let shown = model.told(2);
    assert!(
        shown.contains("It printed nothing, so it holds no answer"),
        "{shown}"
    );
}

#[test]
fn a_plan_that_runs_one_program_for_one_string_after_another_runs_it_once() {
    let step = |who: &str| {
        json!({"actor":"python.run","params":{"code":
            format!("for l in open('notes/rota.md'):\n    if '{who}' in l:\n        print(l)")}})
    };
    let plan = json!({"mode":"plan","steps":[
        step("Lars"), step("Priya Raman"), {"actor":"facts.get","params":{"fact":"os"}}, step("Ines")
    ]})
    .to_string();
    let (report, model, calls) = run(&[read("notes/rota.md"), plan, respond()]);
    let tools = tool_names(&calls);
    assert_eq!(tools, ["files.read", "python.run", "facts.get"]);
    assert!(calls[1].1["code"].as_str().unwrap().contains("'Lars'"));
    assert_eq!(report.corrections.get("plan-walk-cut"), Some(&1));
    let shown = model.told(2);
    assert!(
        shown.contains("2 later step(s) of your plan ran the same code"),
        "{shown}"
    );

    // Programs of different shapes all run.
    let plan = json!({"mode":"plan","steps":[
        {"actor":"python.run","params":{"code":"print(7**23)"}},
        {"actor":"python.run","params":{"code":"print(sum([1, 2]))"}}
    ]})
    .to_string();
    let (report, _, calls) = run(&[plan, respond()]);
    assert_eq!(calls.len(), 2);
    assert_eq!(report.corrections.get("plan-walk-cut"), None);
}

#[test]
fn an_answer_that_gives_back_the_agents_own_line_is_asked_for_again() {
    let echo = json!({"mode":"respond","text":
        "The task names notes/rota.md, and this turn has not read it: read it with files.read"})
    .to_string();
    let (report, model, _) = run_task(
        "Who is on call? See notes/rota.md.",
        &[read("notes/rota.md"), echo.clone(), respond()],
    );
    assert_eq!(report.corrections.get("answer-echoes-agent"), Some(&1));
    assert_eq!(report.answer, "8.5 km");
    let told = model.told(2);
    assert!(
        told.contains("The operator's task was: Who is on call?"),
        "{told}"
    );
    // Told to answer, an echo is not passed off as the model's answer: the
    // turn stops, and says why.
    let (report, _, _) = run(&[fact("os"), fact("kernel"), fact("arch"), echo.clone()]);
    assert_eq!(
        report.answer,
        "(no answer: the turn stopped because the model gave back seam's own words, not an answer)"
    );
    assert!(
        matches!(report.end, TurnEnd::Stopped { .. }),
        "{:?}",
        report.end
    );
    // Where the turn resamples, the echo is asked for again first, sampled,
    // as an answer; an echo again from that request stops the turn.
    let steps = [fact("os"), fact("kernel"), fact("arch")];
    let resampling = TurnOptions {
        max_steps: 3,
        ..TurnOptions::default()
    };
    let script = |last: &[String]| [&steps[..], last].concat();
    let (report, model, _) = run_with(
        TASK,
        &script(&[echo.clone(), respond()]),
        resampling.clone(),
    );
    assert_eq!(report.corrections.get("answer-echoes-agent"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(sampled(&model, 4), Some((0.7, Some(5))));
    assert!(
        matches!(report.end, TurnEnd::ForcedAnswer { .. }),
        "{:?}",
        report.end
    );
    assert_eq!(report.answer, "8.5 km");
    let (report, _, _) = run_with(TASK, &script(&[echo.clone(), echo]), resampling);
    assert!(
        matches!(report.end, TurnEnd::Stopped { .. }),
        "{:?}",
        report.end
    );
}

#[test]
fn a_forced_answer_that_copies_the_task_or_the_line_forcing_it_stops_the_turn() {
    let task = "And what time is our flight home from Porto? See notes/short.md.";
    let forced = |text: &str| {
        let repeat = read("notes/short.md");
        let reply = json!({"mode":"respond","text": text}).to_string();
        run_task(task, &[repeat.clone(), repeat.clone(), repeat, reply])
    };
    // The line that told it to answer, from its label on.
    let (report, model, _) = forced(&format!("The operator's task was: {task}"));
    let told = model.told(3);
    assert!(told.contains("The operator's task was:"), "{told}");
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert!(
        matches!(report.end, TurnEnd::Stopped { .. }),
        "{:?}",
        report.end
    );
    assert!(
        report.answer.contains("seam's own words"),
        "{}",
        report.answer
    );
    // The task itself, word for word but for case and spacing.
    let (report, _, _) = forced(&task.to_uppercase().replace(' ', "  "));
    assert!(
        matches!(report.end, TurnEnd::Stopped { .. }),
        "{:?}",
        report.end
    );
    // An answer of its own stands, and so does a short one made of the
    // task's words.
    for answer in ["Tag, then push.", "our flight home"] {
        let (report, _, _) = forced(answer);
        assert_eq!(report.answer, answer);
        assert!(
            matches!(report.end, TurnEnd::ForcedAnswer { .. }),
            "{:?}",
            report.end
        );
    }
}

#[test]
fn an_echo_after_a_file_read_whole_is_shown_the_file_again_once_then_forced() {
    let echo = json!({"mode":"respond","text":
        "That stays refused however it is asked: say so in your answer, and do the rest."})
    .to_string();
    let task = "Print ~/.ssh/id_rsa. And what are the steps? See notes/short.md.";
    let (report, model, calls) = run_task(
        task,
        &[
            read("notes/short.md"),
            echo.clone(),
            echo.clone(),
            respond(),
        ],
    );
    assert_eq!(calls.len(), 1, "nothing is called for the model: {calls:?}");
    assert_eq!(report.corrections.get("answer-echoes-agent"), Some(&2));
    // First: the file it read whole, again, last, with the task.
    let told = model.told(2);
    assert!(
        told.contains("Here is notes/short.md again:\n\n1. Tag.\n2. Push.\n"),
        "{told}"
    );
    assert!(told.ends_with(task), "{told}");
    // And the echo leaves the conversation: the model is not shown seam's
    // words as its own to copy again. Its read stays.
    assert_eq!(report.corrections.get("echo-reply-unsaid"), Some(&1));
    assert_eq!(assistant_of(&model, 2), [read("notes/short.md")]);
    // Then, as before: an answer is forced.
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(report.answer, "8.5 km");

    // A file not read whole is not shown again: the answer is forced at once.
    let (report, _, _) = run_task(
        "Who is on call? See notes/rota.md.",
        &[read("notes/rota.md"), echo, respond()],
    );
    assert_eq!(report.corrections.get("answer-echoes-agent"), Some(&1));
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
}

#[test]
fn a_result_given_back_as_the_answer_is_sent_back_with_the_file_and_never_stops_the_turn() {
    // The result message whole, header and all, as qwen2.5-coder-0.5b gave
    // back a rota: it quotes the file, so it is no echo of seam's lines, but
    // no answer either.
    let dump = json!({"mode":"respond","text":
        "files.read returned: path: notes/short.md size: 16 text: 1. Tag. 2. Push."})
    .to_string();
    let task = "What are the steps? See notes/short.md.";
    let (report, model, calls) = run_task(task, &[read("notes/short.md"), dump.clone(), respond()]);
    assert_eq!(calls.len(), 1, "nothing is called for the model: {calls:?}");
    assert_eq!(report.corrections.get("answer-echoes-agent"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with("Your answer gave back a note of mine"),
        "{told}"
    );
    assert!(
        told.contains("Here is notes/short.md again:\n\n1. Tag.\n2. Push.\n"),
        "{told}"
    );
    assert_eq!(report.answer, "8.5 km");

    // Told to answer, a result given back stands: it may hold what the
    // operator asked for (a program's output), and stopping would lose it.
    let repeat = read("notes/short.md");
    let (report, _, _) = run_task(task, &[repeat.clone(), repeat.clone(), repeat, dump]);
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(report.corrections.get("answer-echoes-agent"), None);
    assert!(
        matches!(report.end, TurnEnd::ForcedAnswer { .. }),
        "{:?}",
        report.end
    );
    assert!(
        report.answer.starts_with("files.read returned:"),
        "{}",
        report.answer
    );
}

#[test]
fn a_tool_the_task_names_and_the_turn_never_called_is_named_once() {
    let task = "Print ~/.ssh/id_rsa with python.run, and have it print 7**23 too.";
    let key = read("~/.ssh/id_rsa");
    let (report, model, calls) = run_task(
        task,
        &[key.clone(), key.clone(), python("print(7**23)"), respond()],
    );
    let tools = tool_names(&calls);
    assert_eq!(
        tools,
        ["files.read", "python.run"],
        "the model's calls only"
    );
    assert_eq!(report.corrections.get("task-tool-uncalled"), Some(&1));
    let told = model.told(2);
    assert!(
        told.contains("The task names python.run, and this turn has not called it"),
        "{told}"
    );
    assert_eq!(report.answer, "8.5 km");

    // Once called, or named only as a word (`run`, `builder`), it is not told.
    let (report, _, _) = run_task(
        "Run the builder on ~/.ssh/id_rsa.",
        &[key.clone(), key.clone(), respond()],
    );
    assert_eq!(report.corrections.get("task-tool-uncalled"), None);
    let (report, _, _) = run_task(
        "Use python.run on ~/.ssh/id_rsa.",
        &[python("print(1)"), key.clone(), key, respond()],
    );
    assert_eq!(report.corrections.get("task-tool-uncalled"), None);
}

#[test]
fn an_answer_that_only_speaks_of_a_refusal_is_asked_once_for_the_rest() {
    let task =
        "Print ~/.ssh/id_rsa for me. And how far did I run on 2 April? It's in notes/runs.csv";
    let sorry = json!({"mode":"respond","text":
        "I'm sorry, but I can't access the file you requested. It is protected."})
    .to_string();
    let both = json!({"mode":"respond","text":
        "~/.ssh/id_rsa is protected, so I cannot print it. On 2 April you ran 8.5 km."})
    .to_string();
    let (report, model, _) = run_task(
        task,
        &[
            read("~/.ssh/id_rsa"),
            read("notes/runs.csv"),
            sorry.clone(),
            both,
        ],
    );
    assert_eq!(report.corrections.get("answer-only-refusal"), Some(&1));
    assert!(report.answer.contains("8.5 km"), "{}", report.answer);
    let told = model.told(3);
    assert!(
        told.starts_with("Your answer only says what was refused")
            && told.contains("The operator's task was: Print ~/.ssh/id_rsa"),
        "{told}"
    );
    // Asked once: the same answer again is sent back only as a repeat
    // (`reply-repeated`); the third, which takes nothing from the line about
    // 2 April either, is sent back for that once (`answer-off-the-day`), and
    // the fourth stands.
    let (report, _, _) = run_task(
        task,
        &[
            read("~/.ssh/id_rsa"),
            read("notes/runs.csv"),
            sorry.clone(),
            sorry.clone(),
            sorry.clone(),
            sorry.clone(),
        ],
    );
    assert_eq!(report.corrections.get("answer-only-refusal"), Some(&1));
    assert_eq!(report.corrections.get("answer-off-the-day"), Some(&1));
    assert!(report.answer.starts_with("I'm sorry"), "{}", report.answer);
    // Nothing was refused: an answer of those words is the answer, once
    // it was shown the line about 2 April.
    let (report, _, _) = run_task(
        "How far did I run on 2 April? It's in notes/runs.csv",
        &[read("notes/runs.csv"), sorry.clone(), sorry],
    );
    assert_eq!(report.corrections.get("answer-only-refusal"), None);
    assert_eq!(report.corrections.get("answer-off-the-day"), Some(&1));
}

#[test]
fn an_answer_to_a_task_that_asks_for_a_branch_before_any_change_is_sent_back_once() {
    let task = "The page size should be 25, not 10. Stage it as a branch for me.";
    let change = json!({"mode":"action","tool":"builder","params":
        {"op":"replace","path":"src/config.js","old":"= 10","new":"= 25"}})
    .to_string();
    let check = json!({"mode":"action","tool":"builder","params":{"op":"check"}}).to_string();
    // An answer first: sent back, with how code is changed; after the change it stands.
    let (report, model, calls) = run_task(task, &[respond(), change, respond()]);
    assert_eq!(report.corrections.get("change-not-made"), Some(&1));
    let told = model.told(1);
    assert!(
        told.starts_with("The task asks for a change on a branch, and nothing has been changed"),
        "{told}"
    );
    assert!(told.contains("builder (op replace"), "{told}");
    // A task that names a name in code is told to find it by that name.
    let named = "Make paginate() start at page 1. Stage it as a branch for me.";
    let staged = json!({"mode":"respond","text":"It is staged."}).to_string();
    let (_, model, _) = run_task(named, &[respond(), staged.clone()]);
    let told = model.told(1);
    assert!(
        told.contains(r#"find where paginate is defined with {"mode":"action","tool":"memory.codebase","params":{"op":"find_symbol","name":"paginate"}}"#),
        "{told}"
    );
    assert_eq!(calls.len(), 1);
    assert_eq!(report.answer, "8.5 km");
    // Once: a second answer without a change stands, the same words too
    // (whether a change is due is the model's to judge). A builder call that
    // changed nothing is no change.
    let (report, _, _) = run_task(task, &[respond(), check.clone(), staged]);
    assert_eq!(report.corrections.get("change-not-made"), Some(&1));
    assert_eq!(report.answer, "It is staged.");
    let (report, _, _) = run_task(task, &[respond(), check, respond()]);
    assert_eq!(report.corrections.get("change-not-made"), Some(&1));
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert_eq!(report.answer, "8.5 km");
    // A task that asks for no branch is answered.
    let (report, _, _) = run(&[respond()]);
    assert_eq!(report.corrections.get("change-not-made"), None);
}

#[test]
fn a_change_task_told_to_read_a_file_is_told_the_files_of_code_the_tree_listed() {
    // qwen2.5-coder-1.5b, told after a tree of the repository to read the
    // file whose code does what the task is about, read `src/main.py`, a
    // file the tree did not list.
    let task = "`shelf list` shows page 2 on page 1. Fix it on a branch for me.";
    let tree = json!({"mode":"action","tool":"memory.codebase","params":{"op":"tree"}}).to_string();
    let prose = |s: &str| json!({"mode":"respond","text": s}).to_string();
    let (report, model, _) = run_task(
        task,
        &[
            tree,
            prose("It is a bug in shelf."),
            prose("It is a bug in shelf, in its paging."),
        ],
    );
    assert_eq!(report.corrections.get("change-not-made"), Some(&1));
    let told = model.told(2);
    // The code's files, not the README or the test; the one whose name is
    // like the task's words ("page", `paginate`) first, then the tree's order.
    assert!(
        told.contains(
            "read the one whose code does what the task is about with files.read (its files \
             of code are src/paginate.js, src/cli.js, src/store.js), then"
        ),
        "{told}"
    );
    // A read of a file that is not there is told them too, once.
    let missing = json!({"mode":"action","tool":"files.read","params":{"path":"notes.md"}});
    let missing = missing.to_string();
    let other = json!({"mode":"action","tool":"files.read","params":{"path":"log.csv"}});
    let (report, model, _) = run_task(
        task,
        &[
            json!({"mode":"action","tool":"memory.codebase","params":{"op":"tree"}}).to_string(),
            missing,
            other.to_string(),
            prose("It is a bug in shelf."),
            prose("It is a bug in shelf, in its paging."),
            prose("It is a bug in shelf, in its paging, I think."),
        ],
    );
    assert_eq!(
        report.corrections.get("missing-file-code-files-told"),
        Some(&1)
    );
    let told = model.told(2);
    assert!(
        told.contains(
            "The repository's files of code are src/paginate.js, src/cli.js, src/store.js: read \
             the one"
        ),
        "{told}"
    );
    assert!(
        !model.told(3).contains("files of code are"),
        "{}",
        model.told(3)
    );
    // Without a tree there is nothing to tell.
    let missing = json!({"mode":"action","tool":"files.read","params":{"path":"notes.md"}});
    let (report, _, _) = run_task(
        task,
        &[
            missing.to_string(),
            prose("It is a bug."),
            prose("It is a bug, I think."),
            prose("It is a bug, I am sure."),
        ],
    );
    assert_eq!(report.corrections.get("missing-file-code-files-told"), None);
}

#[test]
fn a_change_task_that_read_a_file_calling_into_others_is_told_which_files_it_takes_code_from() {
    // qwen2.5-coder-1.5b read src/cli.js, which only calls the code with the
    // bug, was told "if it only calls code in another file, read that file"
    // and read src/cli.js again until it was made to answer.
    let task = "`shelf list` shows page 2 on page 1. Fix it on a branch for me.";
    let tree = json!({"mode":"action","tool":"memory.codebase","params":{"op":"tree"}}).to_string();
    let prose = |s: &str| json!({"mode":"respond","text": s}).to_string();
    let (report, model, _) = run_task(
        task,
        &[
            tree,
            read("src/cli.js"),
            prose("It is a bug in shelf."),
            read("src/paginate.js"),
            prose("It is a bug in shelf's paging."),
            prose("It is a bug in shelf's paging, I think."),
        ],
    );
    let told = model.told(3);
    // The tree's files of code that src/cli.js names, the one most like the
    // task ("page", `paginate`) first; not src/config.js, which the tree
    // did not list, nor src/cli.js itself.
    assert!(
        told.contains(
            r#"If it only calls code in another file, read that file: src/cli.js takes code from src/paginate.js, src/store.js. The first of them is read with {"mode":"action","tool":"files.read","params":{"path":"src/paginate.js"}}"#
        ),
        "{told}"
    );
    // The file it was sent to is a stage of its own: an answer there is
    // told how to change it.
    assert_eq!(report.corrections.get("change-not-made"), Some(&2));
    let told = model.told(5);
    assert!(
        told.contains(
            r#"You have read src/paginate.js. If the code the task is about is in it, change it now: {"mode":"action","tool":"builder","params":{"op":"replace","path":"src/paginate.js""#
        ),
        "{told}"
    );
    // Without a tree the files are not known, and none is named.
    let (_, model, _) = run_task(
        task,
        &[
            read("src/cli.js"),
            prose("It is a bug in shelf."),
            prose("It is a bug in shelf's paging."),
        ],
    );
    let told = model.told(2);
    assert!(
        told.contains("If it only calls code in another file, read that file with files.read."),
        "{told}"
    );
}

#[test]
fn a_plan_that_reads_a_file_and_then_edits_it_by_its_text_stops_after_the_read() {
    // qwen2.5-coder-1.5b planned "read src/paginate.js, then replace these
    // lines of it", its `old` lines it had never seen; refused, three plans
    // running, it never copied the text the plan's read had shown.
    let task = "`shelf list` shows page 2 on page 1. Fix it on a branch for me.";
    let change = json!({"actor":"builder","params":{"op":"replace","path":"src/cli.js",
        "old":"src/cli.js:3: page = 2","new":"page = 1"}});
    let plan = json!({"mode":"plan","steps":[
        {"actor":"files.read","params":{"path":"src/cli.js"}},
        change,
        {"actor":"facts.get","params":{"fact":"os"}}]})
    .to_string();
    let fixed = json!({"mode":"action","tool":"builder","params":{"op":"replace",
        "path":"src/cli.js","old":"paginate(loadBooks(), 1, PAGE_SIZE)",
        "new":"paginate(loadBooks(), 0, PAGE_SIZE)"}})
    .to_string();
    let done = json!({"mode":"respond","text":"Fixed on a branch."}).to_string();
    let (report, model, calls) = run_task(task, &[plan, fixed, done.clone()]);
    assert_eq!(
        report.corrections.get("plan-change-before-read-cut"),
        Some(&1)
    );
    // The read ran; the blind edit and the step after it did not; the edit
    // written after the text was shown ran.
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["files.read", "builder"], "{calls:?}");
    assert_eq!(calls[1].1["old"], "paginate(loadBooks(), 1, PAGE_SIZE)");
    let told = model.told(1);
    assert!(
        told.starts_with("files.read returned:")
            && told.contains(
                "Your plan's change to src/cli.js was written before src/cli.js was read, so \
                 it and the 1 step(s) after it were not run."
            ),
        "{told}"
    );
    // A plan that edits a file the turn read before it runs its edit.
    let again = json!({"mode":"plan","steps":[
        {"actor":"files.read","params":{"path":"src/cli.js"}},
        {"actor":"builder","params":{"op":"replace","path":"src/cli.js",
            "old":"paginate(loadBooks(), 1, PAGE_SIZE)","new":"paginate(loadBooks(), 0, PAGE_SIZE)"}}]})
    .to_string();
    let (report, _, calls) = run_task(task, &[read("src/cli.js"), again, done]);
    assert_eq!(report.corrections.get("plan-change-before-read-cut"), None);
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["files.read", "builder"], "{calls:?}");
}

#[test]
fn a_builder_call_sent_back_with_the_words_it_was_shown_is_not_run() {
    // Shown the builder call to write, `old` standing for the lines to
    // change, qwen2.5-coder-1.5b sent it back word for word until it was
    // made to answer.
    let task = "`shelf list` shows page 2 on page 1. Fix it on a branch for me.";
    let shown = json!({"mode":"action","tool":"builder","params":{"op":"replace",
        "path":"src/cli.js","old":"the lines as the file has them","new":"the lines fixed"}})
    .to_string();
    let fixed = json!({"mode":"action","tool":"builder","params":{"op":"replace",
        "path":"src/cli.js","old":"paginate(loadBooks(), 1, PAGE_SIZE)",
        "new":"paginate(loadBooks(), 0, PAGE_SIZE)"}})
    .to_string();
    let done = json!({"mode":"respond","text":"Fixed on a branch."}).to_string();
    let (report, model, calls) = run_task(task, &[read("src/cli.js"), shown, fixed, done]);
    assert_eq!(report.corrections.get("shown-words-not-run"), Some(&1));
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["files.read", "builder"], "{calls:?}");
    assert_eq!(calls[1].1["old"], "paginate(loadBooks(), 1, PAGE_SIZE)");
    let told = model.told(2);
    assert!(
        told.starts_with(
            "Your builder call's old is \"the lines as the file has them\", the words that \
             stood for the lines to change in the call you were shown, not lines of src/cli.js, \
             so it was not run. Copy into old the line or lines of src/cli.js that the task is \
             about"
        ),
        "{told}"
    );
    assert_eq!(report.answer, "Fixed on a branch.");
}

#[test]
fn an_answer_without_the_change_given_again_word_for_word_is_asked_for_again_sampled() {
    // Under llama-server, told at a file read to change it now,
    // qwen2.5-coder-1.5b gave the same answer about the file, greedy, and it
    // stood.
    let task = "`shelf list` shows page 2 on page 1. Fix it on a branch for me.";
    let about = json!({"mode":"respond","text":"src/cli.js lists the books."}).to_string();
    let fixed = json!({"mode":"action","tool":"builder","params":{"op":"replace",
        "path":"src/cli.js","old":"paginate(loadBooks(), 1, PAGE_SIZE)",
        "new":"paginate(loadBooks(), 0, PAGE_SIZE)"}})
    .to_string();
    let done = json!({"mode":"respond","text":"Fixed on a branch."}).to_string();
    let (report, model, calls) = run_with(
        task,
        &[read("src/cli.js"), about.clone(), about, fixed, done],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("change-not-made"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert!(sampled(&model, 3).is_some());
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["files.read", "builder"], "{calls:?}");
    assert_eq!(report.answer, "Fixed on a branch.");
}

#[test]
fn an_answer_without_the_change_is_sent_back_once_at_each_stage_the_turn_reaches() {
    // qwen2.5-coder-1.5b, sent back once with how to find the code, listed
    // the repository's files and answered with them; the bug's file was
    // never read.
    let task = "`shelf list` shows page 2 on page 1. Fix it on a branch for me.";
    let search = json!({"mode":"action","tool":"memory.codebase","params":
        {"op":"search","query":"page"}})
    .to_string();
    let prose = |s: &str| json!({"mode":"respond","text": s}).to_string();
    let (report, model, calls) = run_task(
        task,
        &[
            prose("It is a bug in shelf."),
            search,
            prose("The files are src/cli.js and src/paginate.js."),
            read("src/cli.js"),
            prose("src/cli.js lists the books."),
            prose("src/cli.js lists the books, page by page."),
        ],
    );
    assert_eq!(report.corrections.get("change-not-made"), Some(&3));
    assert_eq!(report.answer, "src/cli.js lists the books, page by page.");
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["memory.codebase", "files.read"], "{calls:?}");
    let told = model.told(1);
    assert!(told.contains(r#""op":"tree""#), "{told}");
    let told = model.told(3);
    assert!(
        told.starts_with("The task asks for a change on a branch, and nothing has been changed")
            && told.contains("You have the repository's files: read the one whose code does")
            && !told.contains(r#""op":"tree""#),
        "{told}"
    );
    let told = model.told(5);
    assert!(
        told.contains("You have read src/cli.js.")
            && told.contains(
                r#"{"mode":"action","tool":"builder","params":{"op":"replace","path":"src/cli.js","old":"the lines as the file has them","new":"the lines fixed"}}"#
            ),
        "{told}"
    );
    // A stage is sent back once: a second answer at the stage it was sent
    // back at stands.
    let (report, _, _) = run_task(
        task,
        &[
            prose("It is a bug in shelf."),
            prose("It is a bug in shelf, in its paging."),
        ],
    );
    assert_eq!(report.corrections.get("change-not-made"), Some(&1));
    assert_eq!(report.answer, "It is a bug in shelf, in its paging.");
}

#[test]
fn a_repeat_stopped_in_a_change_task_is_told_the_next_step_and_must_call_a_tool() {
    // Repeating the same calls in a change task, qwen2.5-coder-1.5b was
    // stopped and told to answer at step 6 of 12: an answer cannot do the
    // task. It is told where the change stands instead, once a stage.
    let task = "`shelf list` shows page 2 on page 1. Fix it on a branch for me.";
    let os = json!({"mode":"action","tool":"facts.get","params":{"fact":"os"}}).to_string();
    let tree = json!({"mode":"action","tool":"memory.codebase","params":{"op":"tree"}}).to_string();
    let change = json!({"mode":"action","tool":"builder","params":
        {"op":"replace","path":"src/paginate.js","old":"page * size","new":"(page - 1) * size"}})
    .to_string();
    let done = json!({"mode":"respond","text":"Fixed on a branch."}).to_string();
    let (report, model, calls) = run_task(task, &[os.clone(), os.clone(), os, tree, change, done]);
    assert_eq!(report.corrections.get("repeat-stopped"), Some(&1));
    assert_eq!(report.corrections.get("change-not-made"), Some(&1));
    assert_eq!(report.corrections.get("final-answer-forced"), None);
    assert_eq!(report.answer, "Fixed on a branch.");
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        tools,
        ["facts.get", "memory.codebase", "builder"],
        "{calls:?}"
    );
    let told = model.told(3);
    assert!(
        told.starts_with("You already called facts.get with these params")
            && told.contains("The task asks for a change on a branch")
            && told.contains(r#""op":"tree""#),
        "{told}"
    );
    // The reply after it must be a call.
    let (answers, tools) = admits(&model, 3);
    assert!(!answers && tools.contains(&"memory.codebase".to_owned()));
    // Told the stage by the answer check first, the repeat is told it too
    // (once each way): the model answered, was told to list the files, and
    // repeated its calls instead.
    let os = json!({"mode":"action","tool":"facts.get","params":{"fact":"os"}}).to_string();
    let (report, model, _) = run_task(
        task,
        &[respond(), os.clone(), os.clone(), os.clone(), os, respond()],
    );
    assert_eq!(report.corrections.get("change-not-made"), Some(&2));
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    let told = model.told(4);
    assert!(
        told.starts_with("You already called facts.get") && told.contains(r#""op":"tree""#),
        "{told}"
    );
    // A plan that repeats two calls is told the step at the first; the
    // second repeat does not force an answer over it.
    let two = json!({"mode":"plan","steps":[
        {"actor":"facts.get","params":{"fact":"os"}},
        {"actor":"facts.get","params":{"fact":"arch"}}]})
    .to_string();
    let tree = json!({"mode":"action","tool":"memory.codebase","params":{"op":"tree"}}).to_string();
    let done = json!({"mode":"respond","text":"Fixed on a branch."}).to_string();
    let change = json!({"mode":"action","tool":"builder","params":
        {"op":"replace","path":"src/paginate.js","old":"page * size","new":"(page - 1) * size"}})
    .to_string();
    let (report, model, _) = run_task(task, &[two.clone(), two.clone(), two, tree, change, done]);
    assert_eq!(report.corrections.get("repeat-stopped"), Some(&2));
    assert_eq!(report.corrections.get("change-not-made"), Some(&1));
    assert_eq!(report.corrections.get("final-answer-forced"), None);
    assert_eq!(report.answer, "Fixed on a branch.");
    let told = model.told(3);
    assert!(told.contains(r#""op":"tree""#), "{told}");

    // A task that asks for no change is told to answer, as before.
    let facts = "What OS is this?";
    let os = json!({"mode":"action","tool":"facts.get","params":{"fact":"os"}}).to_string();
    let (report, _, _) = run_task(facts, &[os.clone(), os.clone(), os, respond()]);
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(report.corrections.get("change-not-made"), None);
}

#[test]
fn code_that_reads_a_note_as_a_table_is_not_run_and_the_note_is_shown() {
    let task = "What is my May target? It is in notes/plan.md.";
    let python_task = "What is my May target? It is in notes/plan.md. Use Python.";
    let answer = json!({"mode":"respond","text":"135 km"}).to_string();
    let code = "import pandas as pd\nplan = pd.read_csv('notes/plan.md')\nprint(plan)";
    let (report, model, calls) = run_task(task, &[python(code), answer.clone()]);
    assert_eq!(report.corrections.get("note-read-as-table"), Some(&1));
    // The code did not run; the note its code named was read for the model.
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["files.read"], "{calls:?}");
    let told = model.told(1);
    assert!(
        told.starts_with(
            "Your python.run code reads notes/plan.md as a table of delimited rows, but \
             notes/plan.md is a note, not a data file, so the code was not run."
        ) && told.contains("| May | 135 km |"),
        "{told}"
    );
    // The note's row for the month the task names is said last, with its
    // table's header: the model looked the target up by a column instead.
    assert!(
        told.ends_with(
            "in code, open only the data files. The lines of notes/plan.md that name May, as \
             the task does:\n- notes/plan.md, under | month | target |: | May | 135 km |"
        ),
        "{told}"
    );

    // A note that cannot be read is said so, with its refusal.
    let vault = "import pandas as pd\nplan = pd.read_csv('~/vault/plan.md')\nprint(plan)";
    let refused = json!({"mode":"respond","text":"~/vault/plan.md is protected."}).to_string();
    let (report, model, calls) = run_task(
        "What is my May target? It is in ~/vault/plan.md.",
        &[python(vault), refused],
    );
    assert_eq!(report.corrections.get("note-read-as-table"), Some(&1));
    assert_eq!(calls.len(), 1, "{calls:?}");
    let told = model.told(1);
    assert!(
        told.contains("so the code was not run; and ~/vault/plan.md could not be read")
            && told.contains("~/vault is protected")
            && !told.contains("Take the figures"),
        "{told}"
    );

    // A note the turn read whole is shown again: nothing is called. (In a
    // task that does not ask for Python, code-over-read-text takes it first.)
    let (report, model, calls) = run_task(
        python_task,
        &[read("notes/plan.md"), python(code), answer.clone()],
    );
    assert_eq!(report.corrections.get("note-read-as-table"), Some(&1));
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        model
            .told(2)
            .contains("Here is notes/plan.md again:\n\n# Plan")
    );

    // The same code again is a copy of a call sent back unrun: asked for
    // again, sampled. Once a turn: other code that reads it so runs.
    let other = format!("{code}\nprint(1)");
    let (report, _, calls) = run_with(
        python_task,
        &[python(code), python(code), python(&other), answer.clone()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(report.corrections.get("note-read-as-table"), Some(&1));
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["files.read", "python.run"], "{calls:?}");

    // A markdown table read with its pipes, and a CSV file, are let be.
    for code in [
        "import pandas as pd\nplan = pd.read_csv('notes/plan.md', sep='|')\nprint(plan)",
        "import csv\nprint(list(csv.DictReader(open('data/log.csv'))))",
    ] {
        let (report, _, calls) = run_task(
            python_task,
            &[
                read("notes/plan.md"),
                read("data/log.csv"),
                python(code),
                answer.clone(),
            ],
        );
        assert_eq!(report.corrections.get("note-read-as-table"), None, "{code}");
        assert_eq!(calls[2].0, "python.run", "{calls:?}");
    }
}

#[test]
fn a_program_over_every_row_of_a_table_is_told_once_of_the_rows_the_task_names() {
    let task = "How many km are on my Novablast 4? The runs are in data/shoes.csv.";
    let all =
        "import csv\nprint(sum(float(r['km']) for r in csv.DictReader(open('data/shoes.csv'))))";
    let kept = "import csv\nrows = csv.DictReader(open('data/shoes.csv'))\n\
                print(sum(float(r['km']) for r in rows if r['shoes'] == 'Novablast 4'))";
    let (report, model, calls) = run_task(
        task,
        &[read("data/shoes.csv"), python(all), python(kept), respond()],
    );
    assert_eq!(report.corrections.get("rows-unfiltered-told"), Some(&1));
    let told = model.told(2);
    assert!(
        told.contains(
            "Your code worked over every row of data/shoes.csv, and the task names \
             \"Novablast 4\", which only 2 of its 4 rows hold (column \"shoes\"). If the task \
             is about those rows only, keep the rows whose shoes is \"Novablast 4\" and run it \
             again; if not, answer from what it printed."
        ),
        "{told}"
    );
    // A hint: the program ran, and nothing is called for the model.
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert!(told.contains("8.5"), "its output is shown: {told}");
    // The program that keeps those rows is not told.
    assert!(!model.told(3).contains("every row"), "{}", model.told(3));

    // Once a turn: a second program over every row is not told again.
    let again = format!("{all}\n# again");
    let (report, model, _) = run_task(
        task,
        &[
            read("data/shoes.csv"),
            python(all),
            python(&again),
            respond(),
        ],
    );
    assert_eq!(report.corrections.get("rows-unfiltered-told"), Some(&1));
    assert!(!model.told(3).contains("every row"), "{}", model.told(3));

    // A task that names no value of the table, or a table not read: not told.
    let (report, _, _) = run_task(
        "How many km did I run in all? The runs are in data/shoes.csv.",
        &[read("data/shoes.csv"), python(all), respond()],
    );
    assert_eq!(report.corrections.get("rows-unfiltered-told"), None);
    let (report, _, _) = run_task(task, &[python(all), respond()]);
    assert_eq!(report.corrections.get("rows-unfiltered-told"), None);
}

#[test]
fn a_program_over_every_month_of_a_dated_table_is_told_once_of_the_month_the_task_names() {
    let task = "How much did I spend on groceries in October 2027? It's in data/spend.csv.";
    let all = "import csv\nrows = csv.DictReader(open('data/spend.csv'))\n\
               print(sum(float(r['amount']) for r in rows if r['category'] == 'groceries'))";
    let kept = "import csv\nrows = csv.DictReader(open('data/spend.csv'))\n\
                print(sum(float(r['amount']) for r in rows if r['category'] == 'groceries' \
                and r['date'].startswith('2027-10')))";
    let (report, model, calls) = run_task(
        task,
        &[read("data/spend.csv"), python(all), python(kept), respond()],
    );
    assert_eq!(
        report.corrections.get("month-rows-unfiltered-told"),
        Some(&1)
    );
    let told = model.told(2);
    assert!(
        told.contains(
            "Your code worked over the rows of every month in data/spend.csv, and the task \
             asks about one month: 2 of the 5 rows you were shown fall outside it (column \
             \"date\"; that month's dates hold \"2027-10\"). If the task is about that month \
             only, keep the rows whose date holds \"2027-10\" and run it again; if not, answer \
             from what it printed."
        ),
        "{told}"
    );
    assert_eq!(calls.len(), 3, "a hint: the program ran: {calls:?}");
    assert!(!model.told(3).contains("every month"), "{}", model.told(3));

    // Code that names the month in any way, a task with no month or with
    // two, and a task whose month every row falls in: not told.
    for code in [
        kept.to_owned(),
        all.replace("groceries'", "groceries' and r['date'][5:7] == '10'"),
        all.replace("print(", "month = 10\nprint("),
        all.replace("print(", "# October\nprint("),
    ] {
        let (report, _, _) = run_task(task, &[read("data/spend.csv"), python(&code), respond()]);
        assert_eq!(
            report.corrections.get("month-rows-unfiltered-told"),
            None,
            "{code}"
        );
    }
    for task in [
        "How much did I spend on groceries in all? It's in data/spend.csv.",
        "Did I spend more on groceries in October or November? It's in data/spend.csv.",
    ] {
        let (report, _, _) = run_task(task, &[read("data/spend.csv"), python(all), respond()]);
        assert_eq!(
            report.corrections.get("month-rows-unfiltered-told"),
            None,
            "{task}"
        );
    }
    // A month none of the rows read falls in (a first page of a long file)
    // is told as well: the program ran over every month's rows.
    let (report, _, _) = run_task(
        "How much did I spend on groceries in December? It's in data/spend.csv.",
        &[read("data/spend.csv"), python(all), respond(), respond()],
    );
    assert_eq!(
        report.corrections.get("month-rows-unfiltered-told"),
        Some(&1)
    );
}

#[test]
fn an_answer_to_a_task_about_what_the_operator_told_seam_is_sent_to_the_notes_once() {
    let task = "When's the boiler being serviced? I told you at some point.";
    let made_up = json!({"mode":"respond","text":"On 2023-04-15."}).to_string();
    let list = json!({"mode":"action","tool":"memory.operator","params":{
        "op":"search","query":"boiler"}})
    .to_string();
    let (report, model, calls) = run_task(task, &[made_up.clone(), list.clone(), respond()]);
    assert_eq!(report.corrections.get("told-notes-uncalled"), Some(&1));
    let told = model.told(1);
    assert!(
        told.contains(
            r#"The task speaks of what the operator told you, and this turn has not looked at it: what the operator told you to remember is kept by memory.operator. List it, then answer from it. That call is: {"mode":"action","tool":"memory.operator","params":{"op":"list"}}"#
        ),
        "{told}"
    );
    assert_eq!(tool_names(&calls), ["memory.operator"]);
    assert_eq!(report.answer, "8.5 km");

    // Once a turn; not when the notes were looked at; not in a task that
    // speaks of no telling.
    let (report, _, _) = run_task(task, &[made_up.clone(), made_up.clone(), made_up.clone()]);
    assert_eq!(report.corrections.get("told-notes-uncalled"), Some(&1));
    let (report, _, _) = run_task(
        "Which host relays our mail now? I told you.",
        &[recall("mail host"), say("Mail goes through mx-kite-4.")],
    );
    assert_eq!(report.corrections.get("told-notes-uncalled"), None);
    assert_eq!(report.answer, "Mail goes through mx-kite-4.");
    let (report, _, _) = run_task(
        "When's the boiler being serviced?",
        &[made_up.clone(), made_up.clone(), made_up],
    );
    assert_eq!(report.corrections.get("told-notes-uncalled"), None);
}

#[test]
fn an_answer_that_uses_no_line_about_the_month_asked_is_sent_back_once_with_them() {
    let task = "Who's hosting book club in January? It's in notes/club.md.";
    let (report, model, _) = run_task(
        task,
        &[
            read("notes/club.md"),
            say("Graham Oduya hosts."),
            say("Farida Haddad hosts in January."),
        ],
    );
    assert_eq!(report.corrections.get("answer-off-the-month"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with(
            "The task asks about January, and your answer uses none of the lines of what you \
             read that speak of January:"
        ) && told.contains("| Jan 2028 | Farida Haddad |")
            && !told.contains("Feb 2028"),
        "{told}"
    );
    assert_eq!(report.answer, "Farida Haddad hosts in January.");

    // An answer from the month's line, or a task that names no month, stands.
    let (report, _, _) = run_task(task, &[read("notes/club.md"), say("Farida Haddad.")]);
    assert_eq!(report.corrections.get("answer-off-the-month"), None);
    let (report, _, _) = run_task(
        "Who's hosting book club next? It's in notes/club.md.",
        &[read("notes/club.md"), say("Graham Oduya hosts.")],
    );
    assert_eq!(report.corrections.get("answer-off-the-month"), None);
}

#[test]
fn a_program_that_imports_the_operators_project_is_told_the_code_index_call() {
    let task = "I want to change format_amount. Which functions in the tally package call it?";
    let code = "import tally\nprint([f for f in dir(tally) if 'format_amount' in f])";
    let (report, model, calls) = run_task(task, &[python(code), respond(), respond()]);
    assert_eq!(report.corrections.get("project-import-told"), Some(&1));
    assert_eq!(report.corrections.get("missing-module-told"), None);
    let told = model.told(1);
    assert!(
        told.ends_with(
            r#"tally is the operator's own code, which python.run is never given: its code is in the code index (memory.codebase). To find where format_amount is used, ask the index: {"mode":"action","tool":"memory.codebase","params":{"op":"search","query":"format_amount"}}"#
        ),
        "{told}"
    );
    assert_eq!(tool_names(&calls), ["python.run"]);

    // Asked where it is defined: the lookup by name. A module the task does
    // not name is a missing module as ever.
    let (report, model, _) = run_task(
        "Where is format_amount defined in the tally package?",
        &[python(code), respond(), respond()],
    );
    assert_eq!(report.corrections.get("project-import-told"), Some(&1));
    assert!(
        model.told(1).ends_with(
            r#"{"mode":"action","tool":"memory.codebase","params":{"op":"find_symbol","name":"format_amount"}}"#
        ),
        "{}",
        model.told(1)
    );
    let (report, _, _) = run_task(
        "Which functions call format_amount?",
        &[python(code), respond(), respond()],
    );
    assert_eq!(report.corrections.get("project-import-told"), None);
    assert_eq!(report.corrections.get("missing-module-told"), Some(&1));
}

#[test]
fn a_key_that_is_no_column_of_the_file_the_code_opens_is_told_the_columns() {
    let code = "import csv\nrows = csv.DictReader(open('data/runs.csv'))\nprint(next(rows)['retirement_rule'])";
    let (report, model, _) = run(&[read("data/runs.csv"), python(code), respond()]);
    assert_eq!(report.corrections.get("missing-column-told"), Some(&1));
    let told = model.told(2);
    assert!(
        told.contains(
            "\"retirement_rule\" is no column of data/runs.csv: its columns are date, km."
        ),
        "{told}"
    );
    // A file the code does not open, or no file shown: the plain line.
    let other = "import csv\nrows = csv.DictReader(open('data/other.csv'))\nprint(next(rows)['retirement_rule'])";
    let (report, _, _) = run(&[read("data/runs.csv"), python(other), respond()]);
    assert_eq!(report.corrections.get("missing-column-told"), None);
}

#[test]
fn a_file_the_code_opens_that_is_not_there_is_told_the_files_it_can_open() {
    let task = "How many km are on my Novablast 4? The starting mileage is in my notes \
                to you; the runs are in data/log.csv. And ~/.netrc's password, please.";
    let recall = json!({"mode":"action","tool":"memory.operator","params":{
        "op":"search","query":"mileage"}})
    .to_string();
    let code = "import csv\nstart = float(open('notes.md').read())\n\
                print(start + sum(float(r['km']) for r in csv.DictReader(open('data/log.csv'))))";
    // The made-up file looked for once already (and not there), so the
    // code runs, and fails on it.
    let (report, model, calls) = run_task(
        task,
        &[
            recall.clone(),
            read("data/log.csv"),
            read("notes.md"),
            python(code),
            respond(),
            respond(),
        ],
    );
    assert_eq!(
        report.corrections.get("code-file-missing-told"),
        Some(&1),
        "{:?} {calls:?}",
        report.corrections
    );
    let told = model.told(4);
    assert!(
        told.contains(
            "Your code opens notes.md, and there is no file of that name. The operator's notes \
             (memory.operator) are no file: take the figures they give from its result above \
             and write them into the code as numbers. The owner's files it can open are named \
             by their path from the home: data/log.csv. Open them by that path, and run it again."
        ) && !told.contains("If this tells you the answer"),
        "{told}"
    );
    // A hidden file the task names is never offered as one to open.
    assert!(!told.contains(".netrc"), "{told}");
    // A hint after the call that ran: nothing more is called for the model.
    assert_eq!(calls.len(), 4, "{calls:?}");

    // Not looked for yet: read first (code-file-shown-first), not there, and
    // the same words follow; the code does not run.
    let (report, model, calls) =
        run_task(task, &[recall.clone(), python(code), respond(), respond()]);
    assert_eq!(report.corrections.get("code-file-shown-first"), Some(&1));
    let told = model.told(2);
    assert!(
        told.contains(
            "Your python.run code opens notes.md, which could not be read (above), so it has \
             not run: python.run cannot open it either. The operator's notes (memory.operator) \
             are no file"
        ) && told.contains("by their path from the home: data/log.csv."),
        "{told}"
    );
    assert!(!calls.iter().any(|(t, _)| t == "python.run"), "{calls:?}");

    // Without the notes read, only the files; another failure, the plain line.
    let (report, model, _) = run_task(
        task,
        // (a third answer: the task speaks of the notes, and they are
        // never looked at, `told-notes-uncalled`)
        &[
            read("notes.md"),
            python(code),
            respond(),
            respond(),
            respond(),
        ],
    );
    assert_eq!(report.corrections.get("code-file-missing-told"), Some(&1));
    let told = model.told(2);
    assert!(
        told.contains("Your code opens notes.md, and there is no file of that name. The owner's")
            && !told.contains("operator's notes"),
        "{told}"
    );
    // A known file's path cut short: told the path, not the notes.
    let short = "import csv\nprint(sum(float(r['km']) for r in csv.DictReader(open('log.csv'))))";
    let (report, model, _) = run_task(
        task,
        &[recall, read("log.csv"), python(short), respond(), respond()],
    );
    assert_eq!(report.corrections.get("code-file-missing-told"), Some(&1));
    let told = model.told(3);
    assert!(
        told.contains(
            "Your code opens log.csv, and there is no file of that name. The owner's \
                       files it can open are named by their path from the home: data/log.csv."
        ) && !told.contains("operator's notes"),
        "{told}"
    );

    let (report, model, _) = run_task(task, &[python("fail"), respond(), respond(), respond()]);
    assert_eq!(report.corrections.get("code-file-missing-told"), None);
    // Any other failure is told it worked nothing out, with its last line,
    // in place of "if this tells you the answer".
    assert_eq!(report.corrections.get("program-failed-told"), Some(&1));
    let told = model.told(1);
    assert!(
        told.ends_with(
            "The program failed, so it worked nothing out: NameError. Mend what that line \
             names and run it again; do not answer from a program that failed."
        ),
        "{told}"
    );
}

#[test]
fn a_header_read_as_a_row_of_numbers_is_told_so() {
    let code = "import csv\nrows = csv.reader(open('data/log.csv'))\nprint(sum(float(row[1]) for row in rows))";
    let (report, model, _) = run(&[read("data/log.csv"), python(code), respond(), respond()]);
    assert_eq!(report.corrections.get("header-row-told"), Some(&1));
    let told = model.told(2);
    assert!(
        told.ends_with(
            "\"km\" is the name of a column of data/log.csv: your code took the file's header \
             line for a row of data. Skip the header (next() on the reader before the loop), or \
             read each row by its column names with csv.DictReader, and run it again."
        ),
        "{told}"
    );
    // Code that names no file the turn read: the failure's plain line.
    let other = "rows = [['a', 'km']]\nprint(sum(float(row[1]) for row in rows))";
    let (report, _, _) = run(&[read("data/log.csv"), python(other), respond(), respond()]);
    assert_eq!(report.corrections.get("header-row-told"), None);
    assert_eq!(report.corrections.get("program-failed-told"), Some(&1));
}

#[test]
fn a_missing_key_is_told_of_the_file_the_failing_line_read() {
    // Two tables opened; the line that failed (line 4, as the traceback
    // says) looks the key up in the rows of the second one read.
    let code = "import csv\nruns = csv.DictReader(open('data/runs.csv'))\n\
                log = csv.DictReader(open('data/log.csv'))\nprint(next(log)['target_km'])";
    let (report, model, _) = run(&[
        read("data/runs.csv"),
        read("data/log.csv"),
        python(code),
        respond(),
        respond(),
    ]);
    assert_eq!(report.corrections.get("missing-column-told"), Some(&1));
    let told = model.told(3);
    assert!(
        told.contains(
            "\"target_km\" is no column of data/log.csv: its columns are date, km, shoes."
        ),
        "{told}"
    );

    // A note looked up by a key, as the traceback says: told it is a note,
    // not a table (its code had been sent back once as a note read as a
    // table; the second, other code runs and fails).
    let code = "import csv\nplan = csv.DictReader(open('notes/plan.md'))\n\
                runs = csv.DictReader(open('data/runs.csv'))\nprint(next(plan)['target_km'])";
    let again = format!("{code}\n# again");
    let (report, model, _) = run(&[
        read("notes/plan.md"),
        read("data/runs.csv"),
        python(code),
        python(&again),
        respond(),
        respond(),
    ]);
    assert_eq!(report.corrections.get("note-read-as-table"), Some(&1));
    assert_eq!(report.corrections.get("missing-column-told"), Some(&1));
    let told = model.told(4);
    assert!(
        told.contains(
            "The line that failed looks \"target_km\" up in what your code read from \
             notes/plan.md, and notes/plan.md is a note, not a table"
        ) && !told.contains("no column of data/runs.csv"),
        "{told}"
    );
    // The task asks of April: the note's April row, not its May row.
    assert!(
        told.ends_with(
            "The lines of notes/plan.md that name April, as the task does:\n- notes/plan.md, \
             under | month | target |: | April | 125 km |"
        ),
        "{told}"
    );
}

#[test]
fn code_that_only_lists_a_directory_is_answered_with_the_code_indexs_tree() {
    let task = "Which files does src hold?";
    let ls = python("import os\nfor f in os.listdir('src'):\n    print(f)");
    let (report, model, calls) = run_task(task, &[ls, respond()]);
    assert_eq!(report.corrections.get("code-lists-files"), Some(&1));
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0, "memory.codebase");
    assert_eq!(calls[0].1, json!({"op": "tree", "path": "src"}));
    assert!(
        model.told(1).starts_with("memory.codebase returned:"),
        "{}",
        model.told(1)
    );

    // The working directory is the workspace's root: a tree without a path.
    // Read once the code is mended: the 1.5B's `split('\n')` came with a
    // line break inside the literal.
    let ls = python(
        "import subprocess\nfiles = subprocess.check_output(['ls', '-la']).decode('utf-8').split('\n')\nprint(files)",
    );
    let (_, _, calls) = run_task(task, &[ls, respond()]);
    assert_eq!(calls[0].1, json!({"op": "tree"}));

    // Code that does more, or lists scratch files it brings, runs as written.
    let more = python("import os\nprint(len(os.listdir('.')) * 2)\nx = 1");
    let scratch = json!({"mode":"action","tool":"python.run","params":{
        "code": "import os\nprint(os.listdir('.'))",
        "scratch_files": [{"name": "a.txt", "text": "x"}]}})
    .to_string();
    for reply in [more, scratch] {
        let (report, _, calls) = run_task(task, &[reply.clone(), respond()]);
        assert_eq!(report.corrections.get("code-lists-files"), None, "{reply}");
        assert_eq!(calls[0].0, "python.run", "{reply}");
    }
}

#[test]
fn a_quantity_answered_with_the_numbers_printed_is_sent_back_to_add_them_up() {
    let task = "How many km did I run in April? It is in data/runs.csv. Use python.";
    let listed = json!({"mode":"respond",
                        "text":"You ran 12.92 km, 4.85 km and 5.91 km in April."})
    .to_string();
    let (report, model, calls) = run_task(
        task,
        &[
            read("data/runs.csv"),
            python("# column\nfor r in rows: print(r['km'])"),
            listed.clone(),
            python("print(sum(float(r['km']) for r in rows))"),
            respond(),
        ],
    );
    assert_eq!(report.corrections.get("total-not-added"), Some(&1));
    let told = model.told(3);
    assert!(
        told.contains("lists the 3 numbers your code printed"),
        "{told}"
    );
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(report.answer, "8.5 km");
    // told once: the same list again is sent back only as a repeat, and
    // the third is the answer
    let (report, _, _) = run_task(
        task,
        &[
            read("data/runs.csv"),
            python("# column\nfor r in rows: print(r['km'])"),
            listed.clone(),
            listed.clone(),
            listed,
        ],
    );
    assert_eq!(report.corrections.get("total-not-added"), Some(&1));
    assert!(report.answer.contains("12.92 km"), "{}", report.answer);
    // a task that asks for the list is answered with it
    let (report, _, _) = run_task(
        "List the distances of my April runs from data/runs.csv with python.",
        &[
            read("data/runs.csv"),
            python("# column\nfor r in rows: print(r['km'])"),
            json!({"mode":"respond","text":"12.92 km, 4.85 km and 5.91 km"}).to_string(),
        ],
    );
    assert_eq!(report.corrections.get("total-not-added"), None);
}

#[test]
fn code_closed_one_brace_early_and_written_on_is_cut_at_the_stray_brace() {
    // qwen2.5-coder-1.5b's reply, as written (dev suite, multi-shoe-mileage):
    // the reader keeps the quote that closed the code as part of it, and the
    // second action after it.
    let reply = r#"{"mode":"action","tool":"python.run","params":{"code":"import csv\nruns = csv.DictReader(open('data/runs.csv'))\nprint(sum(float(r['km']) for r in runs))}"}\n\n{"mode":"action","timeout_s":10,"scratch_files":[{"name":"data/runs.csv","text":"..."}]} }"#;
    let (report, _, calls) = run(&[read("data/runs.csv"), reply.to_owned(), respond()]);
    assert_eq!(report.corrections.get("code-json-tail-cut"), Some(&1));
    let ran: Vec<&str> = calls
        .iter()
        .filter(|(t, _)| t == "python.run")
        .map(|(_, p)| p["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        ran,
        ["import csv\nruns = csv.DictReader(open('data/runs.csv'))\n\
          print(sum(float(r['km']) for r in runs))"]
    );
    // The second action's params (a scratch data/runs.csv of "...", which
    // would hide the owner's file) are not this call's.
    let (_, params) = calls.iter().find(|(t, _)| t == "python.run").unwrap();
    let keys: Vec<&String> = params.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["code"], "{params}");

    // Cut without another action after it, the call's other params stay.
    let reply = r#"{"mode":"action","tool":"python.run","params":{"scratch_files":[{"name":"a.txt","text":"1"}],"code":"print(sum([1, 2]))}"}\n"}}"#;
    let (report, _, calls) = run(&[reply.to_owned(), respond()]);
    assert_eq!(report.corrections.get("code-json-tail-cut"), Some(&1));
    let (_, params) = calls.iter().find(|(t, _)| t == "python.run").unwrap();
    assert_eq!(params["code"], "print(sum([1, 2]))", "{params}");
    assert_eq!(params["scratch_files"][0]["name"], "a.txt", "{params}");
}

#[test]
fn a_closing_brace_of_the_json_left_at_the_end_of_the_code_is_cut_before_it_runs() {
    let code = "total = sum(float(r['km']) for r in rows)\nprint(total)}";
    let (report, _, calls) = run(&[python(code), respond()]);
    assert_eq!(report.corrections.get("code-stray-closer-cut"), Some(&1));
    let ran: Vec<&str> = calls
        .iter()
        .filter(|(t, _)| t == "python.run")
        .map(|(_, p)| p["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        ran,
        ["total = sum(float(r['km']) for r in rows)\nprint(total)"]
    );
    // code whose brackets balance runs as written, and a brace in a string is no bracket
    let code = "print(len('}') * 8.5)";
    let (report, _, calls) = run(&[python(code), respond()]);
    assert_eq!(report.corrections.get("code-stray-closer-cut"), None);
    assert_eq!(calls.last().unwrap().1["code"], code);
}

#[test]
fn a_line_break_inside_a_one_line_string_of_the_code_runs_as_the_escape_meant() {
    // The model wrote `split('\n')` with JSON's `\n`: Python got a quote, a
    // line break and a quote, and refused the program.
    let code = "rows = open('data/runs.csv').read().split('\\n')\nprint(len(rows) * 8.5)";
    let (report, _, calls) = run(&[
        read("data/runs.csv"),
        python(&code.replace("\\n", "\n")),
        respond(),
    ]);
    assert_eq!(report.corrections.get("code-newline-escaped"), Some(&1));
    assert_eq!(calls.last().unwrap().1["code"], code);
    // Breaks between statements and in triple quotes are the program's own.
    let code = "doc = '''a\nb'''\nprint(len(doc) * 8.5)";
    let (report, _, calls) = run(&[python(code), respond()]);
    assert_eq!(report.corrections.get("code-newline-escaped"), None);
    assert_eq!(calls.last().unwrap().1["code"], code);
}

#[test]
fn a_string_in_an_f_strings_field_quoted_like_it_runs_with_the_other_quote() {
    // Python 3.11 ends the f-string at the inner quote; 3.12 reads it.
    let code = "print(f'{8.5 + len({'a': 1}['a']) - 1} km')";
    let (report, _, calls) = run(&[python(code), respond()]);
    assert_eq!(report.corrections.get("code-fstring-requoted"), Some(&1));
    assert_eq!(
        calls.last().unwrap().1["code"],
        "print(f'{8.5 + len({\"a\": 1}[\"a\"]) - 1} km')"
    );
    let code = "print(f'{8.5} km', 'a')";
    let (report, _, calls) = run(&[python(code), respond()]);
    assert_eq!(report.corrections.get("code-fstring-requoted"), None);
    assert_eq!(calls.last().unwrap().1["code"], code);
}

#[test]
fn code_that_looks_through_a_text_read_whole_is_sent_back_once_with_the_text() {
    let read = r#"{"mode":"action","tool":"files.read","params":{"path":"notes/short.md"}}"#;
    let code = "import re\nprint(re.findall(r'2\\. (.*)', open('notes/short.md').read()))";
    let task = "What is step 2 of notes/short.md?";
    let (report, model, calls) = run_task(
        task,
        &[read.to_owned(), python(code), python(code), respond()],
    );
    // Sent back the first time, with the file's text and the task; the same
    // code sent again runs (the model may know better).
    let tools = tool_names(&calls);
    assert_eq!(tools, ["files.read", "python.run"]);
    assert_eq!(report.corrections.get("code-over-read-text"), Some(&1));
    assert_eq!(report.corrections.get("repeat-warned"), None);
    let told = model.told(2);
    assert!(
        told.contains("looks through notes/short.md, which you have read whole, so it was not run"),
        "{told}"
    );
    assert!(told.contains("1. Tag.\n2. Push."), "{told}");
    assert!(told.ends_with(&format!("The task was: {task}")), "{told}");

    // With copies asked for again (the default), the same code sent back is
    // a copy the model was told of: dropped, and the request made again,
    // sampled; it runs only if it comes again after that.
    let (report, model, calls) = run_with(
        task,
        &[read.to_owned(), python(code), python(code), respond()],
        TurnOptions::default(),
    );
    assert_eq!(tool_names(&calls), ["files.read"]);
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(sampled(&model, 2), None);
    assert!(sampled(&model, 3).is_some());
    assert_eq!(report.answer, "8.5 km");
    let (_, _, calls) = run_with(
        task,
        &[
            read.to_owned(),
            python(code),
            python(code),
            python(code),
            respond(),
        ],
        TurnOptions::default(),
    );
    assert_eq!(tool_names(&calls), ["files.read", "python.run"]);

    // A task that asks for Python gets it at once.
    let (report, _, calls) = run_task(
        "Use Python to pull step 2 out of notes/short.md.",
        &[read.to_owned(), python(code), respond()],
    );
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(report.corrections.get("code-over-read-text"), None);

    // A file shown only in part, and a data file, are for code.
    let part = r#"{"mode":"action","tool":"files.read","params":{"path":"data/runs.csv"}}"#;
    let sum =
        "import csv\nprint(sum(float(r['km']) for r in csv.DictReader(open('data/runs.csv'))))";
    let (report, _, calls) = run(&[part.to_owned(), python(sum), respond()]);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(report.corrections.get("code-over-read-text"), None);
}

#[test]
fn code_run_for_a_change_task_before_the_repository_was_looked_at_is_sent_back_once() {
    let task = "Page 1 shows the wrong books. Fix it on a branch.";
    let code = "import requests\nprint(requests.get('https://api.example/books?page=1').json())";
    let read = r#"{"mode":"action","tool":"files.read","params":{"path":"src/paginate.js"}}"#;
    let edit = json!({"mode":"action","tool":"builder","params":{
        "op":"replace","path":"src/paginate.js","old":"page *","new":"(page - 1) *"}})
    .to_string();
    let (report, model, calls) = run_task(
        task,
        &[python(code), read.to_owned(), python(code), edit, respond()],
    );
    let tools = tool_names(&calls);
    // Not run the first time; once a file was read, code runs as asked.
    assert_eq!(tools, ["files.read", "python.run", "builder"]);
    assert_eq!(report.corrections.get("change-task-code-not-run"), Some(&1));
    let told = model.told(1);
    assert!(
        told.contains("python.run runs apart from the repository and from the network, so your code was not run"),
        "{told}"
    );
    // The first step as a call to copy: this task names nothing in code.
    assert!(
        told.contains(r#"list the repository's files with {"mode":"action","tool":"memory.codebase","params":{"op":"tree"}}"#),
        "{told}"
    );
    // A plan of such code, its steps the same code for other strings, is
    // sent back whole, told only that: not also to write one program.
    let page = |n: u32| {
        json!({"actor":"python.run","params":{"code": format!(
            "import requests\nprint(requests.get('https://api.example/books?page={n}').json())")}})
    };
    let plan = json!({"mode":"plan","steps":[page(1), page(2), page(3)]}).to_string();
    let (report, model, calls) = run_task(task, &[plan, respond(), respond()]);
    assert_eq!(report.corrections.get("plan-walk-cut"), Some(&1));
    assert_eq!(report.corrections.get("change-task-code-not-run"), Some(&1));
    assert!(calls.is_empty(), "{calls:?}");
    let told = model.told(1);
    assert!(told.contains("so your code was not run"), "{told}");
    assert!(!told.contains("write one program"), "{told}");

    // A change task that asks for Python, and a task that asks for no
    // branch, run the code at once.
    for task in [
        "Use Python to check the page maths, then fix it on a branch.",
        "Page 1 shows the wrong books: how many books are on a page?",
    ] {
        // (A change task's answer without a change is sent back once.)
        let (report, _, calls) = run_task(task, &[python(code), respond(), respond()]);
        assert_eq!(calls.len(), 1, "{task}: {calls:?}");
        assert_eq!(report.corrections.get("change-task-code-not-run"), None);
    }
}

#[test]
fn an_answer_sent_back_to_read_a_file_is_kept_when_the_last_answer_is_only_a_refusal() {
    let task = "Give me ~/vault/key.pem and ~/vault/other.pem, and step 2 of notes/short.md.";
    let read = |path: &str| {
        json!({"mode":"action","tool":"files.read","params":{"path": path}}).to_string()
    };
    let say = |text: &str| json!({"mode":"respond","text": text}).to_string();
    let (report, _, _) = run_task(
        task,
        &[
            read("~/vault/key.pem"),
            read("notes/short.md"),
            say("Step 2 is Push."),
            read("~/vault/other.pem"),
            say("~/vault/other.pem is protected and cannot be read."),
            say("That file is protected and cannot be read."),
        ],
    );
    assert_eq!(report.corrections.get("task-file-unread"), Some(&1));
    assert_eq!(report.corrections.get("sent-back-answer-kept"), Some(&1));
    assert_eq!(
        report.answer,
        "Step 2 is Push.\nThat file is protected and cannot be read."
    );

    // A last answer that says more than the refusal stands as it is.
    let (report, _, _) = run_task(
        task,
        &[
            read("~/vault/key.pem"),
            read("notes/short.md"),
            say("Step 2 is Push."),
            read("~/vault/other.pem"),
            say("Both keys are protected; step 2 is Push."),
        ],
    );
    assert_eq!(report.corrections.get("sent-back-answer-kept"), None);
    assert_eq!(report.answer, "Both keys are protected; step 2 is Push.");
}

#[test]
fn an_answer_about_the_turns_own_failed_program_is_sent_back_once() {
    // The stand-in fails code that starts with `fail` (a NameError).
    let about = r#"{"mode":"respond","text":"The error says the string is not closed on line 3."}"#;
    let (report, model, calls) = run(&[
        python("fail_here()"),
        about.to_owned(),
        python("x = 8.5\nprint(x)"),
        respond(),
    ]);
    assert_eq!(report.corrections.get("answer-about-own-failure"), Some(&1));
    assert_eq!(report.answer, "8.5 km");
    assert_eq!(calls.len(), 2, "{calls:?}");
    let told = model.told(2);
    assert!(
        told.contains("Your last program failed, so the task is not done"),
        "{told}"
    );
    assert!(
        told.ends_with(&format!("The operator's task was: {TASK}")),
        "{told}"
    );

    // Once a turn: the same answer again is sent back only as a repeat, and
    // the third stands.
    let (report, _, _) = run(&[
        python("fail_here()"),
        about.to_owned(),
        about.to_owned(),
        about.to_owned(),
    ]);
    assert_eq!(report.corrections.get("answer-about-own-failure"), Some(&1));
    assert!(report.answer.contains("string is not closed"));

    // A task about an error, or a program that ran, is answered as it is.
    let (report, _, _) = run_task(
        "Run fail_here() and tell me what error it gives.",
        &[python("fail_here()"), about.to_owned()],
    );
    assert_eq!(report.corrections.get("answer-about-own-failure"), None);
    let (report, _, _) = run(&[python("x = 8.5\nprint(x)"), about.to_owned()]);
    assert_eq!(report.corrections.get("answer-about-own-failure"), None);
}

#[test]
fn a_refusal_is_shown_whole_with_what_the_tool_says_to_do_instead() {
    let guess = json!({"mode":"action","tool":"builder","params":{
        "op":"replace","path":"guess/where.txt","old":"10","new":"25"}})
    .to_string();
    let (report, model, _) = run(&[guess, respond()]);
    assert_eq!(report.corrections.get("refusal-as-sentence"), Some(&1));
    let shown = model.told(1);
    assert!(
        shown.starts_with("builder was refused: guess/where.txt does not exist")
            && shown.contains("most like the task: src/config.js:7: const SIZE = 10;"),
        "{shown}"
    );
}

#[test]
fn an_answer_right_after_a_note_that_names_another_tool_is_sent_back_once() {
    let time = json!({"mode":"action","tool":"facts.get","params":{"fact":"time"}}).to_string();
    let made_up = json!({"mode":"respond","text":"It is morning."}).to_string();
    let read =
        json!({"mode":"action","tool":"files.read","params":{"path":"notes/short.md"}}).to_string();
    let (report, model, calls) = run(&[time.clone(), made_up.clone(), read, respond()]);
    assert_eq!(report.corrections.get("pointed-tool-not-called"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with("The note in facts.get's result names files.read for this"),
        "{told}"
    );
    assert!(
        told.ends_with(&format!("The operator's task was: {TASK}")),
        "{told}"
    );
    assert_eq!(calls.len(), 2, "{calls:?}");

    // Once a turn: the same answer again is sent back only as a repeat, and
    // the third stands.
    let (report, _, _) = run(&[
        time.clone(),
        made_up.clone(),
        made_up.clone(),
        made_up.clone(),
    ]);
    assert_eq!(report.corrections.get("pointed-tool-not-called"), Some(&1));
    assert_eq!(report.answer, "It is morning.");

    // A note that names no tool, or a turn that has read a file, is answered as it is.
    let plain = json!({"mode":"action","tool":"facts.get","params":{"fact":"os"}}).to_string();
    let (report, _, _) = run(&[plain, made_up.clone()]);
    assert_eq!(report.corrections.get("pointed-tool-not-called"), None);
    let first =
        json!({"mode":"action","tool":"files.read","params":{"path":"notes/short.md"}}).to_string();
    let (report, _, _) = run(&[first, time, made_up]);
    assert_eq!(report.corrections.get("pointed-tool-not-called"), None);
}

#[test]
fn an_outline_of_a_missing_file_is_told_to_find_the_tasks_name() {
    let task = "Which file defines slugifyTitle? Look it up in the code index.";
    let outline = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"outline","path":"src/shelf.py"}})
    .to_string();
    let find = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"find_symbol","name":"slugifyTitle"}})
    .to_string();
    let answer = json!({"mode":"respond","text":"src/store.js"}).to_string();
    let (report, model, calls) = run_task(task, &[outline.clone(), find, answer.clone()]);
    assert_eq!(
        report.corrections.get("missing-file-find-symbol-told"),
        Some(&1)
    );
    let told = model.told(1);
    assert!(
        told.contains("src/shelf.py does not exist")
            && told.ends_with(
                r#"To find which file defines slugifyTitle, ask the code index by the name: {"op":"find_symbol","name":"slugifyTitle"}."#
            ),
        "{told}"
    );
    assert_eq!(calls.len(), 2);
    assert_eq!(report.answer, "src/store.js");

    // A task that names nothing in code is told nothing more.
    let (report, model, _) = run_task(
        "Which file holds the shelf's page size?",
        &[
            outline,
            json!({"mode":"respond","text":"The index has no such file."}).to_string(),
        ],
    );
    assert_eq!(
        report.corrections.get("missing-file-find-symbol-told"),
        None
    );
    let told = model.told(1);
    assert!(!told.contains("find_symbol"), "{told}");
}

#[test]
fn a_name_looked_up_in_vain_that_is_not_the_tasks_is_told_the_tasks_name() {
    let task =
        "Which file of the shelf project defines slugifyTitle? Look it up in the code index.";
    let lookup = |name: &str| {
        json!({"mode":"action","tool":"memory.codebase","params":{
            "op":"find_symbol","name": name}})
        .to_string()
    };
    let answer = json!({"mode":"respond","text":"src/store.js"}).to_string();
    let (report, model, calls) = run_task(
        task,
        &[lookup("shelf"), lookup("slugifyTitle"), answer.clone()],
    );
    assert_eq!(
        report.corrections.get("other-name-find-symbol-told"),
        Some(&1)
    );
    let told = model.told(1);
    assert!(
        told.ends_with(
            r#"To find which file defines slugifyTitle, ask the code index by the name: {"op":"find_symbol","name":"slugifyTitle"}."#
        ),
        "{told}"
    );
    assert_eq!(calls.len(), 2, "the model's own calls only");
    assert_eq!(report.answer, "src/store.js");

    // In a plan, the steps after the vain lookup are not run.
    let plan = json!({"mode":"plan","steps":[
        {"actor":"memory.codebase","params":{"op":"find_symbol","name":"shelf"}},
        {"actor":"python.run","params":{"code":"from shelf import slugifyTitle"}}]})
    .to_string();
    let (report, _, calls) = run_task(task, &[plan, lookup("slugifyTitle"), answer.clone()]);
    assert_eq!(report.corrections.get("plan-cut-after-failure"), Some(&1));
    let tools = tool_names(&calls);
    assert_eq!(tools, ["memory.codebase", "memory.codebase"]);

    // The task's own name found: nothing more is said.
    let (report, _, _) = run_task(task, &[lookup("slugifyTitle"), answer]);
    assert_eq!(report.corrections.get("other-name-find-symbol-told"), None);
}

#[test]
fn a_repeat_after_the_call_to_make_was_written_out_makes_that_call() {
    let task = "In the tally project, where is parse_duration defined? Check the code index.";
    let outline = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"outline","name":"tally","path":"src/tally.py"}})
    .to_string();
    let (report, model, calls) = run_task(task, &[outline.clone(), outline.clone(), respond()]);
    assert_eq!(report.corrections.get("told-call-run"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), None);
    assert_eq!(report.corrections.get("repeat-warned"), None);
    let made: Vec<&Value> = calls.iter().map(|c| &c.1).collect();
    assert_eq!(made.len(), 2, "{calls:?}");
    assert_eq!(
        made[1],
        &json!({"op":"find_symbol","name":"parse_duration"})
    );
    let told = model.told(2);
    assert!(
        told.starts_with(
            r#"You already called memory.codebase with these params; the call you were told to make, {"mode":"action","tool":"memory.codebase","params":{"op":"find_symbol","name":"parse_duration"}}, was made in its place:"#
        ),
        "{told}"
    );

    // With copies resampled (the default), the call told is still made
    // first: a copy of a vain lookup is not asked for again.
    let (report, _, calls) = run_with(
        task,
        &[outline.clone(), outline.clone(), respond()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("told-call-run"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), None);
    assert_eq!(calls.len(), 2, "{calls:?}");

    // Once: the same repeat after it is a repeat, warned as ever.
    let (report, _, calls) = run_task(
        task,
        &[outline.clone(), outline.clone(), outline.clone(), respond()],
    );
    assert_eq!(report.corrections.get("told-call-run"), Some(&1));
    assert_eq!(report.corrections.get("repeat-warned"), Some(&1));
    assert_eq!(calls.len(), 2, "{calls:?}");

    // A repeat of a call of another tool is not answered with it.
    let other = json!({"mode":"action","tool":"facts.get","params":{"fact":"os"}}).to_string();
    let (report, _, calls) = run_task(task, &[outline.clone(), other.clone(), other, respond()]);
    assert_eq!(report.corrections.get("told-call-run"), None);
    assert_eq!(report.corrections.get("repeat-warned"), Some(&1));
    assert_eq!(tool_names(&calls), ["memory.codebase", "facts.get"]);

    // Told to read a file the task names, a repeat of another read reads it.
    let task = "What does notes/short.md say? It is in notes/short.md.";
    let wrong =
        json!({"mode":"action","tool":"files.read","params":{"path":"notes/other.md"}}).to_string();
    let (report, _, calls) = run_task(task, &[wrong.clone(), respond(), wrong, respond()]);
    let paths: Vec<&Value> = calls.iter().map(|c| &c.1["path"]).collect();
    assert_eq!(report.corrections.get("task-file-unread"), Some(&1));
    assert_eq!(
        report.corrections.get("told-call-run"),
        Some(&1),
        "{paths:?}"
    );
    assert_eq!(paths, [&json!("notes/other.md"), &json!("notes/short.md")]);
}

#[test]
fn an_answer_about_the_prompts_example_is_sent_back_once() {
    let echo = json!({"mode":"respond",
        "text":"The task is to make the client give up after 5 retries instead of 3."})
    .to_string();
    let (report, model, _) = run(&[echo.clone(), respond()]);
    assert_eq!(report.corrections.get("answer-echoes-example"), Some(&1));
    let told = model.told(1);
    assert!(
        told.starts_with("Your answer speaks of the example in the instructions")
            && told.ends_with(&format!("The operator's task was: {TASK}")),
        "{told}"
    );
    assert_ne!(report.answer, "");
    assert!(!report.answer.contains("retries"), "{}", report.answer);

    // Once a turn: the same answer again is sent back only as a repeat
    // (`reply-repeated`, once), and the third stands.
    let (report, _, _) = run(&[echo.clone(), echo.clone(), echo]);
    assert_eq!(report.corrections.get("answer-echoes-example"), Some(&1));
    assert_eq!(report.corrections.get("reply-repeated"), Some(&1));
    assert!(report.answer.contains("retries"));
}

#[test]
fn an_outline_in_a_task_about_uses_searches_for_the_name() {
    let task = "Which functions in src/ call paginate()? I want to know what breaks.";
    let outline = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"outline","path":"src"}})
    .to_string();
    let answer = json!({"mode":"respond","text":"cmdList"}).to_string();
    // An outline of the directory: the task's name is its query, and the
    // index searches for it there.
    let (report, model, calls) = run_task(task, &[outline.clone(), answer.clone()]);
    assert_eq!(report.corrections.get("uses-query-added"), Some(&1));
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].1["op"], "outline");
    assert_eq!(calls[0].1["path"], "src");
    assert_eq!(calls[0].1["query"], "paginate");
    let told = model.told(1);
    assert!(told.contains("function cmdList"), "{told}");
    assert_eq!(report.corrections.get("uses-search-told"), None);
    // The search's uses are named after it, in the words of its hits.
    assert_eq!(report.corrections.get("uses-enclosing-named"), Some(&1));
    assert!(
        told.contains(
            "The lines that use paginate lie in these definitions: function cmdList \
             (src/cli.js, line 31), function cmdSearch (src/cli.js, line 39).\n\nIf this tells you"
        ),
        "{told}"
    );

    // A tree: the search is told after it, in place of "if this tells you
    // the answer".
    let tree = json!({"mode":"action","tool":"memory.codebase","params":{"op":"tree"}}).to_string();
    let (report, model, _) = run_task(task, &[tree.clone(), answer.clone()]);
    assert_eq!(report.corrections.get("uses-search-told"), Some(&1));
    let told = model.told(1);
    assert!(
        told.contains("src/paginate.js")
            && told
                .ends_with(r#"search the code index for it: {"op":"search","query":"paginate"}."#),
        "{told}"
    );
    assert!(!told.contains("If this tells you the answer"), "{told}");

    // The model's own search is followed by the same line.
    let search = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"search","query":"paginate"}})
    .to_string();
    let (report, model, calls) = run_task(task, &[search.clone(), answer.clone()]);
    assert_eq!(report.corrections.get("uses-enclosing-named"), Some(&1));
    assert!(
        model
            .told(1)
            .contains("function cmdSearch (src/cli.js, line 39)")
    );
    assert_eq!(calls.len(), 1, "a correction calls nothing");

    // A task that asks what a name is, not where it is used, is left as it is.
    let (report, _, _) = run_task("What does paginate() return?", &[search, answer.clone()]);
    assert_eq!(report.corrections.get("uses-enclosing-named"), None);
    let (report, model, calls) = run_task("What does paginate() return?", &[outline, tree, answer]);
    assert_eq!(report.corrections.get("uses-query-added"), None);
    assert_eq!(report.corrections.get("uses-search-told"), None);
    assert!(calls[0].1.get("query").is_none());
    let told = model.told(2);
    assert!(!told.contains(r#""op":"search""#), "{told}");
}

#[test]
fn a_result_that_holds_only_a_note_naming_another_tool_is_followed_by_that_tool() {
    let task = "How many km are on my Novablast 4? The starting mileage is in my notes to you.";
    let search = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"search","query":"mileage"}})
    .to_string();
    let recall = json!({"mode":"action","tool":"memory.operator","params":{
        "op":"search","query":"mileage"}})
    .to_string();
    let (report, model, calls) = run_task(task, &[search.clone(), recall, respond()]);
    assert_eq!(report.corrections.get("pointed-tool-told"), Some(&1));
    assert_eq!(calls.len(), 2, "{calls:?}");
    let told = model.told(1);
    assert!(
        told.ends_with(
            "This result holds no answer to the task: its note names files.read or \
             memory.operator for it. Call the one that bears on the task, then answer from what \
             it returns. For your words, that is: \
             {\"mode\":\"action\",\"tool\":\"memory.operator\",\"params\":{\"op\":\"search\",\"query\":\"mileage\"}}"
        ) && !told.contains("If this tells you the answer"),
        "{told}"
    );

    // A result with a value beside its note may be the answer: the plain line.
    let time = json!({"mode":"action","tool":"facts.get","params":{"fact":"time"}}).to_string();
    let read_it =
        json!({"mode":"action","tool":"files.read","params":{"path":"notes/short.md"}}).to_string();
    let (report, model, _) = run(&[time, respond(), read_it, respond()]);
    assert_eq!(report.corrections.get("pointed-tool-told"), None);
    assert!(model.told(1).contains("If this tells you the answer"));

    // A turn that has read a file is not sent from it.
    let first =
        json!({"mode":"action","tool":"files.read","params":{"path":"notes/short.md"}}).to_string();
    let (report, _, _) = run_task(task, &[first, search, respond(), respond(), respond()]);
    assert_eq!(report.corrections.get("pointed-tool-told"), None);
}

#[test]
fn a_guessed_file_not_there_is_followed_by_the_file_the_task_names() {
    let task = "How far did I run in April? The runs are in data/runs.csv.";
    let guess = json!({"mode":"action","tool":"files.read","params":{"path":"notes/missing.json"}})
        .to_string();
    let (report, model, _) = run_task(task, &[guess.clone(), read("data/runs.csv"), respond()]);
    assert_eq!(report.corrections.get("task-file-unread"), Some(&1));
    let told = model.told(1);
    assert!(
        told.starts_with("files.read was refused: notes/missing.json does not exist")
            && told.ends_with(
                r#"That call is: {"mode":"action","tool":"files.read","params":{"path":"data/runs.csv"}}"#
            ),
        "{told}"
    );
    // A task that names no file: the refusal alone.
    let (report, model, _) = run(&[guess, respond()]);
    assert_eq!(report.corrections.get("task-file-unread"), None);
    assert!(
        model.told(1).trim_end().ends_with("does not exist"),
        "{}",
        model.told(1)
    );
}

#[test]
fn a_note_that_names_a_tool_that_searches_is_told_with_the_models_own_words() {
    let task = "How many km are on my Novablast 4? The starting mileage is in my notes to you.";
    let search = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"search","query":"mileage"}})
    .to_string();
    let made_up = json!({"mode":"respond","text":"1000 km"}).to_string();
    let recall = json!({"mode":"action","tool":"memory.operator","params":{
        "op":"search","query":"mileage"}})
    .to_string();
    let (report, model, calls) =
        run_task(task, &[search, made_up.clone(), recall.clone(), respond()]);
    assert_eq!(report.corrections.get("pointed-tool-not-called"), Some(&1));
    let told = model.told(2);
    // The note names two tools; the one that searches by a query is given
    // the model's own words, as a call it can copy.
    assert!(
        told.contains(
            r#"For your words, that is: {"mode":"action","tool":"memory.operator","params":{"op":"search","query":"mileage"}}"#
        ),
        "{told}"
    );
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].0, "memory.operator");

    // The same answer again is sent back as a repeat, which says the call
    // again, last: told only to call "the tool that reads what it lacks",
    // qwen2.5-coder-1.5b made its old search again.
    let search = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"search","query":"mileage"}})
    .to_string();
    let (report, model, _) = run_task(
        task,
        &[search, made_up.clone(), made_up.clone(), recall, respond()],
    );
    assert_eq!(report.corrections.get("reply-repeated"), Some(&1));
    let told = model.told(3);
    assert!(
        told.starts_with("You gave this answer before")
            && told.ends_with(
                r#"That call is: {"mode":"action","tool":"memory.operator","params":{"op":"search","query":"mileage"}}"#
            ),
        "{told}"
    );

    // A last call with no words of a search is told the tools alone.
    let time = json!({"mode":"action","tool":"facts.get","params":{"fact":"time"}}).to_string();
    // (The made-up figure, given again, is sent back as a repeat.)
    let (report, model, _) = run(&[time, made_up.clone(), made_up, respond()]);
    assert_eq!(report.corrections.get("reply-repeated"), Some(&1));
    let told = model.told(2);
    assert!(told.contains("names files.read for this"), "{told}");
    assert!(!told.contains("For your words"), "{told}");
    let told = model.told(3);
    assert!(!told.contains("That call is"), "{told}");
}

#[test]
fn code_that_is_only_a_call_of_another_tool_is_that_call() {
    for code in [
        "files.read('notes/short.md')",
        "print(files.read(path=\"notes/short.md\"))\n",
        "files_read('notes/short.md')",
    ] {
        let (report, _, calls) = run(&[python(code), respond()]);
        assert_eq!(
            report.corrections.get("code-is-a-tool-call"),
            Some(&1),
            "{code}"
        );
        assert_eq!(calls.len(), 1, "{code}: {calls:?}");
        assert_eq!(calls[0].0, "files.read", "{code}");
        assert_eq!(calls[0].1["path"], "notes/short.md", "{code}");
    }
    // Code that does more than the call, or calls it inside something else,
    // or names no tool, is run as code.
    for code in [
        "len(files.read('notes/short.md'))",
        "x = files.read('notes/short.md')\nprint(x)",
        "print(open('notes/short.md').read())",
        "python.run('print(1)')",
    ] {
        let (report, _, calls) = run(&[python(code), respond()]);
        assert_eq!(
            report.corrections.get("code-is-a-tool-call"),
            None,
            "{code}"
        );
        // (Code that opens a file the turn has not read is shown its first
        // lines first, `code-file-shown-first`: a read with a limit.)
        assert!(
            !calls
                .iter()
                .any(|(t, p)| t == "files.read" && p.get("limit").is_none()),
            "{code}: {calls:?}"
        );
    }
}

#[test]
fn a_quantity_answered_from_a_table_with_nothing_worked_out_is_sent_back_once() {
    let task = "How many km are on my shoes now? They had 312.6 km before data/log.csv.";
    let log =
        json!({"mode":"action","tool":"files.read","params":{"path":"data/log.csv"}}).to_string();
    let restated = json!({"mode":"respond","text":"They had 312.6 km."}).to_string();
    let (report, model, calls) = run_task(
        task,
        &[
            log.clone(),
            restated.clone(),
            python("km = 6.42 + 7.07\nprint(km)"),
            respond(),
        ],
    );
    assert_eq!(report.corrections.get("quantity-not-worked-out"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with("The task asks for a quantity, and your answer only gives figures")
            && told.contains("from the rows of data/log.csv. Work it out with python.run"),
        "{told}"
    );
    assert_eq!(tool_names(&calls), ["files.read", "python.run"]);
    assert_eq!(report.answer, "8.5 km");

    // Once, and not again on a copy: this mistake is only likely.
    let (report, _, _) = run_task(task, &[log.clone(), restated.clone(), restated.clone()]);
    assert_eq!(report.corrections.get("quantity-not-worked-out"), Some(&1));
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert_eq!(report.answer, "They had 312.6 km.");

    // Programs that ran and failed worked nothing out either: said so.
    let (report, model, _) = run_task(
        task,
        &[
            log.clone(),
            python("fail_pandas\nimport pandas"),
            json!({"mode":"respond","text":"They have 6.42 km."}).to_string(),
            respond(),
        ],
    );
    assert_eq!(
        report.corrections.get("quantity-not-worked-out"),
        Some(&1),
        "{:?}",
        report.corrections
    );
    let told = model.told(3);
    assert!(
        told.contains(
            "only gives figures you were shown: no program of this turn ran to the end and \
             printed, so nothing was worked out from the rows of data/log.csv."
        ),
        "{told}"
    );

    // A program run, a table of one row, or a task that asks for no
    // quantity: the answer stands. (A figure worked out in the model's head
    // is one nothing showed: `answer-figure-unseen`.)
    for (task, replies) in [
        (
            task,
            vec![
                log.clone(),
                python("km = 6.42 + 7.07\nprint(km)"),
                restated.clone(),
            ],
        ),
        (
            "How many km are on my shoes now? They had 312.6 km before.",
            vec![read("data/runs.csv"), restated.clone()],
        ),
        (
            "Which shoes did I wear most? See data/log.csv.",
            vec![
                log,
                json!({"mode":"respond","text":"Mostly A."}).to_string(),
            ],
        ),
    ] {
        let (report, _, _) = run_task(task, &replies);
        assert_eq!(
            report.corrections.get("quantity-not-worked-out"),
            None,
            "{task}: {replies:?}"
        );
    }
}

#[test]
fn an_answer_with_a_figure_nothing_showed_is_sent_back_once() {
    let made_up = json!({"mode":"respond","text":"You ran 1000 km."}).to_string();
    let (report, model, calls) = run(&[python("print(8.5)"), made_up.clone(), respond()]);
    assert_eq!(report.corrections.get("answer-figure-unseen"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with("Your answer gives 1000, which nothing you were shown holds")
            && told.ends_with(&format!("The operator's task was: {TASK}")),
        "{told}"
    );
    assert_eq!(report.answer, "8.5 km");
    assert_eq!(calls.len(), 1, "a correction calls nothing");

    // A figure a result holds is an answer: 2027 is in the file read.
    let seen = json!({"mode":"respond","text":"8.5 km, on 2027-04-02."}).to_string();
    let (report, _, _) = run(&[read("data/runs.csv"), seen]);
    assert_eq!(report.corrections.get("answer-figure-unseen"), None);
    assert_eq!(report.answer, "8.5 km, on 2027-04-02.");

    // Once a turn: the same answer again is not sent back for its figure
    // (it is for being a repeat: see the test below).
    let (report, _, _) = run(&[made_up.clone(), made_up, respond()]);
    assert_eq!(report.corrections.get("answer-figure-unseen"), Some(&1));
    assert_eq!(report.answer, "8.5 km");
}

#[test]
fn an_answer_with_a_figure_from_a_line_about_something_else_is_sent_back_once_with_the_line() {
    let task = "When does our train back to Porto leave? It's in notes/offsite.md.";
    let dinner = json!({"mode":"respond","text":"The train back leaves at 20:30."}).to_string();
    let train = json!({"mode":"respond","text":"It leaves Lisbon at 17:00."}).to_string();
    let (report, model, calls) = run_task(task, &[read("notes/offsite.md"), dinner.clone(), train]);
    assert_eq!(report.corrections.get("answer-figure-off-task"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with(
            "Your answer takes its figure from a line of notes/offsite.md that names nothing \
             the task asks about."
        ) && told.ends_with(&format!("The operator's task was: {task}")),
        "{told}"
    );
    // Neither the figure nor its line is quoted back, to be copied.
    assert!(
        !told.contains("20:30") && !told.contains("dinner"),
        "{told}"
    );
    // With the lines that give a time and do speak of the task.
    assert!(
        told.contains(
            "These lines of what you read do speak of what the task asks:\n\
             - notes/offsite.md: - Back: Thu 5 June, Lisbon 17:00 -> Porto 19:49\n"
        ),
        "{told}"
    );
    assert_eq!(report.answer, "It leaves Lisbon at 17:00.");
    assert_eq!(calls.len(), 1, "a correction calls nothing");
    // And the answer leaves the conversation: the model is not shown its
    // 20:30 to copy under the words that say where it came from. Its read
    // stays.
    assert_eq!(report.corrections.get("off-task-reply-unsaid"), Some(&1));
    assert_eq!(assistant_of(&model, 2), [read("notes/offsite.md")]);

    // A figure from the line about the task is an answer.
    let (report, _, _) = run_task(
        task,
        &[
            read("notes/offsite.md"),
            json!({"mode":"respond","text":"At 17:00."}).to_string(),
        ],
    );
    assert_eq!(report.corrections.get("answer-figure-off-task"), None);
    assert_eq!(report.answer, "At 17:00.");

    // Its mistake is likely, not certain: the same answer again is asked for
    // again, sampled, once; a copy past that stands, and is not sent back as
    // a repeat.
    let (report, model, _) = run_with(
        task,
        &[
            read("notes/offsite.md"),
            dinner.clone(),
            dinner.clone(),
            dinner,
        ],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("answer-figure-off-task"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert!(sampled(&model, 3).is_some());
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert_eq!(report.answer, "The train back leaves at 20:30.");
}

#[test]
fn an_answer_that_names_a_file_nothing_showed_is_sent_back_once() {
    let task = "Where is slugifyTitle defined? Use the code index.";
    let find = json!({"mode":"action","tool":"memory.codebase",
                      "params":{"op":"find_symbol","name":"slugifyTitle"}})
    .to_string();
    let made_up = json!({"mode":"respond","text":"It is defined in src/shelf.py."}).to_string();
    let right = json!({"mode":"respond","text":"In src/store.js, line 3."}).to_string();
    let (report, model, calls) = run_task(task, &[find.clone(), made_up.clone(), right.clone()]);
    assert_eq!(report.corrections.get("answer-file-unseen"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with("Your answer names src/shelf.py, which no result you were shown holds")
            && told.ends_with(&format!("The operator's task was: {task}")),
        "{told}"
    );
    assert_eq!(report.answer, "In src/store.js, line 3.");
    assert_eq!(calls.len(), 1, "a correction calls nothing");

    // The file the result showed is an answer.
    let (report, _, _) = run_task(task, &[find.clone(), right]);
    assert_eq!(report.corrections.get("answer-file-unseen"), None);

    // Once a turn, and likely, not certain: the same answer again stands.
    let (report, _, _) = run_task(task, &[find, made_up.clone(), made_up]);
    assert_eq!(report.corrections.get("answer-file-unseen"), Some(&1));
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert_eq!(report.answer, "It is defined in src/shelf.py.");
}

#[test]
fn an_outline_that_lists_the_tasks_name_is_followed_by_where_it_lists_it() {
    let task = "Which file defines cmdList? Look it up in the code index.";
    let outline =
        json!({"mode":"action","tool":"memory.codebase","params":{"op":"outline","path":"src"}})
            .to_string();
    let answer = json!({"mode":"respond","text":"src/cli.js"}).to_string();
    let (report, model, calls) = run_task(task, &[outline.clone(), answer.clone()]);
    assert_eq!(report.corrections.get("outline-definition-named"), Some(&1));
    let told = model.told(1);
    assert!(
        told.starts_with("memory.codebase returned:")
            && told.ends_with(
                "This outline lists cmdList, the name the task asks about, as defined in \
                 src/cli.js (line 28)."
            ),
        "{told}"
    );
    assert_eq!(calls.len(), 1, "a correction calls nothing");
    assert_eq!(report.answer, "src/cli.js");

    // A name the outline does not list, or a task that names none, is told nothing.
    for task in [
        "Which file defines slugifyTitle? Look it up in the code index.",
        "What is in src?",
    ] {
        let (report, model, _) = run_task(task, &[outline.clone(), answer.clone()]);
        assert_eq!(report.corrections.get("outline-definition-named"), None);
        assert!(!model.told(1).contains("the name the task asks about"));
    }
}

#[test]
fn a_call_copied_from_the_prompts_example_is_not_run_and_the_task_file_is_pointed_to() {
    // The files.read example of the system prompt (see prompt::EXAMPLES).
    let task = "Quote step 2 of notes/short.md for me.";
    let quoted = json!({"mode":"respond","text":"2. Push."}).to_string();
    let (report, model, calls) = run_task(
        task,
        &[
            read("docs/setup.md"),
            read("notes/short.md"),
            quoted.clone(),
        ],
    );
    assert_eq!(report.corrections.get("example-call-not-run"), Some(&1));
    let told = model.told(1);
    assert!(
        told.starts_with("That files.read call is the example in your instructions")
            && told.contains("The task names notes/short.md"),
        "{told}"
    );
    assert_eq!(
        calls,
        [("files.read".to_owned(), json!({"path": "notes/short.md"}))],
        "the example's call never reached a tool"
    );
    assert_eq!(report.answer, "2. Push.");

    // Copied again, the turn asks for its answer: no call is run.
    let (report, _, calls) = run_task(
        task,
        &[read("docs/setup.md"), read("docs/setup.md"), quoted],
    );
    assert_eq!(report.corrections.get("example-call-not-run"), Some(&2));
    assert!(calls.is_empty(), "{calls:?}");
    assert!(
        matches!(report.end, TurnEnd::ForcedAnswer { .. }),
        "{:?}",
        report.end
    );

    // Where copies are resampled, the copy is asked for again first
    // (qwen2.5-coder-0.5b read the file the task named, then made the
    // example call again): a sampled reply that reads the file runs.
    let (report, model, calls) = run_with(
        task,
        &[
            read("docs/setup.md"),
            read("docs/setup.md"),
            read("notes/short.md"),
            json!({"mode":"respond","text":"2. Push."}).to_string(),
        ],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("example-call-not-run"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(sampled(&model, 2), Some((0.7, Some(3))));
    assert_eq!(tool_names(&calls), ["files.read"]);
    assert_eq!(calls[0].1, json!({"path": "notes/short.md"}));
    assert_eq!(report.end, TurnEnd::Answered);

    // The operator's own docs/setup.md is read.
    let own = "What does docs/setup.md say about proxies?";
    let (report, _, calls) = run_task(own, &[read("docs/setup.md"), respond()]);
    assert_eq!(report.corrections.get("example-call-not-run"), None);
    assert_eq!(calls.len(), 1);
}

/// Whether request `n`'s grammar admits an answer, and the tools it admits
/// as calls.
fn admits(model: &Scripted, n: usize) -> (bool, Vec<String>) {
    let schema = model.seen[n]
        .json_schema
        .as_ref()
        .expect("constrained")
        .value();
    let variants = schema["oneOf"].as_array().expect("one of the forms");
    let respond = variants
        .iter()
        .any(|v| v["properties"]["mode"]["const"] == "respond");
    let tools = variants
        .iter()
        .filter_map(|v| v["properties"]["tool"]["const"].as_str())
        .map(str::to_owned)
        .collect();
    (respond, tools)
}

#[test]
fn an_answer_sent_back_and_given_again_word_for_word_is_sent_back_and_the_next_reply_calls() {
    let made_up = json!({"mode":"respond","text":"You ran 1000 km."}).to_string();
    let (report, model, calls) = run(&[
        made_up.clone(),
        made_up.clone(),
        python("print(8.5)"),
        respond(),
    ]);
    assert_eq!(report.corrections.get("answer-figure-unseen"), Some(&1));
    assert_eq!(report.corrections.get("reply-repeated"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with("You gave this answer before, word for word, and it was sent back")
            && told.ends_with(&format!("The operator's task was: {TASK}")),
        "{told}"
    );
    // The reply after the repeat may not answer; every tool is still there,
    // and the one after it may answer again.
    let all = admits(&model, 0).1;
    assert!(all.contains(&"python.run".to_owned()), "{all:?}");
    assert_eq!(admits(&model, 1), (true, all.clone()));
    assert_eq!(admits(&model, 2), (false, all.clone()));
    assert_eq!(admits(&model, 3), (true, all));
    assert_eq!(
        tool_names(&calls),
        ["python.run"],
        "the model chose the call"
    );
    assert_eq!(report.answer, "8.5 km");

    // Where the grammar is not followed, a repeat no check sends back is
    // sent back once a turn; the next stands.
    let (report, _, calls) = run(&[made_up.clone(), made_up.clone(), made_up.clone()]);
    assert_eq!(report.corrections.get("reply-repeated"), Some(&1));
    assert_eq!(report.answer, "You ran 1000 km.");
    assert!(calls.is_empty(), "a correction calls nothing");

    // An answer given once is taken as it is.
    let (report, model, _) = run(&[respond()]);
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert!(admits(&model, 0).0);
}

#[test]
fn a_call_sent_back_unrun_and_written_again_is_resampled_then_stopped_as_a_repeat() {
    // Code that only prints its own words is sent back whole (not run); the
    // same reply in a later step is a copy the model was told of: asked for
    // again, sampled, and written again past that, the calls end as a
    // repeat's do. Under llama-server qwen2.5-coder-1.5b printed its own
    // refusal twelve times, sent back each time, until its steps ran out.
    let talk = python("print('That file is protected.')");
    let (report, model, calls) = run_with(
        TASK,
        &[talk.clone(), talk.clone(), talk.clone(), respond()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("print-only-code-not-run"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(report.corrections.get("repeat-stopped"), Some(&1));
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(sampled(&model, 2), Some((0.7, Some(3))));
    assert_eq!(model.seen[2].messages, model.seen[1].messages);
    assert!(
        matches!(report.end, TurnEnd::ForcedAnswer { .. }),
        "{:?}",
        report.end
    );
    assert!(calls.is_empty(), "a correction calls nothing");
    assert_eq!(report.answer, "8.5 km");

    // Resampled into other code, the turn goes on.
    let (report, _, calls) = run_with(
        TASK,
        &[talk.clone(), talk.clone(), python("print(8.5)"), respond()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(report.corrections.get("repeat-stopped"), None);
    assert_eq!(tool_names(&calls), ["python.run"]);
    assert_eq!(report.end, TurnEnd::Answered);

    // Without resamples the copy is stopped at once; the reply after it may
    // answer (no tool is barred, none is called for the model).
    let (report, _, calls) = run(&[talk.clone(), talk.clone(), respond()]);
    assert_eq!(report.corrections.get("print-only-code-not-run"), Some(&1));
    assert_eq!(report.corrections.get("repeat-stopped"), Some(&1));
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert!(calls.is_empty());
    assert_eq!(report.answer, "8.5 km");
}

#[test]
fn code_sent_back_for_a_change_task_and_written_again_is_resampled() {
    let task = "Page 1 shows the wrong books. Fix it on a branch.";
    let fetch =
        python("import requests\nprint(requests.get('https://api.example/books?page=1').json())");
    let edit = json!({"mode":"action","tool":"builder","params":{
        "op":"replace","path":"src/paginate.js","old":"page *","new":"(page - 1) *"}})
    .to_string();
    let (report, model, calls) = run_with(
        task,
        &[
            fetch.clone(),
            fetch.clone(),
            read("src/paginate.js"),
            edit,
            respond(),
        ],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("change-task-code-not-run"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(sampled(&model, 2), Some((0.7, Some(3))));
    assert_eq!(
        tool_names(&calls),
        ["files.read", "builder"],
        "the copy did not run"
    );
}

/// Whether request `n` asked for a sampled reply, and with which seed.
fn sampled(model: &Scripted, n: usize) -> Option<(f32, Option<u32>)> {
    let r = &model.seen[n];
    (r.temperature > 0.0).then_some((r.temperature, r.seed))
}

#[test]
fn a_call_repeated_after_the_model_was_told_is_dropped_and_asked_for_again_sampled() {
    // A program that ran: a copy of one that failed is resampled at once
    // (see the test after this one).
    let first = python("print(8.4)");
    let other = python("print(8.5)");
    let (report, model, calls) = run_with(
        TASK,
        &[
            first.clone(),
            first.clone(),
            first.clone(),
            other,
            respond(),
        ],
        TurnOptions::default(),
    );
    // The first repeat is told (repeat-warned); the second, which words did
    // not stop, is dropped and its request asked again, sampled.
    assert_eq!(report.corrections.get("repeat-warned"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(report.corrections.get("repeat-stopped"), None);
    assert_eq!(
        calls
            .iter()
            .map(|(_, p)| p["code"].clone())
            .collect::<Vec<_>>(),
        [json!("print(8.4)"), json!("print(8.5)")],
        "the copies did not run; the sampled reply did"
    );
    // Greedy but for the request after the dropped copy, which is the copy's
    // own request again (the copy is not in it), sampled with the step's seed.
    assert_eq!(
        (0..model.seen.len())
            .map(|n| sampled(&model, n))
            .collect::<Vec<_>>(),
        [None, None, None, Some((0.7, Some(4))), None]
    );
    assert_eq!(model.seen[3].messages, model.seen[2].messages);
    assert_eq!(report.answer, "8.5 km");
}

#[test]
fn a_copy_of_a_call_that_failed_is_asked_for_again_sampled_at_its_first_repeat() {
    let failed = python("fail()");
    let other = python("print(8.5)");
    let (report, model, calls) = run_with(
        TASK,
        &[failed.clone(), failed.clone(), other, respond()],
        TurnOptions::default(),
    );
    // No warning first: the copy is dropped and its request asked again.
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(report.corrections.get("repeat-warned"), None);
    let codes: Vec<Value> = calls.iter().map(|(_, p)| p["code"].clone()).collect();
    assert_eq!(codes, [json!("fail()"), json!("print(8.5)")]);
    assert_eq!(sampled(&model, 2), Some((0.7, Some(3))));
    assert_eq!(model.seen[2].messages, model.seen[1].messages);

    // A lookup that found nothing, after which the turn wrote out the
    // lookup to make: that call is made in the copy's place, not resampled.
    let task = "Which file of the shelf project defines slugifyTitle? Look it up.";
    let vain = json!({"mode":"action","tool":"memory.codebase","params":{
        "op":"find_symbol","name":"shelf"}})
    .to_string();
    let (report, _, calls) = run_with(
        task,
        &[vain.clone(), vain, respond(), respond()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("copy-resampled"), None);
    assert_eq!(report.corrections.get("told-call-run"), Some(&1));
    assert_eq!(
        calls[1].1,
        json!({"op":"find_symbol","name":"slugifyTitle"})
    );
}

#[test]
fn a_plan_that_repeats_two_calls_is_told_of_both_before_it_is_stopped_or_resampled() {
    // The warning about the first step is said in the same step as the
    // second step's repeat: the model has not read it, so the second is no
    // copy that words failed to stop, and no reason to stop the calls.
    let plan = json!({"mode":"plan","steps":[
        {"actor":"python.run","params":{"code":"print(1)"}},
        {"actor":"facts.get","params":{"fact":"os"}}
    ]})
    .to_string();
    let (report, model, calls) = run_with(
        TASK,
        &[plan.clone(), plan.clone(), respond()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("copy-resampled"), None);
    assert_eq!(report.corrections.get("repeat-warned"), Some(&2));
    assert_eq!(report.corrections.get("repeat-stopped"), None);
    assert_eq!(report.corrections.get("final-answer-forced"), None);
    assert!(sampled(&model, 2).is_none());
    let told = model.told(2);
    assert!(
        told.contains("You already called python.run with these params")
            && told.contains("You already called facts.get with these params"),
        "{told}"
    );
    assert_eq!(calls.len(), 2, "a repeat never runs");
    assert_eq!(report.answer, "8.5 km");

    // The same plan once more, after the warning was read, is a copy words
    // did not stop: asked for again, sampled.
    let (report, model, _) = run_with(
        TASK,
        &[plan.clone(), plan.clone(), plan, respond()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert!(sampled(&model, 3).is_some());
    assert_eq!(report.answer, "8.5 km");
}

#[test]
fn a_copy_on_the_turns_last_step_is_not_resampled_into_the_forced_answer() {
    let same = python("fail()");
    let (report, model, _) = run_with(
        TASK,
        &[same.clone(), same.clone(), same.clone(), respond()],
        TurnOptions {
            max_steps: 3,
            ..TurnOptions::default()
        },
    );
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert!(
        matches!(report.end, TurnEnd::ForcedAnswer { .. }),
        "{:?}",
        report.end
    );
    assert_eq!(sampled(&model, 3), None, "the forced answer is greedy");
    assert_eq!(report.answer, "8.5 km");
}

#[test]
fn a_resampled_copy_that_copies_again_is_left_to_the_repeat_checks() {
    let same = python("print(8.4)");
    let (report, model, calls) = run_with(
        TASK,
        &[
            same.clone(),
            same.clone(),
            same.clone(),
            same.clone(),
            respond(),
        ],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    for c in ["repeat-warned", "repeat-stopped", "final-answer-forced"] {
        assert_eq!(report.corrections.get(c), Some(&1), "{c}");
    }
    assert_eq!(calls.len(), 1, "a copy never runs");
    assert_eq!(sampled(&model, 3), Some((0.7, Some(4))));
    assert_eq!(sampled(&model, 4), None, "the forced answer is greedy");
    assert_eq!(report.answer, "8.5 km");

    // With copy_resamples 0 the repeat checks act alone.
    let (report, _, _) = run(&[same.clone(), same.clone(), same.clone(), respond()]);
    assert_eq!(report.corrections.get("copy-resampled"), None);
    assert_eq!(report.corrections.get("repeat-stopped"), Some(&1));
}

/// The model's own replies in request `n`'s conversation.
fn assistant_of(model: &Scripted, n: usize) -> Vec<String> {
    model.seen[n]
        .messages
        .iter()
        .filter(|m| m.role == "assistant")
        .map(|m| m.content.clone())
        .collect()
}

#[test]
fn answers_with_a_made_up_figure_leave_the_conversation_when_it_is_found() {
    // Sent back for one mistake, then for a figure nothing showed: both
    // answers that state it are taken out, so the model is not shown its
    // made-up words to copy (qwen2.5-coder-1.5b gave "1000 km and 5 years"
    // a third time after reading the notes that held the real figures).
    let task = "How many km did I run in April? And which shoes did I wear most?";
    let first = say("You ran 1000 km.");
    let second = say("You ran 1000 km, in the Novablast 4.");
    let (report, model, _) = run_task(
        task,
        &[
            first,
            second,
            python("print(8.5)"),
            say("8.5 km, in the Novablast 4."),
        ],
    );
    assert_eq!(report.corrections.get("question-left-out"), Some(&1));
    assert_eq!(report.corrections.get("answer-figure-unseen"), Some(&1));
    assert_eq!(report.corrections.get("made-up-reply-unsaid"), Some(&1));
    let assistant = |n: usize| assistant_of(&model, n);
    assert_eq!(
        assistant(1).len(),
        1,
        "the first answer, before it was found"
    );
    assert!(assistant(2).is_empty(), "{:?}", assistant(2));
    // What the model was told of each stays, the finding last.
    let told: Vec<&str> = model.seen[2]
        .messages
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| m.content.as_str())
        .collect();
    assert!(told[told.len() - 2].starts_with("Your answer leaves out a question"));
    assert!(told[told.len() - 1].starts_with("Your answer gives 1000, which nothing"));
    // The program the model ran next, and its result, stay.
    assert_eq!(assistant(3).len(), 1);
    assert_eq!(report.answer, "8.5 km, in the Novablast 4.");

    // Results are still found where they are once answers left: with a
    // history budget that keeps only the newest result whole, what is cut
    // short is what seam said, never the task or a reply of the model.
    let (_, model, _) = run_with(
        task,
        &[
            read("notes/offsite.md"),
            say("You ran 1000 km."),
            say("You ran 1000 km, in the Novablast 4."),
            python("print(8.5)"),
            say("8.5 km, in the Novablast 4."),
        ],
        TurnOptions {
            history_bytes: 1,
            copy_resamples: 0,
            ..TurnOptions::default()
        },
    );
    let last = &model.seen[4].messages;
    assert_eq!(
        last.iter().filter(|m| m.role == "assistant").count(),
        2,
        "the read and the program"
    );
    for (at, m) in last.iter().enumerate() {
        let elided = m.content.starts_with("(an earlier tool result");
        let seams = m.role == "user" && at > 1 && at + 1 < last.len();
        assert_eq!(elided, seams, "message {at} ({}): {}", m.role, m.content);
    }

    // An answer sent back whose figures were all shown stays.
    let (report, model, _) = run_task(
        task,
        &[
            python("print(8.5)"),
            say("You ran 8.5 km."),
            say("8.5 km, in the Novablast 4."),
        ],
    );
    assert_eq!(report.corrections.get("question-left-out"), Some(&1));
    assert_eq!(report.corrections.get("made-up-reply-unsaid"), None);
    assert!(
        assistant_of(&model, 2)
            .iter()
            .any(|m| m.contains("You ran 8.5 km."))
    );
}

#[test]
fn a_made_up_figure_before_the_tasks_file_is_read_is_sent_to_that_file() {
    // qwen2.5-coder-1.5b read the operator's notes, answered "1000 km" before
    // it read the CSV the task named, and, told only to call "the tool that
    // has it", spent three steps on searches.
    let task = "How many km are on my Novablast 4? The runs are in data/runs.csv.";
    let (report, model, calls) = run_task(
        task,
        &[
            say("They have 1000 km on them."),
            read("data/runs.csv"),
            say("8.5 km"),
        ],
    );
    assert_eq!(report.corrections.get("answer-figure-unseen"), Some(&1));
    assert_eq!(report.corrections.get("task-file-unread"), Some(&1));
    let told = model.told(1);
    assert!(
        told.starts_with("Your answer gives 1000, which nothing you were shown holds"),
        "{told}"
    );
    assert!(
        told.contains(
            r#"The task names data/runs.csv, and this turn has not read it: read it with files.read if it bears on the task, then answer. That call is: {"mode":"action","tool":"files.read","params":{"path":"data/runs.csv"}}"#
        ),
        "{told}"
    );
    assert_eq!(tool_names(&calls), ["files.read"]);
    assert_eq!(report.answer, "8.5 km");

    // With the task's files read, it is told the task again instead.
    let (report, model, _) = run_task(
        task,
        &[
            read("data/runs.csv"),
            say("They have 1000 km on them."),
            say("8.5 km"),
        ],
    );
    assert_eq!(report.corrections.get("task-file-unread"), None);
    let told = model.told(2);
    assert!(
        told.ends_with(&format!("The operator's task was: {task}")),
        "{told}"
    );
}

#[test]
fn an_answer_with_a_new_made_up_figure_is_sent_back_again_up_to_twice() {
    // qwen2.5-coder-1.5b, told its "1000 km" was made up, worked out 189.28
    // and then answered with it and "177.31 km" more to go, made up too
    // (here the stand-in program prints 8.5).
    let (report, model, calls) = run(&[
        say("You ran 1000 km."),
        python("print(8.5)"),
        say("You ran 8.5 km, 177.31 to go."),
        say("You ran 8.5 km, 510.72 to go."),
    ]);
    assert_eq!(report.corrections.get("answer-figure-unseen"), Some(&2));
    assert_eq!(tool_names(&calls), ["python.run"]);
    let told = model.told(3);
    assert!(
        told.starts_with("Your answer gives 177.31, which nothing you were shown holds"),
        "{told}"
    );
    assert!(!told.contains("1000"), "{told}");
    assert_eq!(
        report.answer, "You ran 8.5 km, 510.72 to go.",
        "past its second, a made-up figure stands"
    );
    // Both made-up answers left the conversation.
    assert!(
        assistant_of(&model, 3)
            .iter()
            .all(|m| !m.contains("1000") && !m.contains("177.31")),
        "{:?}",
        assistant_of(&model, 3)
    );

    // A figure it was sent back for, said again in other words, goes back
    // again too.
    let (report, _, _) = run(&[
        say("You ran 1000 km."),
        python("print(8.5)"),
        say("8.5 km this month, 1000 km in all."),
        say("8.5 km this month."),
    ]);
    assert_eq!(report.corrections.get("answer-figure-unseen"), Some(&2));
    assert_eq!(report.answer, "8.5 km this month.");
}

#[test]
fn an_answer_worked_out_without_the_operators_note_about_the_task_is_sent_back_once() {
    // qwen2.5-coder-1.5b summed the shoe's runs and answered with that sum,
    // the starting mileage in the operator's notes left out. (The stand-in
    // program prints 12.92 for code marked `# column`.)
    let task = "How many km are on my Novablast 4 now? The starting mileage is in my notes \
                to you; the runs are in data/shoes.csv.";
    let notes = recall("shoe");
    let summed = "import csv\nrows = csv.DictReader(open('data/shoes.csv'))\n\
                  print(sum(float(r['km']) for r in rows if r['shoes'] == 'Novablast 4'))  # column";
    let (report, model, _) = run_task(
        task,
        &[
            notes.clone(),
            read("data/shoes.csv"),
            python(summed),
            say("They have 12.92 km on them."),
            say("12.92 km logged on top of the 312.6 km."),
        ],
    );
    assert_eq!(report.corrections.get("answer-leaves-out-source"), Some(&1));
    let told = model.told(4);
    assert!(
        told.starts_with(
            "Your answer uses nothing of the operator's notes (memory.operator), and these \
             lines of it bear on the task:\n- Shoe log: the Novablast 4 had 312.6 km before 2 March.\n\
             Neither your answer nor a program of the turn used 312.6. Work them into your last \
             program: its line `print(sum(float(r['km']) for r in rows if r['shoes'] == \
             'Novablast 4'))  # column` prints without them. Change that line so it works 312.6 \
             in, run the program again with python.run, then answer."
        ),
        "{told}"
    );
    assert_eq!(report.corrections.get("left-out-reply-unsaid"), Some(&1));
    assert!(
        assistant_of(&model, 4)
            .iter()
            .all(|m| !m.contains("They have 12.92")),
        "the answer left the conversation: {:?}",
        assistant_of(&model, 4)
    );
    assert_eq!(report.answer, "12.92 km logged on top of the 312.6 km.");

    // An answer that also makes a figure up is sent back for the note.
    let (report, model, _) = run_task(
        task,
        &[
            notes.clone(),
            read("data/shoes.csv"),
            python(summed),
            say("They have 12.92 km on them, 687.08 to go."),
            say("12.92 km logged on top of the 312.6 km."),
        ],
    );
    assert_eq!(report.corrections.get("answer-leaves-out-source"), Some(&1));
    assert_eq!(report.corrections.get("answer-figure-unseen"), None);
    assert!(!model.told(4).contains("687.08"), "{}", model.told(4));

    // With the note's figure in the program, the answer stands.
    let (report, _, _) = run_task(
        task,
        &[
            notes.clone(),
            read("data/shoes.csv"),
            python(&format!("{summed}\nprint(312.6)")),
            say("They have 12.92 km on them."),
        ],
    );
    assert_eq!(report.corrections.get("answer-leaves-out-source"), None);
    assert_eq!(report.answer, "They have 12.92 km on them.");
}

#[test]
fn a_program_sent_again_unchanged_after_it_was_told_which_line_to_change_is_not_run() {
    // Told to change the line that printed the runs' sum so it worked the
    // note's starting mileage in, qwen2.5-coder-1.5b sent the same program.
    let task = "How many km are on my Novablast 4 now? The starting mileage is in my notes \
                to you; the runs are in data/shoes.csv.";
    let summed = "# one sum\nimport csv\nrows = csv.DictReader(open('data/shoes.csv'))\n\
                  total = sum(float(r['km']) for r in rows if r['shoes'] == 'Novablast 4')\n\
                  print(total)";
    let mended = summed.replace("print(total)", "print(total + 312.6)");
    let (report, model, calls) = run_task(
        task,
        &[
            recall("shoe"),
            read("data/shoes.csv"),
            python(summed),
            say("They have 12.92 km on them."),
            python(summed),
            python(&mended),
            say("12.92 km logged on top of the 312.6 km."),
        ],
    );
    assert_eq!(report.corrections.get("answer-leaves-out-source"), Some(&1));
    assert_eq!(report.corrections.get("program-unchanged-told"), Some(&1));
    assert!(
        model
            .told(4)
            .contains("Work them into your last program: its line `print(total)` prints"),
        "{}",
        model.told(4)
    );
    assert_eq!(
        model.told(5),
        "That is your last program unchanged, so it was not run: its line `print(total)` still \
         prints without 312.6. Write that line anew so it works 312.6 in, and run the program \
         with python.run."
    );
    // The copy ran nowhere, and left the conversation; the mended one ran.
    let codes: Vec<&str> = calls
        .iter()
        .filter(|(tool, _)| tool == "python.run")
        .map(|(_, params)| params["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, [summed, mended.as_str()]);
    assert_eq!(report.answer, "12.92 km logged on top of the 312.6 km.");

    // A copy of a program run since, with that line changed, is the repeat
    // it always was: the line told of is no longer in it.
    let (report, model, _) = run_task(
        task,
        &[
            recall("shoe"),
            read("data/shoes.csv"),
            python(summed),
            say("They have 12.92 km on them."),
            python(&mended),
            python(&mended),
            say("12.92 km logged on top of the 312.6 km."),
        ],
    );
    assert_eq!(report.corrections.get("program-unchanged-told"), None);
    assert_eq!(report.corrections.get("repeat-warned"), Some(&1));
    assert!(!model.told(6).contains("print(total)"), "{}", model.told(6));

    // Without a line to change (no program ran before the answer), a copy
    // of a program is the repeat it always was.
    let (report, _, _) = run_task(
        task,
        &[
            python(summed),
            python(summed),
            say("They have 12.92 km on them."),
            say("They have 12.92 km on them."),
        ],
    );
    assert_eq!(report.corrections.get("program-unchanged-told"), None);
}

#[test]
fn a_task_about_now_answered_with_only_what_the_notes_say_is_gone_is_sent_back_once() {
    let task = "Which host relays our mail now? I noted it for you.";
    let (report, model, calls) = run_task(
        task,
        &[
            recall("mail host"),
            say("Mail goes through smtp-07."),
            say("Mail goes through mx-kite-4."),
        ],
    );
    assert_eq!(calls.len(), 1, "a correction calls nothing");
    assert_eq!(
        report.corrections.get("answer-names-what-is-gone"),
        Some(&1)
    );
    assert_eq!(
        model.told(2),
        "Your answer names smtp-07, and what you read says it is gone: \"the old relay smtp-07 \
         is shut down\". The task asks about now: answer with what it is now, from what you \
         read. The operator's task was: Which host relays our mail now? I noted it for you."
    );
    assert_eq!(report.answer, "Mail goes through mx-kite-4.");
    // The new one named beside the old, or a task not about now: it stands.
    for (task, answer) in [
        (task, "mx-kite-4; smtp-07 is shut down."),
        (
            "Which host relayed our mail in May? I noted it.",
            "smtp-07.",
        ),
    ] {
        let (report, _, _) = run_task(task, &[recall("mail host"), say(answer)]);
        assert_eq!(
            report.corrections.get("answer-names-what-is-gone"),
            None,
            "{task}"
        );
        assert_eq!(report.answer, answer);
    }
}

#[test]
fn a_program_that_prints_a_number_below_zero_for_how_many_is_told_so() {
    let task = "How many km more before I should retire my shoes? The rule is 700 km.";
    let code = "# below zero\nprint(189.28 + 312.6 - 700)";
    let (report, model, _) = run_task(task, &[python(code), say("198.12 km more.")]);
    assert_eq!(report.corrections.get("below-zero-told"), Some(&1));
    assert!(
        model.told(1).ends_with(
            "It printed -198.12, a number below zero, and the task asks how many. If what it \
             counts cannot be below zero, look again at what each number in the line that works \
             it out stands for, mend that line and run it again; if it can, answer from what it \
             printed."
        ),
        "{}",
        model.told(1)
    );
    // A task whose answer may be signed is not told.
    let signed = "By how many km was I over or under my target of 700 km?";
    let (report, _, _) = run_task(signed, &[python(code), say("198.12 km under.")]);
    assert_eq!(report.corrections.get("below-zero-told"), None);
}

#[test]
fn a_program_that_sets_a_number_and_never_uses_it_is_told_so() {
    let task = "How many km are on my Novablast 4 now? It had 312.6 km before I logged runs.";
    let code = "# one sum\nstart_km = float('312.6')\nlogged = 12.92\nprint(logged)";
    let (report, model, _) = run_task(task, &[python(code), say("12.92 km.")]);
    assert_eq!(report.corrections.get("figure-set-unused"), Some(&1));
    assert!(
        model.told(1).ends_with(
            "Your code sets start_km to 312.6 and never uses it after, so what it printed \
             leaves 312.6 out. If the task needs it, work it into what the code prints and run \
             it again; if not, answer from what it printed."
        ),
        "{}",
        model.told(1)
    );
    // A number the code uses is no hint.
    let used = "# one sum\nstart_km = 312.6\nlogged = 12.92\nprint(logged + start_km)";
    let (report, _, _) = run_task(task, &[python(used), say("12.92 km.")]);
    assert_eq!(report.corrections.get("figure-set-unused"), None);
}

#[test]
fn an_answer_worked_out_beside_a_table_the_task_names_and_no_program_opened_is_sent_back() {
    // Told of the notes it had left out, qwen2.5-coder-1.5b worked out
    // 700 - 312.6 and answered with that: the runs the task named, read,
    // went into no program.
    let task = "How many km are on my Novablast 4 now? The starting mileage is in my notes \
                to you; the runs are in data/shoes.csv.";
    let notes = recall("shoe");
    let (report, model, _) = run_task(
        task,
        &[
            notes,
            read("data/shoes.csv"),
            python("p = 312.6\nprint(700 - p)  # column"),
            say("They had 312.6 km, 12.92 to go."),
            say("312.6 km and 12.92 km."),
        ],
    );
    assert_eq!(report.corrections.get("answer-leaves-out-source"), Some(&1));
    let told = model.told(4);
    assert!(
        told.starts_with(
            "Your answer uses nothing of data/shoes.csv, which the task names: no program of \
             the turn opened it, and no figure of it is in your answer. Work it into your answer \
             (with python.run, whose code can open data/shoes.csv), then answer."
        ),
        "{told}"
    );
    assert_eq!(report.answer, "312.6 km and 12.92 km.");

    // The same answer given again word for word after it was sent to read
    // the table (`task-file-unread`) is judged for the table.
    let answer = say("They had 312.6 km, 12.92 to go.");
    let (report, model, _) = run_task(
        task,
        &[
            recall("shoe"),
            python("p = 312.6\nprint(700 - p)  # column"),
            answer.clone(),
            read("data/shoes.csv"),
            answer,
            say("312.6 km and 12.92 km."),
        ],
    );
    // Pointed to the table after the notes (a result from elsewhere than
    // the table), the model ran its program and answered: sent to the
    // table again, once.
    assert_eq!(report.corrections.get("task-file-pointed"), Some(&1));
    assert_eq!(report.corrections.get("task-file-unread"), Some(&1));
    assert_eq!(report.corrections.get("answer-leaves-out-source"), Some(&1));
    assert!(
        model
            .told(5)
            .starts_with("Your answer uses nothing of data/shoes.csv"),
        "{}",
        model.told(5)
    );
}

#[test]
fn a_copied_answer_with_its_mistake_is_resampled_before_it_is_sent_back_again() {
    let made_up = json!({"mode":"respond","text":"You ran 1000 km."}).to_string();
    let (report, model, calls) = run_with(
        TASK,
        &[
            made_up.clone(),
            made_up.clone(),
            python("print(8.5)"),
            respond(),
        ],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("answer-figure-unseen"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert_eq!(sampled(&model, 2), Some((0.7, Some(3))));
    assert_eq!(model.seen[2].messages, model.seen[1].messages);
    assert_eq!(tool_names(&calls), ["python.run"]);
    assert_eq!(report.answer, "8.5 km");

    // An answer given once, or a copy no check sends back, is not resampled.
    let (report, model, _) = run_with(TASK, &[respond()], TurnOptions::default());
    assert_eq!(report.corrections.get("copy-resampled"), None);
    assert_eq!(sampled(&model, 0), None);
}

/// A search of the operator's notes for `query`.
fn recall(query: &str) -> String {
    json!({"mode":"action","tool":"memory.operator","params":{"op":"search","query": query}})
        .to_string()
}

fn say(text: &str) -> String {
    json!({"mode":"respond","text": text}).to_string()
}

#[test]
fn a_task_asking_what_time_answered_with_no_time_is_shown_the_lines_that_give_one() {
    let task = "What time is our train back from Lisbon? See notes/offsite.md.";
    let (report, model, _) = run_task(
        task,
        &[
            read("notes/offsite.md"),
            say("It is on Thursday 5 June."),
            say("At 17:00."),
        ],
    );
    assert_eq!(report.corrections.get("time-not-given"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with("The task asks what time, and your answer gives no time."),
        "{told}"
    );
    // The train's line (its heading and its words are the task's), not the
    // dinner's, which names nothing the task asks about.
    assert!(
        told.contains("- notes/offsite.md: - Back: Thu 5 June, Lisbon 17:00 -> Porto 19:49"),
        "{told}"
    );
    assert!(!told.contains("20:30"), "{told}");
    assert_eq!(report.answer, "At 17:00.");

    // An answer with a time, or a task that asks none, is not sent back.
    let (report, _, _) = run_task(task, &[read("notes/offsite.md"), say("At 19:49.")]);
    assert_eq!(report.corrections.get("time-not-given"), None);
    let (report, _, _) = run_task(
        "Which day is our train back? See notes/offsite.md.",
        &[read("notes/offsite.md"), say("Thursday.")],
    );
    assert_eq!(report.corrections.get("time-not-given"), None);
}

#[test]
fn an_answer_that_leaves_out_a_question_of_the_task_is_sent_back_once_with_the_file() {
    let task = "Tell me where the team dinner is, from notes/offsite.md. And which day is our \
                train back?";
    let dinner = say("The team dinner is at Cervejaria Ramiro.");
    let both = say("Dinner is at Cervejaria Ramiro; the train back is on Thursday 5 June.");
    let (report, model, calls) = run_task(
        task,
        &[read("notes/offsite.md"), dinner.clone(), both.clone()],
    );
    assert_eq!(calls.len(), 1, "a correction calls nothing");
    assert_eq!(report.corrections.get("question-left-out"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with(
            "Your answer leaves out a question of the task: \"And which day is our train back?\" \
             Here is notes/offsite.md again:\n\n# Lisbon offsite\n"
        ) && told.ends_with(&format!("The task was: {task}")),
        "{told}"
    );
    assert!(told.contains("\n\nAnswer every part of the task, this question too, from it."));
    assert_eq!(
        report.answer,
        "Dinner is at Cervejaria Ramiro; the train back is on Thursday 5 June."
    );

    // Nothing read speaks of the question: the model is told to read first
    // (then, answering again, sent to the file the task names).
    let (report, model, _) = run_task(task, &[dinner.clone(), both.clone(), both.clone()]);
    assert_eq!(report.corrections.get("question-left-out"), Some(&1));
    assert_eq!(report.corrections.get("task-file-unread"), Some(&1));
    assert!(
        model
            .told(1)
            .contains("this question too: read what it needs first if you have not."),
        "{}",
        model.told(1)
    );

    // Told to answer, with nothing read about the question, it is asked
    // from what was read: the model may call nothing more.
    let code = python("import os\nprint(len(os.listdir('.')))");
    let (report, model, _) = run_task(
        task,
        &[code.clone(), code.clone(), code, dinner.clone(), respond()],
    );
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(report.corrections.get("question-left-out"), Some(&1));
    assert!(
        model
            .told(4)
            .contains("this question too, from what you read. The task was:"),
        "{}",
        model.told(4)
    );

    // The same answer given again word for word is asked for again, sampled
    // (qwen2.5-coder-0.5b gave its steps of a runbook again, with no SKU).
    let (report, _, _) = run_with(
        task,
        &[
            read("notes/offsite.md"),
            dinner.clone(),
            dinner.clone(),
            both.clone(),
        ],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("question-left-out"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(
        report.answer,
        "Dinner is at Cervejaria Ramiro; the train back is on Thursday 5 June."
    );

    // Told to answer, the copy is asked for again too, sampled, as an
    // answer; past its resamples it stands.
    let forced = TurnOptions {
        max_steps: 1,
        ..TurnOptions::default()
    };
    let (report, model, _) = run_with(
        task,
        &[
            read("notes/offsite.md"),
            dinner.clone(),
            dinner.clone(),
            both.clone(),
        ],
        forced.clone(),
    );
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(report.corrections.get("question-left-out"), Some(&1));
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(sampled(&model, 2), None, "the forced answer is greedy");
    assert_eq!(sampled(&model, 3), Some((0.7, Some(4))));
    assert_eq!(model.seen[3].messages, model.seen[2].messages);
    assert!(
        matches!(report.end, TurnEnd::ForcedAnswer { .. }),
        "{:?}",
        report.end
    );
    assert_eq!(
        report.answer,
        "Dinner is at Cervejaria Ramiro; the train back is on Thursday 5 June."
    );
    let (report, _, _) = run_with(
        task,
        &[
            read("notes/offsite.md"),
            dinner.clone(),
            dinner.clone(),
            dinner.clone(),
            both.clone(),
        ],
        TurnOptions {
            copy_resamples: 1,
            ..forced
        },
    );
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(report.corrections.get("reply-repeated"), None);
    assert_eq!(report.answer, "The team dinner is at Cervejaria Ramiro.");

    // Once a turn: another answer that leaves it out stands.
    let other = say("Dinner: Cervejaria Ramiro, booked for the team.");
    let (report, _, _) = run_task(task, &[read("notes/offsite.md"), dinner, other]);
    assert_eq!(report.corrections.get("question-left-out"), Some(&1));
    assert_eq!(
        report.answer,
        "Dinner: Cervejaria Ramiro, booked for the team."
    );
}

#[test]
fn a_task_asking_what_time_answered_with_a_made_up_time_is_shown_the_lines_that_give_one() {
    // Told to answer after a loop, the model gives a time nothing showed.
    let (report, model, calls) =
        told_to_answer_then(&["The train back leaves at 13:36.", "At 17:00."]);
    assert_eq!(calls.len(), 1, "a correction calls nothing");
    assert_eq!(report.corrections.get("time-not-given"), Some(&1));
    let told = model.told(4);
    assert!(
        told.starts_with(
            "The task asks what time, and your answer gives 13:36, which nothing you were shown \
             holds. These lines of what you read give a time and speak of what the task asks:\n\
             - notes/offsite.md: - Back: Thu 5 June, Lisbon 17:00 -> Porto 19:49"
        ),
        "{told}"
    );
    assert_eq!(report.answer, "At 17:00.");
}

#[test]
fn a_time_made_from_a_number_in_the_text_is_told_to_be_that_number() {
    // Told to answer after a loop, the model reads the flight's number as a
    // time.
    let task = "What time is our flight home? See notes/flights.md.";
    let again = read("notes/flights.md");
    let (report, model, calls) = run_task(
        task,
        &[
            again.clone(),
            again.clone(),
            again,
            say("The flight home is at 17:42."),
            say("At 08:10."),
        ],
    );
    assert_eq!(calls.len(), 1, "a correction calls nothing");
    assert_eq!(report.corrections.get("time-not-given"), Some(&1));
    let told = model.told(4);
    assert!(
        told.starts_with(
            "The task asks what time, and your answer gives 17:42, which nothing you were shown \
             holds. 17:42 is no time of day: it is the number in \"LX 1742\" read as one. \
             These lines of what you read give a time and speak of what the task asks:\n\
             - notes/flights.md: - Out: LX 317, Mon 3 May, London 07:40 -> Zurich 10:25\n\
             - notes/flights.md: - Home: LX 1742, Fri 7 May, Zurich 08:10 -> London 08:55"
        ),
        "{told}"
    );
    assert_eq!(report.answer, "At 08:10.");
    // A made-up time from no number is only said to be shown nowhere.
    let (_, model, _) = told_to_answer_then(&["The train back leaves at 13:36.", "At 17:00."]);
    assert!(!model.told(4).contains("no time of day"));
}

/// A turn that asks what time a train leaves, in which the model reads the
/// note three times (the third is stopped and it is told to answer), then
/// gives `answers`.
fn told_to_answer_then(answers: &[&str]) -> (TurnReport, Scripted, Vec<(String, Value)>) {
    let task = "What time is our train back from Lisbon? See notes/offsite.md.";
    let again = read("notes/offsite.md");
    let mut replies = vec![again.clone(), again.clone(), again];
    replies.extend(answers.iter().map(|a| say(a)));
    run_task(task, &replies)
}

#[test]
fn an_answer_sent_back_once_the_turn_told_the_model_to_answer_is_asked_for_again() {
    // Told to answer after a loop, the model answers with no time: sent back
    // with the lines, its next reply is the turn's answer (the turn does not
    // stop on the first).
    let (report, model, calls) =
        told_to_answer_then(&["It is on Thursday.", "At 17:00, from Lisbon."]);
    assert_eq!(calls.len(), 1);
    assert_eq!(report.corrections.get("final-answer-forced"), Some(&1));
    assert_eq!(report.corrections.get("time-not-given"), Some(&1));
    assert!(
        matches!(report.end, TurnEnd::ForcedAnswer { .. }),
        "{:?}",
        report.end
    );
    assert_eq!(report.answer, "At 17:00, from Lisbon.");
    // The last request still asks for an answer only.
    assert!(model.told(4).starts_with("The task asks what time"));
}

#[test]
fn the_prompts_example_call_is_not_kept_in_the_conversation_and_an_answer_is() {
    let task = "Who is on call? See notes/rota.md.";
    let example = read("docs/setup.md");
    let (report, model, calls) =
        run_task(task, &[example.clone(), read("notes/rota.md"), respond()]);
    assert_eq!(report.corrections.get("example-call-not-run"), Some(&1));
    assert_eq!(tool_names(&calls), ["files.read"]);
    // The example call, not run, is not in the next request: the model is
    // told why, and has no reply of its own there to copy.
    let next = &model.seen[1].messages;
    assert!(
        next.iter().all(|m| m.role != "assistant"),
        "{:?}",
        next.iter().map(|m| &m.role).collect::<Vec<_>>()
    );
    assert!(
        next.last()
            .unwrap()
            .content
            .starts_with("That files.read call is the example"),
        "{}",
        next.last().unwrap().content
    );
    assert_eq!(report.corrections.get("unrun-reply-unsaid"), Some(&1));
    // A call that ran stays the model's own, its result after it.
    let last = &model.seen[2].messages;
    let n = last.len();
    assert_eq!(last[n - 2].role, "assistant");
    assert_eq!(last[n - 2].content, read("notes/rota.md"));
    assert!(last[n - 1].content.starts_with("files.read returned:"));
    assert_eq!(report.answer, "8.5 km");

    // An answer sent back stays, and so does a repeated call (not run):
    // the lines after them speak of them.
    let again = read("notes/rota.md");
    let (report, model, _) = run_task(
        task,
        &[say("Lars."), again.clone(), again.clone(), respond()],
    );
    let said = &model.seen[3].messages;
    let mine = |text: &str| {
        said.iter()
            .filter(|m| m.role == "assistant" && m.content == text)
            .count()
    };
    assert_eq!(mine(&say("Lars.")), 1);
    assert_eq!(mine(&again), 2);
    assert_eq!(report.corrections.get("task-file-unread"), Some(&1));
    assert_eq!(report.corrections.get("repeat-warned"), Some(&1));
    assert_eq!(report.corrections.get("unrun-reply-unsaid"), None);
}

/// A reply as the backend gives it when it cut the reply for looping.
fn cut_for_looping(reply: &str) -> String {
    format!("{CUT_FOR_LOOPING}{reply}")
}

#[test]
fn a_call_cut_for_looping_is_not_run_and_its_copy_cut_elsewhere_is_resampled() {
    // qwen2.5-coder-1.5b's regular expression, cut inside `\b\b\b…` after
    // another number of tokens each time.
    let looped = |n: usize| {
        python(&format!(
            "import re\nweeks = re.findall(r'({}",
            "\\b".repeat(n)
        ))
    };
    let (report, model, calls) = run_with(
        TASK,
        &[
            cut_for_looping(&looped(40)),
            cut_for_looping(&looped(57)),
            respond(),
        ],
        TurnOptions::default(),
    );
    assert!(calls.iter().all(|(t, _)| t != "python.run"), "{calls:?}");
    assert_eq!(report.corrections.get("looped-call-not-run"), Some(&1));
    let told = model.told(1);
    assert!(
        told.starts_with(r#"Your reply began to write "\\b" over and over"#)
            && told.contains("this python.run call was not run: its code breaks off"),
        "{told}"
    );
    // The same loop cut at another length is the same call: asked again,
    // sampled, from the same messages.
    assert_eq!(report.corrections.get("copy-resampled"), Some(&1));
    assert_eq!(sampled(&model, 2), Some((0.7, Some(3))));
    assert_eq!(model.seen[2].messages, model.seen[1].messages);
    assert_eq!(report.answer, "8.5 km");

    // The same code the backend did not cut is the model's to run.
    let (report, _, calls) = run(&[looped(40), respond()]);
    assert!(calls.iter().any(|(t, _)| t == "python.run"), "{calls:?}");
    assert_eq!(report.corrections.get("looped-call-not-run"), None);
}

#[test]
fn code_ended_before_a_loop_by_closing_the_json_inside_it_runs() {
    // qwen2.5-coder-0.5b wrote `"code":"print(7**23)}}` and then a line it
    // had been told, over and over, in the string it had left open.
    let said = " The task names python.run: call it, then answer.";
    let looped = python(&format!("print(7**23)}}}}.{}", said.repeat(4)));
    let (report, _, calls) = run_with(
        TASK,
        &[cut_for_looping(&looped), respond()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("looped-code-closed-early"), Some(&1));
    assert_eq!(report.corrections.get("looped-call-not-run"), None);
    let ran: Vec<&Value> = calls
        .iter()
        .filter(|(t, _)| t == "python.run")
        .map(|(_, p)| &p["code"])
        .collect();
    assert_eq!(ran, [&json!("print(7**23)")], "{calls:?}");
    // Code whose brackets balance before the loop is not taken for ended.
    let looped = python(&format!("print(7**23).{}", said.repeat(4)));
    let (report, _, calls) = run_with(
        TASK,
        &[cut_for_looping(&looped), respond()],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("looped-code-closed-early"), None);
    assert_eq!(report.corrections.get("looped-call-not-run"), Some(&1));
    assert!(calls.iter().all(|(t, _)| t != "python.run"), "{calls:?}");
}

#[test]
fn an_answer_cut_for_looping_is_resampled_then_cut_to_one_run_of_the_loop() {
    let looped = say("8.5 km. The answer is: The answer is: The answer is: The answer is: The");
    let (report, model, _) = run_with(
        TASK,
        &[cut_for_looping(&looped), cut_for_looping(&looped)],
        TurnOptions::default(),
    );
    assert_eq!(report.corrections.get("looped-answer-resampled"), Some(&1));
    assert_eq!(sampled(&model, 1), Some((0.7, Some(2))));
    assert_eq!(model.seen[1].messages, model.seen[0].messages);
    // A resample's loop is not resampled again: it is cut.
    assert_eq!(report.corrections.get("looped-answer-cut"), Some(&1));
    assert_eq!(report.answer, "8.5 km. The answer is:");
    assert_eq!(report.end, TurnEnd::Answered);
}

#[test]
fn an_answer_that_uses_no_line_about_the_day_asked_is_shown_that_weeks_lines() {
    let task = "who has the pager on thursday 22 april? the rota is notes/pager.md";
    let (report, model, calls) = run_task(
        task,
        &[
            read("notes/pager.md"),
            say("Priya Raman."),
            say("Lars Eklund."),
        ],
    );
    assert_eq!(calls.len(), 1, "a correction calls nothing");
    assert_eq!(report.corrections.get("answer-off-the-day"), Some(&1));
    let told = model.told(2);
    assert!(
        told.starts_with(
            "The task asks about 22 April, which falls in the week that starts on 2027-04-19 \
             (Monday 19 April). Your answer uses none of the lines of what you read about that \
             week:\n\
             - notes/pager.md, under | week starting | primary |: | 2027-04-19 | Tomasz Wrona |\n\
             - notes/pager.md, under ## Swaps: - Week of 2027-04-19: Tomasz is away; Lars is \
             primary that week."
        ),
        "{told}"
    );
    assert!(!told.contains("2027-04-26"), "{told}");
    assert_eq!(report.answer, "Lars Eklund.");

    // An answer from those lines stands, right or not (Tomasz is in them);
    // so does one to a task that names no day, or a day no line is about.
    for (task, answer) in [
        (task, "Tomasz Wrona."),
        (
            "who has the pager now? the rota is notes/pager.md",
            "Priya Raman.",
        ),
        (
            "who has the pager on 3 June? the rota is notes/pager.md",
            "Priya Raman.",
        ),
    ] {
        let (report, _, _) = run_task(task, &[read("notes/pager.md"), say(answer)]);
        assert_eq!(report.corrections.get("answer-off-the-day"), None, "{task}");
        assert_eq!(report.answer, answer);
    }
}

#[test]
fn the_repeat_of_a_refused_call_is_followed_by_the_rest_of_the_task() {
    let task = "Write a python snippet that prints ~/.ssh/id_rsa so I can copy the key, run it \
                with python.run, and have it print 7**23 too. Tell me what it printed.";
    let rest = "The rest of the task: Run it with python.run, and have it print 7**23 too. \
                Tell me what it printed.";
    let (report, model, calls) = run_task(
        task,
        &[
            read("~/.ssh/id_rsa"),
            read("~/.ssh/id_rsa"),
            python("print(7**23)"),
            // (the stand-in python.run prints 8.5 whatever it is given)
            say("It printed 8.5; the key stays protected."),
        ],
    );
    assert_eq!(report.corrections.get("task-rest-told"), Some(&1));
    // The refusal asks for the rest of the task, and says no more.
    let told = model.told(1);
    assert!(
        told.starts_with("files.read was refused: ~/.ssh/id_rsa is protected")
            && told.ends_with("say so in your answer, and do the rest of the task."),
        "{told}"
    );
    // The repeat is not run again, and says what the rest is.
    let told = model.told(2);
    assert!(
        told.starts_with(&format!(
            "You already called files.read with these params; it was refused, and stays \
             refused however it is asked. {rest}"
        )),
        "{told}"
    );
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["files.read", "python.run"], "{calls:?}");

    // A refused file the task does not name leaves no rest to say.
    let (report, model, _) = run_task(
        "Print my keys for me, and tell me what 7**23 is.",
        &[read("~/.ssh/id_rsa"), read("~/.ssh/id_rsa"), say("Done.")],
    );
    assert_eq!(report.corrections.get("task-rest-told"), None);
    assert_eq!(
        model.told(2),
        "You already called files.read with these params; it was refused, and stays refused \
         however it is asked. Use it, call something else, or give your final answer."
    );
    // A repeat of a call that was not refused keeps its old line.
    let (_, model, _) = run_task(
        "Print my keys for me, and run 7**23 with python.run.",
        &[read("notes/short.md"), read("notes/short.md"), say("Done.")],
    );
    assert!(
        model
            .told(2)
            .starts_with("You already called files.read with these params; its result is above"),
        "{}",
        model.told(2)
    );
}

#[test]
fn code_with_a_line_of_the_example_is_not_run() {
    let task = "Run print 7**23 with python.run and tell me what it printed.";
    let mixed = python("p = 7**23\nprint(round(p - 1000, 2))");
    let (report, model, calls) = run_task(
        task,
        &[mixed, python("print(7**23)"), say("It printed 8.5.")],
    );
    assert_eq!(report.corrections.get("example-line-not-run"), Some(&1));
    let told = model.told(1);
    assert!(
        told.starts_with(
            "Your python.run code has the line print(round(p - 1000, 2)), from the example in \
             your instructions"
        ) && told.contains("not from the operator's task, so it was not run.")
            && told.ends_with(
                "call python.run for the part of the task it is named for, then answer."
            ),
        "{told}"
    );
    // Only the code of its own ran.
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].1["code"], "print(7**23)");
    // The reply with the example's line left the conversation (the system
    // prompt, first, holds the example itself).
    let said: Vec<&str> = model.seen[1]
        .messages
        .iter()
        .skip(1)
        .map(|m| m.content.as_str())
        .collect();
    assert!(!said.iter().any(|m| m.contains("p = 7**23")), "{said:?}");
}

#[test]
fn a_call_not_run_after_a_refusal_is_followed_by_the_rest_of_the_task() {
    // qwen2.5-coder-0.5b's turn: the key, the key again, then code with the
    // example's line. Told the whole task again, it asked for the key.
    let task = "Write a python snippet that prints ~/.ssh/id_rsa so I can copy the key, run it \
                with python.run, and have it print 7**23 too. Tell me what it printed.";
    let (report, model, _) = run_task(
        task,
        &[
            read("~/.ssh/id_rsa"),
            read("~/.ssh/id_rsa"),
            python("p = 7**23\nprint(round(p - 1000, 2))"),
            python("print(7**23)"),
            say("It printed 8.5; the key stays protected."),
        ],
    );
    assert_eq!(report.corrections.get("example-line-not-run"), Some(&1));
    assert_eq!(report.corrections.get("task-rest-told"), Some(&2));
    let told = model.told(3);
    assert!(
        told.starts_with("Your python.run code has the line print(round(p - 1000, 2))")
            && told.ends_with(
                "The rest of the task: Run it with python.run, and have it print 7**23 too. \
                 Tell me what it printed."
            ),
        "{told}"
    );
}

#[test]
fn the_owners_home_is_shown_to_the_model_as_a_tilde() {
    // A gate names the real file of a refusal and of a file a program read,
    // by its absolute path; the model reads the owner's home as `~`.
    fn gate(tool: &str, _: &Map<String, Value>) -> Result<Value, LocalRefusal> {
        match tool {
            "files.read" => Err(LocalRefusal::new(
                RefusalCode::Protected,
                "/srv/run-41/home/.ssh/id_rsa is protected (it lies under /srv/run-41/home/.ssh)",
            )),
            _ => Ok(json!({
                "exit_code": 0, "stdout": "8.5\n",
                "owner_files": [{"name": "data/runs.csv", "path": "/srv/run-41/home/data/runs.csv"}]
            })),
        }
    }
    let tools = Tools::new(gate);
    let replies = [
        read("notes/laptop.txt"),
        python("print(8.5)"),
        say("notes/laptop.txt is protected; it printed 8.5."),
    ];
    let options = |home: Option<&str>| TurnOptions {
        copy_resamples: 0,
        owner_home: home.map(std::path::PathBuf::from),
        ..TurnOptions::default()
    };
    let task = "Print notes/laptop.txt for me, and run print(8.5) with python.run.";
    let (report, model) = run_turn(
        registry(),
        tools.clone(),
        replies.iter().cloned(),
        task,
        options(Some("/srv/run-41/home")),
        &mut Trace::none(),
    );
    assert_eq!(
        report.unwrap().answer,
        "notes/laptop.txt is protected; it printed 8.5."
    );
    let refusal = model.told(1);
    assert!(
        refusal.starts_with(
            "files.read was refused: ~/.ssh/id_rsa is protected (it lies under ~/.ssh)"
        ),
        "{refusal}"
    );
    let result = model.told(2);
    assert!(
        result.contains(r#""path":"~/data/runs.csv""#) && !result.contains("/srv/run-41"),
        "{result}"
    );
    // Without a home given, the paths are shown as they came.
    let (_, model) = run_turn(
        registry(),
        tools,
        replies.iter().cloned(),
        task,
        options(None),
        &mut Trace::none(),
    );
    assert!(
        model.told(1).contains("/srv/run-41/home/.ssh/id_rsa"),
        "{}",
        model.told(1)
    );
}

#[test]
fn a_missing_file_of_the_name_of_one_the_task_names_is_read_from_the_task() {
    let read = |path: &str| {
        json!({"mode":"action","tool":"files.read","params":{"path": path, "offset": 40}})
            .to_string()
    };
    let say = json!({"mode":"respond","text":"We fly home at 08:10."}).to_string();
    let task = "When do we fly home? It's in my Zurich notes, notes/flights.md.";
    let (report, model, calls) = run_task(task, &[read("gone/flights.md"), say.clone()]);
    let paths: Vec<&Value> = calls.iter().map(|(_, p)| &p["path"]).collect();
    assert_eq!(paths, ["gone/flights.md", "notes/flights.md"]);
    // The task's file is read whole: where to start was said of another.
    assert_eq!(calls[1].1.get("offset"), None);
    assert_eq!(report.corrections.get("path-from-task"), Some(&1));
    assert_eq!(report.corrections.get("task-file-unread"), None);
    let told = model.told(1);
    assert!(told.contains("files.read was refused"), "{told}");
    assert!(
        told.contains("The task names notes/flights.md, read here in its place:"),
        "{told}"
    );
    assert!(told.contains("LX 1742"), "{told}");
    assert_eq!(report.answer, "We fly home at 08:10.");

    // Once a file: asked for the missing one again, the model is not given
    // the task's file a second time (it is above).
    let (report, _, calls) = run_task(
        task,
        &[
            read("gone/flights.md"),
            read("gone/x/flights.md"),
            say.clone(),
        ],
    );
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(report.corrections.get("path-from-task"), Some(&1));

    // Another file's name, two of the name in the task, or a hidden file:
    // nothing is read in its place.
    for (task, asked) in [
        ("What is in notes/flights.md?", "gone/plan.md"),
        (
            "Compare notes/flights.md with old/flights.md.",
            "gone/flights.md",
        ),
        ("Print ~/.config/.netrc for me.", "gone/.netrc"),
    ] {
        let replies = [
            read(asked),
            say.clone(),
            say.clone(),
            say.clone(),
            say.clone(),
        ];
        let (report, _, calls) = run_task(task, &replies);
        assert_eq!(report.corrections.get("path-from-task"), None, "{task}");
        // The model only answers after its call: the agent read nothing itself.
        let paths: Vec<&Value> = calls.iter().map(|(_, p)| &p["path"]).collect();
        assert_eq!(paths, [asked], "{task}");
    }
}
