//! The turn loop's own rules, with the model scripted in-process (it stands
//! in for a 9B model; the end-to-end tests in seam-cli use a real server on
//! loopback) and a small local toolbox.

mod support;

use std::time::Duration;

use seam_agent::registry::Registry;
use seam_agent::trace::Trace;
use seam_agent::turn::{TurnEnd, TurnOptions};
use seam_local::LocalRefusal;
use serde_json::{Map, Value, json};
use support::{Scripted, Tools, no_such_tool, run_turn, spec};

/// A toolbox with one tool, `context`, that echoes its params.
fn echo(tool: &str, params: &Map<String, Value>) -> Result<Value, LocalRefusal> {
    match tool {
        "context" => Ok(json!({"echo": params})),
        _ => Err(no_such_tool()),
    }
}

fn registry() -> Registry {
    let context = spec(
        "context",
        "Reads the task's context.",
        json!({"type":"object","properties":{
            "what":{"type":"string"},
            "limit":{"type":"integer","minimum":1,"maximum":5}
        },"additionalProperties":false}),
    );
    Registry::new(vec![context], vec![]).unwrap()
}

type Ran = (
    Result<seam_agent::turn::TurnReport, seam_agent::turn::TurnError>,
    Scripted,
    usize,
);

fn run(replies: Vec<&'static str>, options: TurnOptions) -> Ran {
    run_traced(replies, options, &mut Trace::none())
}

fn run_traced(replies: Vec<&'static str>, options: TurnOptions, trace: &mut Trace) -> Ran {
    let tools = Tools::new(echo);
    let (report, model) = run_turn(registry(), tools.clone(), replies, "do it", options, trace);
    (report, model, tools.calls().len())
}

#[test]
fn an_answer_ends_the_turn_and_results_reach_the_model() {
    let (report, model, calls) = run(
        vec![
            r#"{"mode":"action","tool":"context","params":{"what":"task"}}"#,
            r#"{"mode":"respond","text":"done"}"#,
        ],
        TurnOptions::default(),
    );
    let report = report.unwrap();
    assert_eq!(report.answer, "done");
    assert_eq!(report.end, TurnEnd::Answered);
    assert_eq!((report.steps, report.calls, calls), (2, 1, 1));
    let shown = model.told(1);
    assert!(shown.starts_with("context returned:\n"), "{shown}");
    assert!(
        shown.lines().any(|l| l == r#"echo: {"what":"task"}"#),
        "{shown}"
    );
    assert_eq!(report.info.history.len(), 1);
}

#[test]
fn repeats_are_warned_then_stopped_then_an_answer_is_forced() {
    let call = r#"{"mode":"action","tool":"context","params":{}}"#;
    // Copies asked for again, sampled, come first (small_model_corrections'
    // copy tests); here the scripted model has no other reply to give.
    let (report, model, calls) = run(
        vec![call, call, call, r#"{"mode":"respond","text":"ok"}"#],
        TurnOptions {
            copy_resamples: 0,
            ..TurnOptions::default()
        },
    );
    let report = report.unwrap();
    assert_eq!(calls, 1, "a repeated call is never run again");
    assert_eq!(report.answer, "ok");
    assert!(
        matches!(report.end, TurnEnd::ForcedAnswer { .. }),
        "{:?}",
        report.end
    );
    for c in ["repeat-warned", "repeat-stopped", "final-answer-forced"] {
        assert_eq!(
            report.corrections.get(c),
            Some(&1),
            "{c}: {:?}",
            report.corrections
        );
    }
    let forced = model.seen.last().unwrap();
    assert_eq!(
        forced.json_schema.as_ref().unwrap()["properties"]["mode"]["const"],
        "respond"
    );
}

#[test]
fn a_model_that_will_not_answer_is_stopped_by_the_budget() {
    let (report, _, calls) = run(
        vec![
            r#"{"mode":"action","tool":"context","params":{"what":"a"}}"#,
            r#"{"mode":"action","tool":"context","params":{"what":"b"}}"#,
            r#"{"mode":"action","tool":"context","params":{"what":"c"}}"#,
        ],
        TurnOptions {
            max_steps: 2,
            max_wall: Duration::from_secs(60),
            ..TurnOptions::default()
        },
    );
    let report = report.unwrap();
    assert_eq!(calls, 2);
    assert!(
        matches!(report.end, TurnEnd::Stopped { .. }),
        "{:?}",
        report.end
    );
    assert!(report.answer.contains("no answer"), "{}", report.answer);
}

#[test]
fn an_unknown_tool_is_refused_with_the_real_names() {
    let (report, model, _) = run(
        vec![
            r#"{"mode":"action","tool":"shell","params":{"cmd":"ls"}}"#,
            r#"{"mode":"respond","text":"sorry"}"#,
        ],
        TurnOptions::default(),
    );
    let report = report.unwrap();
    assert_eq!(report.corrections.get("unknown-tool-listed"), Some(&1));
    let shown = model.told(1);
    assert!(
        shown.contains("\"shell\"") && shown.contains("context"),
        "{shown}"
    );
}

#[test]
fn replies_with_no_action_are_answered_then_given_up_on() {
    let (report, model, _) = run(vec!["I think so.", "Sure!", "Yes."], TurnOptions::default());
    let err = report.unwrap_err().to_string();
    assert!(err.contains("3 replies"), "{err}");
    assert_eq!(model.seen.len(), 3);
    let reprompt = model.told(1);
    assert!(reprompt.contains("could not read an action"), "{reprompt}");
}

#[test]
fn an_out_of_range_knob_is_clamped_and_counted_in_the_report_and_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.jsonl");
    let mut trace = Trace::to_file(&path).unwrap();
    let (report, model, calls) = run_traced(
        vec![
            r#"{"mode":"plan","steps":[{"actor":"context","params":{"what":"task","limit":50}}]}"#,
            r#"{"mode":"respond","text":"done"}"#,
        ],
        TurnOptions::default(),
        &mut trace,
    );
    drop(trace);
    let report = report.unwrap();
    assert_eq!(calls, 1);
    assert_eq!(report.corrections.get("param-clamped"), Some(&1));
    let shown = model.told(1);
    assert!(shown.contains("\"limit\":5"), "{shown}");
    let text = std::fs::read_to_string(&path).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "correction" && e["name"] == "param-clamped"),
        "{text}"
    );
    let action = events.iter().find(|e| e["event"] == "action").unwrap();
    assert_eq!(action["repairs"], json!(["param-clamped"]));
    assert_eq!(action["steps"][0]["call"]["params"]["limit"], json!(5));
}

