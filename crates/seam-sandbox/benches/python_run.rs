//! Sandbox overhead: `print(1)` through [`Sandbox::run`] against bare `python3 -c 'print(1)'`
//! (the same interpreter, output captured), side by side in one run; and 8 runs at once.
//!
//! `cargo bench -p seam-sandbox --bench python_run -- --warm-up-time 1 --measurement-time 3`

use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use seam_sandbox::{Job, Limits, Sandbox};

fn overhead(c: &mut Criterion) {
    let sb = Sandbox::shared();
    assert!(sb.available(), "{:?}", sb.protections().missing());
    let python = sb.protections().python.clone().unwrap().executable;
    let job = Job {
        limits: Limits::with_wall(Duration::from_secs(10)),
        ..Job::new("print(1)")
    };
    let mut g = c.benchmark_group("print1");
    g.sample_size(40);
    g.bench_function("bare_python3", |b| {
        b.iter(|| {
            let out = Command::new(&python)
                .args(["-c", "print(1)"])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert_eq!(out.stdout, b"1\n");
        })
    });
    g.bench_function("sandboxed", |b| {
        b.iter(|| {
            let out = sb.run(&job).unwrap();
            assert_eq!(out.stdout, "1\n");
        })
    });
    g.finish();

    let mut g = c.benchmark_group("concurrent");
    g.sample_size(10);
    g.bench_function("eight_sandboxed_at_once", |b| {
        b.iter(|| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let job = job.clone();
                    std::thread::spawn(move || sb.run(&job).unwrap())
                })
                .collect();
            for h in handles {
                let out = h.join().unwrap();
                assert_eq!(out.exit_code, Some(0));
                assert!(!out.timed_out);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
