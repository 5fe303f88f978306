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

use std::sync::LazyLock;

use crate::value::{self, Judged};

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
    // A common misspelling of `secret` in keys (`secrete_key`, `SECRETE=`).
    "secrete",
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

/// What a lower-case word is, as bit flags (one look-up answers every list).
const PUBLIC: u8 = 1;
const CREDENTIAL: u8 = 2;
const PASSWORD: u8 = 4;
const ID: u8 = 8;
const SPACE_KEY: u8 = 16;
const PROVIDER: u8 = 32;

/// FNV-1a, one byte at a time, so that every prefix of a word gets its hash on the way.
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
}

/// The word lists and the providers' names in one open-addressing table: lower-case word →
/// its flags. Built once; a look-up is a hash (often already computed) and one comparison.
struct WordTable {
    slots: Vec<Option<(u64, &'static [u8], u8)>>,
    mask: usize,
    /// The longest word in the table: no longer word or prefix can be in it.
    longest: usize,
    /// A bit for each word in the table, by its hash ([`WordTable::filter_bit`]): a word
    /// whose bit is clear is not in the table, which this small set (in the first level of
    /// cache) tells without a probe of the large one.
    filter: [u64; WordTable::FILTER_WORDS],
}

impl WordTable {
    fn build() -> WordTable {
        let mut entries: Vec<(&'static [u8], u8)> = Vec::new();
        let lists: [(&[&'static str], u8); 5] = [
            (PUBLIC_WORDS, PUBLIC),
            (CREDENTIAL_WORDS, CREDENTIAL),
            (PASSWORD_WORDS, PASSWORD),
            (ID_WORDS, ID),
            (SPACE_KEYS, SPACE_KEY),
        ];
        for (list, flag) in lists {
            entries.extend(list.iter().map(|w| (w.as_bytes(), flag)));
        }
        entries.extend(crate::providers::names().map(|w| (w.as_bytes(), PROVIDER)));
        let size = (entries.len() * 4).next_power_of_two();
        let mut table = WordTable {
            slots: vec![None; size],
            mask: size - 1,
            longest: 0,
            filter: [0; WordTable::FILTER_WORDS],
        };
        for (word, flag) in entries {
            table.longest = table.longest.max(word.len());
            let h = word.iter().fold(FNV_START, |h, &b| fnv_step(h, b));
            let (w, bit) = Self::filter_bit(h);
            table.filter[w] |= bit;
            let mut i = Self::index(h) & table.mask;
            loop {
                match &mut table.slots[i] {
                    Some((hh, w, f)) if *hh == h && *w == word => {
                        *f |= flag;
                        break;
                    }
                    Some(_) => i = (i + 1) & table.mask,
                    empty @ None => {
                        *empty = Some((h, word, flag));
                        break;
                    }
                }
            }
        }
        table
    }

    fn index(h: u64) -> usize {
        // Truncation is the point: the table's size is far below 2^32.
        (h ^ (h >> 29)) as usize
    }

    const FILTER_WORDS: usize = 256;

    /// The word of the filter and the bit in it for a hash: high bits, which the table's
    /// index does not use first.
    fn filter_bit(h: u64) -> (usize, u64) {
        let n = (h >> 40) as usize & (Self::FILTER_WORDS * 64 - 1);
        (n >> 6, 1 << (n & 63))
    }

    /// The flags of `word`, whose FNV hash is `h`.
    fn get(&self, word: &[u8], h: u64) -> u8 {
        let (w, bit) = Self::filter_bit(h);
        if self.filter[w] & bit == 0 {
            return 0;
        }
        let mut i = Self::index(h) & self.mask;
        loop {
            match self.slots[i] {
                None => return 0,
                Some((hh, w, f)) if hh == h && w == word => return f,
                Some(_) => i = (i + 1) & self.mask,
            }
        }
    }

    /// The flags of a lower-case `word`, and whether one of its prefixes of five bytes or
    /// more (`hubspotapi` → `hubspot`) names a provider.
    fn look_up(&self, word: &[u8]) -> (u8, bool) {
        if word.len() > self.longest {
            // Only a prefix can be in the table.
            let mut h = FNV_START;
            for (n, &b) in word[..self.longest].iter().enumerate() {
                h = fnv_step(h, b);
                if n + 1 >= 5 && self.get(&word[..=n], h) & PROVIDER != 0 {
                    return (0, true);
                }
            }
            return (0, false);
        }
        let mut h = FNV_START;
        let mut prefix = false;
        for (n, &b) in word.iter().enumerate() {
            h = fnv_step(h, b);
            if n + 1 >= 5 && n + 1 < word.len() && !prefix {
                prefix = self.get(&word[..=n], h) & PROVIDER != 0;
            }
        }
        (self.get(word, h), prefix)
    }

    /// Whether `word` (lower case) names a provider, or starts with the name of one (five
    /// letters or more: `hubspotapi`, `cloudinaryurl`). Shorter names count only as whole
    /// words.
    fn is_provider(&self, word: &[u8]) -> bool {
        let (flags, prefix) = self.look_up(word);
        flags & PROVIDER != 0 || prefix
    }
}

static WORDS: LazyLock<WordTable> = LazyLock::new(WordTable::build);

#[derive(Debug, Default, Clone, Copy)]
struct KeyClass {
    password: bool,
    credential: bool,
    provider: bool,
    public: bool,
}

/// Bytes a bare value is made of.
const fn bare(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/' | b'.' | b'~' | b'%')
}

/// Bytes that may continue a bare value once it has started (`MyPa$$w0rd`).
const fn continues(b: u8) -> bool {
    bare(b) || matches!(b, b'$' | b'!' | b'#' | b'^' | b'*')
}

/// Bytes a key word is made of.
const fn word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Bytes that may stand between a key and its value.
const fn glue(b: u8) -> bool {
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
const fn ends(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'"' | b'\'' | b'`' | b'\\' | b',' | b';' | b')' | b'}' | b']' | b'<' | b'>' | b'&'
        )
}

const BARE: u16 = 1;
const CONTINUES: u16 = 2;
const WORD: u16 = 4;
const GLUE: u16 = 8;
const ENDS: u16 = 16;
/// A byte that makes a value [`plausible`] on its own: a digit, or not a letter, `_`, `-`, `.`.
const TELLING: u16 = 32;
const LOWER: u16 = 64;
const UPPER: u16 = 128;
/// `"`, `'` and `` ` ``.
const QUOTE: u16 = 256;
/// ASCII whitespace (which includes the line break).
const SPACE: u16 = 512;
const SLASH: u16 = 1024;

/// The classes above for every byte, one look-up each.
static BYTE_CLASS: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let telling =
            b.is_ascii_digit() || !(b.is_ascii_alphabetic() || matches!(b, b'_' | b'-' | b'.'));
        t[i] = (bare(b) as u16 * BARE)
            | (continues(b) as u16 * CONTINUES)
            | (word(b) as u16 * WORD)
            | (glue(b) as u16 * GLUE)
            | (ends(b) as u16 * ENDS)
            | (telling as u16 * TELLING)
            | (b.is_ascii_lowercase() as u16 * LOWER)
            | (b.is_ascii_uppercase() as u16 * UPPER)
            | (matches!(b, b'"' | b'\'' | b'`') as u16 * QUOTE)
            | (b.is_ascii_whitespace() as u16 * SPACE)
            | ((b == b'/') as u16 * SLASH);
        i += 1;
    }
    t
};

/// [`plausible`] from the classes of a value's bytes, or-ed together, and its length.
fn plausible_by_classes(classes: u16, len: usize) -> bool {
    classes & TELLING != 0 || classes & (LOWER | UPPER) == LOWER | UPPER || len >= 12
}

fn is_word(b: u8) -> bool {
    BYTE_CLASS[usize::from(b)] & WORD != 0
}

fn is_glue(b: u8) -> bool {
    BYTE_CLASS[usize::from(b)] & GLUE != 0
}

fn ends_value(b: u8) -> bool {
    BYTE_CLASS[usize::from(b)] & ENDS != 0
}

/// A key word split into lower-case sub-words, without allocating: the word's letters and
/// digits, lower-cased, one after another (the word *joined*, for names like `cex.io` and
/// `new_relic`), and where each sub-word starts and ends in them.
#[derive(Default)]
struct SubWords {
    joined: Vec<u8>,
    bounds: Vec<(usize, usize)>,
}

impl SubWords {
    /// Split `word`: `bugsnagToken` → `bugsnag`, `token`; `SUMOLOGIC_ACCESSKEY` →
    /// `sumologic`, `accesskey`.
    fn split(&mut self, word: &[u8]) {
        /// 0 not a letter or digit, 1 digit, 2 lower case, 3 upper case.
        static KIND: [u8; 256] = {
            let mut t = [0u8; 256];
            let mut i = 0;
            while i < 256 {
                let b = i as u8;
                t[i] = if b.is_ascii_digit() {
                    1
                } else if b.is_ascii_lowercase() {
                    2
                } else if b.is_ascii_uppercase() {
                    3
                } else {
                    0
                };
                i += 1;
            }
            t
        };
        self.joined.clear();
        self.bounds.clear();
        self.joined.reserve(word.len());
        // Where the sub-word being read starts in `joined`, and the kind of the byte before
        // (4 at the start: no boundary before the first byte).
        let mut current = 0;
        let mut prev = 4u8;
        for &b in word {
            let kind = KIND[usize::from(b)];
            // A boundary before a byte that is not a letter or digit, before an upper-case
            // letter after a lower-case one, and before a digit after three letters or more.
            let boundary = prev != 4
                && (kind == 0
                    || (prev == 2 && kind == 3)
                    || (prev >= 2 && kind == 1 && self.joined.len() - current > 2));
            if boundary && self.joined.len() > current {
                self.bounds.push((current, self.joined.len()));
                current = self.joined.len();
            }
            if kind != 0 {
                self.joined.push(b | u8::from(kind == 3) << 5);
            }
            prev = kind;
        }
        if self.joined.len() > current {
            self.bounds.push((current, self.joined.len()));
        }
    }

