//! `web.fetch {url}`: one web page, by its http(s) URL, as text.
//!
//! Where it may go is configuration (`[web.fetch]` in the gate's config, [`crate::config`]):
//! an allow-list of hosts. With no `[web.fetch]` table, or `allow = []`, no host is allowed:
//! an empty list means nothing, never everything. `"*"` is every host on the public
//! internet; `"*.example.org"` every name below `example.org` (not `example.org` itself);
//! `"docs.rs"` or `"10.0.0.5"` exactly that host.
//!
//! What is enforced, in code, on every call:
//! - **scheme**: `http` and `https` only; any other is refused, naming it. No credentials in
//!   the URL.
//! - **GET only**: the schema has no method, no headers and no body.
//! - **hosts**: the URL's host, and the host of every redirect, must be on the allow-list.
//! - **addresses**: every address a host resolves to is checked *at connect time*, by the
//!   client's own resolver ([`CheckedResolver`]): the name is resolved once, every address is
//!   classified ([`special_address`]), and the connection goes to those checked addresses and
//!   no others, so DNS rebinding between the check and the connect cannot happen. An IP-literal
//!   host (which no resolver sees) is checked before the request and before each redirect is
//!   followed. Loopback, private (RFC 1918, ULA `fc00::/7`), link-local (`169.254/16`,
//!   `fe80::/10`), cloud metadata (`169.254.169.254`, `fd00:ec2::254`), carrier-grade NAT
//!   (`100.64/10`), unspecified, multicast, broadcast and reserved addresses, and the
//!   IPv4-mapped, IPv4-compatible and NAT64 IPv6 forms of them, are refused unless the host is
//!   allowed *by name* (an exact entry, not `"*"` or `"*.…"`). A name that resolves to such an
//!   address and to a public one is refused all the same.
//! - **redirects**: followed by the client's redirect policy, each hop checked as above, at
//!   most `max_redirects` of them. In a tainted turn each hop's host must also be endorsed
//!   for the turn ([`ToolCall::reach`]): the toolbox checked only the URL asked for, and an
//!   open redirect on an endorsed host would otherwise carry that URL's data on.
//! - **size**: the body is read as a stream and reading stops at `max_bytes`; the result then
//!   says it was cut. The text returned is cut at `max_chars` characters, and says so too.
//! - **time**: `connect_timeout_s` bounds each connection, `timeout_s` all of the call's
//!   network work (resolving, connects, redirects and reading the body): the request is
//!   dropped when it runs out. Reducing the body to text comes after, bounded by `max_bytes`.
//! - **content**: HTML is reduced to text ([`html2text`]: scripts, styles and the head are
//!   dropped; headings are marked `#`, emphasis `**`, and links become numbered references
//!   listed at the end); other text types (plain text, JSON, XML, …) are
//!   returned as they are; any other type (images, PDFs, archives) is refused. Bytes are decoded
//!   as UTF-8 (an invalid sequence becomes U+FFFD).
//!
//! No proxy from the environment is used, no cookie is kept, no `Referer` is sent. The result
//! is untrusted text: the tool taints its turn, and has egress, so a tainted turn cannot call
//! it (unless the policy says `[taint] egress = "allow"`). A refusal quotes the URL the caller
//! gave, and of a redirect only its scheme, host and port: a refusal does not taint, so it
//! carries no more of the web's words than the host it names.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs as _};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use seam_policy::Capability;
use seam_protocol::RefusalCode;
use serde::Deserialize;
use serde_json::{Value, json};
use url::{Host, Url};

use crate::config::WebFetchSetup;
use crate::mcp::upstream::ClientRuntime;
use crate::tools::web_search::{find_source, root_cause, strip_html};
use seam_toolbox::{
    DestinationForm, DestinationParam, GovernedTool, ToolCall, ToolDecl, ToolFailure,
};

/// The longest URL taken (characters).
const MAX_URL_CHARS: u64 = 2048;
/// The width HTML is wrapped to when reduced to text.
const TEXT_WIDTH: usize = 100;
/// The deepest nesting of elements handed to the HTML parser. Its time grows with the square
/// of the depth (40,000 nested `<div>`s: over a minute); a page nested deeper is reduced by
/// [`flat_text`], which is linear, and the result says so.
const MAX_HTML_DEPTH: usize = 256;

/// Why an address is not reached (unless its host is allowed by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialAddress {
    Loopback,
    /// RFC 1918, IPv6 unique local (`fc00::/7`), and the old site-local `fec0::/10`.
    Private,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `169.254.169.254`, `fd00:ec2::254`: where a cloud machine's credentials are served.
    CloudMetadata,
    /// Carrier-grade NAT, `100.64.0.0/10`.
    Cgnat,
    /// `0.0.0.0`, `::`.
    Unspecified,
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Not for hosts on the internet: `0.0.0.0/8`, `240.0.0.0/4`, `192.0.0.0/24`, benchmarking
    /// `198.18.0.0/15`, documentation ranges, the deprecated IPv4-compatible IPv6 form, …
    Reserved,
}

impl SpecialAddress {
    /// As a refusal says it: "a private address".
    pub fn describe(self) -> &'static str {
        match self {
            SpecialAddress::Loopback => "a loopback address",
            SpecialAddress::Private => "a private address",
            SpecialAddress::LinkLocal => "a link-local address",
            SpecialAddress::CloudMetadata => "a cloud metadata address",
            SpecialAddress::Cgnat => "a carrier-grade NAT address (100.64.0.0/10)",
            SpecialAddress::Unspecified => "the unspecified address",
            SpecialAddress::Multicast => "a multicast address",
            SpecialAddress::Broadcast => "the broadcast address",
            SpecialAddress::Reserved => "a reserved address",
        }
    }
}

/// What kind of special address `ip` is; `None` for an ordinary public address.
pub fn special_address(ip: IpAddr) -> Option<SpecialAddress> {
    match ip {
        IpAddr::V4(a) => special_v4(a),
        IpAddr::V6(a) => special_v6(a),
    }
}

fn special_v4(a: Ipv4Addr) -> Option<SpecialAddress> {
    use SpecialAddress::*;
    let [o0, o1, o2, _] = a.octets();
    Some(match (o0, o1, o2) {
        _ if a == Ipv4Addr::new(169, 254, 169, 254) => CloudMetadata,
        _ if a.is_unspecified() => Unspecified,
        _ if a.is_broadcast() => Broadcast,
        (127, _, _) => Loopback,
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => Private,
        (169, 254, _) => LinkLocal,
        (100, 64..=127, _) => Cgnat,
        (224..=239, _, _) => Multicast,
        (0, _, _) | (240..=255, _, _) => Reserved,
        (192, 0, 0) | (192, 0, 2) | (198, 18..=19, _) | (198, 51, 100) | (203, 0, 113) => Reserved,
        _ => return None,
    })
}

