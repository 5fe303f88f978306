//! `seam ask TASK`: one turn of the agent, end to end.
//!
//! Finds the gate (its unix socket in seam's home, or `--gate-url`), starting
//! one as a child process when none answers; opens a turn with it (the gate
//! keeps the turn's taint); builds the registry from the local tools and the
//! gate's `/v1/tools`; runs the turn loop against the model; prints one line
//! per tool call as it happens (on stderr, through `on_one_line`) and the
//! final answer (on stdout, through `visible`); hands the turn's staged work
//! to the return queue; closes the turn; stops the child gate.
//!
//! Between finding the gate and the turn, the agent's process is confined
//! (see `confine`): credentials stripped from its environment, Landlock walls
//! on its files, programs and TCP ports. The gate is started first so it
//! never inherits them, and the walls go up while the process has one thread.

pub(crate) mod attack;
pub(crate) mod confine;
mod gate_child;
pub(crate) mod open_turn;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use seam_agent::config::AgentConfig;
use seam_agent::dispatch::{GateDispatch, LocalDispatch, Router};
use seam_agent::gate_client::{GateClient, GateClientError, GateEndpoint};
use seam_agent::model::{ChatModel, ModelEndpoint, OpenAiClient, OpenAiOptions};
use seam_agent::registry::Registry;
use seam_agent::trace::Trace;
use seam_agent::turn::{Turn, TurnEnd, TurnEvent, TurnOptions, outcome_line, short_params};
use seam_local::TurnInfo;

use crate::cli::Global;
use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

pub use confine::{ConfineMode, Confinement};
use gate_child::{GateChild, GateLaunch};

/// What `seam ask` was asked.
#[derive(Debug, Clone, Default)]
pub struct AskArgs {
    pub task: String,
    pub model_url: Option<String>,
    pub model: Option<String>,
    pub no_constrain: bool,
    pub no_stream: bool,
    pub trace: Option<PathBuf>,
    pub max_steps: Option<u32>,
    pub max_seconds: Option<u64>,
    pub max_tokens: Option<u32>,
    pub gate_url: Option<String>,
    pub repo: Option<PathBuf>,
    pub attach: Vec<PathBuf>,
    pub agent_config: Option<PathBuf>,
    pub json: bool,
    /// How hard to insist on the agent's walls (`--require-confinement`, `--no-confine`).
    pub confine: ConfineMode,
    /// `--consent-timeout`: for the gate `seam ask` starts.
    pub consent_timeout: u64,
}

