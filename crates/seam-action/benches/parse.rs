//! Parse time per reply: a clean action, a fenced one-step plan, a damaged
//! reply with prose and think block, Qwen's XML dialect, and the whole
//! seam-actions dev corpus one reply after another (when the shared bench
//! data is present).

use criterion::{Criterion, criterion_group, criterion_main};
use seam_action::{CatalogEntry, ToolCatalog, parse, route};
use std::hint::black_box;

fn catalog() -> ToolCatalog {
    let entries: Vec<CatalogEntry> =
        serde_json::from_str(include_str!("../tests/fixtures/catalog.json"))
            .expect("catalog fixture");
    ToolCatalog::new(entries)
}

fn corpus() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/bench-data/seam-actions/corpus-dev.jsonl");
    let Ok(text) = std::fs::read_to_string(path) else {
        return vec![];
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["raw"].as_str().map(str::to_owned))
        .collect()
}

fn bench(c: &mut Criterion) {
    let cat = catalog();
    let replies = [
        ("clean", r#"{"mode":"action","tool":"files.read","params":{"path":"notes/todo.md"}}"#.to_owned()),
        (
            "fenced_plan",
            "```json\n{\n  \"mode\": \"plan\",\n  \"steps\": [\n    {\"actor\": \"seam\", \"params\": {\"task\": \"memory.build\", \"op\": \"all_summaries\"}}\n  ]\n}\n```".to_owned(),
        ),
        (
            "damaged",
            "<think>The user wants the file. I'll read it.</think>\nSure! Here is the call:\n{'name': 'functions.files_read', 'arguments': {'path': 'notes/todo.md', 'limit': None,}}\nLet me know.".to_owned(),
        ),
        (
            "qwen_xml",
            "I'll check.\n<tool_call>\n<function=files.read>\n<parameter=path>\nnotes/todo.md\n</parameter>\n<parameter=limit>20</parameter>\n</function>\n</tool_call>".to_owned(),
        ),
    ];
    let mut g = c.benchmark_group("parse");
    for (name, raw) in &replies {
        g.bench_function(*name, |b| b.iter(|| parse(black_box(raw), &cat)));
    }
    let all = corpus();
    if !all.is_empty() {
        g.bench_function(format!("corpus_{}_replies_with_route", all.len()), |b| {
            b.iter(|| {
                for raw in &all {
                    if let Ok(p) = parse(black_box(raw), &cat) {
                        black_box(route(p.action, &cat));
                    }
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
