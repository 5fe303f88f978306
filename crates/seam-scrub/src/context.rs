//! Context shapes: a value is a secret because of the words standing before it.
//!
//! For each candidate value on a line (a bare token, or a quoted string), the detector reads up
//! to four words immediately before it, across "glue" (`=`, `:`, `:=`, `=>`, ` - `, quotes,
//! `>{`, `, `): the key. The key's words decide which test the value must pass:
//!
//! - a password word (`password`, `passwd`, `pwd`, …): `password-assignment`, the value must not
//!   be a placeholder or a variable reference;
//! - a credential word (`token`, `secret`, `api_key`, `auth`, `bearer`, …): `generic-assignment`,
//!   the value must also not be made of words and must vary (digits and letters, mixed case…);
//! - a provider's name (`cloudimage`, `luno`, `plaid client id`): `provider-token`, the value
//!   must look machine-made ([`crate::value::looks_random`]).
//!
//! Keys that name something public (`public_key`, `token_type`, `checksum`, `sha256`, `version`)
//! are skipped. The detector reads one line at a time and never looks past it.

use std::collections::HashSet;
use std::sync::LazyLock;

use crate::value;

/// A redaction proposed by the context detector: byte range in the line and shape id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ContextHit {
    pub start: usize,
    pub end: usize,
    pub shape: &'static str,
}

pub(crate) const PASSWORD_SHAPE: &str = "password-assignment";
pub(crate) const GENERIC_SHAPE: &str = "generic-assignment";
pub(crate) const PROVIDER_SHAPE: &str = "provider-token";

/// Credential words, as whole sub-words of a key (after splitting `snake_case`, `kebab-case`
/// and `camelCase`).
const CREDENTIAL_WORDS: &[&str] = &[
    "key",
    "keys",
    "apikey",
    "token",
    "tokens",
    "tok",
    "secret",
    "secrets",
    "auth",
    "authorization",
    "authtoken",
    "credential",
    "credentials",
    "creds",
    "cred",
    "bearer",
    "basic",
    "sig",
    "signature",
    "aqaaabaaa",
    "oauth",
    "oauth2",
    "session",
    "cookie",
    "license",
    "licence",
    "apisecret",
    "accesskey",
    "secretkey",
    "privatekey",
    "clientsecret",
    "accesstoken",
    "refreshtoken",
    "apitoken",
    "ssws",
    "dsn",
    "sas",
    "pat",
    "pak",
];

/// Endings that make a compound sub-word a credential word (`nexmoapikey`, `ACCESSKEY`).
const CREDENTIAL_SUFFIXES: &[&str] = &[
    "apikey",
    "accesskey",
    "secretkey",
    "token",
    "secret",
    "apitoken",
];

const PASSWORD_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
    "pw",
    "pword",
];

/// Words that say the value next to them is not a secret, or not the secret.
const PUBLIC_WORDS: &[&str] = &[
    "type",
    "name",
    "names",
    "url",
    "uri",
    "path",
    "file",
    "dir",
    "length",
    "len",
    "size",
    "count",
    "version",
    "format",
    "mode",
    "hash",
    "sha",
    "sha1",
    "sha256",
    "sha512",
    "md5",
    "checksum",
    "digest",
    "commit",
    "rev",
    "revision",
    "etag",
    "integrity",
    "public",
    "pub",
    "publishable",
    "issuer",
    "algorithm",
    "alg",
    "kind",
    "expires",
    "expiry",
    "ttl",
    "timeout",
    "date",
    "time",
    "header",
    "field",
    "param",
    "prefix",
    "suffix",
    "description",
    "label",
    "title",
    "region",
    "endpoint",
    "host",
    "hostname",
    "domain",
    "port",
    "placeholder",
    "hint",
    "pattern",
    "regex",
    "h1",
    "id_token_hint",
    "scope",
    "scopes",
    "location",
    "index",
    "policy",
    "method",
    "style",
    "class",
    "color",
    "lang",
    "locale",
    "provider",
    "store",
    "store_ref",
    "ref",
    "refs",
    "example",
    "sample",
    "fingerprint",
    "thumbprint",
    "nonce",
];

