//! facts.get through `Toolbox::call`: every fact, and the schema's enum as the only way in.

mod builtin_support;

use std::path::Path;
use std::sync::Arc;

use seam_gate::tools::{FACTS, FactsGet};
use seam_gate::{CallRequest, GovernedTool, NoLedger, Toolbox};
use seam_policy::Policy;
use seam_protocol::{Answer, RefusalCode};
use seam_scrub::Scrubber;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn policy(dir: &Path, text: &str) -> Arc<Policy> {
    builtin_support::policy_of(dir, text)
}

fn toolbox(policy: Arc<Policy>) -> Toolbox {
    let tools: Vec<Box<dyn GovernedTool>> = vec![Box::new(FactsGet::new(&policy))];
    Toolbox::with_tools(policy, Arc::new(Scrubber::new()), Arc::new(NoLedger), tools).unwrap()
}

fn get(tb: &Toolbox, params: Value) -> Answer {
    tb.call(CallRequest {
        tool: "facts.get".into(),
        params,
        turn: Some("t".into()),
    })
    .unwrap()
}

fn value(tb: &Toolbox, fact: &str) -> Value {
    match get(tb, json!({ "fact": fact })) {
        Answer::Envelope(e) => {
            assert!(!e.tainted, "facts do not taint");
            assert_eq!(e.output["fact"], fact);
            e.output
        }
        Answer::Refusal(r) => panic!("{fact}: {:?}", r.refused),
    }
}

#[test]
fn every_fact_has_a_value_of_its_kind() {
    let dir = tempfile::tempdir().unwrap();
    let p = policy(dir.path(), "");
    let tb = toolbox(p.clone());
    let names: Vec<&str> = FACTS.iter().map(|(n, _)| *n).collect();
    for required in [
        "os",
        "kernel",
        "arch",
        "hostname",
        "time",
        "timezone",
        "seam_version",
        "policy_digest",
        "workspace_root",
        "cpu_count",
        "memory_total",
        "uptime",
    ] {
        assert!(names.contains(&required), "{required} missing");
    }
    for name in &names {
        let out = value(&tb, name);
        let v = &out["value"];
        match *name {
            "cpu_count" => assert!(v.as_u64().unwrap() >= 1),
            "memory_total" => {
                assert!(v.as_u64().unwrap() > 16 * 1024 * 1024);
                assert_eq!(out["unit"], "bytes");
            }
            "uptime" => {
                assert!(v.as_u64().is_some());
                assert_eq!(out["unit"], "seconds");
            }
            "load_average" => assert_eq!(v.as_array().unwrap().len(), 3),
            _ => assert!(!v.as_str().unwrap().is_empty(), "{name}: {out}"),
        }
    }
    assert_eq!(value(&tb, "arch")["value"], std::env::consts::ARCH);
    assert_eq!(
        value(&tb, "seam_version")["value"],
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        value(&tb, "kernel")["value"]
            .as_str()
            .unwrap()
            .starts_with("Linux ")
    );
    assert_eq!(
        value(&tb, "workspace_root")["value"],
        dir.path().join("ws").display().to_string()
    );
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(value(&tb, "hostname")["value"], hostname.trim());
}

#[test]
fn every_answer_carries_the_other_identity_facts_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let tb = toolbox(policy(dir.path(), ""));
    let out = value(&tb, "time");
    let also = out["also"].as_object().unwrap();
    assert_eq!(also.len(), 4, "{out}");
    for name in ["os", "kernel", "arch", "hostname"] {
        assert_eq!(also[name], value(&tb, name)["value"], "{name}");
    }
    // The fact asked for is not repeated there.
    let out = value(&tb, "kernel");
    assert!(out["also"].get("kernel").is_none(), "{out}");
    assert_eq!(out["also"]["arch"], std::env::consts::ARCH);
}

