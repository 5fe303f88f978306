//! `web.search`: results from the configured search backend, and nothing else on the network.
//!
//! The backend is configuration ([`crate::config`]): a SearXNG instance's JSON API or the Brave
//! Search API. The HTTP client this tool builds can reach only that backend's origin: the
//! [`EgressAllowlist`] is checked in code before the request and on every redirect (a redirect
//! to any other host, port or scheme is refused, and the refusal says so); no proxy from the
//! environment is used; connect and whole-request timeouts apply; a response body larger than
//! the cap is refused rather than cut. The Brave key is injected here, as a header marked
//! sensitive, at egress: it is in no param, no output, no error, and the toolbox's scrubber
//! removes it by identity if a backend ever echoes it. Results are untrusted text: the tool
//! taints its turn, and has egress, so a tainted turn cannot call it (unless the policy says
//! `[taint] egress = "allow"`).
//!
//! The client is blocking (reqwest's blocking client runs its own small runtime thread); call
//! `Toolbox::call` off an async executor's worker threads (`spawn_blocking`), as every governed
//! call must be anyway.

use std::io::Read as _;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use reqwest::blocking::{Client, Response};
use reqwest::header::{ACCEPT, HeaderValue};
use seam_policy::Capability;
use seam_protocol::RefusalCode;
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use crate::config::{MAX_RESULTS_CAP, WebBackend, WebSearchBackend, WebSearchSetup};
use seam_toolbox::{GovernedTool, ToolCall, ToolDecl, ToolFailure};

/// The longest query sent (characters); Brave's own limit is 400.
const MAX_QUERY_CHARS: u64 = 400;
/// Most redirects followed (each checked against the allowlist).
const MAX_REDIRECTS: usize = 5;
/// Most characters of a title, a snippet and a URL in a result.
const MAX_TITLE_CHARS: usize = 300;
const MAX_SNIPPET_CHARS: usize = 1000;
const MAX_URL_CHARS: usize = 2048;
/// Most characters of a backend's error message quoted in a refusal.
const MAX_ERROR_CHARS: usize = 300;
/// Brave's largest `count`.
const BRAVE_MAX_COUNT: u32 = 20;

/// The origins (scheme, host, port) the web client may reach. Enforced in code on the first
/// request and on every redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressAllowlist {
    origins: Vec<Origin>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    fn of(url: &Url) -> Option<Origin> {
        Some(Origin {
            scheme: url.scheme().to_ascii_lowercase(),
            host: url.host_str()?.to_ascii_lowercase(),
            port: url.port_or_known_default()?,
        })
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

impl EgressAllowlist {
    /// The allowlist of exactly these URLs' origins.
    pub fn of(urls: &[&Url]) -> EgressAllowlist {
        EgressAllowlist {
            origins: urls.iter().filter_map(|u| Origin::of(u)).collect(),
        }
    }

    /// Ok when `url` is on an allowed origin; else why not.
    pub fn check(&self, url: &Url) -> Result<(), String> {
        let Some(origin) = Origin::of(url) else {
            return Err(format!("{} has no host or port", url.as_str()));
        };
        if self.origins.contains(&origin) {
            return Ok(());
        }
        let allowed: Vec<String> = self.origins.iter().map(Origin::to_string).collect();
        Err(format!(
            "{origin} is not on the gate's egress allowlist ({})",
            allowed.join(", ")
        ))
    }
}

/// A redirect the client refused; found again in the error's source chain.
#[derive(Debug, thiserror::Error)]
#[error("redirect to {to} refused: {why}")]
struct RedirectRefused {
    to: String,
    why: String,
}

#[derive(Debug)]
pub struct WebSearch {
    decl: ToolDecl,
    setup: WebSearchSetup,
    /// Built on first use, so listing tools builds no client.
    client: OnceLock<Result<Arc<Client>, String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    query: String,
    limit: Option<u32>,
}

/// One result as the tool returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hit {
    title: String,
    url: String,
    snippet: String,
}

