//! Throughput of `Scrubber::scrub` on two texts:
//!
//! - `ordinary`: text with no secrets — this workspace's own Rust sources and Markdown (the
//!   scrub crate's excepted, it is full of example secrets), repeated to 16 MB;
//! - `secret-dense`: the labelled corpus (`../shared/bench-data/secrets/corpus-dev.jsonl`,
//!   each snippet on its own lines), repeated to 50 MB.
//!
//! Runs short: `cargo bench -p seam-scrub --bench scrub -- --warm-up-time 1 --measurement-time 3`.

use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use seam_scrub::Scrubber;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn collect(dir: &Path, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if !matches!(name, "seam-scrub" | "target" | "fuzz" | ".git") {
                collect(&p, out);
            }
        } else if (name.ends_with(".rs") || name.ends_with(".md"))
            && let Ok(t) = std::fs::read_to_string(&p)
        {
            out.push_str(&t);
        }
    }
}

fn repeat_to(unit: &str, size: usize) -> String {
    assert!(!unit.is_empty(), "nothing to repeat");
    let mut s = String::with_capacity(size + unit.len());
    while s.len() < size {
        s.push_str(unit);
    }
    s
}

fn ordinary_text() -> String {
    let root = repo_root();
    let mut unit = String::new();
    collect(&root.join("crates"), &mut unit);
    for doc in ["README.md", "ARCHITECTURE.md"] {
        if let Ok(t) = std::fs::read_to_string(root.join(doc)) {
            unit.push_str(&t);
        }
    }
    repeat_to(&unit, 16 << 20)
}

fn secret_dense_text() -> String {
    let path = repo_root().join("../shared/bench-data/secrets/corpus-dev.jsonl");
    let corpus = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the corpus must be at {}: {e}", path.display()));
    let mut unit = String::new();
    for line in corpus.lines() {
        let row: serde_json::Value = serde_json::from_str(line).expect("corpus line is JSON");
        unit.push_str(row["text"].as_str().expect("corpus line has text"));
        unit.push('\n');
    }
    repeat_to(&unit, 50 << 20)
}

fn bench(c: &mut Criterion) {
    let scrubber = Scrubber::new();
    scrubber.warm_up();
    let mut group = c.benchmark_group("scrub");
    group.sample_size(10);
    for (name, text) in [
        ("ordinary", ordinary_text()),
        ("secret-dense", secret_dense_text()),
    ] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| scrubber.scrub(std::hint::black_box(&text)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
