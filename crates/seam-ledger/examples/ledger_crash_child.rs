//! The child of the crash test: appends from many threads until it is killed.
//!
//! `ledger_crash_child <seam_home> <threads>`. After each `append` returns it
//! writes `<seq> <invocation_id>` as one line to stdout, so whoever kills it
//! knows which appends it was told were durable.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use seam_ledger::{Decision, Entry, Ledger, Sha256Digest};

fn main() {
    let mut args = std::env::args_os().skip(1);
    let home = PathBuf::from(
        args.next()
            .expect("usage: ledger_crash_child <seam_home> <threads>"),
    );
    let threads: usize = args
        .next()
        .and_then(|t| t.into_string().ok())
        .and_then(|t| t.parse().ok())
        .expect("usage: ledger_crash_child <seam_home> <threads>");
    let ledger = Arc::new(Ledger::open(&home).expect("open ledger"));
    let stdout = Arc::new(Mutex::new(std::io::stdout()));
    let run = std::process::id();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (ledger, stdout) = (ledger.clone(), stdout.clone());
            std::thread::spawn(move || {
                for i in 0u64.. {
                    let invocation_id = format!("{run}-{t}-{i}");
                    let record = ledger
                        .append(Entry {
                            invocation_id: invocation_id.clone(),
                            turn_id: None,
                            tool: "facts.get".to_owned(),
                            tool_version: "1".to_owned(),
                            params: serde_json::json!({"name": "hostname"}),
                            decision: Decision::Admitted,
                            output_sha256: Some(Sha256Digest::of(invocation_id.as_bytes())),
                            tainted: false,
                            scrubbed: Vec::new(),
                        })
                        .expect("append");
                    let mut out = stdout.lock().unwrap_or_else(|p| p.into_inner());
                    writeln!(out, "{} {invocation_id}", record.seq).expect("write stdout");
                    out.flush().expect("flush stdout");
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
}