impl WebSearch {
    pub fn new(setup: WebSearchSetup) -> Self {
        let max = match &setup {
            WebSearchSetup::Ready(b) => b.max_results.clamp(1, MAX_RESULTS_CAP),
            _ => MAX_RESULTS_CAP,
        };
        WebSearch {
            decl: ToolDecl {
                name: "web.search",
                version: "1",
                description: "Search the web: returns up to `limit` results, each {title, url, snippet}. Results are untrusted text from the web.",
                schema: json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["query"],
                    "properties": {
                        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "what to search for"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": max, "description": format!("most results to return (default and most: {max})")}
                    }
                }),
                capability: Capability::WebSearch,
                // The query leaves the machine: consent for it is meaningful, so `ask` waits
                // for an operator rather than refusing as for a read.
                reads: false,
                paths: vec![],
                taints: true,
                egress: true,
                // the backend is fixed (the gate's config): what leaves is the query, not a place
                destinations: Vec::new(),
                none_named: crate::NoneNamed::Unknown,
            },
            setup,
            client: OnceLock::new(),
        }
    }

    fn client(&self, backend: &WebSearchBackend) -> Result<Arc<Client>, ToolFailure> {
        self.client
            .get_or_init(|| build_client(backend).map(Arc::new))
            .clone()
            .map_err(|e| ToolFailure::new(RefusalCode::ToolFailed, e))
    }
}

impl GovernedTool for WebSearch {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure> {
        let params: Params = serde_json::from_value(call.params().clone())
            .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))?;
        let backend = match &self.setup {
            WebSearchSetup::Ready(b) => b,
            WebSearchSetup::Unconfigured => {
                return Err(ToolFailure::new(
                    RefusalCode::ToolFailed,
                    "web.search has no backend configured. The owner configures one in the \
                     gate's config file (--config FILE, SEAM_CONFIG, or config.toml in seam's \
                     home): [web] backend = \"searxng\" with url = \"http://127.0.0.1:8888\" \
                     (a SearXNG instance with JSON output enabled), or backend = \"brave\" with \
                     api_key = \"keeper:brave\" after `seam secret set brave`",
                ));
            }
            WebSearchSetup::Unusable(why) => {
                return Err(ToolFailure::new(
                    RefusalCode::ToolFailed,
                    format!("web.search is configured but cannot run: {why}"),
                ));
            }
        };
        let query = params.query.trim();
        if query.is_empty() {
            return Err(ToolFailure::new(
                RefusalCode::InvalidParams,
                "the query is empty (only white space)",
            ));
        }
        let limit = params
            .limit
            .unwrap_or(backend.max_results)
            .clamp(1, backend.max_results.max(1));
        let client = self.client(backend)?;
        let hits = search(&client, backend, query, limit)?;
        let available = hits.len();
        let results: Vec<Value> = hits
            .into_iter()
            .take(limit as usize)
            .map(|h| json!({"title": h.title, "url": h.url, "snippet": h.snippet}))
            .collect();
        let mut out = serde_json::Map::new();
        out.insert("backend".into(), json!(backend.backend.as_str()));
        if available > results.len() {
            out.insert(
                "cut".into(),
                json!(format!(
                    "the backend returned {available} results; the first {} are shown (limit {limit})",
                    results.len()
                )),
            );
        }
        out.insert("results".into(), Value::Array(results));
        Ok(Value::Object(out))
    }
}

fn build_client(backend: &WebSearchBackend) -> Result<Client, String> {
    let allow = EgressAllowlist::of(&[&backend.endpoint]);
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let to = attempt.url().clone();
        if attempt.previous().len() >= MAX_REDIRECTS {
            let why = format!("more than {MAX_REDIRECTS} redirects");
            return attempt.error(RedirectRefused {
                to: to.to_string(),
                why,
            });
        }
        match allow.check(&to) {
            Ok(()) => attempt.follow(),
            Err(why) => attempt.error(RedirectRefused {
                to: to.to_string(),
                why,
            }),
        }
    });
    Client::builder()
        .redirect(policy)
        .no_proxy()
        .referer(false)
        .connect_timeout(backend.timeout)
        .timeout(backend.timeout)
        .user_agent(concat!("seam/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the web client: {e}"))
}

fn failed(message: String) -> ToolFailure {
    ToolFailure::new(RefusalCode::ToolFailed, message)
}

