//! scribe, context, graph, seer, aesthesis and image.

mod common;

use common::{Fixture, params, turn};
use seam_local::{Attachment, GateCallRecord, ReturnQueue, Status, StepRecord, Verdict};
use seam_protocol::RefusalCode;

fn seam_local_attached_cap() -> usize {
    16 * 1024
}

/// Finding 2 of the security review (prompt injection alone): text a model parked in an
/// earlier turn, served back by a local tool, must taint the turn, so it cannot then be
/// searched out. Every local answer that carries earlier model text or the owner's data
/// says so.
#[test]
fn local_answers_that_carry_earlier_text_or_the_owners_data_taint_the_turn() {
    for (tool, p, taints) in [
        ("seer", json!({"what": "queue"}), true),
        ("seer", json!({}), true),
        ("seer", json!({"what": "ledger"}), false),
        ("graph", json!({"op": "search", "query": "x"}), true),
        ("graph", json!({"op": "neighbors", "node": "x"}), true),
        ("context", json!({"what": "files"}), true),
        ("context", json!({}), false),
        ("aesthesis", json!({"branch": "seam/t-1"}), true),
        ("aesthesis", json!({}), false),
        ("scribe", json!({"text": "x"}), false),
        ("builder", json!({"op": "check"}), false),
    ] {
        assert_eq!(
            seam_local::taints_turn(tool, &params(p.clone())),
            taints,
            "{tool} {p}"
        );
    }
}
use serde_json::json;

#[test]
fn context_gives_the_task_the_steps_and_the_attached_files() {
    let f = Fixture::new();
    let tools = f.tools();
    let mut t = turn("ctx");
    t.task = "fix the parser; key AKIAZ4X7QW3RT5YU8IOP".into();
    // what the gate read for the launcher; the agent holds no handle on the file
    t.attachments = vec![
        Attachment {
            path: "notes.txt".into(),
            text: "attached words\n".into(),
            bytes: 15,
            cut: false,
        },
        Attachment {
            path: "big.txt".into(),
            text: "é".repeat(20_000),
            bytes: 40_000,
            cut: false,
        },
    ];
    t.history = vec![StepRecord {
        tool: "files.read".into(),
        params: "path=a".into(),
        outcome: "ok".into(),
    }];
    let out = tools
        .call(&t, "context", &params(json!({"what": "task"})))
        .unwrap();
    let task = out["task"].as_str().unwrap();
    assert!(task.starts_with("fix the parser"));
    assert!(
        !task.contains("AKIAZ4X7QW3RT5YU8IOP"),
        "answers are scrubbed: {task}"
    );
    let out = tools
        .call(&t, "context", &params(json!({"what": "history"})))
        .unwrap();
    assert_eq!(out["steps"][0]["tool"], "files.read");
    let out = tools
        .call(&t, "context", &params(json!({"what": "files"})))
        .unwrap();
    assert_eq!(out["files"][0]["text"], "attached words\n");
    assert_eq!(out["files"][0]["cut"], false);
    let big = out["files"][1]["text"].as_str().unwrap();
    assert!(big.len() <= seam_local_attached_cap(), "cut to its share");
    assert_eq!(out["files"][1]["cut"], true);
    assert!(seam_local::taints_turn(
        "context",
        &params(json!({"what": "files"}))
    ));
    assert!(!seam_local::taints_turn(
        "context",
        &params(json!({"what": "task"}))
    ));
    let out = tools.call(&t, "context", &params(json!({}))).unwrap();
    assert!(out.get("task").is_some() && out.get("steps").is_some());
}

#[test]
fn notes_are_staged_then_kept_and_join_the_graph() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("n1");
    let empty = tools
        .call(
            &t,
            "graph",
            &params(json!({"op": "search", "query": "parser"})),
        )
        .unwrap();
    assert_eq!(empty["nodes"], json!([]));
    let e = tools
        .call(
            &t,
            "graph",
            &params(json!({"op": "neighbors", "node": "parser"})),
        )
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::NotFound);
    tools
        .call(
            &t,
            "scribe",
            &params(json!({"title": "parser repair", "text": "The [[parser]] strips [[fences]]."})),
        )
        .unwrap();
    tools
        .call(
            &t,
            "scribe",
            &params(json!({"title": "tokens", "text": "The [[tokenizer]] feeds the [[parser]]."})),
        )
        .unwrap();
    tools
        .call(&t, "scribe", &params(json!({"text": "throwaway"})))
        .unwrap();
    let items = tools.finish_turn(&t).unwrap();
    assert_eq!(items.len(), 3);
    assert!(
        items
            .iter()
            .all(|i| i.kind == "note" && i.verdict == Verdict::Pass)
    );
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    // Nothing is in the graph until the operator approves.
    let out = tools
        .call(
            &t,
            "graph",
            &params(json!({"op": "search", "query": "parser"})),
        )
        .unwrap();
    assert_eq!(out["nodes"], json!([]));
    q.approve(items[0].id).unwrap();
    q.approve(items[1].id).unwrap();
    q.reject(items[2].id).unwrap();
    assert!(
        q.get(items[2].id).unwrap().unwrap().preview.is_empty(),
        "a rejected note is discarded"
    );
    let out = tools
        .call(
            &t,
            "graph",
            &params(json!({"op": "neighbors", "node": "parser"})),
        )
        .unwrap();
    let names: Vec<&str> = out["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"parser repair") && names.contains(&"tokens"),
        "{out}"
    );
    let out = tools
        .call(
            &t,
            "graph",
            &params(json!({"op": "path", "node": "fences", "to": "tokenizer"})),
        )
        .unwrap();
    assert_eq!(
        out["path"],
        json!(["fences", "parser repair", "parser", "tokens", "tokenizer"])
    );
    let out = tools
        .call(
            &t,
            "graph",
            &params(json!({"op": "search", "query": "strips"})),
        )
        .unwrap();
    assert_eq!(out["nodes"][0]["name"], "parser repair");
    assert_eq!(q.notes(10).unwrap().len(), 2);
}

