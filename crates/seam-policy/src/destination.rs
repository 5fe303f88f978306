//! Destinations: where an egress call sends data (or fetches it from), and what endorses one.
//!
//! In a tainted turn an egress call is admitted only when every destination it names is
//! **endorsed** for the turn: the operator's own words for the turn name it
//! ([`OperatorWords`]), or the policy's allow-list (`[egress] destinations`,
//! [`DestinationPattern`]) matches it. Parse, don't validate: a raw string becomes a
//! [`Destination`] (its canonical form) once, and only [`endorse`] makes an [`Endorsed`] — the
//! one value the gate admits a destination with.
//!
//! Canonical forms, so that the same place written two ways is one destination:
//!
//! - an **e-mail address**: `mailto:` dropped, letters lower-cased, the domain as a host;
//! - a **host**: IDNA (`bücher.example` is `xn--bcher-kva.example`), lower-cased, no trailing
//!   dot; from a URL, its host (`https://Files.Example.org:8443/x` is `files.example.org`);
//! - an **IBAN**: spaces dropped, letters upper-cased (`gb29 nwbk 6016…` is `GB29NWBK6016…`);
//! - anything else (a channel, a user name, a phone number) is a **name**: lower-cased, runs of
//!   white space made one space.
//!
//! What this does not decide: what the rest of the call carries. A body, a subject or a query
//! sent to an endorsed destination is still the turn's (tainted) data; the gate only scrubs
//! secret shapes from what it returns, and the destination rule says nothing about the body.

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

use crate::Decision;

/// A destination value in its canonical form. See the module doc.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Destination {
    /// `local@domain`, lower-cased; `domain` is a canonical host.
    Email { local: String, domain: String },
    /// A host name (IDNA ASCII, lower-cased, no trailing dot) or an IP address.
    Host(String),
    /// An IBAN: no spaces, upper-case.
    Iban(String),
    /// Anything else: lower-cased, white space collapsed.
    Name(String),
}

/// Why a raw value is no destination.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DestinationError {
    #[error("it is empty")]
    Empty,
    #[error("{0:?} is not a URL with a host")]
    NoHost(String),
}

impl Destination {
    /// The value itself is the destination (a recipient, an IBAN, a channel).
    pub fn parse_value(raw: &str) -> Result<Destination, DestinationError> {
        let text = raw.trim();
        if text.is_empty() {
            return Err(DestinationError::Empty);
        }
        let text = strip_prefix_ignore_case(text, "mailto:").unwrap_or(text);
        if let Some(email) = email(text) {
            return Ok(email);
        }
        if let Some(iban) = iban(text) {
            return Ok(Destination::Iban(iban));
        }
        if text.contains("://")
            && let Ok(host) = Destination::parse_url_host(text)
        {
            return Ok(host);
        }
        if let Some(host) = host(text) {
            return Ok(Destination::Host(host));
        }
        Ok(Destination::Name(collapse(&text.to_lowercase())))
    }

    /// The host of the URL in the value is the destination (`web.fetch {url}`). A URL without a
    /// scheme (`www.example.org/page`) is read as `http://` one.
    pub fn parse_url_host(raw: &str) -> Result<Destination, DestinationError> {
        let text = raw.trim();
        if text.is_empty() {
            return Err(DestinationError::Empty);
        }
        let with_scheme = if text.contains("://") {
            text.to_owned()
        } else {
            format!("http://{text}")
        };
        let url =
            url::Url::parse(&with_scheme).map_err(|_| DestinationError::NoHost(text.to_owned()))?;
        match url.host_str() {
            Some(h) if !h.is_empty() => Ok(Destination::Host(h.trim_end_matches('.').to_owned())),
            _ => Err(DestinationError::NoHost(text.to_owned())),
        }
    }

