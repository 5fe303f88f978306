//! Pipeline overhead of `Toolbox::call` for `files.read` on a small file.
//!
//! `toolbox_call` is the whole call; `plain_read` is open + read + UTF-8 check
//! of the same file, the part that is the read itself. Their difference is the
//! pipeline's overhead (schema, policy, admission, scrub, envelope, digest).
//! The ledger is measured on its own (seam-ledger's bench); here it is NoLedger.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use seam_gate::{CallRequest, NoLedger, ToolboxConfig, builtin_toolbox};
use seam_policy::{Policy, PolicyEnv};
use serde_json::json;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("home/project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(root.join("seam")).unwrap();
    let file = project.join("small.txt");
    let body: String = (0..20)
        .map(|i| format!("line {i}: nothing secret here\n"))
        .collect();
    std::fs::write(&file, &body).unwrap();

    let env = PolicyEnv {
        owner_home: root.join("home"),
        seam_home: root.join("seam"),
        workspace_root: project.clone(),
    };
    let tb = builtin_toolbox(
        Arc::new(Policy::builtin(env)),
        Arc::new(seam_scrub::Scrubber::new()),
        Arc::new(NoLedger),
        &ToolboxConfig::default(),
    )
    .unwrap();
    let params = json!({"path": "small.txt"});

    let mut g = c.benchmark_group("files.read small file");
    g.bench_function("toolbox_call", |b| {
        b.iter(|| {
            let a = tb
                .call(CallRequest {
                    tool: "files.read".into(),
                    params: params.clone(),
                    turn: None,
                })
                .unwrap();
            black_box(a)
        })
    });
    g.bench_function("plain_read", |b| {
        b.iter(|| black_box(std::fs::read_to_string(black_box(&file)).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
