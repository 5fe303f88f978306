//! The builder's round trip (worktree, write, commit) and the queue's approve
//! on a repository of 10 000 files.
//!
//! `cargo bench -p seam-local --bench builder_queue`

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use seam_local::{LocalConfig, LocalTools, ReturnQueue, TurnInfo};
use seam_test_support::git::git;
use serde_json::json;

const FILES: usize = 10_000;

fn big_repo(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    for i in 0..FILES {
        let dir = root.join(format!("d{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(
            dir.join(format!("f{i:05}.rs")),
            format!("pub fn f{i}() -> usize {{ {i} }}\n"),
        )
        .unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "ten thousand files"]);
}

fn turn(n: usize) -> TurnInfo {
    TurnInfo {
        turn: format!("bench{n}"),
        ..TurnInfo::default()
    }
}

fn write(tools: &LocalTools, t: &TurnInfo, n: usize) {
    let p = json!({"op": "write", "path": format!("d000/new{n}.rs"), "content": format!("pub fn new{n}() {{}}\n")});
    tools.call(t, "builder", p.as_object().unwrap()).unwrap();
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    big_repo(&repo);
    let home = dir.path().join("home");
    let mut config = LocalConfig::new(&home);
    config.repo = Some(repo.clone());
    let tools = LocalTools::open(config).unwrap();
    let mut n = 0;

    let mut g = c.benchmark_group("builder_10k_files");
    // Each iteration costs seconds on a loaded machine: one iteration a sample.
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(5));
    // A turn's first write: worktree of 10k files, write, commit.
    g.bench_function("first_write_new_worktree", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let t = turn(n);
                let start = Instant::now();
                write(&tools, &t, n);
                spent += start.elapsed();
                let items = tools.finish_turn(&t).unwrap();
                ReturnQueue::open(&home)
                    .unwrap()
                    .reject(items[0].id)
                    .unwrap();
            }
            spent
        })
    });
    // A later write on the same branch: write, commit.
    let t = turn(0);
    write(&tools, &t, 0);
    g.bench_function("next_write_same_branch", |b| {
        b.iter(|| {
            n += 1;
            write(&tools, &t, n);
        })
    });
    // The end of a turn: the Critic (no check command) and the queue.
    g.bench_function("finish_turn_critic_and_queue", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let t = turn(n);
                write(&tools, &t, n);
                let start = Instant::now();
                let items = tools.finish_turn(&t).unwrap();
                spent += start.elapsed();
                ReturnQueue::open(&home)
                    .unwrap()
                    .reject(items[0].id)
                    .unwrap();
            }
            spent
        })
    });
    // approve: fast-forward main (checked out in the operator's tree), remove
    // the worktree and the branch.
    g.bench_function("approve", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let t = turn(n);
                write(&tools, &t, n);
                let items = tools.finish_turn(&t).unwrap();
                let mut q = ReturnQueue::open(&home).unwrap();
                let start = Instant::now();
                q.approve(items[0].id).unwrap();
                spent += start.elapsed();
            }
            spent
        })
    });
    g.finish();
    let _ = tools.finish_turn(&turn(0));
}

criterion_group!(group, benches);
criterion_main!(group);