/// Words after which an identifier value is sensitive for the provider it names.
const ID_WORDS: &[&str] = &[
    "id",
    "ids",
    "clientid",
    "appid",
    "userid",
    "user",
    "username",
    "account",
    "accountid",
    "sid",
    "login",
    "client",
    "app",
    "org",
    "organization",
    "project",
    "tenant",
    "customer",
];

/// FNV-1a: provider look-ups hash short lower-case words, many times a line.
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type FnvBuild = std::hash::BuildHasherDefault<Fnv>;

static PROVIDERS: LazyLock<HashSet<&'static str, FnvBuild>> =
    LazyLock::new(|| crate::providers::names().collect());

/// Whether `word` (lower case) names a provider, or starts with the name of one (five letters
/// or more: `hubspotapi`, `cloudinaryurl`). Shorter names count only as whole words.
fn is_provider(word: &str) -> bool {
    if PROVIDERS.contains(word) {
        return true;
    }
    (5..word.len()).any(|n| word.is_char_boundary(n) && PROVIDERS.contains(&word[..n]))
}

#[derive(Debug, Default, Clone, Copy)]
struct KeyClass {
    password: bool,
    credential: bool,
    provider: bool,
    id: bool,
    public: bool,
}

/// Bytes a bare value is made of.
fn is_bare(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/' | b'.' | b'~' | b'%')
}

/// Bytes that may continue a bare value once it has started (`MyPa$$w0rd`).
fn continues_value(b: u8) -> bool {
    is_bare(b) || matches!(b, b'$' | b'!' | b'#' | b'^' | b'*')
}

/// Bytes a key word is made of.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Bytes that may stand between a key and its value.
fn is_glue(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t'
            | b'"'
            | b'\''
            | b'`'
            | b'='
            | b':'
            | b','
            | b'>'
            | b'<'
            | b'-'
            | b'{'
            | b'('
            | b'['
            | b']'
            | b')'
            | b'|'
            | b'\\'
            | b'/'
            | b'?'
            | b'&'
            | b'!'
            | b'@'
    )
}

/// Bytes that end a value when it is extended to its natural end.
fn ends_value(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'"' | b'\'' | b'`' | b'\\' | b',' | b';' | b')' | b'}' | b']' | b'<' | b'>' | b'&'
        )
}

/// Split a key word into lower-case sub-words: `bugsnagToken` → `bugsnag`, `token`;
/// `SUMOLOGIC_ACCESSKEY` → `sumologic`, `accesskey`.
fn sub_words(word: &[u8], out: &mut Vec<String>) {
    let mut current = String::new();
    let mut prev: Option<u8> = None;
    for &b in word {
        let boundary = match prev {
            None => false,
            Some(p) => {
                !b.is_ascii_alphanumeric()
                    || (p.is_ascii_lowercase() && b.is_ascii_uppercase())
                    || (p.is_ascii_alphabetic() && b.is_ascii_digit() && current.len() > 2)
            }
        };
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if b.is_ascii_alphanumeric() {
            current.push(char::from(b.to_ascii_lowercase()));
        }
        prev = Some(b);
    }
    if !current.is_empty() {
        out.push(current);
    }
}

/// The word with its separators removed, for names like `cex.io` and `new_relic`.
fn joined(word: &[u8]) -> String {
    word.iter()
        .filter(|b| b.is_ascii_alphanumeric())
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect()
}

fn is_credential_word(s: &str) -> bool {
    CREDENTIAL_WORDS.contains(&s)
        || CREDENTIAL_SUFFIXES
            .iter()
            .any(|suf| s.len() > suf.len() && s.ends_with(suf))
        || (s.len() > 3 && s.ends_with("key") && !s.ends_with("monkey"))
}

