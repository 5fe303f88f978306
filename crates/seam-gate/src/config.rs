//! The gate's configuration file: where its tools reach (web backends), not what they may do.
//!
//! What a tool may do is policy (`seam-policy`); where the gate's own means point is
//! configuration. The file is TOML (`--config FILE`, `SEAM_CONFIG`, else
//! `<seam_home>/config.toml` when it exists):
//!
//! ```toml
//! [web]
//! backend = "searxng"            # searxng | brave
//! url = "http://127.0.0.1:8888"  # the SearXNG instance (for brave: the API endpoint, optional)
//! # api_key = "keeper:brave"     # brave: a keeper handle; a key written here is refused
//! timeout_s = 10                 # connect + whole request, seconds (0 < t <= 120)
//! max_results = 10               # the most results one call returns (1..=50)
//!
//! [web.fetch]                    # web.fetch: where it may go, and how much it reads
//! allow = ["docs.rs", "*.wikipedia.org"]  # "*": every public host; empty or absent: none
//! max_bytes = 1048576            # bytes of a body read, at most (1..=67108864); then cut
//! max_chars = 20000              # characters of text returned, at most (1..=1000000)
//! timeout_s = 20                 # resolving, connects, redirects, body (0 < t <= 120)
//! connect_timeout_s = 10         # each connection (0 < t <= timeout_s)
//! max_redirects = 5              # redirects followed, each checked (0..=20)
//! ```
//!
//! `[web.fetch]` stands on its own: `[web]` needs a `backend` only when it has search keys.
//! An `allow` entry is a host, never a URL: `"docs.rs"` (that name, and only it),
//! `"*.example.org"` (every name below `example.org`, not `example.org` itself), `"*"` (every
//! host), or an address (`"10.0.0.5"`). Without `[web.fetch]`, or with `allow = []`, web.fetch
//! reaches no host: an empty list means nothing, not everything. Loopback, private,
//! link-local, metadata and other special addresses are reached only through an entry that
//! names the host exactly ([`crate::tools::WebFetch`]).
//!
//! Parsing is as strict as the policy's: an unknown key or a bad value is an error naming the
//! key and its line, and no error ever quotes a value written where a key handle belongs (it
//! may be a pasted key).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use seam_keeper::{Keeper, KeeperHandle, SecretValue};
use seam_policy::strict_toml::{Source, entries_in_order, read_toml_file, suggestion, type_name};
use toml::de::{DeTable, DeValue};
use url::Url;

use crate::tools::{FetchAllowList, HostPattern};

/// Brave Search's web search endpoint, the default `url` of the brave backend.
pub const BRAVE_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
/// The default and largest `timeout_s`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TIMEOUT_S: f64 = 120.0;
/// The default and the largest `max_results`.
pub const DEFAULT_MAX_RESULTS: u32 = 10;
pub const MAX_RESULTS_CAP: u32 = 50;
/// The largest response body the web client reads (2 MiB); a larger one is refused.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 2 * 1024 * 1024;
/// `[web.fetch]` defaults and bounds.
pub const DEFAULT_FETCH_MAX_BYTES: u64 = 1024 * 1024;
pub const FETCH_MAX_BYTES_CAP: u64 = 64 * 1024 * 1024;
pub const DEFAULT_FETCH_MAX_CHARS: usize = 20_000;
pub const FETCH_MAX_CHARS_CAP: usize = 1_000_000;
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(20);
pub const DEFAULT_FETCH_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_FETCH_MAX_REDIRECTS: usize = 5;
pub const FETCH_MAX_REDIRECTS_CAP: usize = 20;
const MAX_CONFIG_FILE_BYTES: u64 = 1 << 20;

/// A search backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebBackend {
    /// A SearXNG instance's JSON API (`/search?q=…&format=json`).
    Searxng,
    /// The Brave Search API (`X-Subscription-Token`).
    Brave,
}

impl WebBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            WebBackend::Searxng => "searxng",
            WebBackend::Brave => "brave",
        }
    }
}

/// `[web]` as written (the key is a handle, not a value).
#[derive(Debug, Clone, PartialEq)]
pub struct WebConfig {
    pub backend: WebBackend,
    /// The SearXNG instance's base URL, or Brave's endpoint.
    pub url: Url,
    pub api_key: Option<KeeperHandle>,
    pub timeout: Duration,
    pub max_results: u32,
}