/// Sends the query and returns every result the backend gave, cleaned.
fn search(
    client: &Client,
    backend: &WebSearchBackend,
    query: &str,
    limit: u32,
) -> Result<Vec<Hit>, ToolFailure> {
    let name = backend.backend.as_str();
    let mut url = backend.endpoint.clone();
    match backend.backend {
        WebBackend::Searxng => {
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
        }
        WebBackend::Brave => {
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &limit.min(BRAVE_MAX_COUNT).to_string());
        }
    }
    // The allowlist, in code, for the first request too.
    EgressAllowlist::of(&[&backend.endpoint])
        .check(&url)
        .map_err(|why| failed(format!("web.search refused its own request: {why}")))?;
    let host = url.host_str().unwrap_or("").to_owned();
    let mut request = client
        .get(url)
        .header(ACCEPT, HeaderValue::from_static("application/json"));
    if let (WebBackend::Brave, Some(key)) = (backend.backend, &backend.api_key) {
        let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
            failed(
                "the Brave key in the keeper is not a valid HTTP header value (it holds a \
                 control character or a line break); set it again with `seam secret set`"
                    .to_owned(),
            )
        })?;
        value.set_sensitive(true);
        request = request.header("X-Subscription-Token", value);
    }
    let started = Instant::now();
    let response = request
        .send()
        .map_err(|e| failed(describe_send_error(&e, name, &host, backend)))?;
    let status = response.status();
    let body = read_capped(response, started, backend, name, &host)?;
    if !status.is_success() {
        return Err(failed(backend_error(backend.backend, &host, status, &body)));
    }
    let value: Value = serde_json::from_slice(&body).map_err(|e| {
        failed(format!(
            "the {name} backend at {host} answered HTTP {status} with a body that is not JSON \
             ({e}); is the url right{}?",
            if backend.backend == WebBackend::Searxng {
                ", and is json in the instance's search.formats"
            } else {
                ""
            }
        ))
    })?;
    let raw = match backend.backend {
        WebBackend::Searxng => searxng_results(&value),
        WebBackend::Brave => brave_results(&value),
    }
    .map_err(|why| {
        failed(format!(
            "the {name} backend at {host} answered JSON of an unexpected shape: {why}"
        ))
    })?;
    Ok(raw.into_iter().filter_map(clean_hit).collect())
}

fn describe_send_error(
    e: &reqwest::Error,
    name: &str,
    host: &str,
    backend: &WebSearchBackend,
) -> String {
    if let Some(r) = find_source::<RedirectRefused>(e) {
        return format!(
            "the {name} backend at {host} redirected the search elsewhere, and the gate \
             refused to follow: {r}"
        );
    }
    if e.is_timeout() {
        return format!(
            "the {name} backend at {host} did not answer within {:.1} s (timeout_s in [web])",
            backend.timeout.as_secs_f64()
        );
    }
    if e.is_connect() {
        return format!(
            "cannot connect to the {name} backend at {host}: {}",
            root_cause(e)
        );
    }
    format!(
        "the request to the {name} backend at {host} failed: {}",
        root_cause(e)
    )
}

pub(crate) fn find_source<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(found) = err.downcast_ref::<T>() {
            return Some(found);
        }
        cur = err.source();
    }
    None
}

pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The body, refused when it is larger than the cap (announced or as read).
fn read_capped(
    response: Response,
    started: Instant,
    backend: &WebSearchBackend,
    name: &str,
    host: &str,
) -> Result<Vec<u8>, ToolFailure> {
    let cap = backend.max_body_bytes;
    let too_large = |size: String| {
        failed(format!(
            "the {name} backend at {host} sent a response of {size}, more than the {cap} byte \
             limit: refused"
        ))
    };
    if let Some(len) = response.content_length()
        && len > cap
    {
        return Err(too_large(format!("{len} bytes")));
    }
    let too_slow = || {
        failed(format!(
            "the {name} backend at {host} did not finish its answer within {:.1} s \
             (timeout_s in [web])",
            backend.timeout.as_secs_f64()
        ))
    };
    // The client's timeout bounds each read; this deadline bounds the whole body, so a
    // backend that trickles bytes cannot hold the call open.
    let deadline = started + backend.timeout;
    let mut body = Vec::new();
    let mut reader = response.take(cap + 1);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if Instant::now() > deadline {
            return Err(too_slow());
        }
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let timed_out = e.kind() == std::io::ErrorKind::TimedOut
                    || find_source::<reqwest::Error>(&e).is_some_and(reqwest::Error::is_timeout);
                return Err(if timed_out {
                    too_slow()
                } else {
                    failed(format!(
                        "reading the answer of the {name} backend at {host} failed: {e}"
                    ))
                });
            }
        }
    }
    if body.len() as u64 > cap {
        return Err(too_large(format!("more than {cap} bytes")));
    }
    Ok(body)
}