fn is_password_word(s: &str) -> bool {
    PASSWORD_WORDS.contains(&s) || s.ends_with("password") || s.ends_with("passwd")
}

fn classify(words: &[&[u8]]) -> KeyClass {
    let mut class = KeyClass::default();
    let mut subs = Vec::new();
    for (n, word) in words.iter().enumerate() {
        subs.clear();
        sub_words(word, &mut subs);
        // Only the nearest word can make the key public: `token_type: bearer`.
        if n == 0
            && let Some(last) = subs.last()
            && PUBLIC_WORDS.contains(&last.trim_end_matches(|c: char| c.is_ascii_digit()))
        {
            class.public = true;
        }
        let whole = joined(word);
        for s in subs.iter().chain(std::iter::once(&whole)) {
            let s = s.trim_end_matches(|c: char| c.is_ascii_digit());
            if s.is_empty() {
                continue;
            }
            if matches!(s, "h" | "sha" | "md" | "checksum" | "integrity") {
                class.public = true;
            }
            if is_password_word(s) {
                class.password = true;
            } else if is_credential_word(s) {
                class.credential = true;
            } else if ID_WORDS.contains(&s) || (s.len() > 2 && s.ends_with("id")) {
                class.id = true;
            }
            if s.len() >= 2 && is_provider(s) {
                class.provider = true;
            }
        }
    }
    class
}

/// Read the key before `value_start`: skip glue back, then collect up to four words.
/// Returns the words (nearest first) and whether the glue held an assignment sign.
fn key_before(line: &[u8], value_start: usize, words: &mut Vec<(usize, usize)>) -> bool {
    words.clear();
    let mut i = value_start;
    let mut glue = 0;
    let mut assigned = false;
    while i > 0 && is_glue(line[i - 1]) && glue < 8 {
        let b = line[i - 1];
        if !matches!(b, b' ' | b'\t') {
            assigned = true;
        }
        i -= 1;
        glue += 1;
    }
    for _ in 0..4 {
        let end = i;
        while i > 0 && is_word(line[i - 1]) {
            i -= 1;
        }
        if i == end {
            break;
        }
        words.push((i, end));
        // Between words: at most two glue bytes (`>{`, `" `, ` `).
        let mut between = 0;
        while i > 0
            && between < 2
            && matches!(line[i - 1], b' ' | b'{' | b'>' | b'"' | b'\'' | b'<' | b'[')
        {
            i -= 1;
            between += 1;
        }
        if between == 0 {
            break;
        }
    }
    assigned
}