/// Where a configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigOrigin {
    /// No file: nothing configured.
    None,
    File(PathBuf),
}

/// The gate's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct GateConfig {
    pub origin: ConfigOrigin,
    /// The web search backend; `None` when the file has no `[web]` table.
    pub web: Option<WebConfig>,
    /// Where `web.fetch` may go and how much it reads (`[web.fetch]`).
    pub fetch: WebFetchSetup,
    /// The upstream MCP servers the gate governs (`[[mcp.upstream]]`, see `crate::mcp`).
    pub mcp: crate::mcp::McpConfig,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            origin: ConfigOrigin::None,
            web: None,
            fetch: WebFetchSetup::default(),
            mcp: crate::mcp::McpConfig::default(),
        }
    }
}

/// `[web.fetch]`, as `web.fetch` runs it (it holds no key: nothing to resolve).
#[derive(Debug, Clone, PartialEq)]
pub struct WebFetchSetup {
    /// Whether the config file has a `[web.fetch]` table (a refusal says which is missing).
    pub written: bool,
    /// The hosts it may reach; empty: none.
    pub allow: FetchAllowList,
    /// The most bytes of a body read; reading stops there and the result says it was cut.
    pub max_bytes: u64,
    /// The most characters of text returned.
    pub max_chars: usize,
    /// All of a call's network work: resolving, connects, redirects and reading the body.
    pub timeout: Duration,
    /// Each connection.
    pub connect_timeout: Duration,
    /// The most redirects followed.
    pub max_redirects: usize,
}

impl Default for WebFetchSetup {
    fn default() -> Self {
        WebFetchSetup {
            written: false,
            allow: FetchAllowList::default(),
            max_bytes: DEFAULT_FETCH_MAX_BYTES,
            max_chars: DEFAULT_FETCH_MAX_CHARS,
            timeout: DEFAULT_FETCH_TIMEOUT,
            connect_timeout: DEFAULT_FETCH_CONNECT_TIMEOUT,
            max_redirects: DEFAULT_FETCH_MAX_REDIRECTS,
        }
    }
}

/// A configuration file that could not be used: the error of seam's TOML files, which
/// seam-policy owns (its `PolicyError` too). The text names the file, and for a bad key or
/// value the key (dotted: `web.backend`), its line and its column.
pub type ConfigError = seam_policy::strict_toml::TomlFileError;

/// What [`ConfigError::Read`] calls the gate's config file.
const CONFIG_FILE: &str = "config file";

/// Web search as the tool runs it: the backend with its key taken from the keeper.
#[derive(Clone, PartialEq)]
pub struct WebSearchBackend {
    pub backend: WebBackend,
    /// The URL requests go to (SearXNG: the instance's `/search`).
    pub endpoint: Url,
    /// Injected at egress (Brave: `X-Subscription-Token`); never in params, output or errors.
    pub api_key: Option<SecretValue>,
    pub timeout: Duration,
    pub max_results: u32,
    /// The largest response body read; a larger one is refused.
    pub max_body_bytes: u64,
}

impl std::fmt::Debug for WebSearchBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearchBackend")
            .field("backend", &self.backend)
            .field("endpoint", &self.endpoint.as_str())
            .field(
                "api_key",
                &self.api_key.as_ref().map(|_| "<held by the gate>"),
            )
            .field("timeout", &self.timeout)
            .field("max_results", &self.max_results)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}

/// What `web.search` has to work with.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum WebSearchSetup {
    /// No `[web]` table: every call is refused with how to configure one.
    #[default]
    Unconfigured,
    /// Configured, but not usable (say, the keeper lacks the key); every call is refused with this.
    Unusable(String),
    Ready(WebSearchBackend),
}

impl GateConfig {
    /// Loads `file`, or the empty configuration when there is none.
    pub fn load(file: Option<&Path>) -> Result<GateConfig, ConfigError> {
        let Some(file) = file else {
            return Ok(GateConfig::default());
        };
        let (text, absolute) = read_toml_file(file, MAX_CONFIG_FILE_BYTES, CONFIG_FILE)?;
        let mut config = GateConfig::from_toml_str(&text, file)?;
        config.origin = ConfigOrigin::File(absolute);
        Ok(config)
    }