/// A refusal message for an HTTP error status, with the backend's own message (cut short).
fn backend_error(
    backend: WebBackend,
    host: &str,
    status: reqwest::StatusCode,
    body: &[u8],
) -> String {
    let name = backend.as_str();
    let detail = error_detail(body);
    let mut msg = format!("the {name} backend at {host} answered HTTP {status}");
    if !detail.is_empty() {
        msg.push_str(": ");
        msg.push_str(&detail);
    }
    let hint = match (backend, status.as_u16()) {
        (WebBackend::Searxng, 403) => {
            " (a SearXNG instance answers 403 to format=json unless json is listed in \
             search.formats of its settings.yml)"
        }
        (_, 429) => " (rate limited: try again later)",
        (WebBackend::Brave, 401 | 403) => {
            " (the key held in the keeper was not accepted: set it again with `seam secret set`)"
        }
        _ => "",
    };
    msg.push_str(hint);
    msg
}

/// The backend's message: Brave's `error.detail`, a JSON `message`/`error`, or the text.
fn error_detail(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let pick = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_owned);
        let detail = pick("/error/detail")
            .map(|d| match pick("/error/code") {
                Some(code) => format!("{code}: {d}"),
                None => d,
            })
            .or_else(|| pick("/message"))
            .or_else(|| pick("/error"))
            .or_else(|| pick("/detail"));
        if let Some(d) = detail {
            return seam_term::clip(&one_line(&d), MAX_ERROR_CHARS, "…").into_owned();
        }
    }
    let text = String::from_utf8_lossy(body);
    seam_term::clip(&one_line(&strip_html(&text)), MAX_ERROR_CHARS, "…").into_owned()
}

/// `results: [{title, url, content}]` (SearXNG's JSON API).
fn searxng_results(v: &Value) -> Result<Vec<Hit>, String> {
    let results = v
        .get("results")
        .ok_or("no \"results\" field")?
        .as_array()
        .ok_or("\"results\" is not an array")?;
    Ok(results
        .iter()
        .map(|r| Hit {
            title: str_field(r, "title"),
            url: str_field(r, "url"),
            snippet: str_field(r, "content"),
        })
        .collect())
}

/// `web: {results: [{title, url, description}]}` (Brave's web search API). A response without
/// `web` has no web results.
fn brave_results(v: &Value) -> Result<Vec<Hit>, String> {
    if !v.is_object() {
        return Err("the answer is not a JSON object".to_owned());
    }
    let Some(web) = v.get("web") else {
        return Ok(Vec::new());
    };
    let Some(results) = web.get("results") else {
        return Ok(Vec::new());
    };
    let results = results
        .as_array()
        .ok_or("\"web.results\" is not an array")?;
    Ok(results
        .iter()
        .map(|r| Hit {
            title: str_field(r, "title"),
            url: str_field(r, "url"),
            snippet: str_field(r, "description"),
        })
        .collect())
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Markup stripped, entities decoded, white space folded, lengths capped; a result whose URL
/// is not http(s) is dropped.
fn clean_hit(h: Hit) -> Option<Hit> {
    let url = h.url.trim();
    let parsed = Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    Some(Hit {
        title: seam_term::clip(&one_line(&strip_html(&h.title)), MAX_TITLE_CHARS, "…").into_owned(),
        url: seam_term::clip(url, MAX_URL_CHARS, "…").into_owned(),
        snippet: seam_term::clip(&one_line(&strip_html(&h.snippet)), MAX_SNIPPET_CHARS, "…")
            .into_owned(),
    })
}

/// Removes `<…>` tags and decodes the common entities (`&amp;`, `&#39;`, `&#x27;`, …).
pub(crate) fn strip_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(['<', '&']) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with('<') {
            let is_tag = rest[1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!');
            match rest.find('>') {
                Some(end) if is_tag => {
                    if !is_inline_tag(&rest[1..end]) {
                        out.push(' ');
                    }
                    rest = &rest[end + 1..];
                }
                _ => {
                    out.push('<');
                    rest = &rest[1..];
                }
            }
        } else {
            let end = rest.as_bytes()[..rest.len().min(12)]
                .iter()
                .position(|&b| b == b';');
            let decoded = end.and_then(|e| decode_entity(&rest[1..e]).map(|c| (c, e)));
            match decoded {
                Some((c, e)) => {
                    out.push(c);
                    rest = &rest[e + 1..];
                }
                None => {
                    out.push('&');
                    rest = &rest[1..];
                }
            }
        }
    }
    out.push_str(rest);
    out
}

/// Tags that mark up words inside a line (a search engine's highlighting): removed without a
/// trace. Any other tag separates words: it becomes a space.
fn is_inline_tag(inside: &str) -> bool {
    let name: String = inside
        .trim_start_matches('/')
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        name.as_str(),
        "b" | "strong"
            | "em"
            | "i"
            | "u"
            | "mark"
            | "span"
            | "a"
            | "code"
            | "small"
            | "sub"
            | "sup"
    )
}

