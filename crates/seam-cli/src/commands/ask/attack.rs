//! `seam __agent-attack` (hidden, test-only): raise exactly the walls `seam ask` raises (the
//! same [`super::prepare`]), then attack them from inside and print what the kernel answered,
//! as JSON: each attempt with its errno, and one call through the gate that must still work.
//! The attack test (tests/confine.rs) asserts on it.

use std::io::Read as _;
use std::path::PathBuf;

use anyhow::Context as _;
use seam_agent::gate_client::GateClient;
use serde_json::{Value, json};

use crate::cli::Global;
use crate::context::Context;
use crate::exit::Exit;
use crate::output;

use super::{ConfineMode, Prepare, Prepared, prepare};

/// What to attack.
#[derive(Debug, Clone, Default)]
pub struct AttackArgs {
    /// The model URL the walls let through (its port).
    pub model_url: Option<String>,
    /// Files to try to read.
    pub read: Vec<PathBuf>,
    /// Files to try to create.
    pub write: Vec<PathBuf>,
    /// Loopback ports to try to connect to.
    pub connect: Vec<u16>,
    /// Programs to try to run.
    pub exec: Vec<PathBuf>,
    /// Environment variables whose presence to report.
    pub env: Vec<String>,
    /// A workspace file to read through the gate.
    pub gate_read: Option<String>,
    pub repo: Option<PathBuf>,
    pub require: bool,
    /// Files attached to the turn (read by the gate before the walls, as `seam ask` does).
    pub attach: Vec<PathBuf>,
    /// UDP datagrams to send to these loopback ports.
    pub udp: Vec<u16>,
    /// Processes (outside the walls) to send SIGCONT to.
    pub signal: Vec<i32>,
    /// Programs to run through the ELF loader (`ld-linux… PROGRAM`).
    pub exec_via_loader: Vec<PathBuf>,
    /// From inside: try to open a fresh turn, and to call without one.
    pub gate_fresh_turn: bool,
    /// From inside: try to close these turns (another session's, id known, token not).
    pub gate_close: Vec<String>,
    /// From inside: try to open /dev/tty, and to type into the terminal on fds 0..=2.
    pub tty: bool,
    /// From inside: try to list and approve the calls waiting for consent over the socket.
    pub consent_approve: bool,
    /// The operator's task for the turn (registered as the operator's words before the walls).
    pub task: String,
    /// From inside: try to make this value the operator's words for a turn.
    pub gate_endorse: Option<String>,
    /// For the gate started here: how long a call waits for consent.
    pub consent_timeout: u64,
}

fn outcome(kind: &str, target: String, r: std::io::Result<()>) -> Value {
    match r {
        Ok(()) => json!({"attack": kind, "target": target, "denied": false, "errno": null}),
        Err(e) => json!({
            "attack": kind,
            "target": target,
            "denied": true,
            "errno": e.raw_os_error(),
            "error": e.to_string(),
        }),
    }
}