    fn last(&self) -> Option<&[u8]> {
        self.bounds.last().map(|&(s, e)| &self.joined[s..e])
    }
}

fn trim_digits(s: &[u8]) -> &[u8] {
    let keep = s
        .iter()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |i| i + 1);
    &s[..keep]
}

/// Whether a lower-case sub-word, with the flags the table gave it, is a credential word.
fn is_credential_word(s: &[u8], flags: u8) -> bool {
    flags & CREDENTIAL != 0
        || CREDENTIAL_SUFFIXES
            .iter()
            .any(|suf| s.len() > suf.len() && s.ends_with(suf.as_bytes()))
        || (s.len() > 3 && s.ends_with(b"key") && !s.ends_with(b"monkey"))
}

fn is_password_word(s: &[u8], flags: u8) -> bool {
    flags & PASSWORD != 0 || s.ends_with(b"password") || s.ends_with(b"passwd")
}

/// Add what the lower-case sub-word `s` says about a key to `class`; returns the flags the
/// word table gives `s` without its trailing digits.
fn classify_sub_word(s: &[u8], class: &mut KeyClass) -> u8 {
    let s = trim_digits(s);
    if s.is_empty() {
        return 0;
    }
    let (flags, provider_prefix) = WORDS.look_up(s);
    if matches!(s, b"h" | b"sha" | b"md" | b"checksum" | b"integrity") {
        class.public = true;
    }
    if is_password_word(s, flags) {
        class.password = true;
    } else if is_credential_word(s, flags) {
        class.credential = true;
    }
    if s.len() >= 2 && (flags & PROVIDER != 0 || provider_prefix) {
        class.provider = true;
    }
    flags
}

/// A first sub-word that makes the key it starts public: `public_key`, `pub_key`,
/// `publishable_key` name what may be shown.
pub(crate) fn is_public_prefix(s: &[u8]) -> bool {
    matches!(trim_digits(s), b"public" | b"pub" | b"publishable")
}

/// Words that make the `key` after them an index, not a credential: `cache_key`, `sortKey`,
/// `primary key`, `partition_key`, `idempotency-key`.
pub(crate) const INDEX_WORDS: &[&str] = &[
    "cache",
    "primary",
    "foreign",
    "sort",
    "partition",
    "routing",
    "idempotency",
    "dedup",
    "dedupe",
    "lookup",
    "shard",
    "unique",
    "composite",
    "row",
    "index",
    "map",
    "dict",
    "object",
    "group",
];

fn is_index_word(s: &[u8]) -> bool {
    let s = trim_digits(s);
    INDEX_WORDS.iter().any(|w| w.as_bytes() == s)
}

fn is_key_word(s: &[u8]) -> bool {
    matches!(trim_digits(s), b"key" | b"keys")
}

/// What one key word says, wherever it stands in the key.
#[derive(Debug, Default, Clone, Copy)]
struct WordClass {
    class: KeyClass,
    /// Its last sub-word names something public: the key is public when this word is
    /// the nearest (`token_type: bearer`).
    public_if_nearest: bool,
    /// The word is `key` or `keys` itself.
    key_only: bool,
    /// Its last sub-word is an index word: the key is public when the nearest word is
    /// `key` and this one is the next (`cache key: …`).
    index_last: bool,
}

fn word_class(word: &[u8], subs: &mut SubWords) -> WordClass {
    subs.split(word);
    let mut class = KeyClass::default();
    // The flags of the last sub-word (without trailing digits), from its classification.
    let mut last_flags = 0;
    for &(s, e) in &subs.bounds {
        last_flags = classify_sub_word(&subs.joined[s..e], &mut class);
    }
    // Or its first sub-word says the key is public (`public_key`, `publishableKey`), or
    // names an index before a last `key` (`cache_key`).
    let first = subs.bounds.first().map(|&(s, e)| &subs.joined[s..e]);
    let last = subs.last();
    let public_if_nearest = last_flags & PUBLIC != 0
        || first.is_some_and(is_public_prefix)
        || (subs.bounds.len() >= 2
            && first.is_some_and(is_index_word)
            && last.is_some_and(is_key_word));
    let key_only = matches!(subs.joined.as_slice(), b"key" | b"keys");
    let index_last = last.is_some_and(is_index_word);
    // The whole word, joined: the same as its one sub-word when it has only one.
    if subs.bounds.len() != 1 {
        classify_sub_word(&subs.joined, &mut class);
    }
    WordClass {
        class,
        public_if_nearest,
        key_only,
        index_last,
    }
}

/// The class of a key from the classes of its words, nearest first.
fn key_class(words: impl IntoIterator<Item = WordClass>) -> KeyClass {
    let mut class = KeyClass::default();
    let mut nearest_is_key = false;
    for (n, w) in words.into_iter().enumerate() {
        class.password |= w.class.password;
        class.credential |= w.class.credential;
        class.provider |= w.class.provider;
        class.public |= w.class.public
            || (n == 0 && w.public_if_nearest)
            || (n == 1 && nearest_is_key && w.index_last);
        nearest_is_key |= n == 0 && w.key_only;
    }
    class
}

/// The classes of words met before, by their bytes: keys repeat from line to line
/// (`token`, `api_key`, `password`), and a word's class depends on its bytes alone. One slot
/// a hash, for words up to [`WordCache::LONGEST`] bytes; a longer word is classified anew.
/// The number of slots grows with the text (a short text has few words to keep).
#[derive(Default)]
struct WordCache {
    /// Empty until the first word (most texts scrubbed hold none worth a look).
    slots: Vec<(u8, [u8; WordCache::LONGEST], WordClass)>,
    /// The number of slots to make at the first word: a power of two, or 0 for the least.
    size: usize,
}

impl WordCache {
    const LONGEST: usize = 32;
    const FEWEST: usize = 64;
    const MOST: usize = 4096;