fn special_v6(a: Ipv6Addr) -> Option<SpecialAddress> {
    use SpecialAddress::*;
    if a == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254) {
        return Some(CloudMetadata);
    }
    if a.is_unspecified() {
        return Some(Unspecified);
    }
    if a.is_loopback() {
        return Some(Loopback);
    }
    let s = a.segments();
    let embedded = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    // ::ffff:a.b.c.d, IPv4-mapped: the IPv4 address itself
    if let Some(v4) = a.to_ipv4_mapped() {
        return special_v4(v4);
    }
    // ::a.b.c.d, IPv4-compatible (deprecated): never a host on the internet
    if s[..6] == [0; 6] {
        return Some(special_v4(embedded()).unwrap_or(Reserved));
    }
    // 64:ff9b::/96 and 64:ff9b:1::/48, NAT64: the IPv4 address behind the translator
    if (s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]) || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) {
        return special_v4(embedded());
    }
    // 2002::/16, 6to4: the IPv4 address of the tunnel's end
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return special_v4(v4);
    }
    Some(match s[0] {
        0xfc00..=0xfdff => Private,
        0xfe00..=0xfe7f => Reserved,
        0xfe80..=0xfebf => LinkLocal,
        0xfec0..=0xfeff => Private,
        0xff00..=0xffff => Multicast,
        0x2001 if s[1] == 0x0db8 => Reserved,
        0x0100 if s[1..4] == [0, 0, 0] => Reserved,
        _ => return None,
    })
}

/// A host as the checks see it: a name (lower case, no trailing dot) or an address.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Name(String),
    Ip(IpAddr),
}

impl Target {
    fn of_host(host: Host<&str>) -> Target {
        match host {
            Host::Ipv4(a) => Target::Ip(IpAddr::V4(a)),
            Host::Ipv6(a) => Target::Ip(IpAddr::V6(a)),
            Host::Domain(d) => Target::of_name(d),
        }
    }

    fn of_name(name: &str) -> Target {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        // A name an address parser would take is an address (belt and braces: the URL parser
        // already makes one of every dotted or bracketed address form it knows).
        match name.trim_start_matches('[').trim_end_matches(']').parse() {
            Ok(ip) => Target::Ip(ip),
            Err(_) => Target::Name(name),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Name(n) => f.write_str(n),
            Target::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// One entry of `[web.fetch] allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// `"*"`: every host (its addresses still checked).
    Any,
    /// `"*.example.org"`: every name below `example.org`, not `example.org` itself.
    Below(String),
    /// `"docs.rs"`: exactly that name. Allowed by name, so it may resolve to a special address.
    Name(String),
    /// `"10.0.0.5"`, `"::1"`: exactly that address, allowed by name as well.
    Ip(IpAddr),
}

impl HostPattern {
    /// Parses one entry as written in the config; the error says why it is not one.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let text = text.trim();
        if text == "*" {
            return Ok(HostPattern::Any);
        }
        let (below, rest) = match text.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let bad = |why: &str| format!("\"{text}\" is not a host pattern: {why}");
        if rest.contains("://") || rest.contains('/') {
            return Err(bad(
                "write the host only, without a scheme or a path (\"docs.rs\", not \
                 \"https://docs.rs/\")",
            ));
        }
        let bracketed = rest.starts_with('[');
        let as_url_host = if !bracketed && rest.parse::<Ipv6Addr>().is_ok() {
            format!("[{rest}]")
        } else {
            rest.to_owned()
        };
        let host = Host::parse(&as_url_host).map_err(|e| {
            if rest.contains(':') && !bracketed {
                bad("write the host without a port")
            } else {
                bad(&e.to_string())
            }
        })?;
        let target = match &host {
            Host::Domain(d) => Target::of_name(d),
            Host::Ipv4(a) => Target::Ip(IpAddr::V4(*a)),
            Host::Ipv6(a) => Target::Ip(IpAddr::V6(*a)),
        };
        match (below, target) {
            (_, Target::Name(n)) if n.is_empty() || !valid_name(&n) => Err(bad(
                "a host name is made of letters, digits, '-' and '.'; the only wildcards are \
                 \"*\" (every host) and a leading \"*.\" (every name below one)",
            )),
            (true, Target::Ip(_)) => Err(bad("\"*.\" goes before a name, not an address")),
            (true, Target::Name(n)) => Ok(HostPattern::Below(n)),
            (false, Target::Name(n)) => Ok(HostPattern::Name(n)),
            (false, Target::Ip(ip)) => Ok(HostPattern::Ip(ip)),
        }
    }

    fn matches(&self, host: &Target) -> bool {
        match (self, host) {
            (HostPattern::Any, _) => true,
            (HostPattern::Below(suffix), Target::Name(n)) => n
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (HostPattern::Name(p), Target::Name(n)) => p == n,
            (HostPattern::Ip(p), Target::Ip(ip)) => p == ip,
            _ => false,
        }
    }

    fn names(&self, host: &Target) -> bool {
        matches!(self, HostPattern::Name(_) | HostPattern::Ip(_)) && self.matches(host)
    }
}

fn valid_name(n: &str) -> bool {
    n.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    }) && n.len() <= 253
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostPattern::Any => f.write_str("*"),
            HostPattern::Below(s) => write!(f, "*.{s}"),
            HostPattern::Name(n) => f.write_str(n),
            HostPattern::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// `[web.fetch] allow`: the hosts `web.fetch` may reach. Empty: none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchAllowList {
    patterns: Vec<HostPattern>,
}

impl FetchAllowList {
    pub fn new(patterns: Vec<HostPattern>) -> FetchAllowList {
        FetchAllowList { patterns }
    }