/// Find context secrets in one line.
pub(crate) fn scan_line(line: &[u8], out: &mut Vec<ContextHit>) {
    let mut words: Vec<(usize, usize)> = Vec::with_capacity(4);
    let mut word_slices: Vec<&[u8]> = Vec::with_capacity(4);
    let mut i = 0;
    let n = line.len();
    while i < n {
        let b = line[i];
        if matches!(b, b'"' | b'\'' | b'`') {
            // A quoted string holding bytes a bare value cannot (`m{{h}o)p$…`, `u@D7GXt)t>8d`).
            if let Some(len) = line[i + 1..].iter().position(|&c| c == b || c == b'\n') {
                let (s, e) = (i + 1, i + 1 + len);
                if line.get(e) == Some(&b)
                    && e - s >= 8
                    && line[s..e].iter().any(|&c| !is_bare(c))
                    && !line[s..e].iter().any(|c| c.is_ascii_whitespace())
                {
                    consider(line, s, e, Kind::Quoted, &mut words, &mut word_slices, out);
                }
            }
            i += 1;
            continue;
        }
        if !is_bare(b) || (i > 0 && is_bare(line[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && continues_value(line[i]) {
            i += 1;
        }
        // Base-64 padding belongs to the value.
        let mut end = i;
        while end < n && line[end] == b'=' {
            end += 1;
        }
        let padded = end > i && (end == n || !is_bare(line[end]));
        let end = if padded { end } else { i };
        if end - start >= 6 {
            let before = out.len();
            consider(
                line,
                start,
                end,
                Kind::Bare,
                &mut words,
                &mut word_slices,
                out,
            );
            if out.len() == before && line[start..end].contains(&b'/') {
                // A path or URL: try its segments (`…/keys/pri_0998…`).
                let mut s = start;
                for (k, &c) in line[start..end].iter().enumerate() {
                    if c == b'/' {
                        if start + k - s >= 8 && s > start {
                            consider(
                                line,
                                s,
                                start + k,
                                Kind::Segment,
                                &mut words,
                                &mut word_slices,
                                out,
                            );
                        }
                        s = start + k + 1;
                    }
                }
                if end - s >= 8 && s > start {
                    consider(
                        line,
                        s,
                        end,
                        Kind::Segment,
                        &mut words,
                        &mut word_slices,
                        out,
                    );
                }
            }
        }
        i = end.max(i);
    }
}

/// Words that may stand before a value with nothing but a space between them.
const SPACE_KEYS: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "key",
    "secret",
    "password",
    "passwd",
    "apikey",
    "aqaaabaaa",
    "ssws",
    "auth",
    "authorization",
];

/// A cheap first look: a value worth judging has a digit, mixed case, a symbol, or length.
fn plausible(v: &[u8]) -> bool {
    let (mut lower, mut upper) = (false, false);
    for &b in v {
        if b.is_ascii_digit() || !(b.is_ascii_alphabetic() || matches!(b, b'_' | b'-' | b'.')) {
            return true;
        }
        lower |= b.is_ascii_lowercase();
        upper |= b.is_ascii_uppercase();
    }
    (lower && upper) || v.len() >= 12
}

/// Where a candidate value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A run of value bytes.
    Bare,
    /// The inside of a quoted string with bytes a bare value cannot hold.
    Quoted,
    /// One `/`-separated part of a bare run (a URL path segment).
    Segment,
}

fn consider<'a>(
    line: &'a [u8],
    start: usize,
    end: usize,
    kind: Kind,
    words: &mut Vec<(usize, usize)>,
    word_slices: &mut Vec<&'a [u8]>,
    out: &mut Vec<ContextHit>,
) {
    let quoted = kind == Kind::Quoted;
    let v = &line[start..end];
    if v.len() < 6 || !plausible(v) {
        return;
    }
    let assigned = key_before(line, start, words);
    if words.is_empty() {
        return;
    }
    // A value right after another accepted value of the same key: `github = 'a', 'b'`,
    // `kucoin a kucoin b`.
    if let Some(prev) = out.last().copied() {
        let (ws, we) = words[0];
        if ws >= prev.start && we <= prev.end && assigned {
            if value::looks_random_with(v, true) {
                push(line, start, end, quoted, prev.shape, out);
            }
            return;
        }
    }
    word_slices.clear();
    word_slices.extend(words.iter().map(|&(s, e)| &line[s..e]));
    let class = classify(word_slices);
    let scheme = matches!(
        word_slices[0].to_ascii_lowercase().as_slice(),
        b"http" | b"https" | b"ftp" | b"ws" | b"wss" | b"git" | b"ssh" | b"file" | b"s3" | b"gs"
    );
    if scheme || class.public || (kind == Kind::Segment && !class.credential && !class.password) {
        return;
    }
    if !assigned && !quoted {
        // `token abc…`, `Bearer abc…`, `facebook 1477…|…`: only a credential word or a
        // provider's name may stand before a value with a bare space.
        let nearest = String::from_utf8_lossy(word_slices[0]).to_ascii_lowercase();
        let mut subs = Vec::new();
        sub_words(word_slices[0], &mut subs);
        let nearest_is_id = subs.last().is_some_and(|l| ID_WORDS.contains(&l.as_str()));
        let keyish = SPACE_KEYS.contains(&nearest.as_str())
            || subs
                .last()
                .is_some_and(|l| SPACE_KEYS.contains(&l.as_str()))
            || is_provider(&joined(word_slices[0]))
            || (nearest_is_id && class.provider);
        if !keyish {
            return;
        }
    }
    let shape = if class.password {
        if !(assigned || quoted) || !value::credential_value(v, true) {
            return;
        }
        PASSWORD_SHAPE
    } else if class.credential {
        if value::credential_value(v, false) {
            if class.provider {
                PROVIDER_SHAPE
            } else {
                GENERIC_SHAPE
            }
        } else if class.provider && value::looks_random_with(v, true) {
            PROVIDER_SHAPE
        } else {
            return;
        }
    } else if class.provider {
        if !value::looks_random_with(v, true) {
            return;
        }
        PROVIDER_SHAPE
    } else {
        return;
    };
    push(line, start, end, quoted, shape, out);
}