pub fn run(ctx: &Context, global: &Global, args: AttackArgs) -> anyhow::Result<Exit> {
    let home = ctx.ensure_home()?.to_path_buf();
    let Prepared {
        endpoint,
        child,
        confinement,
        turn,
        ..
    } = prepare(
        ctx,
        global,
        &Prepare {
            home: &home,
            gate_url: None,
            repo: args.repo.clone(),
            attach: &args.attach,
            task: &args.task,
            model_url: args.model_url.as_deref(),
            model_file: None,
            consent_timeout: args.consent_timeout,
            confine: if args.require {
                ConfineMode::Required
            } else {
                ConfineMode::BestEffort
            },
        },
    )?;
    let mut attempts = Vec::new();
    for p in &args.read {
        let r = std::fs::File::open(p).and_then(|mut f| {
            let mut s = Vec::new();
            f.read_to_end(&mut s).map(drop)
        });
        attempts.push(outcome("read", p.display().to_string(), r));
    }
    for p in &args.write {
        let r = std::fs::File::create(p).map(drop);
        attempts.push(outcome("write", p.display().to_string(), r));
    }
    for port in &args.connect {
        let r = std::net::TcpStream::connect(("127.0.0.1", *port)).map(drop);
        attempts.push(outcome("connect", port.to_string(), r));
    }
    for p in &args.exec {
        let r = std::process::Command::new(p)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map(drop);
        attempts.push(outcome("exec", p.display().to_string(), r));
    }
    for port in &args.udp {
        let r = std::net::UdpSocket::bind("127.0.0.1:0")
            .and_then(|s| s.send_to(b"exfil", ("127.0.0.1", *port)))
            .map(drop);
        attempts.push(outcome("udp", port.to_string(), r));
    }
    for pid in &args.signal {
        let r = rustix::process::Pid::from_raw(*pid)
            .ok_or_else(|| std::io::Error::other("pid 0"))
            .and_then(|p| {
                rustix::process::kill_process(p, rustix::process::Signal::CONT)
                    .map_err(std::io::Error::from)
            });
        attempts.push(outcome("signal", pid.to_string(), r));
    }
    for prog in &args.exec_via_loader {
        let loader = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
            .into_iter()
            .find(|l| std::path::Path::new(l).exists())
            .unwrap_or("/lib64/ld-linux-x86-64.so.2");
        let r = std::process::Command::new(loader)
            .arg(prog)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .and_then(|st| {
                if st.success() {
                    Ok(())
                } else {
                    Err(std::io::Error::other(format!("the loader failed: {st}")))
                }
            });
        attempts.push(outcome("exec-via-loader", prog.display().to_string(), r));
    }
    if args.tty {
        let r = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map(drop);
        attempts.push(outcome("open-tty", "/dev/tty".into(), r));
        use std::os::fd::AsFd as _;
        let fds = [
            ("stdin", std::io::stdin().as_fd().try_clone_to_owned()),
            ("stdout", std::io::stdout().as_fd().try_clone_to_owned()),
            ("stderr", std::io::stderr().as_fd().try_clone_to_owned()),
        ];
        for (name, fd) in fds {
            let r = fd.and_then(|fd| {
                // "y" and a newline: what the operator types to allow a call
                seam_sandbox::agent_wall::type_into_terminal(fd.as_fd(), b'y')?;
                seam_sandbox::agent_wall::type_into_terminal(fd.as_fd(), b'\n')
            });
            attempts.push(outcome("type-into-terminal", name.into(), r));
        }
    }
    let env: Value = args
        .env
        .iter()
        .map(|k| (k.clone(), json!(std::env::var_os(k).is_some())))
        .collect::<serde_json::Map<_, _>>()
        .into();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let turn_attacks = runtime.block_on(async {
        let mut client = GateClient::new(endpoint.clone());
        let mut out = serde_json::Map::new();
        let state = |v: Result<(), seam_agent::gate_client::GateClientError>| match v {
            Ok(()) => json!({"denied": false}),
            Err(e) => json!({"denied": true, "error": e.to_string()}),
        };
        if args.gate_fresh_turn {
            let opened = client.open_turn().await.map(drop);
            out.insert("open_turn".into(), state(opened));
            let invoked = client
                .invoke("facts.get", json!({"fact": "os"}), None)
                .await;
            out.insert(
                "invoke_without_turn".into(),
                match invoked {
                    Ok(i) => json!({
                        "denied": i.status != 200,
                        "status": i.status,
                        "answer": serde_json::to_value(&i.answer).unwrap_or(Value::Null),
                    }),
                    Err(e) => json!({"denied": true, "error": e.to_string()}),
                },
            );
        }
        for id in &args.gate_close {
            let other = seam_protocol::wire::TurnOpened {
                turn: id.clone(),
                token: String::new(),
            };
            let closed = client.close_turn(&other).await;
            out.insert(format!("close {id}"), state(closed));
        }
        if args.consent_approve {
            // without the opener (the agent has none), then with one read from keys/ (the
            // walls refuse the read, so it goes empty)
            let stolen =
                std::fs::read_to_string(seam_home::SeamHome::new(&home).turn_opener()).ok();
            out.insert("read_opener".into(), json!({"denied": stolen.is_none()}));
            let mut tries = vec![("no_opener", GateClient::new(endpoint.clone()))];
            if let Some(o) = stolen {
                tries.push((
                    "stolen_opener",
                    GateClient::new(endpoint.clone()).with_opener(o.trim().to_owned()),
                ));
            }
            for (name, mut c) in tries {
                let listed = c.consents().await.map(drop);
                out.insert(format!("consent_list {name}"), state(listed));
                // approving a call: any id (a real one is on the ledger stream)
                let approved = c
                    .answer_consent(
                        "00000000-0000-7000-8000-000000000000",
                        seam_protocol::wire::ConsentReply::Always,
                    )
                    .await;
                out.insert(format!("consent_approve {name}"), state(approved));
            }
        }
        if let Some(value) = &args.gate_endorse {
            // Each way the agent has to say "the operator said this": its own turn's
            // operator words (it holds the token, not the opener), a fresh turn opened with
            // the value, and both again with an opener read from keys/ (the walls refuse it).
            let words = [value.clone()];
            let stolen =
                std::fs::read_to_string(seam_home::SeamHome::new(&home).turn_opener()).ok();
            out.insert(
                "endorse_read_opener".into(),
                json!({"denied": stolen.is_none()}),
            );
            let mut tries = vec![("no_opener", GateClient::new(endpoint.clone()))];
            if let Some(o) = stolen {
                tries.push((
                    "stolen_opener",
                    GateClient::new(endpoint.clone()).with_opener(o.trim().to_owned()),
                ));
            }
            for (name, mut c) in tries {
                let added = c.add_operator_words(&turn, &words).await;
                out.insert(format!("endorse_own_turn {name}"), state(added));
                let opened = c.open_turn_with(&words).await.map(drop);
                out.insert(format!("endorse_fresh_turn {name}"), state(opened));
            }
        }
        // The agent's own turn, as the gate keeps it (tainted by an attachment?).
        let own = client
            .invoke("facts.get", json!({"fact": "os"}), Some(&turn))
            .await
            .map(|i| i.turn_tainted);
        out.insert(
            "own_turn_tainted".into(),
            match own {
                Ok(t) => json!(t),
                Err(e) => json!(e.to_string()),
            },
        );
        Value::Object(out)
    });
    let gate = runtime.block_on(async {
        let Some(path) = &args.gate_read else {
            return Value::Null;
        };
        let mut client = GateClient::new(endpoint);
        match client
            .invoke("files.read", json!({"path": path}), Some(&turn))
            .await
        {
            Ok(invoked) => json!({
                "ok": true,
                "status": invoked.status,
                "answer": serde_json::to_value(&invoked.answer).unwrap_or(Value::Null),
            }),
            Err(e) => json!({"ok": false, "error": e.to_string()}),
        }
    });
    drop(child);
    output::json(&json!({
        "confinement": confinement,
        "attempts": attempts,
        "env_present": env,
        "gate": gate,
        "turn_attacks": turn_attacks,
    }));
    Ok(Exit::Ok)
}