    pub fn patterns(&self) -> &[HostPattern] {
        &self.patterns
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    fn allows(&self, host: &Target) -> bool {
        self.patterns.iter().any(|p| p.matches(host))
    }

    /// Is `host` allowed by name (an exact entry)? Then its addresses are not checked.
    fn names(&self, host: &Target) -> bool {
        self.patterns.iter().any(|p| p.names(host))
    }

    fn shown(&self) -> String {
        self.patterns
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A host's address the checks refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{host} resolves to {addr}, {}", class.describe())]
pub struct AddressRefused {
    host: String,
    addr: IpAddr,
    class: SpecialAddress,
}

/// Refuses `host` when it is not allowed by name and any of `addrs` is a special address.
fn check_addresses(
    allow: &FetchAllowList,
    host: &Target,
    addrs: &[IpAddr],
) -> Result<(), AddressRefused> {
    if allow.names(host) {
        return Ok(());
    }
    for &addr in addrs {
        if let Some(class) = special_address(addr) {
            return Err(AddressRefused {
                host: host.to_string(),
                addr,
                class,
            });
        }
    }
    Ok(())
}

/// Names to addresses. The system's resolver in the gate; a test gives a table, to reach its
/// loopback server by a name it controls. Whatever it answers goes through the same checks.
pub trait Lookup: Send + Sync + fmt::Debug {
    fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The system's resolver (`getaddrinfo`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok((host, 0u16).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// A name that resolves to no address.
#[derive(Debug, thiserror::Error)]
#[error("{0} resolves to no address")]
struct NoAddress(String);

/// The client's resolver: resolves once, checks every address, and hands the connector only
/// the checked addresses, so what is connected to is what was checked.
#[derive(Debug)]
pub struct CheckedResolver {
    allow: FetchAllowList,
    lookup: Arc<dyn Lookup>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let raw = name.as_str().to_owned();
        let allow = self.allow.clone();
        let lookup = Arc::clone(&self.lookup);
        Box::pin(async move {
            let host = Target::of_name(&raw);
            let looked = raw.clone();
            let addrs = tokio::task::spawn_blocking(move || lookup.lookup(&looked))
                .await
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)??;
            if addrs.is_empty() {
                return Err(Box::new(NoAddress(raw)) as Box<dyn std::error::Error + Send + Sync>);
            }
            check_addresses(&allow, &host, &addrs)?;
            let addrs: Addrs = Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// A URL refused before it was requested (the first one, or a redirect's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum UrlRefused {
    #[error("{0}: URLs are refused; web.fetch reads http and https URLs only")]
    Scheme(String),
    #[error("the URL has no host")]
    NoHost,
    #[error("the URL holds credentials (user:password@); web.fetch sends none")]
    Credentials,
    #[error("{host} is not on the [web.fetch] allow list ({list})")]
    NotAllowed { host: String, list: String },
    #[error("the [web.fetch] allow list is empty, and an empty list allows no host")]
    EmptyList,
    #[error(transparent)]
    Address(#[from] AddressRefused),
}

/// Scheme, credentials, the allow-list and, for an address written in the URL (which no
/// resolver sees), the address check.
fn check_url(allow: &FetchAllowList, url: &Url) -> Result<(), UrlRefused> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlRefused::Scheme(url.scheme().to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRefused::Credentials);
    }
    let host = url.host().ok_or(UrlRefused::NoHost)?;
    let target = Target::of_host(host);
    if allow.is_empty() {
        return Err(UrlRefused::EmptyList);
    }
    if !allow.allows(&target) {
        return Err(UrlRefused::NotAllowed {
            host: target.to_string(),
            list: allow.shown(),
        });
    }
    if let Target::Ip(ip) = target {
        check_addresses(allow, &Target::Ip(ip), &[ip])?;
    }
    Ok(())
}

/// A redirect the client refused; found again in the error's source chain.
#[derive(Debug, thiserror::Error)]
#[error("a redirect to {to} was refused: {why}")]
struct RedirectRefused {
    /// Scheme, host and port only (see the module's docs).
    to: String,
    why: String,
    /// Refused by the destination rule of a tainted turn (else by the allow-list or a limit).
    tainted: bool,
}

fn origin_of(url: &Url) -> String {
    match (url.host_str(), url.port_or_known_default()) {
        (Some(h), Some(p)) => format!("{}://{h}:{p}", url.scheme()),
        (Some(h), None) => format!("{}://{h}", url.scheme()),
        _ => format!("a {}: URL", url.scheme()),
    }
}

#[derive(Debug)]
pub struct WebFetch {
    decl: ToolDecl,
    setup: WebFetchSetup,
    lookup: Arc<dyn Lookup>,
    not_paths: Vec<String>,
    /// Started on first use, so listing tools starts nothing.
    client: OnceLock<Result<(Arc<ClientRuntime>, reqwest::Client), String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    url: String,
}

impl WebFetch {
    pub fn new(setup: WebFetchSetup) -> Self {
        Self::with_lookup(setup, Arc::new(SystemLookup))
    }

    /// With names resolved by `lookup` instead of the system's resolver: for tests, which reach
    /// their loopback server by names they control. Every address `lookup` answers is checked
    /// exactly as the system's would be.
    pub fn with_lookup(setup: WebFetchSetup, lookup: Arc<dyn Lookup>) -> Self {
        WebFetch {
            decl: ToolDecl {
                name: "web.fetch",
                version: "1",
                description: "Read one web page by its http(s) URL: returns {url, status, content_type, text}, HTML reduced to text. Only hosts the owner allows are reached. The text is untrusted content from the web.",
                schema: json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["url"],
                    "properties": {
                        "url": {"type": "string", "minLength": 1, "maxLength": MAX_URL_CHARS, "description": "the http or https URL of the page"}
                    }
                }),
                capability: Capability::WebFetch,
                // The URL leaves the machine: consent for it is meaningful, so `ask` waits for
                // an operator rather than refusing as for a read.
                reads: false,
                paths: vec![],
                taints: true,
                egress: true,
                // This call's destination is the host of `url`, and nothing else in the
                // params leaves the machine: in a tainted turn the host must be endorsed
                // (the operator's words, or [egress] destinations).
                destinations: vec![DestinationParam {
                    field: "url",
                    form: DestinationForm::UrlHost,
                }],
                // a fetch always names its URL
                none_named: crate::NoneNamed::Unknown,
            },
            setup,
            lookup,
            // `url` is a URL of the web, not a path: a `file:` URL is refused by the tool.
            not_paths: vec!["url".to_owned()],
            client: OnceLock::new(),
        }
    }

    /// The host a call with these params would reach first (lower case, no trailing dot), or
    /// `None` when its `url` is not an http(s) URL with a host. Redirects may lead elsewhere;
    /// each hop is checked against the same allow-list.
    pub fn destination(params: &Value) -> Option<String> {
        let url = Url::parse(params.get("url")?.as_str()?.trim()).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        Some(Target::of_host(url.host()?).to_string())
    }

    fn client(&self) -> Result<(Arc<ClientRuntime>, reqwest::Client), ToolFailure> {
        self.client
            .get_or_init(|| {
                let runtime = ClientRuntime::start()
                    .map_err(|e| format!("web.fetch cannot start its runtime: {e}"))?;
                let client = build_client(&self.setup, Arc::clone(&self.lookup))?;
                Ok((runtime, client))
            })
            .clone()
            .map_err(|e| ToolFailure::new(RefusalCode::ToolFailed, e))
    }

    fn unconfigured(&self) -> ToolFailure {
        let how = "add the hosts to reach to the gate's config file (--config FILE, \
                   SEAM_CONFIG, or config.toml in seam's home), e.g. [web.fetch] allow = \
                   [\"docs.rs\", \"*.wikipedia.org\"], or allow = [\"*\"] for every public host";
        let message = if self.setup.written {
            format!(
                "web.fetch: the [web.fetch] allow list is empty, and an empty list allows no \
                 host (not every host); {how}"
            )
        } else {
            format!(
                "web.fetch is not configured: the gate's config has no [web.fetch] table, so \
                 no host is allowed; {how}"
            )
        };
        ToolFailure::new(RefusalCode::NotAllowed, message)
    }
}

impl GovernedTool for WebFetch {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn not_paths(&self) -> &[String] {
        &self.not_paths
    }

    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure> {
        let params: Params = serde_json::from_value(call.params().clone())
            .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))?;
        let raw = params.url.trim();
        let url = Url::parse(raw).map_err(|e| {
            ToolFailure::new(
                RefusalCode::InvalidParams,
                format!("web.fetch: \"{raw}\" is not a URL ({e}); give an http or https URL"),
            )
        })?;
        if self.setup.allow.is_empty() && matches!(url.scheme(), "http" | "https") {
            return Err(self.unconfigured());
        }
        check_url(&self.setup.allow, &url).map_err(|r| refused_url(&url, &r))?;
        let (runtime, client) = self.client()?;
        let limits = Limits::of(&self.setup);
        let timeout = self.setup.timeout;
        let target = url.clone();
        let reach = call.reach().cloned();
        let fetched = runtime
            .wait(async move {
                tokio::time::timeout(timeout, fetch(client, target, limits, reach)).await
            })
            .ok_or_else(|| {
                ToolFailure::new(RefusalCode::ToolFailed, "web.fetch's runtime stopped")
            })?;
        let page = match fetched {
            Err(_elapsed) => {
                return Err(ToolFailure::new(
                    RefusalCode::ToolFailed,
                    format!(
                        "web.fetch: {url} did not answer in full within {} s (timeout_s in \
                         [web.fetch])",
                        secs(timeout)
                    ),
                ));
            }
            Ok(Err(e)) => return Err(self.describe(&url, e)),
            Ok(Ok(page)) => page,
        };
        // Reduced here, on the caller's thread, not on the client's runtime: the work is
        // bounded by max_bytes, and other calls' network waits do not queue behind it.
        let (text, layout_note) = page.text().map_err(|e| self.describe(&url, e))?;
        Ok(self.output(&url, page, &text, layout_note))
    }
}