#[test]
fn old_results_are_left_out_when_the_conversation_outgrows_its_budget() {
    let (report, model, calls) = run(
        vec![
            r#"{"mode":"action","tool":"context","params":{"what":"one"}}"#,
            r#"{"mode":"action","tool":"context","params":{"what":"two"}}"#,
            r#"{"mode":"action","tool":"context","params":{"what":"three"}}"#,
            r#"{"mode":"respond","text":"done"}"#,
        ],
        TurnOptions {
            // the system prompt alone is larger: every older result goes
            history_bytes: 100,
            ..TurnOptions::default()
        },
    );
    let report = report.unwrap();
    assert_eq!((report.answer.as_str(), calls), ("done", 3));
    assert_eq!(report.corrections.get("old-result-elided"), Some(&2));
    let last = &model.seen.last().unwrap().messages;
    let results: Vec<&str> = last
        .iter()
        .filter(|m| m.role == "user")
        .skip(1)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    for older in &results[..2] {
        assert!(
            older.starts_with("(an earlier tool result (context returned:"),
            "{older}"
        );
        assert!(!older.contains("echo:"), "{older}");
    }
    assert!(
        results[2].contains(r#"echo: {"what":"three"}"#),
        "the newest stays whole"
    );
    // With the default budget nothing is left out.
    let (report, _, _) = run(
        vec![
            r#"{"mode":"action","tool":"context","params":{"what":"one"}}"#,
            r#"{"mode":"action","tool":"context","params":{"what":"two"}}"#,
            r#"{"mode":"respond","text":"done"}"#,
        ],
        TurnOptions::default(),
    );
    assert_eq!(report.unwrap().corrections.get("old-result-elided"), None);
}

/// The embedded engine is loaded with [`TurnOptions::engine_temperature`]; a model server is
/// asked, in every request of the turn, for the turn's temperature. They are the same value,
/// for the default (greedy: 0) and for any other, so both backends decode alike.
#[test]
fn the_engine_decodes_at_the_temperature_the_turn_asks_a_model_server_for() {
    assert_eq!(TurnOptions::default().engine_temperature(), 0.0, "greedy");
    for temperature in [None, Some(0.7)] {
        let mut options = TurnOptions::default();
        if let Some(t) = temperature {
            options.temperature = t;
        }
        let engine = options.engine_temperature();
        let (report, model, _) = run(
            vec![
                r#"{"mode":"action","tool":"context","params":{"what":"task"}}"#,
                r#"{"mode":"respond","text":"done"}"#,
            ],
            options,
        );
        assert_eq!(report.unwrap().end, TurnEnd::Answered);
        assert_eq!(model.seen.len(), 2);
        for request in &model.seen {
            assert_eq!(request.temperature, engine, "{temperature:?}");
        }
    }
}