    /// Parses configuration text; `origin` is what error messages call it.
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<GateConfig, ConfigError> {
        let src = Source { text, origin };
        let doc = DeTable::parse(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            src.error(span, None, format!("not valid TOML: {}", e.message()))
        })?;
        let mut config = GateConfig {
            origin: ConfigOrigin::File(origin.to_path_buf()),
            web: None,
            fetch: WebFetchSetup::default(),
            mcp: crate::mcp::McpConfig::default(),
        };
        for (key, value) in entries_in_order(doc.get_ref()) {
            let name: &str = key.get_ref();
            match name {
                "web" => {
                    let DeValue::Table(table) = value.get_ref() else {
                        return Err(src.error(
                            value.span(),
                            Some("web".into()),
                            format!(
                                "bad value for \"web\": expected a table ([web]), found {}",
                                type_name(value.get_ref())
                            ),
                        ));
                    };
                    let (search, fetch) = parse_web(&src, key.span(), table)?;
                    config.web = search;
                    if let Some(fetch) = fetch {
                        config.fetch = fetch;
                    }
                }
                "mcp" => config.mcp = crate::mcp::config::parse_mcp(&src, value)?,
                other => {
                    return Err(src.error(
                        key.span(),
                        Some(other.to_owned()),
                        format!(
                            "unknown key \"{other}\" at the top level{}; the config file has the \
                             tables [web] and [[mcp.upstream]]",
                            suggestion(other, &["web", "mcp"])
                        ),
                    ));
                }
            }
        }
        Ok(config)
    }

    /// `web.fetch`'s setup (`[web.fetch]`, or its defaults: no host allowed).
    pub fn web_fetch_setup(&self) -> WebFetchSetup {
        self.fetch.clone()
    }

    /// `web.search`'s setup: the backend with its key resolved in `keeper`.
    pub fn web_search_setup(&self, keeper: &Keeper) -> WebSearchSetup {
        let Some(web) = &self.web else {
            return WebSearchSetup::Unconfigured;
        };
        let api_key = match &web.api_key {
            None => None,
            Some(handle) => match keeper.resolve(handle) {
                Ok(v) => Some(v.clone()),
                Err(e) => {
                    return WebSearchSetup::Unusable(format!(
                        "the config's [web] api_key is {handle}, and {e}"
                    ));
                }
            },
        };
        WebSearchSetup::Ready(WebSearchBackend {
            backend: web.backend,
            endpoint: web.endpoint(),
            api_key,
            timeout: web.timeout,
            max_results: web.max_results,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        })
    }
}

impl WebConfig {
    /// The URL a search goes to: a SearXNG instance's `/search`, or Brave's endpoint as given.
    pub fn endpoint(&self) -> Url {
        match self.backend {
            WebBackend::Brave => self.url.clone(),
            WebBackend::Searxng => {
                let mut base = self.url.clone();
                if !base.path().ends_with('/') {
                    let path = format!("{}/", base.path());
                    base.set_path(&path);
                }
                base.join("search").unwrap_or(base)
            }
        }
    }
}

const WEB_KEYS: &[&str] = &[
    "backend",
    "url",
    "api_key",
    "timeout_s",
    "max_results",
    "fetch",
];
const BACKENDS: &[&str] = &["searxng", "brave"];

