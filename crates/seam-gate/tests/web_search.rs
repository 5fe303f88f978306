//! web.search through `Toolbox::call`, against a loopback server that speaks SearXNG's and
//! Brave's JSON: parsing, scrubbing (by shape and by the keeper's values), the egress
//! allowlist on redirects, backend errors, timeouts, body caps, and taint.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use seam_gate::config::{WebBackend, WebSearchBackend};
use seam_gate::tools::{FilesRead, WebSearch};
use seam_gate::{CallRequest, GateConfig, GovernedTool, LedgerHook, Toolbox, WebSearchSetup};
use seam_keeper::{Keeper, SecretValue};
use seam_policy::{Policy, PolicyEnv};
use seam_protocol::{Answer, RefusalCode};
use seam_scrub::Scrubber;
use seam_test_support::answer::{output, refusal, refused_at_timeout};
use seam_test_support::home::OwnerTree;
use seam_test_support::http::{Reply, Server};
use serde_json::{Value, json};

const GITHUB_TOKEN: &str = "ghp_R8b2Xq4TzK9mLp3Vw7Ys1Nc6Hd5Fj0Ga2Ue4";
const BRAVE_KEY: &str = "BSAq8Xz7Lm2Np4Rt6Vw9Yb1Cd3Fg5Hj";

