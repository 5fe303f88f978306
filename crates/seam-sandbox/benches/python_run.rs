//! Sandbox overhead: `print(1)` through [`Sandbox::run`] against bare `python3 -c 'print(1)'`
//! (the same interpreter, output captured), side by side in one run, in wall time and in CPU
//! time (the gate's and its children's: what the walls cost in work, which a loaded machine
//! inflates less than wall time); and 8 runs at once.
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

    let mut g = c.benchmark_group("print1_cpu_time");
    g.sample_size(20);
    let bare = || {
        let out = Command::new(&python)
            .args(["-c", "print(1)"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"1\n");
    };
    let sandboxed = || {
        let out = sb.run(&job).unwrap();
        assert_eq!(out.stdout, "1\n");
    };
    g.bench_function("bare_python3", |b| b.iter_custom(|n| cpu_time_of(n, bare)));
    g.bench_function("sandboxed", |b| {
        b.iter_custom(|n| cpu_time_of(n, sandboxed))
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

/// CPU time (user + system) of this process and its waited-for children over `n` calls.
fn cpu_time_of(n: u64, f: impl Fn()) -> Duration {
    let before = cpu_time();
    for _ in 0..n {
        f();
    }
    cpu_time().saturating_sub(before)
}

fn cpu_time() -> Duration {
    let mut total = Duration::ZERO;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: an all-zero rusage is a valid value of this plain C struct.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `r` is a valid, writable rusage for the call.
        unsafe { libc::getrusage(who, &mut r) };
        for t in [r.ru_utime, r.ru_stime] {
            total += Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        }
    }
    total
}

criterion_group!(benches, overhead);
criterion_main!(benches);