pub fn run(ctx: &Context, global: &Global, mut args: AskArgs) -> anyhow::Result<Exit> {
    if args.task == "-" {
        use std::io::Read;
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading the task from stdin")?;
        args.task = s;
    }
    if args.task.trim().is_empty() {
        return Err(UsageError(
            "the task is empty: say what to do, e.g. seam ask \"summarise notes.md\"".into(),
        )
        .into());
    }
    let home = ctx.ensure_home()?.to_path_buf();
    let config = AgentConfig::load(args.agent_config.as_deref(), &home)
        .map_err(|e| UsageError(crate::exit::with_causes(&e)))?;
    let options = turn_options(&args, &config, &ctx.policy.env().owner_home);
    let mut trace = match &args.trace {
        Some(p) => Trace::to_file(p).map_err(|e| UsageError(crate::exit::with_causes(&e)))?,
        None => Trace::none(),
    };
    // The embedded model is fetched (if it is not in the cache yet) before the walls go up:
    // the agent itself never reaches the network. It is loaded after, on a thread that
    // inherits them, with its file the one thing of the cache it may read.
    let embedded = embedded_model_file(&args, &config)?;
    // A model server's host is resolved now, before the walls (which allow no UDP, so no
    // DNS), and the client pinned to that address.
    let model_endpoint = match args.model_url.clone().or_else(|| config.model.url.clone()) {
        Some(url) if embedded.is_none() => Some(
            ModelEndpoint::parse(&url)
                .and_then(ModelEndpoint::pin)
                .map_err(|e| UsageError(e.to_string()))?,
        ),
        _ => None,
    };
    // The gate first, on a single-threaded runtime: it is started before the walls go up, so
    // it never inherits them, and the process still has one thread when they do.
    let prepared = prepare(
        ctx,
        global,
        &Prepare {
            home: &home,
            gate_url: args.gate_url.as_deref(),
            repo: args.repo.clone(),
            attach: &args.attach,
            task: &args.task,
            model_url: args.model_url.as_deref().or(config.model.url.as_deref()),
            model_file: embedded.as_ref().map(|(_, path)| path.as_path()),
            confine: args.confine,
            consent_timeout: args.consent_timeout,
        },
    )?;
    let Prepared {
        endpoint,
        child,
        local,
        turn: gate_turn,
        attachments,
        ..
    } = prepared;
    let mut model = build_model(&args, &config, &options, &home, embedded, model_endpoint)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the agent's runtime")?;
    let result = runtime.block_on(async {
        let mut client = GateClient::new(endpoint.clone());
        let governed = client
            .tools()
            .await
            .context("asking the gate for its tools")?;
        let registry = Arc::new(
            Registry::new(seam_local::tool_specs(), governed)
                .context("building the tool registry")?,
        );
        let turn_id = gate_turn.turn.clone();
        let gate = GateDispatch::new(client, gate_turn.clone());
        let router = Router::new(
            registry.clone(),
            Box::new(LocalDispatch::new(local.clone())),
            Box::new(gate),
        );
        let info = TurnInfo {
            turn: turn_id.clone(),
            task: args.task.clone(),
            attachments,
            ..TurnInfo::default()
        };
        output::notice(&format!(
            "turn {turn_id}: {} with {} tools",
            model.describe(),
            registry.len()
        ));
        let turn = Turn {
            model: model.as_mut(),
            dispatch: &router,
            registry: &registry,
            options,
            trace: &mut trace,
        };
        let mut on_event = |ev: TurnEvent<'_>| {
            if let TurnEvent::Called {
                params, outcome, ..
            } = ev
            {
                output::progress_line(&format!(
                    "  {} {{{}}} → {}",
                    outcome.tool,
                    short_params(params),
                    outcome_line(outcome)
                ));
            }
        };
        let report = turn.run(info, &mut on_event).await;
        // The turn ends at the gate whatever happened in it.
        let mut closer = GateClient::new(endpoint);
        let _ = closer.close_turn(&gate_turn).await;
        let report = report?;
        let staged = local
            .finish_turn(&report.info)
            .context("handing the turn's work to the return queue")?;
        drop(child);
        Ok::<_, anyhow::Error>((report, staged))
    });
    let (report, staged) = result?;
    if let Some(e) = trace.error() {
        output::notice(e);
    }
    if args.json {
        output::json(&serde_json::json!({
            "answer": report.answer,
            "end": report.end,
            "steps": report.steps,
            "calls": report.calls,
            "corrections": report.corrections,
            "generated_tokens": report.generated_tokens,
            "tainted": report.tainted,
            "queued": staged,
        }));
    } else {
        output::text_ln(&report.answer);
        for item in &staged {
            output::progress_line(&format!(
                "queued for review: #{} {} ({:?}): {}",
                item.id, item.kind, item.verdict, item.summary
            ));
        }
    }
    let fixes: u32 = report.corrections.values().sum();
    output::notice(&format!(
        "{} steps, {} calls, {} corrections; model {:.1} s, agent {:.2} ms, gate {:.1} ms",
        report.steps,
        report.calls,
        fixes,
        report.model_time.as_secs_f64(),
        report.agent_time.as_secs_f64() * 1000.0,
        report.gate_time.as_secs_f64() * 1000.0,
    ));
    Ok(match report.end {
        TurnEnd::Stopped { .. } => Exit::Internal,
        _ => Exit::Ok,
    })
}