/// `[web]`: the search backend (`None` when the table holds only `[web.fetch]`) and
/// `[web.fetch]`.
fn parse_web(
    src: &Source<'_>,
    table_span: Range<usize>,
    table: &DeTable<'_>,
) -> Result<(Option<WebConfig>, Option<WebFetchSetup>), ConfigError> {
    let mut fetch = None;
    let mut search_keys = false;
    let mut backend: Option<(WebBackend, Range<usize>)> = None;
    let mut url: Option<(Url, Range<usize>)> = None;
    let mut api_key: Option<(KeeperHandle, Range<usize>)> = None;
    let mut timeout = DEFAULT_TIMEOUT;
    let mut max_results = DEFAULT_MAX_RESULTS;
    for (key, value) in entries_in_order(table) {
        let name: &str = key.get_ref();
        let dotted = format!("web.{name}");
        let bad = |message: String| src.error(value.span(), Some(dotted.clone()), message);
        if name != "fetch" {
            search_keys = true;
        }
        match name {
            "fetch" => {
                let DeValue::Table(t) = value.get_ref() else {
                    return Err(bad(format!(
                        "bad value for \"fetch\" in [web]: expected a table ([web.fetch]), \
                         found {}",
                        type_name(value.get_ref())
                    )));
                };
                fetch = Some(parse_fetch(src, t)?);
            }
            "backend" => {
                let word = value.get_ref().as_str().ok_or_else(|| {
                    bad(format!(
                        "bad value for \"backend\" in [web]: expected one of {}, found {}",
                        quoted(BACKENDS),
                        type_name(value.get_ref())
                    ))
                })?;
                let b = match word {
                    "searxng" => WebBackend::Searxng,
                    "brave" => WebBackend::Brave,
                    other => {
                        return Err(bad(format!(
                            "bad value for \"backend\" in [web]: \"{other}\" is not one of {}{}",
                            quoted(BACKENDS),
                            suggestion(other, BACKENDS)
                        )));
                    }
                };
                backend = Some((b, value.span()));
            }
            "url" => {
                let text = value.get_ref().as_str().ok_or_else(|| {
                    bad(format!(
                        "bad value for \"url\" in [web]: expected a URL (a string), found {}",
                        type_name(value.get_ref())
                    ))
                })?;
                let parsed = check_url(text)
                    .map_err(|why| bad(format!("bad value for \"url\" in [web]: {why}")))?;
                url = Some((parsed, value.span()));
            }
            "api_key" => {
                let text = value.get_ref().as_str().ok_or_else(|| {
                    bad(format!(
                        "bad value for \"api_key\" in [web]: expected a keeper handle \
                         (\"keeper:NAME\"), found {}",
                        type_name(value.get_ref())
                    ))
                })?;
                let handle = KeeperHandle::parse(text).map_err(|_| {
                    bad(
                        "bad value for \"api_key\" in [web]: it is not a keeper handle. Keys are \
                         never written in the config file: store the key with `seam secret set \
                         NAME` (it reads the value from stdin) and write api_key = \"keeper:NAME\" \
                         (the value written here is not shown)"
                            .to_owned(),
                    )
                })?;
                api_key = Some((handle, value.span()));
            }
            "timeout_s" => {
                let secs = match value.get_ref() {
                    DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
                    DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
                    _ => None,
                };
                let secs = secs.filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_TIMEOUT_S);
                let Some(secs) = secs else {
                    return Err(bad(format!(
                        "bad value for \"timeout_s\" in [web]: expected a number of seconds \
                         greater than 0 and at most {MAX_TIMEOUT_S}, e.g. timeout_s = 10"
                    )));
                };
                timeout = Duration::from_secs_f64(secs);
            }
            "max_results" => {
                let n = match value.get_ref() {
                    DeValue::Integer(i) => i.as_str().parse::<u32>().ok(),
                    _ => None,
                };
                let Some(n) = n.filter(|n| (1..=MAX_RESULTS_CAP).contains(n)) else {
                    return Err(bad(format!(
                        "bad value for \"max_results\" in [web]: expected an integer from 1 to \
                         {MAX_RESULTS_CAP}"
                    )));
                };
                max_results = n;
            }
            other => {
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{other}\" in [web]{}; the keys are {}",
                        suggestion(other, WEB_KEYS),
                        quoted(WEB_KEYS)
                    ),
                ));
            }
        }
    }
    if !search_keys {
        return Ok((None, fetch));
    }
    let Some((backend, backend_span)) = backend else {
        return Err(src.error(
            table_span,
            Some("web.backend".into()),
            format!(
                "[web] needs a backend: backend = one of {}",
                quoted(BACKENDS)
            ),
        ));
    };
    let (url, url_span) = match (url, backend) {
        (Some(u), _) => u,
        (None, WebBackend::Brave) => (
            Url::parse(BRAVE_ENDPOINT).expect("the Brave endpoint is a valid URL"),
            backend_span.clone(),
        ),
        (None, WebBackend::Searxng) => {
            return Err(src.error(
                backend_span,
                Some("web.url".into()),
                "backend \"searxng\" needs the instance's url, e.g. url = \"http://127.0.0.1:8888\""
                    .to_owned(),
            ));
        }
    };
    match (backend, &api_key) {
        (WebBackend::Brave, None) => {
            return Err(src.error(
                backend_span,
                Some("web.api_key".into()),
                "backend \"brave\" needs an api_key: store the key with `seam secret set brave` \
                 (from stdin) and write api_key = \"keeper:brave\""
                    .to_owned(),
            ));
        }
        (WebBackend::Searxng, Some((_, span))) => {
            return Err(src.error(
                span.clone(),
                Some("web.api_key".into()),
                "backend \"searxng\" takes no api_key".to_owned(),
            ));
        }
        _ => {}
    }
    if api_key.is_some() && url.scheme() != "https" && !is_loopback(&url) {
        return Err(src.error(
            url_span,
            Some("web.url".into()),
            format!(
                "the api_key would be sent in clear text to {}: a backend with a key must be \
                 reached over https (plain http only on a loopback address)",
                url.host_str().unwrap_or("")
            ),
        ));
    }
    let search = WebConfig {
        backend,
        url,
        api_key: api_key.map(|(h, _)| h),
        timeout,
        max_results,
    };
    Ok((Some(search), fetch))
}