    /// A cache sized for a text of `len` bytes: a slot for each 128 bytes, within
    /// [`WordCache::FEWEST`] and [`WordCache::MOST`].
    fn for_text(len: usize) -> WordCache {
        WordCache {
            slots: Vec::new(),
            size: (len / 128)
                .clamp(Self::FEWEST, Self::MOST)
                .next_power_of_two(),
        }
    }

    /// The slot of a word: a hash of its bytes, read eight at a time (any hash would do;
    /// this one costs a multiplication for each eight bytes).
    fn slot(word: &[u8], mask: usize) -> usize {
        let mut h = word.len() as u64;
        let mut chunks = word.chunks_exact(8);
        for chunk in &mut chunks {
            let mut eight = [0u8; 8];
            eight.copy_from_slice(chunk);
            h = (h ^ u64::from_le_bytes(eight)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        let tail = chunks
            .remainder()
            .iter()
            .fold(0u64, |t, &b| t << 8 | u64::from(b));
        h = (h ^ tail).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The table's size is a power of two: its high bits, folded down.
        (h ^ (h >> 29) ^ (h >> 47)) as usize & mask
    }

    /// The class of `word`, from the cache or classified now (and kept).
    fn class_of(&mut self, word: &[u8], subs: &mut SubWords) -> WordClass {
        if word.is_empty() || word.len() > Self::LONGEST {
            return word_class(word, subs);
        }
        if self.slots.is_empty() {
            let size = self.size.max(Self::FEWEST);
            self.slots = vec![(0, [0; Self::LONGEST], WordClass::default()); size];
        }
        let mask = self.slots.len() - 1;
        let slot = &mut self.slots[Self::slot(word, mask)];
        if usize::from(slot.0) == word.len() && slot.1[..word.len()] == *word {
            return slot.2;
        }
        let class = word_class(word, subs);
        slot.0 = u8::try_from(word.len()).unwrap_or(0);
        slot.1[..word.len()].copy_from_slice(word);
        slot.2 = class;
        class
    }
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
        // Back over the word, four bytes a step while four are left, then one at a time.
        'word: {
            while i >= 4 {
                for &b in line[i - 4..i].iter().rev() {
                    if !is_word(b) {
                        break 'word;
                    }
                    i -= 1;
                }
            }
            while i > 0 && is_word(line[i - 1]) {
                i -= 1;
            }
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

/// Buffers reused for every candidate value of a line, and from line to line.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The key's words before the value, nearest first.
    words: Vec<(usize, usize)>,
    subs: SubWords,
    cache: WordCache,
}

impl Scratch {
    /// Buffers for the lines of a text of `len` bytes.
    pub(crate) fn for_text(len: usize) -> Scratch {
        Scratch {
            cache: WordCache::for_text(len),
            ..Scratch::default()
        }
    }
}

/// Find context secrets in one line.
pub(crate) fn scan_line(line: &[u8], out: &mut Vec<ContextHit>, scratch: &mut Scratch) {
    let mut i = 0;
    let n = line.len();
    while i < n {
        let b = line[i];
        let class = BYTE_CLASS[usize::from(b)];
        if class & QUOTE != 0 {
            // A quoted string holding bytes a bare value cannot (`m{{h}o)p$…`, `u@D7GXt)t>8d`)
            // and no whitespace: read up to its closing quote in one pass, and no further
            // than a whitespace byte, which rules it out.
            let s = i + 1;
            let mut e = s;
            let mut all = BARE;
            // Whether the walk stops at `c` (another kind of quote is part of the string).
            let stops =
                |c: u8, class: u16| class & (QUOTE | SPACE) != 0 && (c == b || class & SPACE != 0);
            // Four bytes a step while four are left, then one at a time.
            'string: {
                while let Some(four) = line.get(e..e + 4) {
                    for &c in four {
                        let class = BYTE_CLASS[usize::from(c)];
                        if stops(c, class) {
                            break 'string;
                        }
                        all &= class;
                        e += 1;
                    }
                }
                while e < n {
                    let class = BYTE_CLASS[usize::from(line[e])];
                    if stops(line[e], class) {
                        break;
                    }
                    all &= class;
                    e += 1;
                }
            }
            if e < n && line[e] == b && e - s >= 8 && all & BARE == 0 {
                consider(line, s, e, Kind::Quoted, scratch, out);
            } else if e < n
                && BYTE_CLASS[usize::from(line[e])] & SPACE != 0
                && e > s
                && assigned_before(line, i)
                && let Some(close) = spaced_string_end(line, s, b)
            {
                // A quoted value with spaces after an assignment (`password: 'let me in
                // 7sj8E'`): only a password key makes it a secret (see `consider_plausible`).
                consider_plausible(line, s, close, Kind::Spaced, scratch, out);
                i = close;
            }
            i += 1;
            continue;
        }
        // An assignment sign before a value full of punctuation (`PASSWORD=a}K9{m!x#2`): a
        // password key makes the whole of it a secret.
        if (b == b'=' || b == b':')
            && let Some((s, e)) = punctuated_value(line, i)
        {
            let before = out.len();
            consider_punctuated(line, s, e, scratch, out);
            if out.len() > before {
                i = e;
                continue;
            }
        }
        // (The byte before a bare byte reached here is never bare: a run of value bytes is
        // read whole below, and the byte that ends it is not one.)
        if class & BARE == 0 {
            i += 1;
            continue;
        }
        let start = i;
        // The classes of the value's bytes, for `plausible`.
        let mut seen = 0u16;
        // Four bytes a step while four are left, then one at a time.
        'run: {
            while let Some(four) = line.get(i..i + 4) {
                for &b in four {
                    let c = BYTE_CLASS[usize::from(b)];
                    if c & CONTINUES == 0 {
                        break 'run;
                    }
                    seen |= c;
                    i += 1;
                }
            }
            while i < n {
                let c = BYTE_CLASS[usize::from(line[i])];
                if c & CONTINUES == 0 {
                    break;
                }
                seen |= c;
                i += 1;
            }
        }
        // Base-64 padding belongs to the value.
        let mut end = i;
        while end < n && line[end] == b'=' {
            end += 1;
        }
        // Not padding: `=` then an opening quote, the sign of an attribute or assignment
        // (`value="…"`); padding inside a quoted value is followed by its closing quote.
        // Nor `=` then a byte that opens a value (`db_pass={Xy9}…`, `pw=(9K…`): padding ends
        // a value, so what follows it is a byte that ends one.
        let padded = end > i
            && (end == n || ends_value(line[end]))
            && !(end < n
                && BYTE_CLASS[usize::from(line[end])] & QUOTE != 0
                && (start == 0 || line[start - 1] != line[end]));
        let end = if padded { end } else { i };
        if end - start >= 6 {
            let before = out.len();
            // Padding is a telling byte.
            if padded || plausible_by_classes(seen, end - start) {
                consider_plausible(line, start, end, Kind::Bare, scratch, out);
            }
            // (Padding holds no `/`.)
            if out.len() == before && seen & SLASH != 0 {
                // A path or URL: try its segments (`…/keys/pri_0998…`).
                let mut s = start;
                for (k, &c) in line[start..end].iter().enumerate() {
                    if c == b'/' {
                        if start + k - s >= 8 && s > start {
                            consider(line, s, start + k, Kind::Segment, scratch, out);
                        }
                        s = start + k + 1;
                    }
                }
                if end - s >= 8 && s > start {
                    consider(line, s, end, Kind::Segment, scratch, out);
                }
            }
        }
        i = end.max(i);
    }
}

/// Whether the quote at `quote` follows an assignment sign, across spaces (`= "`, `: '`).
fn assigned_before(line: &[u8], quote: usize) -> bool {
    let mut i = quote;
    while i > 0 && matches!(line[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    i > 0 && matches!(line[i - 1], b'=' | b':')
}

/// The end of a quoted value with spaces that starts at `s` (after its opening quote `q`):
/// its closing quote within 64 bytes, holding one to three single spaces between other bytes,
/// no other whitespace and no quote of its kind; `None` if it is not one.
fn spaced_string_end(line: &[u8], s: usize, q: u8) -> Option<usize> {
    let rest = &line[s..line.len().min(s + 65)];
    let close = memchr::memchr(q, rest)?;
    let v = &rest[..close];
    if v.len() < 8 || v[0] == b' ' || v[v.len() - 1] == b' ' {
        return None;
    }
    let mut spaces = 0;
    for (k, &b) in v.iter().enumerate() {
        if b == b' ' {
            spaces += 1;
            if v[k + 1] == b' ' {
                return None;
            }
        } else if b.is_ascii_whitespace() {
            return None;
        }
    }
    (1..=3).contains(&spaces).then_some(s + close)
}

/// The name of a name/value pair before the key word `value` at `word_start`: `"name":
/// "client_secret", "value": …`, `key="ClearTextPassword" value=…`, `{"key": "db_password",
/// "value": …}`. Returns the range of the quoted name.
fn paired_name(line: &[u8], word_start: usize) -> Option<(usize, usize)> {
    let mut i = word_start;
    // Back over the glue between the pair's two members: a quote, `, `, a space.
    let mut glue = 0;
    while i > 0 && matches!(line[i - 1], b'"' | b'\'' | b' ' | b',' | b'\t') && glue < 4 {
        i -= 1;
        glue += 1;
    }
    // The name, inside its quotes (the closing one was read as glue above).
    let close = i;
    while i > 0 && is_word(line[i - 1]) && close - i <= 64 {
        i -= 1;
    }
    let open = i;
    if open == close || open == 0 || !matches!(line[open - 1], b'"' | b'\'') {
        return None;
    }
    if close >= line.len() || line[close] != line[open - 1] {
        return None;
    }
    // Back over `": "` or `="` to the word that says it is the pair's name.
    i = open - 1;
    let mut glue = 0;
    while i > 0 && matches!(line[i - 1], b'"' | b'\'' | b' ' | b':' | b'=') && glue < 4 {
        i -= 1;
        glue += 1;
    }
    let end = i;
    while i > 0 && line[i - 1].is_ascii_alphabetic() && end - i <= 4 {
        i -= 1;
    }
    let word = &line[i..end];
    (word.eq_ignore_ascii_case(b"name") || word.eq_ignore_ascii_case(b"key"))
        .then_some((open, close))
}

/// A password value that is two or three lower-case words joined by `-` (`shorter-version`,
/// `current-password`): an identifier or a placeholder, not a password.
fn kebab_words(v: &[u8]) -> bool {
    let parts = v.split(|&b| b == b'-');
    let mut n = 0;
    for p in parts {
        n += 1;
        if p.len() < 2 || !p.iter().all(u8::is_ascii_lowercase) {
            return false;
        }
    }
    (2..=3).contains(&n)
}

/// A file path (`/home/user/src`, `~/work`, `./run`): after `PWD=` it is the working
/// directory, not a password.
fn is_path(v: &[u8]) -> bool {
    (v.starts_with(b"/") || v.starts_with(b"~/") || v.starts_with(b"./"))
        && v.iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~'))
}

/// The end of an unquoted value after the assignment sign at `sign` that the bare scan cannot
/// read whole (`PASSWORD=a}K9{m!x#2`, `db_pass={Xy9}zQ!w`): it runs to whitespace or a quote,
/// less one trailing `,` or `;`, is at least six bytes long, and holds a byte no bare value
/// does (other than the `/`, `.` and `:` of paths and hosts). Returns where it starts and ends.
fn punctuated_value(line: &[u8], sign: usize) -> Option<(usize, usize)> {
    let mut s = sign + 1;
    while s < line.len() && matches!(line[s], b' ' | b'\t') && s - sign <= 2 {
        s += 1;
    }
    let first = *line.get(s)?;
    // `==`, `=>`, `::`, `:=`, `://` and a quoted or empty value are not this; nor is any
    // value after a key with no `pass` or `pw` in it.
    if BYTE_CLASS[usize::from(first)] & (QUOTE | SPACE) != 0
        || matches!(first, b'=' | b'>' | b':' | b'/')
        || !password_ish_before(line, sign)
    {
        return None;
    }
    let mut e = s;
    let mut odd = false;
    while e < line.len() {
        let c = BYTE_CLASS[usize::from(line[e])];
        if c & (QUOTE | SPACE) != 0 {
            break;
        }
        odd |= c & CONTINUES == 0 && !matches!(line[e], b'/' | b'.' | b':');
        e += 1;
    }
    if e > s && matches!(line[e - 1], b',' | b';') {
        e -= 1;
    }
    (odd && e - s >= 6).then_some((s, e))
}

/// A quick look before [`punctuated_value`]: whether the word before the sign at `sign` (across
/// a closing quote) holds `pass` or `pw` in any case, as every password key does (`db_pass`,
/// `PASSWD`, `rootPass`, `pwd`, `my_password_super_secure`).
fn password_ish_before(line: &[u8], sign: usize) -> bool {
    let mut i = sign;
    while i > 0 && sign - i < 2 && matches!(line[i - 1], b'"' | b'\'' | b' ') {
        i -= 1;
    }
    let end = i;
    while i > 0 && end - i < 64 && is_word(line[i - 1]) {
        i -= 1;
    }
    line[i..end].windows(2).enumerate().any(|(k, w)| {
        (w[0] | 0x20) == b'p'
            && ((w[1] | 0x20) == b'w'
                || ((w[1] | 0x20) == b'a' && line[i + k..end].len() >= 4 && {
                    let r = &line[i + k + 2..i + k + 4];
                    (r[0] | 0x20) == b's' && (r[1] | 0x20) == b's'
                }))
    })
}

/// Whether `v` starts with a call or a type: an identifier, then `(` or `<`
/// (`get_password()`, `z.string().min(8)`, `Option<String>`), or a reference type
/// (`&[&str]`, `&'a str`).
fn call_or_type(v: &[u8]) -> bool {
    if v.first() == Some(&b'&') {
        return true;
    }
    let ident = v
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':')))
        .unwrap_or(v.len());
    ident > 0 && v[0].is_ascii_alphabetic() && matches!(v.get(ident), Some(&(b'(' | b'<')))
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

/// Whether the key word `word` may stand before a value with only a space between them: a
/// space key (`token`, `Bearer`, `api_key`), a provider's name, or an id word of a key that
/// names a provider.
fn may_stand_before_a_space(word: &[u8], provider: bool, subs: &mut SubWords) -> bool {
    subs.split(word);
    let last = subs.last().map_or(0, |l| WORDS.look_up(l).0);
    // The word itself, lower-cased, is one of the space keys (all letters).
    let nearest = word.len() == subs.joined.len() && WORDS.look_up(&subs.joined).0 & SPACE_KEY != 0;
    nearest
        || last & SPACE_KEY != 0
        || WORDS.is_provider(&subs.joined)
        || (last & ID != 0 && provider)
}

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
    /// The inside of a quoted string with spaces, after an assignment sign.
    Spaced,
}