/// The turn's options: the flags, else the agent's config, else the defaults; and the
/// owner's home, which the model is shown as `~`.
fn turn_options(args: &AskArgs, config: &AgentConfig, owner_home: &std::path::Path) -> TurnOptions {
    let d = TurnOptions::default();
    TurnOptions {
        max_steps: args
            .max_steps
            .or(config.turn.max_steps)
            .unwrap_or(d.max_steps),
        max_wall: args
            .max_seconds
            .or(config.turn.max_seconds)
            .map(Duration::from_secs)
            .unwrap_or(d.max_wall),
        max_tokens: args
            .max_tokens
            .or(config.turn.max_tokens)
            .unwrap_or(d.max_tokens),
        constrain: !args.no_constrain && config.model.constrain.unwrap_or(true),
        owner_home: Some(owner_home.to_path_buf()),
        ..d
    }
}

/// Without a model server: the catalog model to run in-process (`--model`, `[model] name`,
/// else the default) and its file, pulled into the model cache first if it is not there.
fn embedded_model_file(
    args: &AskArgs,
    config: &AgentConfig,
) -> anyhow::Result<Option<(String, PathBuf)>> {
    if args.model_url.is_some() || config.model.url.is_some() {
        return Ok(None);
    }
    if !cfg!(feature = "embedded") {
        return Err(UsageError(
            "no model: this seam was built without the embedded model (feature `embedded`); \
             give --model-url http://HOST:PORT (an OpenAI-compatible server: llama.cpp's \
             llama-server, Ollama, vLLM, LM Studio) or set [model] url in agent.toml"
                .into(),
        )
        .into());
    }
    let name = args
        .model
        .clone()
        .or_else(|| config.model.name.clone())
        .unwrap_or_else(|| seam_engine::catalog::DEFAULT_MODEL.to_owned());
    let path = super::model::ensure_pulled(&name)?;
    Ok(Some((name, path)))
}

fn build_model(
    args: &AskArgs,
    config: &AgentConfig,
    turn: &TurnOptions,
    home: &std::path::Path,
    embedded: Option<(String, PathBuf)>,
    endpoint: Option<ModelEndpoint>,
) -> anyhow::Result<Box<dyn ChatModel>> {
    if let Some((name, path)) = embedded {
        return embedded_model(&name, &path, home, turn);
    }
    let Some(endpoint) = endpoint else {
        return Err(UsageError("no model: give --model-url http://HOST:PORT".into()).into());
    };
    let mut options = OpenAiOptions {
        model: args.model.clone().or_else(|| config.model.name.clone()),
        stream: !args.no_stream && config.model.stream.unwrap_or(true),
        ..OpenAiOptions::default()
    };
    if let Some(t) = config.model.timeout_s {
        options.request_timeout = Duration::from_secs(t);
    }
    if let Some(r) = config.model.retries {
        options.retries = r;
    }
    // A llama.cpp server is sent the grammar the embedded engine decodes under
    // (OpenAiClient's docs say why); llama.cpp's converter comes with the engine.
    #[cfg(feature = "embedded")]
    {
        options.grammar =
            Some(|schema| seam_engine::schema_grammar(schema).map_err(|e| e.to_string()));
    }
    Ok(Box::new(OpenAiClient::new(endpoint, options)?))
}