struct Fixture {
    /// The owner's home, seam home and workspace.
    tree: OwnerTree,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            tree: OwnerTree::new(),
        }
    }

    fn policy(&self, extra: &str) -> Arc<Policy> {
        let env = PolicyEnv {
            owner_home: self.tree.home.clone(),
            seam_home: self.tree.seam_home.clone(),
            workspace_root: self.tree.workspace.clone(),
        };
        let text = format!("[capabilities]\n\"web.search\" = \"allow\"\n{extra}");
        Arc::new(Policy::from_toml_str(&text, Path::new("test-policy.toml"), env).unwrap())
    }

    /// A toolbox with web.search (as configured by `config`, keys from this seam home's
    /// keeper) and files.read, a scrubber holding the keeper's values, and the signed ledger.
    fn toolbox(&self, config: &str, policy_extra: &str) -> Toolbox {
        let config = GateConfig::from_toml_str(config, Path::new("config.toml")).unwrap();
        let keeper = Keeper::open(&self.tree.seam_home).unwrap();
        let setup = config.web_search_setup(&keeper);
        self.toolbox_with(setup, policy_extra)
    }

    fn toolbox_with(&self, setup: WebSearchSetup, policy_extra: &str) -> Toolbox {
        let keeper = Keeper::open(&self.tree.seam_home).unwrap();
        let scrubber = Arc::new(Scrubber::with_known_values(keeper.values().cloned()).unwrap());
        let ledger: Arc<dyn LedgerHook> =
            Arc::new(seam_ledger::Ledger::open(&self.tree.seam_home).unwrap());
        let tools: Vec<Box<dyn GovernedTool>> = vec![
            Box::new(WebSearch::new(setup)),
            Box::new(FilesRead::new(1 << 20)),
        ];
        Toolbox::with_tools(self.policy(policy_extra), scrubber, ledger, tools).unwrap()
    }

    fn set_secret(&self, name: &str, value: &str) {
        let mut keeper = Keeper::open(&self.tree.seam_home).unwrap();
        keeper.set(name, SecretValue::new(value)).unwrap();
    }

    /// Every byte of the ledger's files, for "never recorded" checks.
    fn ledger_bytes(&self) -> Vec<u8> {
        let mut all = Vec::new();
        for entry in walk(&seam_home::SeamHome::new(&self.tree.seam_home).ledger()) {
            // A file the ledger removed meanwhile (a journal) held nothing to find.
            match std::fs::read(&entry) {
                Ok(bytes) => all.extend(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => panic!("{}: {e}", entry.display()),
            }
        }
        all
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn searxng_config(server: &Server, extra: &str) -> String {
    format!(
        "[web]\nbackend = \"searxng\"\nurl = \"{}\"\n{extra}",
        server.url("")
    )
}

fn brave_config(server: &Server, extra: &str) -> String {
    format!(
        "[web]\nbackend = \"brave\"\napi_key = \"keeper:brave\"\nurl = \"{}\"\n{extra}",
        server.url("/res/v1/web/search")
    )
}

fn search(tb: &Toolbox, params: Value, turn: Option<&str>) -> Answer {
    tb.call(CallRequest {
        tool: "web.search".into(),
        params,
        turn: turn.map(str::to_owned),
    })
    .unwrap()
}

fn searxng_body(results: &[(&str, &str, &str)]) -> Value {
    json!({
        "query": "q",
        "number_of_results": results.len(),
        "results": results.iter().map(|(title, url, content)| json!({
            "url": url, "title": title, "content": content,
            "engine": "duckduckgo", "parsed_url": ["https", "x", "/", "", "", ""],
            "template": "default.html", "engines": ["duckduckgo"], "positions": [1], "score": 1.0,
            "category": "general"
        })).collect::<Vec<_>>(),
        "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
        "unresponsive_engines": []
    })
}

fn brave_body(results: &[(&str, &str, &str)]) -> Value {
    json!({
        "type": "search",
        "query": {"original": "q", "show_strict_warning": false, "is_navigational": false,
                  "more_results_available": true},
        "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
        "web": {
            "type": "search",
            "results": results.iter().map(|(title, url, description)| json!({
                "title": title, "url": url, "description": description,
                "is_source_local": false, "is_source_both": false, "language": "en",
                "family_friendly": true, "type": "search_result", "subtype": "generic",
                "meta_url": {"scheme": "https", "netloc": "x", "hostname": "x", "path": "/"}
            })).collect::<Vec<_>>(),
            "family_friendly": true
        }
    })
}

#[test]
fn searxng_results_are_parsed_cleaned_and_cut_to_the_limit() {
    let fx = Fixture::new();
    let server = Server::start(|_| {
        Reply::json(
            200,
            &searxng_body(&[
                (
                    "The <b>Rust</b> Book",
                    "https://doc.rust-lang.org/book/",
                    "Learn &amp; <em>build</em>\n  reliable software",
                ),
                (
                    "Cargo",
                    "https://doc.rust-lang.org/cargo/",
                    "The package manager",
                ),
                ("Bad", "javascript:alert(1)", "dropped: not a web URL"),
                ("Blog", "https://blog.example.org/", "A blog"),
            ]),
        )
    });
    let tb = fx.toolbox(&searxng_config(&server, ""), "");
    let a = search(&tb, json!({"query": "rust book", "limit": 2}), None);
    let out = output(&a);
    assert_eq!(out["backend"], "searxng");
    assert_eq!(
        out["results"],
        json!([
            {"title": "The Rust Book", "url": "https://doc.rust-lang.org/book/",
             "snippet": "Learn & build reliable software"},
            {"title": "Cargo", "url": "https://doc.rust-lang.org/cargo/",
             "snippet": "The package manager"}
        ])
    );
    assert!(out["cut"].as_str().unwrap().contains("3 results"), "{out}");
    let Answer::Envelope(env) = &a else {
        unreachable!()
    };
    assert!(env.tainted, "web results taint the turn");

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "GET");
    assert!(seen[0].target.starts_with("/search?"), "{}", seen[0].target);
    assert_eq!(seen[0].param("q").as_deref(), Some("rust book"));
    assert_eq!(seen[0].param("format").as_deref(), Some("json"));

    // Under the limit: no cut.
    let a = search(&tb, json!({"query": "rust"}), None);
    assert!(output(&a).get("cut").is_none());
    assert_eq!(output(&a)["results"].as_array().unwrap().len(), 3);
}

#[test]
fn brave_results_are_parsed_and_the_key_is_injected_at_egress_only() {
    let fx = Fixture::new();
    fx.set_secret("brave", BRAVE_KEY);
    let server = Server::start(|_| {
        Reply::json(
            200,
            &brave_body(&[(
                "Brave <strong>Search</strong>",
                "https://search.brave.com/",
                "A <strong>private</strong> search engine",
            )]),
        )
    });
    let tb = fx.toolbox(&brave_config(&server, ""), "");
    let a = search(
        &tb,
        json!({"query": "private search", "limit": 7}),
        Some("t"),
    );
    let out = output(&a);
    assert_eq!(out["backend"], "brave");
    assert_eq!(
        out["results"],
        json!([{"title": "Brave Search", "url": "https://search.brave.com/",
                "snippet": "A private search engine"}])
    );
    let seen = &server.seen()[0];
    assert_eq!(seen.target.split('?').next(), Some("/res/v1/web/search"));
    assert_eq!(seen.header("X-Subscription-Token"), Some(BRAVE_KEY));
    assert_eq!(seen.header("Accept"), Some("application/json"));
    assert_eq!(seen.param("q").as_deref(), Some("private search"));
    assert_eq!(seen.param("count").as_deref(), Some("7"));
    assert!(
        !seen.target.contains(BRAVE_KEY),
        "the key is never in the URL"
    );
    let answer_text = serde_json::to_string(&a).unwrap();
    assert!(!answer_text.contains(BRAVE_KEY));
    let ledger = fx.ledger_bytes();
    assert!(!ledger.is_empty());
    assert!(
        !contains(&ledger, BRAVE_KEY),
        "the key is never in the ledger"
    );
}

#[test]
fn a_key_in_a_snippet_is_redacted_by_shape() {
    let fx = Fixture::new();
    let server = Server::start(|_| {
        Reply::json(
            200,
            &searxng_body(&[(
                "Leaked config",
                "https://paste.example/abc",
                &format!("export GITHUB_TOKEN={GITHUB_TOKEN} # do not share"),
            )]),
        )
    });
    let tb = fx.toolbox(&searxng_config(&server, ""), "");
    let a = search(&tb, json!({"query": "config"}), None);
    let Answer::Envelope(env) = &a else {
        panic!("{a:?}")
    };
    let snippet = env.output["results"][0]["snippet"].as_str().unwrap();
    assert!(!snippet.contains(GITHUB_TOKEN), "{snippet}");
    assert!(snippet.contains("[REDACTED:"), "{snippet}");
    assert!(snippet.ends_with("# do not share"), "{snippet}");
    assert!(!env.scrubbed.is_empty());
    assert!(!contains(&fx.ledger_bytes(), GITHUB_TOKEN));
}

#[test]
fn the_keepers_value_echoed_by_the_backend_is_redacted_by_identity() {
    let fx = Fixture::new();
    fx.set_secret("brave", BRAVE_KEY);
    let server = Server::start(|req| {
        // A hostile or broken backend echoes the token it was sent.
        let token = req.header("X-Subscription-Token").unwrap_or("").to_owned();
        if req.param("q").as_deref() == Some("fail") {
            return Reply::json(
                401,
                &json!({"type": "ErrorResponse", "error": {"id": "x", "status": 401,
                    "code": "SUBSCRIPTION_TOKEN_INVALID",
                    "detail": format!("The provided subscription token {token} is invalid.")}}),
            );
        }
        Reply::json(
            200,
            &brave_body(&[(
                &format!("echo {token}"),
                "https://echo.example/",
                &format!("you sent {token} in a header"),
            )]),
        )
    });
    let tb = fx.toolbox(&brave_config(&server, ""), "");
    let a = search(&tb, json!({"query": "echo"}), None);
    let Answer::Envelope(env) = &a else {
        panic!("{a:?}")
    };
    let r = &env.output["results"][0];
    assert_eq!(r["title"], "echo [REDACTED:known-value]");
    assert_eq!(r["snippet"], "you sent [REDACTED:known-value] in a header");
    assert!(
        env.scrubbed.contains(&"known-value".to_owned()),
        "{:?}",
        env.scrubbed
    );

    // In a refusal's text too (the backend's error message is quoted).
    let (code, msg) = refusal(&search(&tb, json!({"query": "fail"}), None));
    assert_eq!(code, RefusalCode::ToolFailed);
    assert!(msg.contains("HTTP 401"), "{msg}");
    assert!(msg.contains("SUBSCRIPTION_TOKEN_INVALID"), "{msg}");
    assert!(msg.contains("[REDACTED:known-value]"), "{msg}");
    assert!(!msg.contains(BRAVE_KEY), "{msg}");
    assert!(!contains(&fx.ledger_bytes(), BRAVE_KEY));
}

#[test]
fn a_redirect_to_a_host_off_the_allowlist_is_refused_and_never_reached() {
    let fx = Fixture::new();
    let elsewhere = Server::start(|_| Reply::json(200, &searxng_body(&[])));
    let other_port = elsewhere.addr.port();
    let server = Server::start(move |req| {
        match req.param("q").as_deref() {
            // Another host name for the same machine: not the configured host.
            Some("to-localhost") => Reply::redirect(&format!(
                "http://localhost:{other_port}/search?q=x&format=json"
            )),
            // The same host on another port: another origin.
            Some("to-port") => Reply::redirect(&format!(
                "http://127.0.0.1:{other_port}/search?q=x&format=json"
            )),
            // Same origin: followed.
            Some("same") => Reply::redirect("/search?q=moved&format=json"),
            _ => Reply::json(
                200,
                &searxng_body(&[("Moved", "https://moved.example/", "followed")]),
            ),
        }
    });
    let tb = fx.toolbox(&searxng_config(&server, ""), "");
    for q in ["to-localhost", "to-port"] {
        let (code, msg) = refusal(&search(&tb, json!({"query": q}), None));
        assert_eq!(code, RefusalCode::ToolFailed);
        assert!(msg.contains("redirected"), "{msg}");
        assert!(msg.contains("refused"), "{msg}");
        assert!(msg.contains("not on the gate's egress allowlist"), "{msg}");
        assert!(msg.contains(&other_port.to_string()), "{msg}");
    }
    assert!(
        elsewhere.seen().is_empty(),
        "the other origin was contacted: {:?}",
        elsewhere.seen()
    );
    let a = search(&tb, json!({"query": "same"}), None);
    assert_eq!(output(&a)["results"][0]["snippet"], "followed");
}

#[test]
fn backend_errors_are_clear_refusals() {
    let fx = Fixture::new();
    let server = Server::start(|req| match req.param("q").as_deref() {
        Some("500") => Reply::text(
            500,
            "<html><body><h1>Internal Server Error</h1><p>engine crashed</p></body></html>",
        ),
        Some("403") => Reply::text(403, "<html><h1>403 Forbidden</h1></html>"),
        Some("429") => Reply::text(429, "Too Many Requests"),
        Some("notjson") => Reply::text(200, "<html>a login page</html>"),
        _ => Reply::json(200, &json!({"unexpected": true})),
    });
    let tb = fx.toolbox(&searxng_config(&server, ""), "");
    let (code, msg) = refusal(&search(&tb, json!({"query": "500"}), None));
    assert_eq!(code, RefusalCode::ToolFailed);
    assert!(
        msg.contains(
            "answered HTTP 500 Internal Server Error: Internal Server Error engine crashed"
        ),
        "{msg}"
    );
    let (_, msg) = refusal(&search(&tb, json!({"query": "403"}), None));
    assert!(msg.contains("HTTP 403"), "{msg}");
    assert!(msg.contains("search.formats"), "{msg}");
    let (_, msg) = refusal(&search(&tb, json!({"query": "429"}), None));
    assert!(msg.contains("rate limited"), "{msg}");
    let (_, msg) = refusal(&search(&tb, json!({"query": "notjson"}), None));
    assert!(msg.contains("not JSON"), "{msg}");
    let (_, msg) = refusal(&search(&tb, json!({"query": "shape"}), None));
    assert!(msg.contains("no \"results\" field"), "{msg}");
}

#[test]
fn a_backend_that_cannot_be_reached_is_a_clear_refusal() {
    let fx = Fixture::new();
    // A port nothing listens on.
    let port = seam_test_support::http::unused_port();
    let tb = fx.toolbox(
        &format!("[web]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:{port}\"\n"),
        "",
    );
    let (code, msg) = refusal(&search(&tb, json!({"query": "x"}), None));
    assert_eq!(code, RefusalCode::ToolFailed);
    assert!(
        msg.contains("cannot connect to the searxng backend at 127.0.0.1"),
        "{msg}"
    );
}

#[test]
fn a_slow_backend_is_refused_at_the_timeout() {
    let fx = Fixture::new();
    let server = Server::start(|req| match req.param("q").as_deref() {
        Some("slow-head") => Reply::After(
            Duration::from_secs(5),
            Box::new(Reply::json(200, &searxng_body(&[]))),
        ),
        _ => Reply::Trickle {
            body: searxng_body(&[("t", "https://x.example/", "s")])
                .to_string()
                .into_bytes(),
            gap: Duration::from_millis(50),
        },
    });
    let tb = fx.toolbox(&searxng_config(&server, "timeout_s = 0.5\n"), "");
    refused_at_timeout(
        &["slow-head", "slow-body"],
        "within 0.5 s",
        Duration::from_secs(3),
        |q| search(&tb, json!({"query": q}), None),
    );
}

#[test]
fn an_oversized_body_is_refused_not_cut() {
    let fx = Fixture::new();
    let server = Server::start(|req| match req.param("q").as_deref() {
        // Announced: Content-Length above the cap.
        Some("announced") => Reply::Full {
            status: 200,
            headers: vec![],
            body: vec![b' '; 3 * 1024 * 1024],
        },
        // Not announced: streamed until the client stops reading.
        _ => Reply::Stream {
            len: 3 * 1024 * 1024,
        },
    });
    let tb = fx.toolbox(&searxng_config(&server, ""), "");
    for q in ["announced", "streamed"] {
        let (code, msg) = refusal(&search(&tb, json!({"query": q}), None));
        assert_eq!(code, RefusalCode::ToolFailed);
        assert!(msg.contains("2097152 byte limit: refused"), "{q}: {msg}");
    }
}

#[test]
fn a_search_after_a_file_read_in_the_same_turn_is_refused_and_served_in_a_fresh_one() {
    let fx = Fixture::new();
    std::fs::write(fx.tree.workspace.join("notes.md"), "private notes\n").unwrap();
    let server =
        Server::start(|_| Reply::json(200, &searxng_body(&[("r", "https://r.example/", "s")])));
    let tb = fx.toolbox(&searxng_config(&server, ""), "");
    let read = tb
        .call(CallRequest {
            tool: "files.read".into(),
            params: json!({"path": "notes.md"}),
            turn: Some("turn-1".into()),
        })
        .unwrap();
    assert!(matches!(&read, Answer::Envelope(e) if e.tainted));
    assert!(tb.is_tainted("turn-1"));

    let (code, msg) = refusal(&search(&tb, json!({"query": "exfiltrate"}), Some("turn-1")));
    assert_eq!(code, RefusalCode::Tainted);
    assert!(msg.contains("turn-1"), "{msg}");
    assert!(msg.contains("[taint] egress"), "{msg}");
    assert!(server.seen().is_empty(), "a refused search sent nothing");

    let a = search(&tb, json!({"query": "fresh"}), Some("turn-2"));
    assert_eq!(output(&a)["results"][0]["url"], "https://r.example/");
    assert_eq!(server.seen().len(), 1);
    // The search's own results taint turn-2: a second search in it is refused too.
    let (code, _) = refusal(&search(&tb, json!({"query": "again"}), Some("turn-2")));
    assert_eq!(code, RefusalCode::Tainted);
}

#[test]
fn with_taint_egress_allow_a_tainted_turn_is_served() {
    let fx = Fixture::new();
    std::fs::write(fx.tree.workspace.join("notes.md"), "private notes\n").unwrap();
    let server =
        Server::start(|_| Reply::json(200, &searxng_body(&[("r", "https://r.example/", "s")])));
    let tb = fx.toolbox(
        &searxng_config(&server, ""),
        "[taint]\negress = \"allow\"\n",
    );
    tb.call(CallRequest {
        tool: "files.read".into(),
        params: json!({"path": "notes.md"}),
        turn: Some("t".into()),
    })
    .unwrap();
    assert!(tb.is_tainted("t"));
    let a = search(&tb, json!({"query": "q"}), Some("t"));
    let Answer::Envelope(env) = &a else {
        panic!("{a:?}")
    };
    assert!(env.tainted);
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn without_a_backend_the_refusal_says_how_to_configure_one() {
    let fx = Fixture::new();
    let tb = fx.toolbox_with(WebSearchSetup::Unconfigured, "");
    let (code, msg) = refusal(&search(&tb, json!({"query": "x"}), None));
    assert_eq!(code, RefusalCode::ToolFailed);
    assert!(msg.contains("[web] backend = \"searxng\""), "{msg}");
    assert!(msg.contains("seam secret set brave"), "{msg}");
    drop(tb); // one ledger writer per seam home

    // Configured with a key the keeper does not hold.
    let tb = fx.toolbox(
        "[web]\nbackend = \"brave\"\napi_key = \"keeper:brave\"\n",
        "",
    );
    let (_, msg) = refusal(&search(&tb, json!({"query": "x"}), None));
    assert!(msg.contains("keeper:brave"), "{msg}");
    assert!(msg.contains("seam secret set brave"), "{msg}");
}

#[test]
fn the_schema_bounds_the_query_and_the_limit() {
    let fx = Fixture::new();
    let setup = WebSearchSetup::Ready(WebSearchBackend {
        backend: WebBackend::Searxng,
        endpoint: url::Url::parse("http://127.0.0.1:9/search").unwrap(),
        api_key: None,
        timeout: Duration::from_secs(1),
        max_results: 5,
        max_body_bytes: 1024,
    });
    let tb = fx.toolbox_with(setup, "");
    for bad in [
        json!({"query": ""}),
        json!({"query": "x", "limit": 6}),
        json!({"query": "x", "limit": 0}),
        json!({"query": "x".repeat(401)}),
        json!({"query": "x", "url": "http://evil.example/"}),
        json!({}),
    ] {
        let (code, _) = refusal(&search(&tb, bad.clone(), None));
        assert_eq!(code, RefusalCode::InvalidParams, "{bad}");
    }
}
