//! `seam __agent-attack` (hidden, test-only): raise exactly the walls `seam ask` raises (the
//! same [`super::prepare`]), then attack them from inside and print what the kernel answered,
//! as JSON: each attempt with its errno (the attempts are seam-sandbox's [`Attempt`]s), and one
//! call through the gate that must still work.
//! The attack test (tests/confine.rs) asserts on it.

use anyhow::Context as _;
use seam_agent::gate_client::GateClient;
use seam_sandbox::attempts::{Attempt, Outcome, StdStream};
use serde_json::{Value, json};

use crate::cli::{AgentAttackArgs, Global};
use crate::context::Context;
use crate::exit::Exit;
use crate::output;

use super::{ConfineMode, Prepare, Prepared, prepare};

pub fn run(ctx: &Context, global: &Global, args: AgentAttackArgs) -> anyhow::Result<Exit> {
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
    let tries = (args.read.iter().cloned().map(Attempt::Read))
        .chain(args.write.iter().cloned().map(Attempt::Write))
        .chain(args.connect.iter().copied().map(Attempt::Connect))
        .chain(args.exec.iter().cloned().map(Attempt::Exec))
        .chain(args.udp.iter().copied().map(Attempt::Udp))
        .chain(args.signal.iter().copied().map(Attempt::Signal))
        .chain(
            args.exec_via_loader
                .iter()
                .cloned()
                .map(Attempt::ExecViaLoader),
        );
    let tty = args.tty.then(|| {
        std::iter::once(Attempt::OpenTty).chain(StdStream::ALL.map(Attempt::TypeIntoTerminal))
    });
    let attempts: Vec<Outcome> = tries
        .chain(tty.into_iter().flatten())
        .map(|a| a.run())
        .collect();
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
    // Calls through the gate's socket, as the agent makes them.
    let through_gate = |tool: &str, params: Value| {
        runtime.block_on(async {
            let mut client = GateClient::new(endpoint.clone());
            match client.invoke(tool, params, Some(&turn)).await {
                Ok(invoked) => json!({
                    "ok": true,
                    "status": invoked.status,
                    "answer": serde_json::to_value(&invoked.answer).unwrap_or(Value::Null),
                }),
                Err(e) => json!({"ok": false, "error": e.to_string()}),
            }
        })
    };
    let gate = match &args.gate_read {
        Some(path) => through_gate("files.read", json!({"path": path})),
        None => Value::Null,
    };
    let gate_tree = match &args.gate_tree {
        Some(path) => through_gate("memory.codebase", json!({"op": "tree", "path": path})),
        None => Value::Null,
    };
    drop(child);
    output::json(&json!({
        "confinement": confinement,
        "attempts": attempts,
        "env_present": env,
        "gate": gate,
        "gate_tree": gate_tree,
        "turn_attacks": turn_attacks,
    }));
    Ok(Exit::Ok)
}