impl WebFetch {
    fn describe(&self, url: &Url, e: FetchError) -> ToolFailure {
        match e {
            FetchError::NotText(kind) => ToolFailure::new(
                RefusalCode::ToolFailed,
                format!(
                    "web.fetch: {url} is {kind}, not text; web.fetch returns text only (HTML, \
                     plain text, JSON, XML)"
                ),
            ),
            FetchError::Html(why) => ToolFailure::new(
                RefusalCode::ToolFailed,
                format!("web.fetch: {url} sent HTML that could not be reduced to text: {why}"),
            ),
            FetchError::Http(e) => describe_http_error(url, &e, &self.setup),
        }
    }

    fn output(&self, url: &Url, page: Page, text: &str, layout_note: Option<String>) -> Value {
        let mut out = serde_json::Map::new();
        out.insert("url".into(), json!(url.as_str()));
        if page.final_url != *url {
            out.insert("final_url".into(), json!(page.final_url.as_str()));
        }
        out.insert("status".into(), json!(page.status.as_u16()));
        out.insert("content_type".into(), json!(page.content_type));
        let (text, chars_cut) = seam_term::head(text, self.setup.max_chars);
        let mut cut = Vec::new();
        if page.bytes_cut {
            cut.push(format!(
                "the page is larger than the {} byte limit (max_bytes in [web.fetch]); only its \
                 first {} bytes were read",
                self.setup.max_bytes, self.setup.max_bytes
            ));
        }
        if chars_cut {
            cut.push(format!(
                "the text is longer than {} characters (max_chars in [web.fetch]); the rest is \
                 not shown",
                self.setup.max_chars
            ));
        }
        if !cut.is_empty() {
            out.insert("cut".into(), json!(cut.join("; ")));
        }
        let mut notes: Vec<String> = layout_note.into_iter().collect();
        if !page.status.is_success() {
            notes.push(format!(
                "the server answered HTTP {}: the text is its error page, not the page asked for",
                page.status
            ));
        }
        if !notes.is_empty() {
            out.insert("note".into(), json!(notes.join("; ")));
        }
        out.insert("text".into(), json!(text));
        Value::Object(out)
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}

fn refused_url(url: &Url, r: &UrlRefused) -> ToolFailure {
    let code = match r {
        UrlRefused::Scheme(_) | UrlRefused::NoHost | UrlRefused::Credentials => {
            RefusalCode::InvalidParams
        }
        _ => RefusalCode::NotAllowed,
    };
    ToolFailure::new(code, format!("web.fetch: {url}: {}", refused_text(r)))
}

/// What a refused URL's refusal says, with what to do about it.
fn refused_text(r: &UrlRefused) -> String {
    match r {
        UrlRefused::Address(a) => format!(
            "{a}; allow the host by name in [web.fetch] allow to reach it (\"*\" and \"*.…\" \
             entries never reach such an address)"
        ),
        UrlRefused::NotAllowed { .. } => {
            format!("{r}; the owner can add it to [web.fetch] allow in the gate's config")
        }
        other => other.to_string(),
    }
}

fn describe_http_error(url: &Url, e: &reqwest::Error, setup: &WebFetchSetup) -> ToolFailure {
    let refuse = |m: String| ToolFailure::new(RefusalCode::NotAllowed, m);
    let failed = |m: String| ToolFailure::new(RefusalCode::ToolFailed, m);
    if let Some(r) = find_source::<RedirectRefused>(e) {
        let message = format!("web.fetch: {url} redirected, and the gate refused to follow: {r}");
        if r.tainted {
            return ToolFailure::new(RefusalCode::Tainted, message);
        }
        return refuse(message);
    }
    if let Some(a) = find_source::<AddressRefused>(e) {
        // The error names the URL first asked for; a host other than its own was reached by
        // a redirect.
        let first = url.host().map(|h| Target::of_host(h).to_string());
        let via = match first {
            Some(h) if h != a.host => format!(" (redirected to {})", a.host),
            _ => String::new(),
        };
        return refuse(format!(
            "web.fetch: {url}{via}: {}",
            refused_text(&UrlRefused::Address(a.clone()))
        ));
    }
    if e.is_timeout() {
        return failed(format!(
            "web.fetch: {url} did not answer within {} s (connect_timeout_s {} s, timeout_s {} \
             s in [web.fetch])",
            secs(setup.timeout),
            secs(setup.connect_timeout),
            secs(setup.timeout),
        ));
    }
    if let Some(n) = find_source::<NoAddress>(e) {
        return failed(format!("web.fetch: {url}: {n}"));
    }
    if e.is_connect() {
        return failed(format!(
            "web.fetch: cannot connect to {}: {}",
            origin_of(e.url().unwrap_or(url)),
            root_cause(e)
        ));
    }
    failed(format!("web.fetch: {url} failed: {}", root_cause(e)))
}

tokio::task_local! {
    /// The turn's endorsements for the fetch being made (`None`: an untainted turn), for the
    /// redirect policy, which reqwest calls while the fetch's own future is polled. The client
    /// is built once, so this is how a call's reach gets to it.
    static REACH: Option<seam_toolbox::Reach>;
}

fn build_client(setup: &WebFetchSetup, lookup: Arc<dyn Lookup>) -> Result<reqwest::Client, String> {
    let allow = setup.allow.clone();
    let max_redirects = setup.max_redirects;
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let to = attempt.url().clone();
        let refused = |why: String| RedirectRefused {
            to: origin_of(&to),
            why,
            tainted: false,
        };
        if attempt.previous().len() > max_redirects {
            let why = format!(
                "it would be redirect {} of at most {max_redirects} (max_redirects in [web.fetch])",
                attempt.previous().len()
            );
            return attempt.error(refused(why));
        }
        if let Err(r) = check_url(&allow, &to) {
            let why = refused_text(&r);
            return attempt.error(refused(why));
        }
        // In a tainted turn the redirect's host is a destination too: the toolbox checked
        // only the URL asked for, and an endorsed host's open redirect must not carry the
        // URL's data on to a host nobody endorsed. Not knowing the turn is a refusal.
        let endorsed = REACH.try_with(|reach| match reach {
            None => true,
            Some(reach) => seam_policy::Destination::parse_url_host(to.as_str())
                .is_ok_and(|d| reach.endorses(d)),
        });
        match endorsed {
            Ok(true) => attempt.follow(),
            Ok(false) => attempt.error(RedirectRefused {
                tainted: true,
                ..refused(format!(
                    "this turn has read the owner's files or untrusted content, and {} is not a \
                 destination endorsed for it (the operator's words do not name it, and no \
                 entry of the policy's [egress] destinations matches); fetch that URL in a \
                 call of its own once the operator names its host",
                    to.host_str().unwrap_or("its host")
                ))
            }),
            Err(_) => attempt.error(refused(
                "web.fetch cannot tell which turn the fetch serves".to_owned(),
            )),
        }
    });
    let resolver = Arc::new(CheckedResolver {
        allow: setup.allow.clone(),
        lookup,
    });
    reqwest::Client::builder()
        .redirect(policy)
        .dns_resolver(resolver)
        .no_proxy()
        .referer(false)
        .connect_timeout(setup.connect_timeout)
        .timeout(setup.timeout)
        .user_agent(concat!("seam/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("web.fetch cannot build its web client: {e}"))
}

/// What one fetch may take.
#[derive(Debug, Clone, Copy)]
struct Limits {
    max_bytes: u64,
}

impl Limits {
    fn of(setup: &WebFetchSetup) -> Limits {
        Limits {
            max_bytes: setup.max_bytes,
        }
    }
}

#[derive(Debug)]
enum FetchError {
    Http(reqwest::Error),
    /// A content type web.fetch does not read, as shown.
    NotText(String),
    Html(String),
}

impl From<reqwest::Error> for FetchError {
    fn from(e: reqwest::Error) -> Self {
        FetchError::Http(e)
    }
}

/// What the network gave: the body as read (up to the limit), and how to read it.
#[derive(Debug)]
struct Page {
    final_url: Url,
    status: reqwest::StatusCode,
    content_type: String,
    kind: Kind,
    body: Vec<u8>,
    bytes_cut: bool,
}

impl Page {
    /// The body as text (HTML reduced, any other text as it is), and a note when the HTML
    /// was too deeply nested for its layout to be kept.
    fn text(&self) -> Result<(String, Option<String>), FetchError> {
        let text = String::from_utf8_lossy(&self.body);
        if self.kind != Kind::Html {
            return Ok((tidy(&text), None));
        }
        let depth = html_depth(&text);
        if depth > MAX_HTML_DEPTH {
            let note = format!(
                "the page nests its elements about {depth} deep, more than the {MAX_HTML_DEPTH}                  web.fetch lays out: its text is shown without the layout"
            );
            return Ok((tidy(&flat_text(&text)), Some(note)));
        }
        let reduced = html_to_text(text.as_bytes()).map_err(FetchError::Html)?;
        Ok((tidy(&reduced), None))
    }
}

/// How a body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    /// No content type: decided by the bytes.
    Unknown,
}