fn consider(
    line: &[u8],
    start: usize,
    end: usize,
    kind: Kind,
    scratch: &mut Scratch,
    out: &mut Vec<ContextHit>,
) {
    let v = &line[start..end];
    if v.len() < 6 || !plausible(v) {
        return;
    }
    consider_plausible(line, start, end, kind, scratch, out);
}

/// [`consider`] for a value already found [`plausible`] and at least six bytes long.
fn consider_plausible(
    line: &[u8],
    start: usize,
    end: usize,
    kind: Kind,
    scratch: &mut Scratch,
    out: &mut Vec<ContextHit>,
) {
    let Scratch { words, subs, cache } = scratch;
    let quoted = matches!(kind, Kind::Quoted | Kind::Spaced);
    let v = &line[start..end];
    // A bare value right before `(` is a function being called (`getpass.getpass(…)`), one
    // before `<` a generic type (`password: Option<String>`; `</` closes an element), and one
    // right after `(` an argument, not an assignment (`Generator(TokenBase)`).
    let generic = line.get(end) == Some(&b'<') && line.get(end + 1) != Some(&b'/');
    if !quoted
        && (line.get(end) == Some(&b'(') || generic || (start > 0 && line[start - 1] == b'('))
    {
        return;
    }
    // A bare value right before `="` (`='`) is the name of the next attribute
    // (`name="DB_PASSWORD" serializeAs="String"`); a `=` inside a token is not.
    if !quoted
        && line.get(end) == Some(&b'=')
        && line
            .get(end + 1)
            .is_some_and(|&b| BYTE_CLASS[usize::from(b)] & QUOTE != 0)
    {
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
    let mut key: [&[u8]; 4] = [&[]; 4];
    for (slot, &(s, e)) in key.iter_mut().zip(words.iter()) {
        *slot = &line[s..e];
    }
    let key = &key[..words.len().min(4)];
    let mut class = key_class(key.iter().map(|w| cache.class_of(w, subs)));
    // `"name": "client_secret", "value": "…"`: the key is the pair's name.
    if key[0].eq_ignore_ascii_case(b"value")
        && !(class.password || class.credential)
        && let Some((s, e)) = paired_name(line, words[0].0)
    {
        let named = cache.class_of(&line[s..e], subs).class;
        class.password |= named.password;
        class.credential |= named.credential;
        class.provider |= named.provider;
        class.public |= named.public;
    }
    // A quoted value with spaces is a secret after a password key, or after a credential key
    // when it holds a digit (`secret: "open sesame 4kQz"`); never after a public one.
    if kind == Kind::Spaced
        && (class.public
            || !(class.password || (class.credential && v.iter().any(u8::is_ascii_digit))))
    {
        return;
    }
    let scheme = (2..=5).contains(&key[0].len())
        && [
            &b"http"[..],
            b"https",
            b"ftp",
            b"ws",
            b"wss",
            b"git",
            b"ssh",
            b"file",
            b"s3",
            b"gs",
        ]
        .iter()
        .any(|s| key[0].eq_ignore_ascii_case(s));
    if scheme
        || class.public
        || (kind == Kind::Segment && !class.credential && !class.password)
        || !(class.password || class.credential || class.provider)
    {
        return;
    }
    if !assigned && !quoted {
        // `token abc…`, `Bearer abc…`, `facebook 1477…|…`: only a credential word or a
        // provider's name may stand before a value with a bare space.
        let keyish = may_stand_before_a_space(key[0], class.provider, subs);
        if !keyish {
            return;
        }
    }
    let judged = Judged::new(v);
    let shape = if class.password {
        if !(assigned || quoted) || !judged.credential_value(true) || kebab_words(v) || is_path(v) {
            return;
        }
        PASSWORD_SHAPE
    } else if class.credential {
        // A value with spaces is a pass phrase, judged as a password is.
        if judged.credential_value(kind == Kind::Spaced) {
            if class.provider {
                PROVIDER_SHAPE
            } else {
                GENERIC_SHAPE
            }
        } else if class.provider && judged.looks_random_with(true) {
            PROVIDER_SHAPE
        } else {
            return;
        }
    } else if class.provider {
        // A URL after a provider's name is its address (`key="nuget.internal"
        // value="https://pkgs.contoso.net/v3/index.json"`); the URL shapes judge credentials in it.
        if !judged.looks_random_with(true) || memchr::memmem::find(v, b"://").is_some() {
            return;
        }
        PROVIDER_SHAPE
    } else {
        return;
    };
    push(line, start, end, quoted, shape, out);
}

/// A value found by [`punctuated_value`]: a secret after a password key (not a public one),
/// when it is not a reference, a call, a type or a placeholder.
fn consider_punctuated(
    line: &[u8],
    start: usize,
    end: usize,
    scratch: &mut Scratch,
    out: &mut Vec<ContextHit>,
) {
    let Scratch { words, subs, cache } = scratch;
    let v = &line[start..end];
    if value::is_variable_reference(v) || call_or_type(v) || is_path(v) {
        return;
    }
    key_before(line, start, words);
    if words.is_empty() {
        return;
    }
    let mut key: [&[u8]; 4] = [&[]; 4];
    for (slot, &(s, e)) in key.iter_mut().zip(words.iter()) {
        *slot = &line[s..e];
    }
    let key = &key[..words.len().min(4)];
    let class = key_class(key.iter().map(|w| cache.class_of(w, subs)));
    if !class.password || class.public || !Judged::new(v).credential_value(true) {
        return;
    }
    out.push(ContextHit {
        start,
        end,
        shape: PASSWORD_SHAPE,
    });
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
mod plain;

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan_line(line.as_bytes(), &mut out, &mut Scratch::default());
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
        assert!(redacted("cache_key = build-6e2adf84019204a8-23").is_empty());
        assert!(redacted("cache key: build-6e2adf84019204a8-23").is_empty());
        assert!(redacted("sortKey: \"Xq8v2LkP9sXwTy\"").is_empty());
        assert!(!redacted("api key: Xq8v2LkP9sXwTy7u").is_empty());
        assert!(!redacted("master_key = Xq8v2LkP9sXwTy7u").is_empty());
    }

    #[test]
    fn cached_word_classes_are_the_classes() {
        // Far more words than slots, many of one length: every collision is met.
        let words: Vec<String> = crate::providers::names()
            .chain(CREDENTIAL_WORDS.iter().copied())
            .chain(PASSWORD_WORDS.iter().copied())
            .chain(PUBLIC_WORDS.iter().copied())
            .flat_map(|w| {
                [
                    w.to_owned(),
                    format!("{w}_key"),
                    format!("my{w}"),
                    w.to_ascii_uppercase(),
                ]
            })
            .collect();
        let mut cache = WordCache::default();
        let mut subs = SubWords::default();
        for round in 0..2 {
            for w in &words {
                let cached = cache.class_of(w.as_bytes(), &mut subs);
                let fresh = word_class(w.as_bytes(), &mut subs);
                assert_eq!(
                    (
                        cached.class.password,
                        cached.class.credential,
                        cached.class.provider,
                        cached.class.public,
                        cached.public_if_nearest,
                        cached.key_only,
                        cached.index_last
                    ),
                    (
                        fresh.class.password,
                        fresh.class.credential,
                        fresh.class.provider,
                        fresh.class.public,
                        fresh.public_if_nearest,
                        fresh.key_only,
                        fresh.index_last
                    ),
                    "{w} (round {round})"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn plausible_by_classes_is_plausible(v in "[a-zA-Z0-9_.~%+/$!#^*-]{0,20}") {
            let v = v.as_bytes();
            let seen = v.iter().fold(0u16, |acc, &b| acc | BYTE_CLASS[usize::from(b)]);
            proptest::prop_assert_eq!(plausible_by_classes(seen, v.len()), plausible(v));
        }
    }

    mod same_as_plain {
        use super::super::plain;
        use super::*;
        use proptest::prelude::*;

        /// Key words made of list words, provider names and their prefixes and extensions,
        /// in every case and joined every way keys are.
        fn key_word() -> impl Strategy<Value = Vec<u8>> {
            let names: Vec<&'static str> = crate::providers::names()
                .chain(CREDENTIAL_WORDS.iter().copied())
                .chain(PASSWORD_WORDS.iter().copied())
                .chain(PUBLIC_WORDS.iter().copied())
                .chain(ID_WORDS.iter().copied())
                .chain(INDEX_WORDS.iter().copied())
                .chain(SPACE_KEYS.iter().copied())
                .chain(["monkey", "sha", "md", "h", "integrity", "checksum"])
                .collect();
            let part = prop_oneof![
                proptest::sample::select(names.clone()).prop_map(str::to_owned),
                proptest::sample::select(names.clone()).prop_map(|n| n.to_ascii_uppercase()),
                proptest::sample::select(names).prop_map(|n| {
                    let mut c = n.to_owned();
                    if let Some(f) = c.get_mut(0..1) {
                        f.make_ascii_uppercase();
                    }
                    c
                }),
                "[a-zA-Z]{1,6}",
                "[0-9]{1,3}",
                "[_.-]",
            ];
            proptest::collection::vec(part, 1..5).prop_map(|p| p.concat().into_bytes())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(3000))]

            #[test]
            fn key_classes_answer_as_the_plain_ones(
                words in proptest::collection::vec(key_word(), 1..5),
                provider in any::<bool>(),
            ) {
                let words: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
                let mut subs = SubWords::default();
                let c = key_class(words.iter().map(|w| word_class(w, &mut subs)));
                let mut cache = WordCache::default();
                let cached = key_class(words.iter().map(|w| cache.class_of(w, &mut subs)));
                let again = key_class(words.iter().map(|w| cache.class_of(w, &mut subs)));
                prop_assert_eq!(
                    (cached.password, cached.credential, cached.provider, cached.public),
                    (c.password, c.credential, c.provider, c.public)
                );
                prop_assert_eq!(
                    (again.password, again.credential, again.provider, again.public),
                    (c.password, c.credential, c.provider, c.public)
                );
                prop_assert_eq!(
                    (c.password, c.credential, c.provider, c.public),
                    plain::classify(&words)
                );
                prop_assert_eq!(
                    may_stand_before_a_space(words[0], provider, &mut subs),
                    plain::may_stand_before_a_space(words[0], provider)
                );
                for w in &words {
                    let j = plain::joined(w);
                    prop_assert_eq!(WORDS.is_provider(j.as_bytes()), plain::is_provider(&j));
                    let mut expected = Vec::new();
                    plain::sub_words(w, &mut expected);
                    subs.split(w);
                    let got: Vec<&[u8]> = subs.bounds.iter().map(|&(s, e)| &subs.joined[s..e]).collect();
                    let expected: Vec<&[u8]> = expected.iter().map(|s| s.as_bytes()).collect();
                    prop_assert_eq!(got, expected);
                }
            }
        }
    }
}
