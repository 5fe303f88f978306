//! `Gate::open`, the one place a gate is composed: a value the keeper holds is removed from a
//! tool's output, with no caller having to hand it to the scrubber.

mod builtin_support;

use std::path::Path;
use std::sync::Arc;

use seam_gate::{CallRequest, Gate, GateConfig, NoLedger, Toolbox, ToolboxConfig};
use seam_keeper::{Keeper, SecretValue};
use seam_protocol::Answer;
use serde_json::{Value, json};

/// No secret by its shape: only the keeper knows it is one.
const VALUE: &str = "plain-words-only-the-keeper-knows-4711";

fn read(toolbox: &Toolbox, path: &Path) -> Value {
    match toolbox
        .call(CallRequest {
            tool: "files.read".into(),
            params: json!({ "path": path }),
            turn: None,
        })
        .unwrap()
    {
        Answer::Envelope(e) => e.output,
        Answer::Refusal(r) => panic!("refused: {:?}", r.refused),
    }
}

#[test]
fn a_value_the_keeper_holds_is_scrubbed_from_a_tools_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let seam_home = root.join("seam");
    std::fs::create_dir_all(root.join("home")).unwrap();
    let file = root.join("home/notes.txt");
    std::fs::write(&file, format!("the deploy password is {VALUE}\n")).unwrap();
    Keeper::open(&seam_home)
        .unwrap()
        .set("DEPLOY_PASSWORD", SecretValue::new(VALUE))
        .unwrap();
    let policy = builtin_support::builtin_policy(&root, "home");

    // A toolbox built by hand with a scrubber that was not given the keeper's values lets the
    // value through: scrubbing by shape alone does not find it.
    let by_hand = builtin_support::builtin_toolbox(&root, "home");
    assert!(read(&by_hand, &file).to_string().contains(VALUE));

    let gate = Gate::open(
        &seam_home,
        policy,
        &GateConfig::default(),
        Arc::new(NoLedger),
        ToolboxConfig::default().files_read_max_bytes,
    )
    .unwrap();
    assert!(gate.upstreams.is_empty());
    let output = read(&gate.toolbox, &file).to_string();
    assert!(!output.contains(VALUE), "{output}");
    assert!(output.contains("the deploy password is"), "{output}");
}