const FETCH_KEYS: &[&str] = &[
    "allow",
    "max_bytes",
    "max_chars",
    "timeout_s",
    "connect_timeout_s",
    "max_redirects",
];

/// `[web.fetch]`.
fn parse_fetch(src: &Source<'_>, table: &DeTable<'_>) -> Result<WebFetchSetup, ConfigError> {
    let mut setup = WebFetchSetup {
        written: true,
        ..WebFetchSetup::default()
    };
    let mut connect: Option<(Duration, Range<usize>)> = None;
    for (key, value) in entries_in_order(table) {
        let name: &str = key.get_ref();
        let dotted = format!("web.fetch.{name}");
        let bad = |message: String| src.error(value.span(), Some(dotted.clone()), message);
        let integer = || match value.get_ref() {
            DeValue::Integer(i) => i.as_str().parse::<u64>().ok(),
            _ => None,
        };
        match name {
            "allow" => {
                let DeValue::Array(items) = value.get_ref() else {
                    return Err(bad(format!(
                        "bad value for \"allow\" in [web.fetch]: expected a list of hosts, e.g. \
                         allow = [\"docs.rs\", \"*.wikipedia.org\"], found {}",
                        type_name(value.get_ref())
                    )));
                };
                let mut patterns = Vec::new();
                for item in items.iter() {
                    let Some(text) = item.get_ref().as_str() else {
                        return Err(src.error(
                            item.span(),
                            Some(dotted.clone()),
                            format!(
                                "bad entry in \"allow\" in [web.fetch]: expected a host (a \
                                 string), found {}",
                                type_name(item.get_ref())
                            ),
                        ));
                    };
                    let pattern = HostPattern::parse(text).map_err(|why| {
                        src.error(
                            item.span(),
                            Some(dotted.clone()),
                            format!("bad entry in \"allow\" in [web.fetch]: {why}"),
                        )
                    })?;
                    patterns.push(pattern);
                }
                setup.allow = FetchAllowList::new(patterns);
            }
            "max_bytes" => {
                let Some(n) = integer().filter(|n| (1..=FETCH_MAX_BYTES_CAP).contains(n)) else {
                    return Err(bad(format!(
                        "bad value for \"max_bytes\" in [web.fetch]: expected an integer from 1 \
                         to {FETCH_MAX_BYTES_CAP} (bytes)"
                    )));
                };
                setup.max_bytes = n;
            }
            "max_chars" => {
                let cap = FETCH_MAX_CHARS_CAP as u64;
                let Some(n) = integer().filter(|n| (1..=cap).contains(n)) else {
                    return Err(bad(format!(
                        "bad value for \"max_chars\" in [web.fetch]: expected an integer from 1 \
                         to {FETCH_MAX_CHARS_CAP} (characters)"
                    )));
                };
                setup.max_chars = n as usize;
            }
            "max_redirects" => {
                let cap = FETCH_MAX_REDIRECTS_CAP as u64;
                let Some(n) = integer().filter(|n| *n <= cap) else {
                    return Err(bad(format!(
                        "bad value for \"max_redirects\" in [web.fetch]: expected an integer \
                         from 0 to {FETCH_MAX_REDIRECTS_CAP}"
                    )));
                };
                setup.max_redirects = n as usize;
            }
            "timeout_s" | "connect_timeout_s" => {
                let secs = seconds(value.get_ref()).ok_or_else(|| {
                    bad(format!(
                        "bad value for \"{name}\" in [web.fetch]: expected a number of seconds \
                         greater than 0 and at most {MAX_TIMEOUT_S}, e.g. {name} = 10"
                    ))
                })?;
                if name == "timeout_s" {
                    setup.timeout = secs;
                } else {
                    connect = Some((secs, value.span()));
                }
            }
            other => {
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{other}\" in [web.fetch]{}; the keys are {}",
                        suggestion(other, FETCH_KEYS),
                        quoted(FETCH_KEYS)
                    ),
                ));
            }
        }
    }
    match connect {
        Some((c, span)) if c > setup.timeout => {
            return Err(src.error(
                span,
                Some("web.fetch.connect_timeout_s".into()),
                format!(
                    "connect_timeout_s in [web.fetch] ({} s) is longer than timeout_s ({} s), \
                     which bounds the whole call",
                    c.as_secs_f64(),
                    setup.timeout.as_secs_f64()
                ),
            ));
        }
        Some((c, _)) => setup.connect_timeout = c,
        None => setup.connect_timeout = setup.connect_timeout.min(setup.timeout),
    }
    Ok(setup)
}

