//! Load on the gate as a service: N concurrent clients × M invocations of
//! files.read (a small file) over the unix socket of a real `seam gate`
//! process. Reports errors (must be 0), whether every invocation is in the
//! ledger (verified after a SIGTERM shutdown), p50/p90/p99/max latency and
//! throughput.
//!
//! `cargo bench -p seam-cli --bench gate_load`; SEAM_GATE_LOAD_CLIENTS and
//! SEAM_GATE_LOAD_CALLS override the defaults (32 × 2000).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use seam_cli::gate_client::{GateClient, GateEndpoint};
use serde_json::json;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn say(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    // cargo bench passes --bench; a filter argument that is not ours means
    // another bench was asked for.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && a != "gate_load")
    {
        return;
    }
    let clients = env_usize("SEAM_GATE_LOAD_CLIENTS", 32);
    let calls = env_usize("SEAM_GATE_LOAD_CALLS", 2000);

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, seam_home) = (root.join("home"), root.join("seam"));
    let workspace = home.join("project");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&seam_home).unwrap();
    std::fs::write(workspace.join("small.txt"), b"one line of text\n").unwrap();

    let mut gate = Command::new(env!("CARGO_BIN_EXE_seam"))
        .arg("gate")
        .env_clear()
        .env("HOME", &home)
        .env("SEAM_HOME", &seam_home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(&workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_socket(&seam_home.join("gate.sock"));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let endpoint = GateEndpoint::unix_in(&seam_home);
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let endpoint = endpoint.clone();
            let opener = seam_agent::gate_client::read_opener(&seam_home).unwrap();
            runtime.spawn(async move {
                let mut client = GateClient::new(endpoint).with_opener(opener);
                let mut latencies = Vec::with_capacity(calls);
                let mut errors = 0usize;
                for _ in 0..calls {
                    let t = Instant::now();
                    let r = client
                        .invoke("files.read", json!({"path": "small.txt"}), None)
                        .await;
                    latencies.push(t.elapsed());
                    match r {
                        Ok(inv) if inv.status == 200 => {}
                        _ => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(clients * calls);
    let mut errors = 0;
    for t in tasks {
        let (l, e) = runtime.block_on(t).unwrap();
        latencies.extend(l);
        errors += e;
    }
    let wall = started.elapsed();
    drop(runtime);

    let pid = rustix::process::Pid::from_raw(gate.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = gate.wait().unwrap();
    let verified = seam_ledger::verify(&seam_home, None);

    latencies.sort_unstable();
    let total = clients * calls;
    say(&format!(
        "gate_load: {clients} clients x {calls} invocations of files.read over the unix socket"
    ));
    say(&format!("  invocations   {total}"));
    say(&format!("  errors        {errors}"));
    say(&format!(
        "  wall          {:.2} s, throughput {:.0} invocations/s",
        wall.as_secs_f64(),
        total as f64 / wall.as_secs_f64()
    ));
    say(&format!(
        "  latency       p50 {}  p90 {}  p99 {}  max {}",
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.90)),
        ms(percentile(&latencies, 0.99)),
        ms(*latencies.last().unwrap())
    ));
    say(&format!("  gate exit     {status}"));
    match verified {
        Ok(report) => say(&format!(
            "  ledger        verifies: {} records, head at seq {} ({})",
            report.records,
            report.head.seq,
            if report.records == total as u64 {
                "every invocation recorded"
            } else {
                "MISMATCH with the invocations"
            }
        )),
        Err(e) => say(&format!("  ledger        DOES NOT VERIFY: {e}")),
    }
}

fn wait_for_socket(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::os::unix::net::UnixStream::connect(path).is_err() {
        assert!(Instant::now() < deadline, "the gate did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}