/// The kind of a `Content-Type`, or the type as a refusal shows it (only its plain
/// `type/subtype` form: the rest of the header is the server's words).
fn kind_of(content_type: Option<&str>) -> Result<Kind, String> {
    let Some(ct) = content_type else {
        return Ok(Kind::Unknown);
    };
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if mime.is_empty() {
        return Ok(Kind::Unknown);
    }
    let (ty, sub) = mime.split_once('/').unwrap_or((mime.as_str(), ""));
    match (ty, sub) {
        ("text", "html") | ("application", "xhtml+xml") => Ok(Kind::Html),
        ("text", _) => Ok(Kind::Text),
        ("application", s)
            if matches!(
                s,
                "json"
                    | "xml"
                    | "javascript"
                    | "ecmascript"
                    | "x-javascript"
                    | "toml"
                    | "yaml"
                    | "x-yaml"
                    | "x-sh"
                    | "sql"
                    | "graphql"
            ) || s.ends_with("+json")
                || s.ends_with("+xml") =>
        {
            Ok(Kind::Text)
        }
        _ => {
            let plain = mime.len() <= 100
                && mime
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/.+-_".contains(&b));
            Err(if plain {
                mime
            } else {
                "of a content type that is not text".to_owned()
            })
        }
    }
}

async fn fetch(
    client: reqwest::Client,
    url: Url,
    limits: Limits,
    reach: Option<seam_toolbox::Reach>,
) -> Result<Page, FetchError> {
    let request = client
        .get(url)
        .header(
            ACCEPT,
            HeaderValue::from_static(
                "text/html, application/xhtml+xml, text/plain;q=0.9, application/json;q=0.9, \
                 */*;q=0.1",
            ),
        )
        .send();
    let mut response = REACH.scope(reach, request).await?;
    let status = response.status();
    let final_url = response.url().clone();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let kind = kind_of(content_type.as_deref()).map_err(FetchError::NotText)?;
    // Read as a stream, stopping at the limit.
    let cap = usize::try_from(limits.max_bytes).unwrap_or(usize::MAX);
    let mut body: Vec<u8> = Vec::new();
    let mut bytes_cut = false;
    while let Some(chunk) = response.chunk().await? {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            bytes_cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    drop(response);
    if bytes_cut {
        // a character cut in two by the limit is dropped, not shown as U+FFFD
        trim_partial_char(&mut body);
    }
    let kind = match kind {
        Kind::Unknown => sniff(&body).ok_or_else(|| {
            FetchError::NotText("of no stated content type, and not text".to_owned())
        })?,
        k => k,
    };
    let shown_type = match (&content_type, kind) {
        (Some(ct), _) => ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase(),
        (None, Kind::Html) => "text/html (no content type given)".to_owned(),
        (None, _) => "text/plain (no content type given)".to_owned(),
    };
    Ok(Page {
        final_url,
        status,
        content_type: shown_type,
        kind,
        body,
        bytes_cut,
    })
}

/// The kind of a body without a content type: HTML, text, or `None` for binary.
fn sniff(body: &[u8]) -> Option<Kind> {
    let head = &body[..body.len().min(1024)];
    if head.contains(&0) {
        return None;
    }
    let text = String::from_utf8_lossy(head);
    let start = text.trim_start().to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Some(Kind::Html)
    } else {
        Some(Kind::Text)
    }
}

