//! Overhead of a governed upstream MCP call against calling the same upstream directly.
//!
//! One run, one upstream process kind: the reference filesystem server reading a small file.
//! `direct` is an rmcp client calling `read_text_file` on its own server process;
//! `governed` is `Toolbox::call("fs.read_text_file")` on the gate's server process: schema,
//! policy, path admission (the file is opened and checked), the config's decision, the hop
//! to the upstream runtime, scrub, taint, envelope, digest. Their difference is the gate's
//! cost. The ledger is measured on its own (seam-ledger's bench); here it is NoLedger.
//! Needs `mcp-server-filesystem` on PATH (npm install -g @modelcontextprotocol/server-filesystem).

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use seam_gate::{CallRequest, GateConfig, GovernedTool, NoLedger, Toolbox, ToolboxConfig};
use seam_policy::{Policy, PolicyEnv};
use serde_json::json;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let seam = root.join("seam");
    std::fs::create_dir_all(home.join("notes")).unwrap();
    std::fs::create_dir_all(&seam).unwrap();
    let body: String = (0..20)
        .map(|i| format!("line {i}: nothing secret here\n"))
        .collect();
    let file = home.join("notes/small.txt");
    std::fs::write(&file, &body).unwrap();

    // Governed: the gate starts its own server process.
    let cfg = GateConfig::from_toml_str(
        &format!(
            "[[mcp.upstream]]\nname = \"fs\"\ncommand = \"mcp-server-filesystem\"\n\
             args = [{:?}]\negress = false\n\
             [mcp.upstream.tools.read_text_file]\npaths = {{ path = \"read\" }}\n",
            home.display().to_string()
        ),
        Path::new("config.toml"),
    )
    .unwrap();
    let keeper = seam_keeper::Keeper::open(&seam).unwrap();
    let mut up = seam_gate::mcp::start_upstreams(&cfg.mcp, &seam, &keeper);
    assert!(
        up.reports[0].started.is_ok(),
        "{:?} (npm install -g @modelcontextprotocol/server-filesystem)",
        up.reports[0].started
    );
    let env = PolicyEnv {
        owner_home: home.clone(),
        seam_home: seam.clone(),
        workspace_root: root.join("ws"),
    };
    let policy = Arc::new(Policy::builtin(env));
    let mut tools: Vec<Box<dyn GovernedTool>> =
        seam_gate::tools::builtin(&ToolboxConfig::default(), &policy);
    tools.append(&mut up.tools);
    let tb = Toolbox::with_tools(
        policy,
        Arc::new(seam_scrub::Scrubber::new()),
        Arc::new(NoLedger),
        tools,
    )
    .unwrap();

    // Direct: our own client and server process.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client = rt.block_on(async {
        let mut cmd = tokio::process::Command::new("mcp-server-filesystem");
        cmd.arg(&home)
            .kill_on_drop(true)
            .stderr(std::process::Stdio::null());
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        ().serve(transport).await.unwrap()
    });
    let real = file.display().to_string();

    let mut g = c.benchmark_group("upstream read_text_file, small file");
    g.bench_function("direct", |b| {
        b.iter(|| {
            let mut args = serde_json::Map::new();
            args.insert("path".into(), json!(real));
            let params = CallToolRequestParams::new("read_text_file").with_arguments(args);
            let r = rt.block_on(client.call_tool(params)).unwrap();
            black_box(r);
        })
    });
    g.bench_function("governed", |b| {
        b.iter(|| {
            let a = tb
                .call(CallRequest {
                    tool: "fs.read_text_file".into(),
                    params: json!({"path": "~/notes/small.txt"}),
                    turn: None,
                })
                .unwrap();
            assert!(matches!(a, seam_protocol::Answer::Envelope(_)));
            black_box(a);
        })
    });
    g.finish();
    drop(tb);
    rt.block_on(async move {
        let _ = client.cancel().await;
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