    /// What kind of destination it is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Destination::Email { .. } => "e-mail address",
            Destination::Host(_) => "host",
            Destination::Iban(_) => "IBAN",
            Destination::Name(_) => "name",
        }
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Destination::Email { local, domain } => write!(f, "{local}@{domain}"),
            Destination::Host(h) | Destination::Iban(h) | Destination::Name(h) => f.write_str(h),
        }
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `local@domain` with a host for a domain, canonical; `None` for anything else.
fn email(text: &str) -> Option<Destination> {
    let (local, domain) = text.rsplit_once('@')?;
    let ok_local = !local.is_empty()
        && !local.contains('@')
        && local
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !matches!(c, '<' | '>' | ','));
    if !ok_local {
        return None;
    }
    let domain = host(domain)?;
    Some(Destination::Email {
        local: local.to_lowercase(),
        domain,
    })
}

/// An IBAN's canonical form (no spaces, upper-case) when `text` has an IBAN's shape: two
/// letters, two digits, then 11 to 30 letters or digits (spaces between them allowed).
fn iban(text: &str) -> Option<String> {
    let compact: String = text.chars().filter(|c| *c != ' ').collect();
    let b = compact.as_bytes();
    let shaped = (15..=34).contains(&b.len())
        && b[..2].iter().all(u8::is_ascii_alphabetic)
        && b[2..4].iter().all(u8::is_ascii_digit)
        && b[4..].iter().all(u8::is_ascii_alphanumeric)
        // an IBAN's tail holds digits: a long word is not one
        && b[4..].iter().any(u8::is_ascii_digit);
    shaped.then(|| compact.to_ascii_uppercase())
}

/// A host name's canonical form (IDNA ASCII, lower-case, no trailing dot), or an IP address;
/// `None` when `text` is not one: a host name has a dot, labels of letters, digits and `-`,
/// and a last label that is not all digits.
fn host(text: &str) -> Option<String> {
    let text = text.trim_end_matches('.');
    if text.is_empty()
        || text
            .chars()
            .any(|c| c.is_whitespace() || "/@:?#[]\\".contains(c))
    {
        if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            return inner
                .parse::<std::net::Ipv6Addr>()
                .ok()
                .map(|a| format!("[{a}]"));
        }
        return None;
    }
    if let Ok(ip) = text.parse::<std::net::Ipv4Addr>() {
        return Some(ip.to_string());
    }
    // a dot, and a last label that is not all digits (`1.5` is a number, not a host)
    match text.rsplit_once('.') {
        Some((_, last)) if !last.is_empty() && !last.bytes().all(|b| b.is_ascii_digit()) => {}
        _ => return None,
    }
    let ascii = match url::Host::parse(text).ok()? {
        url::Host::Domain(d) => d,
        url::Host::Ipv4(ip) => return Some(ip.to_string()),
        url::Host::Ipv6(ip) => return Some(format!("[{ip}]")),
    };
    let labels: Vec<&str> = ascii.split('.').collect();
    let ok = labels.iter().all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    });
    ok.then(|| ascii.to_ascii_lowercase())
}

/// What the operator said for one turn (the task, the text of attached files), as the gate
/// holds it: registered by whoever opened the turn, never by the agent. A destination is
/// named by these words when:
///
/// - an e-mail address: the same address (canonical) is in the text;
/// - a host: the same host is in the text, alone or as a URL's host (a host that is only an
///   e-mail address's domain is not named by it);
/// - an IBAN: it is in the text, with or without spaces between its characters;
/// - a name: it is in the text as whole words (letters in any case, white space collapsed).
///
/// Apart from the words, the turn holds the exact destinations the operator consented to when
/// the gate asked about them ([`OperatorWords::add_consented`]): each endorses that value and
/// no other.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorWords {
    emails: BTreeSet<Destination>,
    /// Destinations the operator consented to, each exactly (canonical).
    consented: BTreeSet<Destination>,
    hosts: BTreeSet<String>,
    /// Every text, lower-cased and white space collapsed, one per line.
    folded: Vec<String>,
    /// Every text upper-cased, for IBANs written in groups.
    upper: Vec<String>,
}

impl OperatorWords {
    pub fn new() -> OperatorWords {
        OperatorWords::default()
    }