/// The embedded model, loaded behind the walls, with its prompt cache in `agent/kv` of seam's
/// home (made before the walls went up, and inside them): a turn's first step reads the
/// system prompt's state from there instead of decoding it. A missing, damaged or unwritable
/// cache never fails a turn: the engine decodes the prompt and the step's notes say why.
#[cfg(feature = "embedded")]
fn embedded_model(
    name: &str,
    path: &std::path::Path,
    home: &std::path::Path,
    turn: &TurnOptions,
) -> anyhow::Result<Box<dyn ChatModel>> {
    // The catalog's SHA-256 pin names the model's file (its name alone could be pulled again
    // as another file); `seam ask` runs only catalog models.
    let prompt_cache = seam_engine::catalog::find(name).map(|m| {
        seam_engine::PromptCache::new(
            seam_confine::prompt_cache_dir(home),
            format!("{name}@{}", m.sha256),
        )
    });
    if prompt_cache.is_none() {
        output::notice(&format!(
            "{name} is not in the catalog: its system prompt is decoded every turn (no prompt cache)"
        ));
    }
    // 8192 tokens: the turn's conversation is held to 16 KiB (TurnOptions::
    // history_bytes), about 5500 tokens of code and prose, plus a reply of
    // 1024; the engine's default of 4096 was outgrown by a builder turn.
    // The engine decodes as the turn asks a model server to (each request's temperature), so
    // both backends answer alike: TurnOptions::engine_temperature, tested in seam-agent.
    let options = seam_engine::EngineOptions {
        ctx_len: 8192,
        prompt_cache,
        temperature: turn.engine_temperature(),
        ..seam_engine::EngineOptions::default()
    };
    let model = seam_agent::embedded::EmbeddedModel::load(
        name,
        path,
        options,
        Box::new(|sentence: &str| output::notice(sentence)),
    )?;
    output::notice(&format!(
        "loaded {name} ({}) in {} ms",
        path.display(),
        model.load_ms
    ));
    if let Some(m) = seam_engine::catalog::find(name)
        && m.provenance.is_anonymous()
    {
        output::notice(&m.provenance_sentence());
    }
    Ok(Box::new(model))
}

#[cfg(not(feature = "embedded"))]
fn embedded_model(
    name: &str,
    _path: &std::path::Path,
    _home: &std::path::Path,
    _turn: &TurnOptions,
) -> anyhow::Result<Box<dyn ChatModel>> {
    Err(UsageError(format!(
        "cannot run {name}: this seam was built without the embedded model (feature `embedded`)"
    ))
    .into())
}

fn absolute(p: Option<&std::path::Path>) -> anyhow::Result<Option<PathBuf>> {
    p.map(|p| std::path::absolute(p).with_context(|| format!("resolving {}", p.display())))
        .transpose()
}

/// What the agent's process needs before its walls go up.
pub(crate) struct Prepare<'a> {
    pub home: &'a std::path::Path,
    pub gate_url: Option<&'a str>,
    pub repo: Option<PathBuf>,
    pub attach: &'a [PathBuf],
    /// The operator's task: registered with the gate as the operator's words for the turn.
    pub task: &'a str,
    pub model_url: Option<&'a str>,
    /// The embedded model's file (read-only behind the walls).
    pub model_file: Option<&'a std::path::Path>,
    pub confine: ConfineMode,
    /// How long the gate started here waits for the operator's consent.
    pub consent_timeout: u64,
}

/// The gate found or started, the turn opened, the attachments read through the gate, the
/// local tools opened, the walls up.
pub(crate) struct Prepared {
    pub endpoint: GateEndpoint,
    pub child: Option<GateChild>,
    pub local: Arc<seam_local::LocalTools>,
    pub confinement: Confinement,
    /// The turn, opened by `seam __open-turn` before the walls (the agent holds its token,
    /// never the opener).
    pub turn: seam_protocol::wire::TurnOpened,
    pub attachments: Vec<seam_local::Attachment>,
}