/// Drops an incomplete UTF-8 sequence at the end of `body`.
fn trim_partial_char(body: &mut Vec<u8>) {
    let tail = body.len().saturating_sub(4);
    for i in (tail..body.len()).rev() {
        let b = body[i];
        if b & 0xC0 != 0x80 {
            // a lead byte (or ASCII) at i: complete when the sequence fits
            let need = match b {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            if body.len() - i < need {
                body.truncate(i);
            }
            return;
        }
    }
}

/// HTML reduced to text: scripts, styles and the head dropped, links numbered.
fn html_to_text(body: &[u8]) -> Result<String, String> {
    html2text::config::plain()
        .allow_width_overflow()
        .string_from_read(body, TEXT_WIDTH)
        .map_err(|e| e.to_string())
}

/// Elements whose content is text, not markup, to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
];
/// Elements that have no end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen", "frame",
];
/// Elements a start tag of the same kind closes (`<p>a<p>b`, `<li>a<li>b`).
const SIBLING_CLOSED: &[&str] = &["p", "li", "dt", "dd", "option", "tr", "td", "th"];

/// One tag of an HTML text: its lower-case name (empty for a comment, a doctype or a
/// processing instruction), whether it is an end tag, and where the text after it starts.
struct Tag {
    name: String,
    end: bool,
    next: usize,
}