fn decode_entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        _ => {
            let code = if let Some(hex) = name.strip_prefix("#x").or(name.strip_prefix("#X")) {
                u32::from_str_radix(hex, 16).ok()?
            } else {
                name.strip_prefix('#')?.parse().ok()?
            };
            char::from_u32(code).filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        }
    }
}

/// White space (newlines included) folded to single spaces, trimmed.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_stripped_and_entities_decoded() {
        assert_eq!(
            strip_html("<strong>Rust</strong>acean &amp; <em>Cargo</em> &#39;x&#x27; a<b"),
            "Rustacean & Cargo 'x' a<b"
        );
        assert_eq!(
            one_line(&strip_html("<h1>Error</h1><p>engine<br/>crashed</p>")),
            "Error engine crashed"
        );
        assert_eq!(
            strip_html("1 < 2 && 3 > 2 &bogus; &"),
            "1 < 2 && 3 > 2 &bogus; &"
        );
        assert_eq!(
            strip_html("&#27;[31m"),
            "&#27;[31m",
            "control chars are not decoded"
        );
        assert_eq!(
            strip_html("&ééééééééé;"),
            "&ééééééééé;",
            "no panic inside a character"
        );
    }

    /// Every string of up to 5 characters over an alphabet of the characters markup and
    /// entities are made of: no panic (a slice inside a character, an index past the end), and
    /// the result of cleaning is one line.
    #[test]
    fn cleaning_never_panics_on_markup_fragments() {
        const ALPHABET: [char; 11] = ['<', '>', '&', ';', '#', 'x', 'a', 'é', '/', '\n', '1'];
        let mut idx = [0usize; 5];
        for len in 0..=5 {
            let total = ALPHABET.len().pow(len as u32);
            for n in 0..total {
                let mut k = n;
                for slot in idx.iter_mut().take(len) {
                    *slot = k % ALPHABET.len();
                    k /= ALPHABET.len();
                }
                let s: String = idx[..len].iter().map(|&i| ALPHABET[i]).collect();
                let cleaned = one_line(&strip_html(&s));
                assert!(!cleaned.contains('\n'), "{s:?}");
                let _ = seam_term::clip(&s, 3, "…").into_owned();
            }
        }
    }

    #[test]
    fn results_are_cleaned_and_non_web_urls_dropped() {
        let long = "x".repeat(2000);
        let h = clean_hit(Hit {
            title: "  a\n\tb ".into(),
            url: "https://e.example/p".into(),
            snippet: long,
        })
        .unwrap();
        assert_eq!(h.title, "a b");
        assert_eq!(h.snippet.chars().count(), MAX_SNIPPET_CHARS + 1);
        assert!(
            clean_hit(Hit {
                title: "t".into(),
                url: "javascript:alert(1)".into(),
                snippet: String::new()
            })
            .is_none()
        );
    }

    #[test]
    fn the_allowlist_is_by_origin() {
        let base = Url::parse("http://127.0.0.1:8888/search").unwrap();
        let allow = EgressAllowlist::of(&[&base]);
        allow
            .check(&Url::parse("http://127.0.0.1:8888/other?q=1").unwrap())
            .unwrap();
        for bad in [
            "http://localhost:8888/",
            "http://127.0.0.1:8889/",
            "https://127.0.0.1:8888/",
            "http://evil.example/",
        ] {
            let why = allow.check(&Url::parse(bad).unwrap()).unwrap_err();
            assert!(why.contains("not on the gate's egress allowlist"), "{why}");
        }
        let brave = Url::parse("https://API.search.brave.com/res/v1/web/search").unwrap();
        EgressAllowlist::of(&[&brave])
            .check(&Url::parse("https://api.search.brave.com:443/x").unwrap())
            .unwrap();
    }

    #[test]
    fn error_details_prefer_the_backends_message() {
        let brave = br#"{"type":"ErrorResponse","error":{"id":"x","status":422,"code":"VALIDATION","detail":"Unable to validate request parameter(s)."}}"#;
        assert_eq!(
            error_detail(brave),
            "VALIDATION: Unable to validate request parameter(s)."
        );
        assert_eq!(
            error_detail(b"<html><h1>Internal\nServer Error</h1></html>"),
            "Internal Server Error"
        );
    }
}