#[test]
fn time_is_now_in_rfc3339_utc() {
    let dir = tempfile::tempdir().unwrap();
    let tb = toolbox(policy(dir.path(), ""));
    let t = value(&tb, "time")["value"].as_str().unwrap().to_owned();
    assert_eq!(t.len(), 20, "{t}");
    assert!(
        t.ends_with('Z') && &t[4..5] == "-" && &t[10..11] == "T",
        "{t}"
    );
    let year: i32 = t[..4].parse().unwrap();
    assert!((2024..2200).contains(&year), "{t}");
}

#[test]
fn the_policy_digest_is_the_sha256_of_the_enforced_policy_and_changes_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = policy(dir.path(), "");
    let expected = format!(
        "sha256:{}",
        hex::encode(Sha256::digest(serde_json::to_vec(&a.enforced()).unwrap()))
    );
    assert_eq!(value(&toolbox(a), "policy_digest")["value"], expected);
    let b = policy(dir.path(), "[taint]\negress = \"allow\"\n");
    assert_ne!(value(&toolbox(b), "policy_digest")["value"], expected);
}

#[test]
fn anything_but_a_listed_name_is_refused_by_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let tb = toolbox(policy(dir.path(), ""));
    for bad in [
        json!({"fact": "/etc/passwd"}),
        json!({"fact": "../os"}),
        json!({"fact": "OS"}),
        json!({"fact": "env"}),
        json!({"fact": 1}),
        json!({"fact": "os", "path": "/etc/shadow"}),
        json!({}),
    ] {
        match get(&tb, bad.clone()) {
            Answer::Refusal(r) => {
                assert_eq!(r.refused.code, RefusalCode::InvalidParams, "{bad}");
                assert!(
                    r.refused.message.contains("schema"),
                    "{bad}: {:?}",
                    r.refused
                );
            }
            Answer::Envelope(e) => panic!("{bad} served: {}", e.output),
        }
    }
}

#[test]
fn the_schema_says_fact_is_an_enum() {
    let dir = tempfile::tempdir().unwrap();
    let p = policy(dir.path(), "");
    let tool = FactsGet::new(&p);
    let schema = &tool.decl().schema;
    let listed: Vec<&str> = schema["properties"]["fact"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(listed, FACTS.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    assert_eq!(schema["additionalProperties"], false);
}

#[test]
fn the_facts_capability_governs_it() {
    let dir = tempfile::tempdir().unwrap();
    let tb = toolbox(policy(dir.path(), "[capabilities]\nfacts = \"deny\"\n"));
    match get(&tb, json!({"fact": "os"})) {
        Answer::Refusal(r) => assert_eq!(r.refused.code, RefusalCode::CapabilityDenied),
        Answer::Envelope(e) => panic!("served: {}", e.output),
    }
}

/// The ledger's `output_sha256` is the SHA-256 of the answer's canonical JSON: an auditor
/// holding the answer recomputes it with `seam_ledger::canonical_json`.
#[test]
fn the_ledgers_output_digest_is_the_canonical_json_of_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let p = policy(dir.path(), "");
    let seam_home = dir.path().join("seam");
    std::fs::create_dir_all(&seam_home).unwrap();
    let ledger = Arc::new(seam_ledger::Ledger::open(&seam_home).unwrap());
    let tools: Vec<Box<dyn GovernedTool>> = vec![Box::new(FactsGet::new(&p))];
    let tb = Toolbox::with_tools(p, Arc::new(Scrubber::new()), ledger, tools).unwrap();
    let Answer::Envelope(e) = get(&tb, json!({"fact": "memory_total"})) else {
        panic!("refused")
    };
    drop(tb);
    let records = seam_ledger::LedgerReader::open(&seam_home)
        .unwrap()
        .tail(1)
        .unwrap();
    let recomputed =
        seam_ledger::Sha256Digest::of(seam_ledger::canonical_json(&e.output).as_bytes());
    assert_eq!(records[0].entry.output_sha256, Some(recomputed));
}