/// Finds or starts the gate (on a runtime of the calling thread alone, dropped before the
/// walls), opens the local tools (they find the repository with git), then strips the
/// environment and confines the process. `seam ask` and the attack test share it, so the test
/// attacks exactly the walls the agent runs behind.
pub(crate) fn prepare(ctx: &Context, global: &Global, p: &Prepare<'_>) -> anyhow::Result<Prepared> {
    let home = p.home.to_path_buf();
    let single = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime that finds the gate")?;
    let (endpoint, child) = single.block_on(async {
        let mut child = None;
        let endpoint = match p.gate_url {
            Some(url) => GateEndpoint::from_url(url, &home).map_err(|e| match e {
                GateClientError::BadUrl { .. } => UsageError(e.to_string()).into(),
                other => anyhow::Error::from(other),
            })?,
            None => {
                let endpoint = GateEndpoint::unix_in(&home);
                if GateClient::new(endpoint.clone()).health().await.is_err() {
                    let policy = absolute(global.policy.as_deref())?;
                    let config_file = absolute(global.config.as_deref())?;
                    let launch = GateLaunch {
                        seam_home: &home,
                        policy: policy.as_deref(),
                        config: config_file.as_deref(),
                        consent_timeout_secs: p.consent_timeout,
                    };
                    child = Some(GateChild::start(&launch, Duration::from_secs(20)).await?);
                    output::notice(
                        "started a gate for this turn (its log: gate.log in seam's home)",
                    );
                }
                endpoint
            }
        };
        Ok::<_, anyhow::Error>((endpoint, child))
    })?;
    // The turn, opened by a child holding the opener, with the operator's words for it (the
    // task, the attached files' text, read through the gate in the turn).
    let (turn, attachments) = open_turn::open_outside(&home, p.gate_url, p.task, p.attach)?;
    drop(single);
    let local = Arc::new(
        seam_local::LocalTools::open(seam_local::LocalConfig {
            repo: p.repo.clone(),
            self_modify: ctx.policy.decision(seam_policy::Capability::SelfModify),
            ..seam_local::LocalConfig::new(home.clone())
        })
        .context("opening the local tools")?,
    );
    let confinement = confine::confine(
        p.confine,
        &confine::ConfineInputs {
            seam_home: &home,
            repo_objects: &local.repository_objects(),
            model_url: p.model_url,
            model_file: p.model_file,
            gate_tcp: endpoint.tcp_authority(),
        },
    )?;
    Ok(Prepared {
        endpoint,
        child,
        local,
        confinement,
        turn,
        attachments,
    })
}

/// Each attached file, read by the gate in the turn (`files.read`: path admission, so a
/// protected or unlisted file is refused naming the real file, and the read taints the
/// turn). The agent gets the text, never a handle on the file.
pub(crate) async fn read_attachments(
    endpoint: &GateEndpoint,
    turn: &seam_protocol::wire::TurnOpened,
    attach: &[PathBuf],
) -> anyhow::Result<Vec<seam_local::Attachment>> {
    let mut out = Vec::new();
    if attach.is_empty() {
        return Ok(out);
    }
    let mut client = GateClient::new(endpoint.clone());
    for f in attach {
        let path = std::path::absolute(f).with_context(|| format!("resolving {}", f.display()))?;
        let invoked = client
            .invoke(
                "files.read",
                serde_json::json!({"path": path.to_string_lossy()}),
                Some(turn),
            )
            .await
            .with_context(|| {
                format!("reading the attached file {} through the gate", f.display())
            })?;
        match invoked.answer {
            seam_protocol::Answer::Envelope(e) => {
                let o = &e.output;
                out.push(seam_local::Attachment {
                    path: f.display().to_string(),
                    text: o["text"].as_str().unwrap_or_default().to_owned(),
                    bytes: o["size"].as_u64().unwrap_or(0),
                    cut: o["truncated"].as_bool().unwrap_or(false),
                });
            }
            seam_protocol::Answer::Refusal(r) => {
                return Err(crate::exit::RefusedError(format!(
                    "the attached file {} is refused ({}): {}",
                    f.display(),
                    r.refused.code.as_str(),
                    r.refused.message
                ))
                .into());
            }
        }
    }
    Ok(out)
}
