//! The agent's own cost per step, model time excluded: reading a reply
//! (parse + repair + route) and dispatching it to a local tool through the
//! same `Router` and blocking-thread hop `seam ask` uses, with the real
//! `seam_local::LocalTools`. Target: < 1 ms per step.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use seam_agent::dispatch::{ActionDispatch, LocalDispatch, Router};
use seam_agent::reading::{Reader, Step};
use seam_agent::registry::Registry;
use seam_local::{LocalConfig, LocalTools, TurnInfo};
use seam_protocol::ToolSpec;
use serde_json::json;

/// The governed tools' specs as the gate lists them (names and shapes only;
/// the bench never reaches the gate).
fn governed() -> Vec<ToolSpec> {
    let s = |name: &str, props: serde_json::Value, req: &[&str]| ToolSpec {
        name: name.into(),
        version: "1".into(),
        description: format!("{name}."),
        input_schema: json!({"type":"object","properties":props,"required":req,"additionalProperties":false}),
    };
    vec![
        s(
            "files.read",
            json!({"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}}),
            &["path"],
        ),
        s(
            "web.search",
            json!({"query":{"type":"string"},"limit":{"type":"integer"}}),
            &["query"],
        ),
        s(
            "facts.get",
            json!({"fact":{"enum":["os","kernel","arch"]}}),
            &["fact"],
        ),
        s(
            "python.run",
            json!({"code":{"type":"string"},"stdin":{"type":"string"}}),
            &["code"],
        ),
        s(
            "memory.codebase",
            json!({"op":{"enum":["tree","outline","find_symbol","search"]},"path":{"type":"string"},"query":{"type":"string"}}),
            &["op"],
        ),
        s(
            "memory.build",
            json!({"op":{"enum":["all_summaries","search","get"]},"query":{"type":"string"}}),
            &["op"],
        ),
        s(
            "memory.operator",
            json!({"op":{"enum":["search","get","list"]},"query":{"type":"string"}}),
            &["op"],
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let registry = Arc::new(Registry::new(seam_local::tool_specs(), governed()).unwrap());
    let reader = Reader::new(&registry);
    let tools = Arc::new(LocalTools::open(LocalConfig::new(home.path())).unwrap());
    let router = Router::new(
        registry.clone(),
        Box::new(LocalDispatch::new(tools.clone())),
        Box::new(LocalDispatch::new(tools)),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let info = TurnInfo {
        turn: "bench".into(),
        task: "Summarise the notes.".into(),
        ..TurnInfo::default()
    };
    // A clean reply, and a damaged one in a shape small models produce.
    let clean = r#"{"mode":"action","tool":"context","params":{"what":"task"}}"#;
    let damaged = "Sure! Here is the call:\n```json\n{'mode': 'plan', 'steps': [{'actor': 'context', 'params': {'what': 'task',}}]}\n```";

    let mut g = c.benchmark_group("agent_step");
    for (label, reply) in [("clean", clean), ("damaged", damaged)] {
        g.bench_function(format!("read/{label}"), |b| {
            b.iter(|| reader.read(std::hint::black_box(reply)).unwrap())
        });
        g.bench_function(format!("read+dispatch/{label}"), |b| {
            b.iter(|| {
                let reading = reader.read(reply).unwrap();
                for s in &reading.steps {
                    if let Step::Call { tool, params, .. } = s {
                        let o = rt.block_on(router.dispatch(tool, params, &info)).unwrap();
                        assert!(o.ok());
                    }
                }
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(std::time::Duration::from_secs(1)).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