    /// Adds one text (the task, an attached file's text).
    pub fn add(&mut self, text: &str) {
        for token in text.split(|c: char| c.is_whitespace() || "<>()[]{}\"'`,;|".contains(c)) {
            let token = token.trim_end_matches(['.', ':', '!', '?']);
            if token.is_empty() {
                continue;
            }
            let token = strip_prefix_ignore_case(token, "mailto:").unwrap_or(token);
            if token.contains('@') {
                if let Some(e) = email(token) {
                    self.emails.insert(e);
                }
                continue;
            }
            if token.contains("://") {
                if let Ok(Destination::Host(h)) = Destination::parse_url_host(token) {
                    self.hosts.insert(h);
                }
                continue;
            }
            let bare = token.split('/').next().unwrap_or(token);
            if let Some(h) = host(bare) {
                self.hosts.insert(h);
            }
        }
        self.folded.push(collapse(&text.to_lowercase()));
        self.upper.push(text.to_uppercase());
    }

    /// Nothing was registered.
    pub fn is_empty(&self) -> bool {
        self.folded.is_empty() && self.consented.is_empty()
    }

    /// Adds `d`, which the operator consented to when asked about it: it is endorsed for the
    /// turn, exactly (no other address at its host, no host below it).
    pub fn add_consented(&mut self, d: Destination) {
        self.consented.insert(d);
    }

    /// Did the operator consent to exactly `d`?
    pub fn consented(&self, d: &Destination) -> bool {
        self.consented.contains(d)
    }

    /// Do these words name `d`? See the type's doc.
    pub fn names(&self, d: &Destination) -> bool {
        match d {
            Destination::Email { .. } => self.emails.contains(d),
            Destination::Host(h) => self.hosts.contains(h),
            Destination::Iban(iban) => self.upper.iter().any(|t| iban_in(t, iban)),
            Destination::Name(name) => self.folded.iter().any(|t| whole_words_in(t, name)),
        }
    }
}

/// Is `iban` (canonical) in `text` (upper-cased), its characters possibly separated by single
/// spaces, and not part of a longer run of letters and digits?
fn iban_in(text: &str, iban: &str) -> bool {
    let t: Vec<char> = text.chars().collect();
    let want: Vec<char> = iban.chars().collect();
    let boundary = |i: usize| i == 0 || !t[i - 1].is_alphanumeric();
    (0..t.len()).any(|start| {
        if !boundary(start) {
            return false;
        }
        let (mut i, mut j) = (start, 0);
        while j < want.len() {
            if i < t.len() && t[i] == want[j] {
                i += 1;
                j += 1;
            } else if j > 0 && i + 1 < t.len() && t[i] == ' ' && t[i + 1] == want[j] {
                i += 1;
            } else {
                return false;
            }
        }
        i == t.len() || !t[i].is_alphanumeric()
    })
}

/// Is `words` in `text` (both folded), starting and ending at word boundaries?
fn whole_words_in(text: &str, words: &str) -> bool {
    if words.is_empty() {
        return false;
    }
    let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    text.match_indices(words).any(|(at, _)| {
        edge(text[..at].chars().next_back()) && edge(text[at + words.len()..].chars().next())
    })
}

/// One entry of `[egress] destinations` in the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DestinationPattern {
    /// That destination. A host also matches e-mail addresses at that host.
    Exact(Destination),
    /// `*.example.org`: any host below `example.org` (not `example.org` itself), and e-mail
    /// addresses at those hosts.
    Below(String),
}

impl DestinationPattern {
    /// Parses an allow-list entry; the error says why it is none.
    pub fn parse(written: &str) -> Result<DestinationPattern, String> {
        let text = written.trim();
        if let Some(rest) = text.strip_prefix("*.") {
            return match host(rest) {
                Some(h) => Ok(DestinationPattern::Below(h)),
                None => Err(format!(
                    "\"{}\" is not a host pattern: after \"*.\" comes a host name, \
                     e.g. \"*.example.org\"",
                    written.escape_debug()
                )),
            };
        }
        if text.contains('*') {
            return Err(format!(
                "\"{}\" has a \"*\" where none is taken: only a first label is a wildcard \
                 (\"*.example.org\")",
                written.escape_debug()
            ));
        }
        Destination::parse_value(text)
            .map(DestinationPattern::Exact)
            .map_err(|e| format!("\"{}\" is no destination: {e}", written.escape_debug()))
    }