/// Record a value, extended to its natural end when bare: `abc=2+qq…`, `id:secret`, `a|b`.
fn push(
    line: &[u8],
    start: usize,
    end: usize,
    quoted: bool,
    shape: &'static str,
    out: &mut Vec<ContextHit>,
) {
    let mut e = end;
    if !quoted {
        while e < line.len() && !ends_value(line[e]) {
            e += 1;
        }
    }
    out.push(ContextHit {
        start,
        end: e,
        shape,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan_line(line.as_bytes(), &mut out);
        out.iter().map(|h| &line[h.start..h.end]).collect()
    }

    #[test]
    fn credential_words_mark_values() {
        assert_eq!(
            redacted("newsapi token = 'kxbj4b6u2iazvhc8n6b3oz0j5x6nrpyy'"),
            ["kxbj4b6u2iazvhc8n6b3oz0j5x6nrpyy"]
        );
        assert_eq!(
            redacted(r#"  "client_secret" : "6da89121079f83b2eb6acccf8219ea98","#),
            ["6da89121079f83b2eb6acccf8219ea98"]
        );
        assert_eq!(
            redacted("[DEBUG] Using adobe KEY=zoaw0c0m50m0hz2h1fm21y4tqfyl7ifi"),
            ["zoaw0c0m50m0hz2h1fm21y4tqfyl7ifi"]
        );
    }

    #[test]
    fn provider_names_mark_random_values() {
        assert_eq!(
            redacted("\tcloudimage: \"d__9rvli8sm4jo18v5q0q4n7vhkwbv\""),
            ["d__9rvli8sm4jo18v5q0q4n7vhkwbv"]
        );
        assert_eq!(
            redacted("plaid client id - '60e3ee4019a2660010f8bc54'"),
            ["60e3ee4019a2660010f8bc54"]
        );
    }

    #[test]
    fn passwords_allow_words_but_not_placeholders() {
        assert_eq!(
            redacted(r#"administrator_login_password = "thisIsDog11""#),
            ["thisIsDog11"]
        );
        assert!(redacted(r#"password = "changeme""#).is_empty());
        assert!(redacted("password: $DB_PASS").is_empty());
    }

    #[test]
    fn public_keys_and_ids_are_left_alone() {
        assert!(redacted("MantleAPI_version=9a038989604e8da62ecddbe2094b16ce1b778be1").is_empty());
        assert!(redacted("report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d").is_empty());
        assert!(redacted("this.ultraPictureBox1.Name = \"ultraPictureBox1\";").is_empty());
        assert!(redacted("github.com/mattn/go-runewidth v0.0.14 h1:+xnbZSEeDbOIg5/mE6JF0w6n9duR1l3/WmbinWVwUuU=").is_empty());
        assert!(redacted("token_type: bearer").is_empty());
    }
}