#[test]
fn a_note_holding_a_secret_fails_the_critic() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("n2");
    tools
        .call(
            &t,
            "scribe",
            &params(
                json!({"text": "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Tk2Lm8N"}),
            ),
        )
        .unwrap();
    let item = tools.finish_turn(&t).unwrap().remove(0);
    assert_eq!(item.verdict, Verdict::Fail);
    assert!(!item.preview.contains("wJalrXUtnFEMI"));
    assert!(
        ReturnQueue::open(&f.home())
            .unwrap()
            .approve(item.id)
            .is_err()
    );
}

#[test]
fn seer_shows_the_queue_and_the_turns_gate_calls() {
    let f = Fixture::new();
    let tools = f.tools();
    let mut t = turn("s1");
    tools
        .call(&t, "scribe", &params(json!({"text": "remember this"})))
        .unwrap();
    tools.finish_turn(&t).unwrap();
    let out = tools
        .call(&t, "seer", &params(json!({"what": "queue"})))
        .unwrap();
    assert_eq!(out["items"][0]["kind"], "note");
    assert_eq!(out["items"][0]["status"], "pending");
    t.gate_calls = vec![GateCallRecord {
        invocation_id: "inv-1".into(),
        tool: "web.search".into(),
        outcome: "refused: tainted".into(),
    }];
    let out = tools
        .call(&t, "seer", &params(json!({"what": "ledger"})))
        .unwrap();
    assert_eq!(out["calls"][0]["invocation_id"], "inv-1");
}

#[test]
fn aesthesis_reports_formatting_and_hygiene_of_the_staged_branch() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("a1");
    let e = tools.call(&t, "aesthesis", &params(json!({}))).unwrap_err();
    assert_eq!(e.code, RefusalCode::NotFound);
    let long = format!("// {}\n", "x".repeat(150));
    tools
        .call(&t, "builder", &params(json!({"op": "write", "path": "src/bad.rs", "content": format!("fn  main( ){{}}   \n{long}fn end() {{}}")})))
        .unwrap();
    let out = tools.call(&t, "aesthesis", &params(json!({}))).unwrap();
    assert_eq!(out["files"], 1);
    let hygiene: Vec<&str> = out["hygiene"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert!(
        hygiene.iter().any(|h| h.contains("over 120")),
        "{hygiene:?}"
    );
    assert!(
        hygiene.iter().any(|h| h.contains("end in spaces")),
        "{hygiene:?}"
    );
    assert!(
        hygiene.iter().any(|h| h.contains("no newline")),
        "{hygiene:?}"
    );
    let rustfmt = &out["linters"][0];
    assert!(rustfmt["tool"].as_str().unwrap().starts_with("rustfmt"));
    if rustfmt["ran"] == true {
        assert_eq!(rustfmt["ok"], false, "{rustfmt}");
    }
    // It changed nothing.
    let (_, wt) = tools.turn_branch("a1").unwrap();
    assert!(
        std::fs::read_to_string(wt.join("src/bad.rs"))
            .unwrap()
            .starts_with("fn  main( )")
    );
}

#[test]
fn image_renders_dot_to_staging_and_refuses_file_access() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("i1");
    let e = tools
        .call(
            &t,
            "image",
            &params(json!({"dot": "digraph { a [image=\"/etc/passwd\"] }"})),
        )
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::NotAllowed, "{e}");
    let e = tools
        .call(
            &t,
            "image",
            &params(json!({"dot": "digraph { a }", "name": "../x"})),
        )
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::InvalidParams);
    let r = tools.call(
        &t,
        "image",
        &params(json!({"dot": "digraph { parser -> critic }", "name": "flow"})),
    );
    let out = match r {
        Err(e) if e.code == RefusalCode::Unavailable => {
            assert!(e.message.contains("dot"));
            return;
        }
        r => r.unwrap(),
    };
    assert_eq!(out["staged"], "flow.svg");
    let svg = f.layout().images().join("i1/flow.svg");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let item = tools.finish_turn(&t).unwrap().remove(0);
    assert_eq!(item.kind, "image");
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    assert!(
        q.get(item.id)
            .unwrap()
            .unwrap()
            .preview
            .contains("parser -> critic")
    );
    q.reject(item.id).unwrap();
    assert!(!svg.exists());
    assert_eq!(q.get(item.id).unwrap().unwrap().status, Status::Rejected);
}