    /// Does this entry match `d`?
    pub fn matches(&self, d: &Destination) -> bool {
        let below = |h: &str, base: &str| {
            h.len() > base.len() + 1
                && h.ends_with(base)
                && h.as_bytes()[h.len() - base.len() - 1] == b'.'
        };
        match (self, d) {
            (
                DestinationPattern::Exact(Destination::Host(p)),
                Destination::Email { domain, .. },
            ) => p == domain,
            (DestinationPattern::Exact(p), d) => p == d,
            (DestinationPattern::Below(base), Destination::Host(h)) => below(h, base),
            (DestinationPattern::Below(base), Destination::Email { domain, .. }) => {
                below(domain, base)
            }
            (DestinationPattern::Below(_), _) => false,
        }
    }

    /// What it matches, in words.
    pub fn describe(&self) -> String {
        match self {
            DestinationPattern::Exact(Destination::Host(h)) => {
                format!("the host {h}, and e-mail addresses at it")
            }
            DestinationPattern::Exact(d) => format!("the {} {d}", d.kind()),
            DestinationPattern::Below(base) => format!(
                "any host below {base} (not {base} itself), and e-mail addresses at those hosts"
            ),
        }
    }
}

/// `[egress] destinations`: the allow-list, as written and parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DestinationAllowList {
    entries: Vec<(String, DestinationPattern)>,
}

impl DestinationAllowList {
    pub(crate) fn push(&mut self, written: String, pattern: DestinationPattern) {
        if !self.entries.iter().any(|(_, p)| *p == pattern) {
            self.entries.push((written, pattern));
        }
    }

    /// The entries, each as written and parsed, in the file's order.
    pub fn entries(&self) -> &[(String, DestinationPattern)] {
        &self.entries
    }

    /// The first entry matching `d`, as written.
    pub fn matching(&self, d: &Destination) -> Option<&str> {
        self.entries
            .iter()
            .find(|(_, p)| p.matches(d))
            .map(|(w, _)| w.as_str())
    }
}

/// Who endorsed a destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Endorser {
    /// The operator's words for the turn name it.
    OperatorWords,
    /// An entry of the policy's `[egress] destinations` (as written) matches it.
    AllowList { entry: String },
    /// The operator was asked about this exact value in this turn and said yes.
    OperatorConsent,
}

/// A destination endorsed for a turn. Only [`endorse`] makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endorsed {
    destination: Destination,
    by: Endorser,
}

impl Endorsed {
    pub fn destination(&self) -> &Destination {
        &self.destination
    }
    pub fn by(&self) -> &Endorser {
        &self.by
    }
}

/// A destination nothing endorses, and so the decision for a call to it in a tainted turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unendorsed(pub Destination);

/// The decision for one destination of an egress call in a tainted turn: an endorsed one is
/// `allow`, any other what the policy's `[egress] unnamed` says (`deny`, or `ask`: the
/// operator may consent to that exact value; with nobody to ask, the call is refused). A
/// value that is no destination at all is `deny`, decided where it is parsed. A call's
/// decision is the strictest of its destinations'.
pub fn destination_decision(v: &Result<Endorsed, Unendorsed>, unnamed: Decision) -> Decision {
    match v {
        Ok(_) => Decision::Allow,
        // never looser than ask: allowing what nobody endorsed is [taint] egress = "allow"
        Err(_) => unnamed.max(Decision::Ask),
    }
}