/// A number of seconds, `0 < s <= MAX_TIMEOUT_S`.
fn seconds(value: &DeValue<'_>) -> Option<Duration> {
    let secs = match value {
        DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
        DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
        _ => None,
    };
    secs.filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_TIMEOUT_S)
        .map(Duration::from_secs_f64)
}

/// An http(s) URL with a host, no credentials, no query, no fragment.
fn check_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("\"{text}\" is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("\"{}\" is not an http or https URL", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the URL has no host".to_owned());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "the URL holds credentials; keys belong in the keeper (`seam secret set`), not in a URL"
                .to_owned(),
        );
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "\"{}\" has a query or a fragment; give the base URL only",
            url.as_str()
        ));
    }
    Ok(url)
}

/// Whether `url`'s host is a loopback address (or `localhost`).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

pub(crate) fn quoted(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<GateConfig, ConfigError> {
        GateConfig::from_toml_str(text, Path::new("config.toml"))
    }

    #[track_caller]
    fn rejected(text: &str, key: &str, line: usize) -> String {
        let err = parse(text).expect_err("accepted");
        let shown = err.to_string();
        match &err {
            ConfigError::Invalid {
                line: l, key: k, ..
            } => {
                assert_eq!(*l, line, "{shown}");
                assert_eq!(k.as_deref(), Some(key), "{shown}");
            }
            ConfigError::Read { .. } => panic!("{shown}"),
        }
        assert!(shown.contains("config.toml"), "{shown}");
        assert!(shown.contains(&format!("line {line}")), "{shown}");
        shown
    }

    #[test]
    fn an_empty_file_configures_nothing() {
        assert_eq!(parse("").unwrap().web, None);
        assert_eq!(GateConfig::load(None).unwrap(), GateConfig::default());
    }

    #[test]
    fn searxng_parses_with_defaults() {
        let c = parse("[web]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:8888\"\n").unwrap();
        let web = c.web.unwrap();
        assert_eq!(web.backend, WebBackend::Searxng);
        assert_eq!(web.timeout, DEFAULT_TIMEOUT);
        assert_eq!(web.max_results, DEFAULT_MAX_RESULTS);
        assert_eq!(web.endpoint().as_str(), "http://127.0.0.1:8888/search");
        let c = parse(
            "[web]\nbackend = \"searxng\"\nurl = \"https://h.example/searx\"\ntimeout_s = 2.5\nmax_results = 3\n",
        )
        .unwrap();
        let web = c.web.unwrap();
        assert_eq!(web.endpoint().as_str(), "https://h.example/searx/search");
        assert_eq!(web.timeout, Duration::from_millis(2500));
        assert_eq!(web.max_results, 3);
    }

    #[test]
    fn brave_defaults_to_its_endpoint_and_needs_a_handle() {
        let c = parse("[web]\nbackend = \"brave\"\napi_key = \"keeper:brave\"\n").unwrap();
        let web = c.web.unwrap();
        assert_eq!(web.endpoint().as_str(), BRAVE_ENDPOINT);
        assert_eq!(web.api_key.unwrap().name(), "brave");
        rejected("[web]\nbackend = \"brave\"\n", "web.api_key", 2);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_key_and_line() {
        let t = rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:1\"\nmax_result = 3\n",
            "web.max_result",
            4,
        );
        assert!(t.contains("did you mean \"max_results\""), "{t}");
        let t = rejected("\n[webb]\n", "webb", 2);
        assert!(t.contains("did you mean \"web\""), "{t}");
        rejected("[web]\nbackend = \"google\"\n", "web.backend", 2);
        rejected("[web]\nbackend = 1\n", "web.backend", 2);
        rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"ftp://x\"\n",
            "web.url",
            3,
        );
        rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"http://u:p@x\"\n",
            "web.url",
            3,
        );
        rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"http://x/?q=1\"\n",
            "web.url",
            3,
        );
        rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"http://x\"\ntimeout_s = 0\n",
            "web.timeout_s",
            4,
        );
        rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"http://x\"\ntimeout_s = 1000\n",
            "web.timeout_s",
            4,
        );
        rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"http://x\"\nmax_results = 0\n",
            "web.max_results",
            4,
        );
        rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"http://x\"\nmax_results = 51\n",
            "web.max_results",
            4,
        );
        rejected("[web]\nbackend = \"searxng\"\n", "web.url", 2);
        rejected("[web]\nurl = \"http://x\"\n", "web.backend", 1);
        rejected("web = 3\n", "web", 1);
        rejected(
            "[web]\nbackend = \"searxng\"\nurl = \"http://x\"\napi_key = \"keeper:k\"\n",
            "web.api_key",
            4,
        );
        let t = parse("[web\n").unwrap_err().to_string();
        assert!(t.contains("line 1"), "{t}");
    }

    #[test]
    fn a_key_written_in_the_file_is_refused_and_not_echoed() {
        let key = "BSAabcdefghijklmnopqrstuvwxyz012";
        let t = rejected(
            &format!("[web]\nbackend = \"brave\"\napi_key = \"{key}\"\n"),
            "web.api_key",
            3,
        );
        assert!(!t.contains(key), "{t}");
        assert!(t.contains("seam secret set"), "{t}");
    }

    #[test]
    fn a_key_is_never_sent_over_plain_http_to_another_host() {
        rejected(
            "[web]\nbackend = \"brave\"\napi_key = \"keeper:b\"\nurl = \"http://api.example/s\"\n",
            "web.url",
            4,
        );
        parse(
            "[web]\nbackend = \"brave\"\napi_key = \"keeper:b\"\nurl = \"http://127.0.0.1:9/s\"\n",
        )
        .unwrap();
    }

    #[test]
    fn web_fetch_stands_on_its_own_with_defaults() {
        let c = parse("[web.fetch]\nallow = [\"docs.rs\", \"*.Example.org\", \"*\"]\n").unwrap();
        assert_eq!(
            c.web, None,
            "[web.fetch] alone configures no search backend"
        );
        let f = c.web_fetch_setup();
        assert!(f.written);
        let shown: Vec<String> = f.allow.patterns().iter().map(|p| p.to_string()).collect();
        assert_eq!(shown, ["docs.rs", "*.example.org", "*"]);
        assert_eq!(f.max_bytes, DEFAULT_FETCH_MAX_BYTES);
        assert_eq!(f.max_chars, DEFAULT_FETCH_MAX_CHARS);
        assert_eq!(f.timeout, DEFAULT_FETCH_TIMEOUT);
        assert_eq!(f.connect_timeout, DEFAULT_FETCH_CONNECT_TIMEOUT);
        assert_eq!(f.max_redirects, DEFAULT_FETCH_MAX_REDIRECTS);
        // nothing written: nothing allowed
        let none = parse("").unwrap().web_fetch_setup();
        assert!(!none.written && none.allow.is_empty());
        let empty = parse("[web.fetch]\nallow = []\n")
            .unwrap()
            .web_fetch_setup();
        assert!(empty.written && empty.allow.is_empty());
        // with a search backend beside it
        let c = parse(
            "[web]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:8888\"\n[web.fetch]\n\
             allow = [\"10.0.0.5\"]\nmax_bytes = 10\nmax_chars = 5\ntimeout_s = 3\n\
             connect_timeout_s = 0.5\nmax_redirects = 0\n",
        )
        .unwrap();
        assert_eq!(c.web.unwrap().backend, WebBackend::Searxng);
        let f = c.fetch;
        assert_eq!((f.max_bytes, f.max_chars, f.max_redirects), (10, 5, 0));
        assert_eq!(f.timeout, Duration::from_secs(3));
        assert_eq!(f.connect_timeout, Duration::from_millis(500));
        // a short timeout_s bounds the default connect timeout too
        let f = parse("[web.fetch]\ntimeout_s = 2\n").unwrap().fetch;
        assert_eq!(f.connect_timeout, Duration::from_secs(2));
    }

    #[test]
    fn web_fetch_errors_name_key_and_line() {
        let t = rejected("[web.fetch]\nallow = \"docs.rs\"\n", "web.fetch.allow", 2);
        assert!(t.contains("expected a list of hosts"), "{t}");
        let t = rejected(
            "[web.fetch]\nallow = [\n  \"docs.rs\",\n  \"https://docs.rs/\",\n]\n",
            "web.fetch.allow",
            4,
        );
        assert!(t.contains("without a scheme or a path"), "{t}");
        rejected("[web.fetch]\nallow = [1]\n", "web.fetch.allow", 2);
        rejected(
            "[web.fetch]\nallow = [\"docs.rs:443\"]\n",
            "web.fetch.allow",
            2,
        );
        let t = rejected("[web.fetch]\nalow = []\n", "web.fetch.alow", 2);
        assert!(t.contains("did you mean \"allow\""), "{t}");
        rejected("[web.fetch]\nmax_bytes = 0\n", "web.fetch.max_bytes", 2);
        rejected("[web.fetch]\nmax_chars = -1\n", "web.fetch.max_chars", 2);
        rejected(
            "[web.fetch]\nmax_redirects = 21\n",
            "web.fetch.max_redirects",
            2,
        );
        rejected("[web.fetch]\ntimeout_s = 0\n", "web.fetch.timeout_s", 2);
        let t = rejected(
            "[web.fetch]\ntimeout_s = 2\nconnect_timeout_s = 5\n",
            "web.fetch.connect_timeout_s",
            3,
        );
        assert!(t.contains("longer than timeout_s"), "{t}");
        rejected("[web]\nfetch = 1\n", "web.fetch", 2);
        // search keys beside [web.fetch] still need a backend
        rejected("[web]\nurl = \"http://x\"\n[web.fetch]\n", "web.backend", 1);
    }

    #[test]
    fn the_setup_resolves_the_key_in_the_keeper() {
        let home = tempfile::tempdir().unwrap();
        let c = parse("[web]\nbackend = \"brave\"\napi_key = \"keeper:brave\"\n").unwrap();
        let keeper = Keeper::open(home.path()).unwrap();
        match c.web_search_setup(&keeper) {
            WebSearchSetup::Unusable(why) => {
                assert!(why.contains("seam secret set brave"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        let mut keeper = Keeper::open(home.path()).unwrap();
        keeper
            .set("brave", SecretValue::new("the-brave-key-123456"))
            .unwrap();
        match c.web_search_setup(&keeper) {
            WebSearchSetup::Ready(b) => {
                assert_eq!(b.api_key.as_ref().unwrap().expose(), "the-brave-key-123456");
                assert!(!format!("{b:?}").contains("the-brave-key"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            GateConfig::default().web_search_setup(&keeper),
            WebSearchSetup::Unconfigured
        );
    }
}