/// The tag at `at` (a `<`), or `None` when that `<` starts no tag.
fn tag_at(html: &str, at: usize) -> Option<Tag> {
    let rest = &html[at..];
    let skip = |next: usize| {
        Some(Tag {
            name: String::new(),
            end: false,
            next,
        })
    };
    if let Some(body) = rest.strip_prefix("<!--") {
        return skip(body.find("-->").map_or(html.len(), |i| at + 4 + i + 3));
    }
    let b = rest.as_bytes();
    let (end, start) = match b.get(1) {
        Some(b'/') => (true, 2),
        Some(b'!' | b'?') => return skip(rest.find('>').map_or(html.len(), |i| at + i + 1)),
        _ => (false, 1),
    };
    if !b.get(start).is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let name_len = b[start..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-' || **c == b':')
        .count();
    let name = rest[start..start + name_len].to_ascii_lowercase();
    // to the closing `>`, past quoted attribute values
    let mut quote: Option<u8> = None;
    let mut i = start + name_len;
    while i < b.len() {
        match (quote, b[i]) {
            (Some(q), c) if c == q => quote = None,
            (None, b'"' | b'\'') => quote = Some(b[i]),
            (None, b'>') => break,
            _ => {}
        }
        i += 1;
    }
    Some(Tag {
        name,
        end,
        next: (at + i + 1).min(html.len()),
    })
}

/// Where the raw text of a `name` element whose content starts at `from` ends: at its end
/// tag's `<`, or the end of the text.
fn raw_text_end(html: &str, from: usize, name: &str) -> usize {
    let closing = format!("</{name}");
    let bytes = html.as_bytes();
    let mut at = from;
    while let Some(i) = html[at..].find("</") {
        let pos = at + i;
        let candidate = &bytes[pos..(pos + closing.len()).min(bytes.len())];
        if candidate.eq_ignore_ascii_case(closing.as_bytes()) {
            return pos;
        }
        at = pos + 2;
    }
    html.len()
}

/// How deep the elements of `html` nest, estimated from above in one pass: every start tag
/// opens an element (but a void one; and `<p>`, `<li>`, … first close one of their kind on
/// top), and an end tag closes only the element on top, when it is of its name. A parser
/// closes elements more readily than that, so the depth it builds is not above this one.
fn html_depth(html: &str) -> usize {
    let mut stack: Vec<String> = Vec::new();
    let mut deepest = 0;
    let mut at = 0;
    while let Some(i) = html[at..].find('<') {
        let pos = at + i;
        let Some(tag) = tag_at(html, pos) else {
            at = pos + 1;
            continue;
        };
        at = tag.next;
        if tag.name.is_empty() {
            continue;
        }
        if tag.end {
            if stack.last() == Some(&tag.name) {
                stack.pop();
            }
            continue;
        }
        if VOID.contains(&tag.name.as_str()) {
            continue;
        }
        if RAW_TEXT.contains(&tag.name.as_str()) {
            deepest = deepest.max(stack.len() + 1);
            at = raw_text_end(html, at, &tag.name);
            continue;
        }
        if SIBLING_CLOSED.contains(&tag.name.as_str()) && stack.last() == Some(&tag.name) {
            stack.pop();
        }
        stack.push(tag.name);
        deepest = deepest.max(stack.len());
    }
    deepest
}

/// HTML to text in one linear pass, without its layout: scripts, styles, the title and
/// comments dropped, a line break for every tag that is not inline, entities decoded.
fn flat_text(html: &str) -> String {
    const INLINE: &[&str] = &[
        "a", "b", "strong", "em", "i", "u", "mark", "span", "code", "small", "sub", "sup", "abbr",
        "cite", "q", "s", "kbd", "var", "font", "time",
    ];
    let mut out = String::with_capacity(html.len() / 2);
    let mut at = 0;
    while let Some(i) = html[at..].find('<') {
        let pos = at + i;
        let Some(tag) = tag_at(html, pos) else {
            // a `<` that starts no tag: text, escaped so that the decoding below keeps it
            out.push_str(&html[at..pos]);
            out.push_str("&lt;");
            at = pos + 1;
            continue;
        };
        out.push_str(&html[at..pos]);
        at = tag.next;
        let name = tag.name.as_str();
        if name.is_empty() {
            continue;
        }
        if !tag.end && RAW_TEXT.contains(&name) {
            let end = raw_text_end(html, at, name);
            at = tag_at(html, end).map_or(html.len(), |t| t.next);
            continue;
        }
        if !INLINE.contains(&name) {
            out.push('\n');
        }
    }
    out.push_str(&html[at..]);
    // no tag is left: `strip_html` only decodes the entities
    strip_html(&out)
}

/// Control characters other than newline and tab removed, line ends trimmed, runs of blank
/// lines folded to one.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line: String = line
            .chars()
            .filter(|c| !c.is_control() || *c == '\t')
            .collect();
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_matches('\n').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn special_addresses_are_classified() {
        use SpecialAddress::*;
        let cases = [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("10.0.0.5", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("fc00::1", Some(Private)),
            ("fd12:3456::1", Some(Private)),
            ("169.254.1.1", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("169.254.169.254", Some(CloudMetadata)),
            ("fd00:ec2::254", Some(CloudMetadata)),
            ("100.64.0.1", Some(Cgnat)),
            ("100.127.255.255", Some(Cgnat)),
            ("0.0.0.0", Some(Unspecified)),
            ("::", Some(Unspecified)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("ff02::1", Some(Multicast)),
            ("255.255.255.255", Some(Broadcast)),
            ("0.1.2.3", Some(Reserved)),
            ("240.0.0.1", Some(Reserved)),
            ("198.18.0.1", Some(Reserved)),
            ("2001:db8::1", Some(Reserved)),
            // IPv4-mapped IPv6: the IPv4 address's class
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.0.0.5", Some(Private)),
            ("::ffff:169.254.169.254", Some(CloudMetadata)),
            ("::ffff:100.64.0.1", Some(Cgnat)),
            ("::ffff:0.0.0.0", Some(Unspecified)),
            ("::ffff:255.255.255.255", Some(Broadcast)),
            ("::ffff:224.0.0.1", Some(Multicast)),
            ("::ffff:169.254.3.4", Some(LinkLocal)),
            // IPv4-compatible, NAT64, 6to4
            ("::127.0.0.1", Some(Loopback)),
            ("::8.8.8.8", Some(Reserved)),
            ("64:ff9b::10.0.0.5", Some(Private)),
            ("64:ff9b::169.254.169.254", Some(CloudMetadata)),
            ("2002:7f00:1::", Some(Loopback)),
            // public
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("172.32.0.1", None),
            ("100.128.0.1", None),
            ("169.255.0.1", None),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::8.8.8.8", None),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4001::200e", None),
        ];
        for (addr, want) in cases {
            assert_eq!(special_address(ip(addr)), want, "{addr}");
        }
    }

    #[test]
    fn host_patterns_parse_and_match() {
        let p = |s: &str| HostPattern::parse(s).unwrap();
        let name = |s: &str| Target::of_name(s);
        assert_eq!(p("*"), HostPattern::Any);
        assert_eq!(p("Docs.RS."), HostPattern::Name("docs.rs".into()));
        assert_eq!(p("*.example.org"), HostPattern::Below("example.org".into()));
        assert_eq!(p("10.0.0.5"), HostPattern::Ip(ip("10.0.0.5")));
        assert_eq!(p("::1"), HostPattern::Ip(ip("::1")));
        assert_eq!(p("[::1]"), HostPattern::Ip(ip("::1")));
        for bad in [
            "",
            "https://docs.rs/",
            "docs.rs:443",
            "docs.rs/x",
            "*.*",
            "a*b.org",
            "*example.org",
            "*.10.0.0.5",
            "exa mple.org",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?} parsed");
        }
        let below = p("*.example.org");
        assert!(below.matches(&name("a.example.org")));
        assert!(below.matches(&name("a.b.EXAMPLE.org.")));
        assert!(!below.matches(&name("example.org")));
        assert!(!below.matches(&name("badexample.org")));
        assert!(!below.names(&name("a.example.org")));
        assert!(p("docs.rs").names(&name("DOCS.rs")));
        assert!(!p("*").names(&name("docs.rs")));
        assert!(p("*").matches(&Target::Ip(ip("8.8.8.8"))));
    }

    fn allow(entries: &[&str]) -> FetchAllowList {
        FetchAllowList::new(
            entries
                .iter()
                .map(|e| HostPattern::parse(e).unwrap())
                .collect(),
        )
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn urls_are_checked_by_scheme_list_and_address() {
        let any = allow(&["*"]);
        check_url(&any, &url("https://example.org/x")).unwrap();
        check_url(&any, &url("http://8.8.8.8/")).unwrap();
        assert_eq!(
            check_url(&any, &url("file:///etc/passwd")),
            Err(UrlRefused::Scheme("file".into()))
        );
        assert_eq!(
            check_url(&any, &url("ftp://example.org/")),
            Err(UrlRefused::Scheme("ftp".into()))
        );
        assert_eq!(
            check_url(&any, &url("http://u:p@example.org/")),
            Err(UrlRefused::Credentials)
        );
        // every written form of a special address the URL parser knows
        for (u, addr) in [
            ("http://10.0.0.5/", "10.0.0.5"),
            ("http://127.1/", "127.0.0.1"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://2130706433/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://[::1]/", "::1"),
            ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
            ("http://[::ffff:a9fe:a9fe]/", "::ffff:169.254.169.254"),
            (
                "http://169.254.169.254/latest/meta-data/",
                "169.254.169.254",
            ),
            ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
            ("http://0.0.0.0:8080/", "0.0.0.0"),
            ("http://127.0.0.1./", "127.0.0.1"),
        ] {
            match check_url(&any, &url(u)) {
                Err(UrlRefused::Address(a)) => assert_eq!(a.addr, ip(addr), "{u}"),
                other => panic!("{u}: {other:?}"),
            }
        }
        // allowed by name: reached
        check_url(&allow(&["10.0.0.5"]), &url("http://10.0.0.5/")).unwrap();
        let listed = allow(&["docs.rs", "*.example.org"]);
        check_url(&listed, &url("https://docs.rs/serde")).unwrap();
        check_url(&listed, &url("https://www.example.org/")).unwrap();
        assert!(matches!(
            check_url(&listed, &url("https://example.org/")),
            Err(UrlRefused::NotAllowed { .. })
        ));
        assert_eq!(
            check_url(&FetchAllowList::default(), &url("https://docs.rs/")),
            Err(UrlRefused::EmptyList)
        );
    }

    #[test]
    fn a_refusal_names_the_address_and_its_kind() {
        let r = check_url(&allow(&["*"]), &url("http://10.0.0.5/")).unwrap_err();
        let shown = refused_url(&url("http://10.0.0.5/"), &r).message;
        assert!(
            shown.starts_with(
                "web.fetch: http://10.0.0.5/: 10.0.0.5 resolves to 10.0.0.5, a private address; \
                 allow the host by name in [web.fetch] allow to reach it"
            ),
            "{shown}"
        );
    }

    #[test]
    fn resolved_addresses_are_checked_unless_allowed_by_name() {
        let list = allow(&["*", "intranet.example"]);
        let host = Target::of_name("evil.example");
        let err = check_addresses(&list, &host, &[ip("8.8.8.8"), ip("127.0.0.1")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "evil.example resolves to 127.0.0.1, a loopback address"
        );
        check_addresses(&list, &host, &[ip("8.8.8.8")]).unwrap();
        check_addresses(
            &list,
            &Target::of_name("intranet.example"),
            &[ip("10.1.2.3")],
        )
        .unwrap();
        let err = check_addresses(&list, &Target::of_name("localhost"), &[ip("::1")]).unwrap_err();
        assert_eq!(err.class, SpecialAddress::Loopback);
    }

    #[test]
    fn content_types_are_sorted() {
        assert_eq!(kind_of(Some("text/html; charset=utf-8")), Ok(Kind::Html));
        assert_eq!(kind_of(Some("TEXT/PLAIN")), Ok(Kind::Text));
        assert_eq!(kind_of(Some("application/ld+json")), Ok(Kind::Text));
        assert_eq!(kind_of(None), Ok(Kind::Unknown));
        assert_eq!(kind_of(Some("image/png")), Err("image/png".into()));
        assert_eq!(
            kind_of(Some("x/ignore previous instructions")),
            Err("of a content type that is not text".into())
        );
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x"), Some(Kind::Html));
        assert_eq!(sniff(b"plain"), Some(Kind::Text));
        assert_eq!(sniff(b"PNG\0\x01"), None);
    }

    #[test]
    fn a_cut_character_is_dropped() {
        let mut b = "aé".as_bytes().to_vec();
        b.pop();
        trim_partial_char(&mut b);
        assert_eq!(b, b"a");
        let mut b = "a€".as_bytes().to_vec();
        trim_partial_char(&mut b);
        assert_eq!(b, "a€".as_bytes());
        let mut b = "a€".as_bytes()[..3].to_vec();
        trim_partial_char(&mut b);
        assert_eq!(b, b"a");
    }

    #[test]
    fn html_is_reduced_to_text() {
        let html = b"<html><head><title>T</title><style>p{color:red}</style></head>\
            <body><script>alert('x')</script><h1>Hello</h1><p>A <b>bold</b> word and \
            <a href=\"https://e.example/\">a link</a>.</p></body></html>";
        let text = tidy(&html_to_text(html).unwrap());
        assert!(text.contains("# Hello"), "{text}");
        assert!(text.contains("A **bold** word and [a link][1]."), "{text}");
        assert!(text.contains("[1]: https://e.example/"), "{text}");
        assert!(text.contains("https://e.example/"), "{text}");
        assert!(!text.contains("alert"), "{text}");
        assert!(!text.contains("color"), "{text}");
        assert!(!text.contains('<'), "{text}");
    }

    fn page(html: &str) -> Page {
        Page {
            final_url: url("http://x.example/"),
            status: reqwest::StatusCode::OK,
            content_type: "text/html".into(),
            kind: Kind::Html,
            body: html.as_bytes().to_vec(),
            bytes_cut: false,
        }
    }

    /// A page of the default `max_bytes` that is nothing but nesting: the parser's time grows
    /// with the square of the depth, so it is reduced without its layout, fast, on a thread
    /// with the 2 MiB stack of a blocking-pool thread (where the service runs calls).
    #[test]
    fn deeply_nested_html_is_reduced_in_linear_time() {
        for tag in ["div", "b", "table><tr><td", "ul><li", "p><div"] {
            let open = format!("<{tag}>");
            let depth = (crate::config::DEFAULT_FETCH_MAX_BYTES as usize) / open.len();
            let mut html = open.repeat(depth);
            html.push_str("deep &amp; down<script>no()</script>");
            let started = std::time::Instant::now();
            let (text, note) = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || page(&html).text().unwrap())
                .unwrap()
                .join()
                .expect("no stack overflow");
            assert_eq!(text, "deep & down", "{tag}");
            assert!(note.unwrap().contains("more than the 256"), "{tag}");
            let took = started.elapsed();
            assert!(took < Duration::from_secs(10), "{tag}: {took:?}");
        }
        // at the limit, the layout is kept
        let html = format!("{}<p>deep</p>", "<div>".repeat(MAX_HTML_DEPTH - 1));
        let (text, note) = page(&html).text().unwrap();
        assert_eq!((text.as_str(), note), ("deep", None));
    }

    #[test]
    fn depth_is_estimated_from_above() {
        assert_eq!(
            html_depth("<html><body><div><p>a</p><p>b</div></body></html>"),
            4
        );
        assert_eq!(html_depth("<ul><li>a<li>b<li>c</ul>"), 2);
        assert_eq!(html_depth("<p>a<p>b<p>c"), 1);
        assert_eq!(html_depth("<br><img src=x><hr/>"), 0);
        assert_eq!(html_depth("<script>'<div><div><div>'</script>"), 1);
        assert_eq!(
            html_depth("<!-- <div><div> --><div title=\"a>b<div>\">x</div>"),
            1
        );
        // an end tag that is not on top closes nothing: misnesting only deepens the estimate
        assert_eq!(html_depth("<div></span><div></span><div>"), 3);
        assert_eq!(html_depth("<b><i></b></i>"), 2);
    }

    #[test]
    fn flat_text_keeps_the_words_and_drops_the_code() {
        let t = flat_text(
            "<html><head><title>T</title><style>x{}</style></head><body><h1>Head</h1>\
             <p>one <b>two</b></p><script>bad()</SCRIPT><div>three &lt; four</div>1 < 2</body>",
        );
        assert_eq!(tidy(&t), "Head\n\none two\n\nthree < four\n1 < 2");
    }

    #[test]
    fn the_destination_is_the_urls_host() {
        assert_eq!(
            WebFetch::destination(&json!({"url": "https://Docs.RS./serde"})),
            Some("docs.rs".into())
        );
        assert_eq!(
            WebFetch::destination(&json!({"url": "http://[::1]:8/"})),
            Some("::1".into())
        );
        assert_eq!(WebFetch::destination(&json!({"url": "file:///x"})), None);
    }

    mod classifier_oracle {
        use super::*;
        use proptest::prelude::*;

        /// The ranges, written out plainly as (network, prefix length).
        fn in_v4(a: Ipv4Addr, net: [u8; 4], len: u32) -> bool {
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            (u32::from(a) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
        }

        fn oracle_v4(a: Ipv4Addr) -> bool {
            const RANGES: &[([u8; 4], u32)] = &[
                ([0, 0, 0, 0], 8),
                ([10, 0, 0, 0], 8),
                ([100, 64, 0, 0], 10),
                ([127, 0, 0, 0], 8),
                ([169, 254, 0, 0], 16),
                ([172, 16, 0, 0], 12),
                ([192, 0, 0, 0], 24),
                ([192, 0, 2, 0], 24),
                ([192, 168, 0, 0], 16),
                ([198, 18, 0, 0], 15),
                ([198, 51, 100, 0], 24),
                ([203, 0, 113, 0], 24),
                ([224, 0, 0, 0], 4),
                ([240, 0, 0, 0], 4),
            ];
            RANGES.iter().any(|&(n, l)| in_v4(a, n, l))
        }

        proptest! {
            #[test]
            fn v4_matches_the_plain_ranges(bits in any::<u32>()) {
                let a = Ipv4Addr::from(bits);
                prop_assert_eq!(special_address(IpAddr::V4(a)).is_some(), oracle_v4(a));
                // and its IPv4-mapped IPv6 form is classified the same
                prop_assert_eq!(
                    special_address(IpAddr::V6(a.to_ipv6_mapped())),
                    special_address(IpAddr::V4(a))
                );
            }

            #[test]
            fn urls_with_an_address_are_refused_exactly_when_it_is_special(bits in any::<u32>()) {
                let a = Ipv4Addr::from(bits);
                let any = allow(&["*"]);
                let forms = [
                    format!("http://{a}/"),
                    format!("http://{bits}/"),
                    format!("http://0x{bits:x}/"),
                    format!("http://[::ffff:{a}]/"),
                ];
                for form in forms {
                    let refused = matches!(
                        check_url(&any, &url(&form)),
                        Err(UrlRefused::Address(_))
                    );
                    prop_assert_eq!(refused, oracle_v4(a), "{}", form);
                }
            }

            #[test]
            fn v6_high_ranges(seg0 in any::<u16>(), rest in any::<[u16; 7]>()) {
                let s = [seg0, rest[0], rest[1], rest[2], rest[3], rest[4], rest[5], rest[6]];
                let a = Ipv6Addr::from(s);
                let special = special_address(IpAddr::V6(a)).is_some();
                if seg0 >= 0xfc00 {
                    // ULA, link-local, site-local, multicast: always
                    prop_assert!(special, "{}", a);
                }
                if (0x2400..0x3fff).contains(&seg0) {
                    // global unicast outside 2001:db8, 2002 (6to4): never
                    prop_assert!(!special, "{}", a);
                }
            }
        }
    }
}