/// Endorses `d` for a turn whose operator said `words`, under the policy's `allow`: the
/// operator's words first, then the allow-list, then a consent the operator gave to exactly
/// this value in the turn.
pub fn endorse(
    d: Destination,
    words: &OperatorWords,
    allow: &DestinationAllowList,
) -> Result<Endorsed, Unendorsed> {
    if words.names(&d) {
        return Ok(Endorsed {
            destination: d,
            by: Endorser::OperatorWords,
        });
    }
    if let Some(entry) = allow.matching(&d) {
        let entry = entry.to_owned();
        return Ok(Endorsed {
            destination: d,
            by: Endorser::AllowList { entry },
        });
    }
    if words.consented(&d) {
        return Ok(Endorsed {
            destination: d,
            by: Endorser::OperatorConsent,
        });
    }
    Err(Unendorsed(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Destination {
        Destination::parse_value(s).unwrap()
    }

    #[test]
    fn values_are_parsed_into_their_canonical_form() {
        assert_eq!(
            v(" Bob.Smith@Example.ORG "),
            Destination::Email {
                local: "bob.smith".into(),
                domain: "example.org".into()
            }
        );
        assert_eq!(v("mailto:bob@example.org."), v("bob@example.org"));
        assert_eq!(
            v("gb29 nwbk 6016 1331 9268 19"),
            Destination::Iban("GB29NWBK60161331926819".into())
        );
        assert_eq!(v("GB29NWBK60161331926819"), v("gb29 NWBK 60161331926819"));
        assert_eq!(
            v("Files.Example.org."),
            Destination::Host("files.example.org".into())
        );
        assert_eq!(
            v("bücher.example"),
            Destination::Host("xn--bcher-kva.example".into())
        );
        assert_eq!(
            v("https://Files.Example.org:8443/a?b"),
            v("files.example.org")
        );
        assert_eq!(v("10.0.0.1"), Destination::Host("10.0.0.1".into()));
        assert_eq!(
            v("  General   Channel "),
            Destination::Name("general channel".into())
        );
        assert_eq!(v("1.5"), Destination::Name("1.5".into()), "not a host");
        assert_eq!(
            v("Internationalisation"),
            Destination::Name("internationalisation".into()),
            "a long word is no IBAN"
        );
        assert_eq!(Destination::parse_value("  "), Err(DestinationError::Empty));
    }

    #[test]
    fn a_urls_host_is_its_destination() {
        let h = |s: &str| Destination::parse_url_host(s).unwrap();
        assert_eq!(
            h("https://WWW.Example.org/x"),
            Destination::Host("www.example.org".into())
        );
        assert_eq!(
            h("www.example.org/page"),
            Destination::Host("www.example.org".into())
        );
        assert_eq!(
            h("http://user:pw@evil.example:81/"),
            Destination::Host("evil.example".into())
        );
        assert!(Destination::parse_url_host("mailto:x").is_err());
        assert!(Destination::parse_url_host("").is_err());
    }

    #[test]
    fn the_operators_words_name_what_they_hold_and_nothing_else() {
        let mut w = OperatorWords::new();
        w.add(
            "Read my landlord's email and pay the rent to GB29 NWBK 6016 1331 9268 19. \
             Mail the receipt to <Alice@Example.org>, post it in #general and on \
             https://Notes.Example.net/rent; cc bob@mail.example.com.",
        );
        assert!(w.names(&v("gb29nwbk60161331926819")));
        assert!(w.names(&v("GB29 NWBK 6016 1331 9268 19")));
        assert!(!w.names(&v("GB29NWBK60161331926818")), "another IBAN");
        assert!(!w.names(&v("GB29NWBK6016133192681")), "a prefix of it");
        assert!(w.names(&v("alice@example.org")));
        assert!(w.names(&v("ALICE@EXAMPLE.ORG")));
        assert!(!w.names(&v("alice@example.org.evil.example")));
        assert!(!w.names(&v("mallory@example.org")));
        assert!(w.names(&v("notes.example.net")));
        assert!(w.names(&Destination::parse_url_host("notes.example.net/other").unwrap()));
        assert!(
            !w.names(&v("mail.example.com")),
            "an e-mail address's domain is not a host the operator named"
        );
        assert!(!w.names(&v("example.net")), "a parent of a named host");
        assert!(w.names(&v("General")));
        assert!(w.names(&v("rent")));
        assert!(!w.names(&v("gene")), "not a whole word");
        assert!(!w.names(&v("random")));
        assert!(OperatorWords::new().is_empty());
        assert!(!OperatorWords::new().names(&v("general")));
    }

    #[test]
    fn the_allow_list_matches_hosts_below_and_exact_values() {
        let p = |s: &str| DestinationPattern::parse(s).unwrap();
        let below = p("*.Example.org");
        assert!(below.matches(&v("files.example.org")));
        assert!(below.matches(&v("a.b.example.org")));
        assert!(below.matches(&v("bob@mail.example.org")));
        assert!(!below.matches(&v("example.org")), "not the base itself");
        assert!(!below.matches(&v("evilexample.org")));
        assert!(!below.matches(&v("example.org.evil.net")));
        assert!(!below.matches(&v("bob@example.org")));
        assert!(!below.matches(&v("example")));
        let host = p("example.org");
        assert!(host.matches(&v("EXAMPLE.org")));
        assert!(host.matches(&v("bob@example.org")));
        assert!(!host.matches(&v("www.example.org")));
        assert!(p("gb29 nwbk 6016 1331 9268 19").matches(&v("GB29NWBK60161331926819")));
        assert!(p("Bob@Example.org").matches(&v("bob@example.org")));
        assert!(!p("bob@example.org").matches(&v("alice@example.org")));
        assert!(p("general").matches(&v("General")));
        assert!(DestinationPattern::parse("*").is_err());
        assert!(DestinationPattern::parse("a.*.org").is_err());
        assert!(DestinationPattern::parse("*.").is_err());
        assert!(DestinationPattern::parse("").is_err());
    }

    #[test]
    fn endorsement_says_who_and_decisions_are_ordered() {
        let mut words = OperatorWords::new();
        words.add("send it to alice@example.org");
        let mut allow = DestinationAllowList::default();
        allow.push(
            "*.example.net".into(),
            DestinationPattern::parse("*.example.net").unwrap(),
        );
        let a = endorse(v("alice@example.org"), &words, &allow).unwrap();
        assert_eq!(a.by(), &Endorser::OperatorWords);
        let b = endorse(v("files.example.net"), &words, &allow).unwrap();
        assert_eq!(
            b.by(),
            &Endorser::AllowList {
                entry: "*.example.net".into()
            }
        );
        let c = endorse(v("mallory@evil.example"), &words, &allow);
        assert_eq!(c, Err(Unendorsed(v("mallory@evil.example"))));
        let all = [Ok(a), Ok(b), c];
        let decide = |unnamed| {
            all.iter()
                .map(|v| destination_decision(v, unnamed))
                .max()
                .unwrap()
        };
        assert_eq!(decide(Decision::Deny), Decision::Deny);
        assert_eq!(decide(Decision::Ask), Decision::Ask);
        assert_eq!(decide(Decision::Allow), Decision::Ask);
        assert_eq!(
            destination_decision(&all[0], Decision::Deny),
            Decision::Allow
        );
    }

    #[test]
    fn a_consent_endorses_exactly_the_value_consented_to() {
        let mut words = OperatorWords::new();
        let allow = DestinationAllowList::default();
        words.add_consented(v("Mallory@Evil.Example"));
        let e = endorse(v("mallory@evil.example"), &words, &allow).unwrap();
        assert_eq!(e.by(), &Endorser::OperatorConsent);
        for other in [
            "eve@evil.example",
            "evil.example",
            "mallory@evil.example.org",
        ] {
            assert_eq!(
                endorse(v(other), &words, &allow),
                Err(Unendorsed(v(other))),
                "{other}"
            );
        }
        let mut words = OperatorWords::new();
        words.add_consented(v("example.org"));
        assert!(endorse(v("mail.example.org"), &words, &allow).is_err());
        assert!(endorse(v("alice@example.org"), &words, &allow).is_err());
        words.add_consented(v("GB82 WEST 1234 5698 7654 32"));
        assert!(endorse(v("GB82WEST12345698765432"), &words, &allow).is_ok());
    }
}
