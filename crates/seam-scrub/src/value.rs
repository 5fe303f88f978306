//! Judging a candidate value: does it look like a secret, or like a placeholder, a variable
//! reference, an identifier made of words, a hash or a UUID?
//!
//! These tests are what lets the context shapes (a credential word or a provider's name next to
//! a token) stay quiet on `password = "changeme"`, `token: ${TOKEN}`, `name = "ultraPictureBox1"`
//! and `"_id": "1a8d0cca-e1a9-4318-bc2f-f5658ab2dcb5"`.
//!
//! A value is judged through [`Judged`], which walks it once for what several tests need
//! (byte kinds, distinct bytes, runs) and remembers each answer: the context detector often
//! asks two questions of one value.

use std::cell::OnceCell;

/// How often each byte occurs in a value.
struct ByteCounts {
    counts: [u32; 256],
    /// Which bytes occur, as a 256-bit set.
    present: [u64; 4],
    len: usize,
}

impl ByteCounts {
    fn of(v: &[u8]) -> ByteCounts {
        let mut c = ByteCounts {
            counts: [0; 256],
            present: [0; 4],
            len: v.len(),
        };
        for &b in v {
            c.counts[usize::from(b)] += 1;
            c.present[usize::from(b >> 6)] |= 1 << (b & 63);
        }
        c
    }

    /// The bytes present, in increasing order.
    fn bytes(&self) -> impl Iterator<Item = usize> + '_ {
        self.present.iter().enumerate().flat_map(|(w, &bits)| {
            let mut bits = bits;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(b)
            })
        })
    }

    /// Shannon entropy of the bytes, in bits per byte.
    fn entropy(&self) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        let n = self.len as f64;
        // Summed in byte order from -0.0, as `Iterator::sum` over all 256 counts would.
        let mut sum = -0.0;
        for b in self.bytes() {
            let p = f64::from(self.counts[b]) / n;
            sum += -p * p.log2();
        }
        sum
    }
}

/// Words that mean "put the real value here".
const PLACEHOLDER_PARTS: &[&str] = &[
    "xxxx",
    "****",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourapi",
    "yourkey",
    "yourtoken",
    "yoursecret",
    "insert_",
    "insert-",
    "redacted",
    "replace_",
    "replace-",
    "replaceme",
    "dummy",
    "<your",
    "<insert",
    "notreal",
    "not_real",
    "not-a-real",
];

/// Values that are placeholders on their own.
const PLACEHOLDER_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "changeme",
    "admin",
    "root",
    "test",
    "testing",
    "qwerty",
    "letmein",
    "hunter2",
    "foobar",
    "none",
    "null",
    "nil",
    "empty",
    "undefined",
    "true",
    "false",
    "default",
    "token",
    "apikey",
    "api_key",
    "string",
    "value",
    "required",
    "optional",
    "pass",
    "mypassword",
    "mysecret",
    "secret123",
    "password123",
    "password1",
    "p@ssw0rd",
];

/// The placeholder parts, found case-insensitively during the walk over a value: each
/// part's first four bytes (lower case) are a key in a small open-addressing table, the
/// walk keeps its last four bytes, lower-cased, in a `u32`, and a key found there is checked
/// against the whole of the parts that start with it.
struct PlaceholderParts {
    /// Four-byte prefixes; 0 marks an empty slot (no part holds a NUL byte).
    keys: [u32; 64],
    /// For each slot: the range of `parts` that start with its key.
    ranges: [(u8, u8); 64],
    /// The parts, lower case, grouped by prefix.
    parts: Vec<&'static [u8]>,
    /// The pairs of bytes at offsets 0 and 1 of every part, in every case, as a set of
    /// 65,536 bits.
    pairs: [u64; 1024],
}

impl PlaceholderParts {
    fn build() -> PlaceholderParts {
        let mut parts: Vec<&'static [u8]> =
            PLACEHOLDER_PARTS.iter().map(|p| p.as_bytes()).collect();
        assert!(
            parts
                .iter()
                .all(|p| p.len() >= 4 && !p.contains(&0) && p.to_ascii_lowercase() == *p),
            "placeholder parts are lower case, at least four bytes long"
        );
        parts.sort_by_key(|p| Self::key(p));
        let mut pairs = [0u64; 1024];
        for p in &parts {
            for offset in 0..2 {
                for a in [p[offset], p[offset].to_ascii_uppercase()] {
                    for b in [p[offset + 1], p[offset + 1].to_ascii_uppercase()] {
                        let pair = usize::from(a) << 8 | usize::from(b);
                        pairs[pair >> 6] |= 1 << (pair & 63);
                    }
                }
            }
        }
        let mut table = PlaceholderParts {
            keys: [0; 64],
            ranges: [(0, 0); 64],
            parts,
            pairs,
        };
        let mut i = 0;
        while i < table.parts.len() {
            let key = Self::key(table.parts[i]);
            let mut j = i;
            while j < table.parts.len() && Self::key(table.parts[j]) == key {
                j += 1;
            }
            let mut slot = Self::slot(key);
            while table.keys[slot] != 0 {
                slot = (slot + 1) % 64;
            }
            table.keys[slot] = key;
            let range = (u8::try_from(i), u8::try_from(j));
            table.ranges[slot] = match range {
                (Ok(a), Ok(b)) => (a, b),
                _ => panic!("too many placeholder parts"),
            };
            i = j;
        }
        table
    }

    fn key(p: &[u8]) -> u32 {
        u32::from_be_bytes([p[0], p[1], p[2], p[3]])
    }

    fn slot(key: u32) -> usize {
        // The top six bits of a multiplicative hash.
        (key.wrapping_mul(0x9E37_79B1) >> 26) as usize
    }

    /// Whether a part starts at `v[at..]`, whose first four bytes, lower-cased, are `key`.
    fn starts_at(&self, key: u32, v: &[u8], at: usize) -> bool {
        let mut slot = Self::slot(key);
        loop {
            match self.keys[slot] {
                0 => return false,
                k if k == key => {
                    let (a, b) = self.ranges[slot];
                    return self.parts[usize::from(a)..usize::from(b)].iter().any(|p| {
                        v.len() - at >= p.len() && v[at..at + p.len()].eq_ignore_ascii_case(p)
                    });
                }
                _ => slot = (slot + 1) % 64,
            }
        }
    }
}

static PARTS: std::sync::LazyLock<PlaceholderParts> =
    std::sync::LazyLock::new(PlaceholderParts::build);

/// Whether `v` holds one of the placeholder parts, case-insensitive. Every part is four
/// bytes long or more, so each occurrence holds, at an even position, the pair of bytes at
/// its offset 0 or 1: only the pairs at even positions are looked up (in a 64 Kbit set of
/// such pairs, in every case), and a part is checked only where one is found.
fn has_placeholder_part(v: &[u8]) -> bool {
    let parts = &*PARTS;
    if v.len() < 4 {
        return false;
    }
    let last_start = v.len() - 4;
    let check = |at: usize| {
        at <= last_start && {
            let key = u32::from_be_bytes([
                fold(v[at]),
                fold(v[at + 1]),
                fold(v[at + 2]),
                fold(v[at + 3]),
            ]);
            parts.starts_at(key, v, at)
        }
    };
    let pairs = &parts.pairs;
    let mut i = 0;
    while let Some(&[a, b]) = v.get(i..i + 2) {
        let key = usize::from(a) << 8 | usize::from(b);
        if pairs[key >> 6] & (1 << (key & 63)) != 0 && ((i > 0 && check(i - 1)) || check(i)) {
            return true;
        }
        i += 2;
    }
    false
}

/// A placeholder, a masked value or an obviously hand-typed filler.
pub(crate) fn is_placeholder(v: &[u8]) -> bool {
    Judged::new(v).is_placeholder()
}

/// A reference to a value kept elsewhere: `$VAR`, `${VAR}`, `{{ var }}`, `<var>`, `%VAR%`,
/// `process.env.X`, `os.environ[...]`, `os.getenv(...)`, `secrets.X`.
pub(crate) fn is_variable_reference(v: &[u8]) -> bool {
    let Some(&first) = v.first() else {
        return true;
    };
    let last = v[v.len() - 1];
    if first == b'$' {
        return true;
    }
    if (first == b'{' && last == b'}')
        || (first == b'<' && last == b'>')
        || (first == b'[' && last == b']')
        || (first == b'(' && last == b')')
    {
        return true;
    }
    if v.len() > 2 && first == b'%' && last == b'%' {
        return true;
    }
    if v.starts_with(b"{{") || v.starts_with(b"#{") || v.starts_with(b"%(") || v.starts_with(b"<%")
    {
        return true;
    }
    // The prefixes of a reference into the environment or a settings object, by first letter.
    let prefixes: &[&[u8]] = match v[0].to_ascii_lowercase() {
        b'p' => &[b"process.env"],
        b'o' => &[b"os.environ", b"os.getenv"],
        b'g' => &[b"getenv"],
        b'e' => &[b"env[", b"env(", b"env."],
        b's' => &[b"secrets.", b"settings.", b"self."],
        b'v' => &[b"vars."],
        b'c' => &[b"config."],
        b't' => &[b"this."],
        _ => &[],
    };
    prefixes
        .iter()
        .any(|p| v.len() >= p.len() && v[..p.len()].eq_ignore_ascii_case(p))
}

/// An RFC 4122 UUID (version 1–8, variant 10xx): mostly an identifier, not a credential.
pub(crate) fn is_rfc_uuid(v: &[u8]) -> bool {
    if v.len() != 36 {
        return false;
    }
    for (i, &b) in v.iter().enumerate() {
        let dash = matches!(i, 8 | 13 | 18 | 23);
        if dash != (b == b'-') || (!dash && !b.is_ascii_hexdigit()) {
            return false;
        }
    }
    let version = v[14];
    let variant = v[19].to_ascii_lowercase();
    (b'1'..=b'8').contains(&version) && matches!(variant, b'8' | b'9' | b'a' | b'b')
}

/// Letter pairs common in English words and in identifiers (row: first letter, bit: second),
/// the 327 most frequent pairs in a large body of source code and its documentation, covering
/// 98.5% of pair occurrences there. Random letters hit these about half the time; words
/// and identifiers almost always do.
const COMMON_BIGRAMS: [u32; 26] = [
    0x1febd6e, 0x11e4b15, 0x13eddb5, 0x11ec97b, 0x1fffd7f, 0x11e7979, 0x01e6991, 0x01a4111,
    0x2aef87f, 0x0000010, 0x0040111, 0x11cc939, 0x01cf91f, 0x17eed7d, 0x0fefd7f, 0x13ec995,
    0x0100800, 0x1fefd7d, 0x11ffdd5, 0x19ef9bd, 0x08eb97f, 0x0804935, 0x0066191, 0x0088995,
    0x00ce000, 0x0000010,
];

fn common_pair(a: u8, b: u8) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    if !a.is_ascii_lowercase() || !b.is_ascii_lowercase() {
        return false;
    }
    COMMON_BIGRAMS[usize::from(a - b'a')] & (1 << (b - b'a')) != 0
}

/// Whether a run of letters could be a word or part of an identifier: short, an acronym, or
/// with a vowel and no long run of consonants.
fn pronounceable(seg: &[u8]) -> bool {
    if seg.len() <= 3 {
        return true;
    }
    let is_vowel = |b: u8| {
        matches!(
            b.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        )
    };
    let vowels = seg.iter().filter(|&&b| is_vowel(b)).count();
    if vowels == 0 {
        // Acronyms: `HTTP`, `JSON`.
        return seg.len() <= 5 && seg.iter().all(u8::is_ascii_uppercase);
    }
    let mut run = 0;
    for &b in seg {
        if is_vowel(b) {
            run = 0;
        } else {
            run += 1;
            if run >= 5 {
                return false;
            }
        }
    }
    true
}

/// An identifier or phrase made of words: `ultraPictureBox1`, `RANDOM_STRING`,
/// `insert_key_here`, `a-fake-api-key`, `NRG0-Hermes-INTERNAL-API`.
pub(crate) fn is_word_like(v: &[u8]) -> bool {
    // One walk over the letter segments, without collecting them: every test that fails
    // returns at once, and the letter pairs are counted both over all segments and over the
    // segments that are not acronyms, for the choice made at the end.
    let mut segments = 0usize;
    let mut short = 0usize;
    let mut all_acronyms = true;
    let (mut pairs_all, mut common_all) = (0usize, 0usize);
    let (mut pairs_words, mut common_words) = (0usize, 0usize);
    let mut digit_segments = 0usize;
    let mut digits = 0usize;
    let mut letter_segment = |seg: &[u8]| -> bool {
        segments += 1;
        short += usize::from(seg.len() <= 2);
        if !pronounceable(seg) {
            return false;
        }
        let acronym = seg.len() <= 5 && seg.iter().all(u8::is_ascii_uppercase);
        all_acronyms &= acronym;
        let pairs = seg.len().saturating_sub(1);
        let common = seg.windows(2).filter(|w| common_pair(w[0], w[1])).count();
        pairs_all += pairs;
        common_all += common;
        if !acronym {
            pairs_words += pairs;
            common_words += common;
        }
        true
    };
    let mut i = 0;
    while i < v.len() {
        let b = v[i];
        if b.is_ascii_digit() {
            let start = i;
            while i < v.len() && v[i].is_ascii_digit() {
                i += 1;
            }
            digit_segments += 1;
            digits += i - start;
            if digit_segments > 2 || digits > 4 {
                return false;
            }
        } else if b.is_ascii_alphabetic() {
            let start = i;
            i += 1;
            if b.is_ascii_uppercase() {
                // An uppercase run: `HTTPServer` → `HTTP` + `Server`; `Picture` stays whole.
                let mut j = i;
                while j < v.len() && v[j].is_ascii_uppercase() {
                    j += 1;
                }
                if j > i {
                    if j < v.len() && v[j].is_ascii_lowercase() {
                        j -= 1;
                    }
                    i = j;
                    if !letter_segment(&v[start..i]) {
                        return false;
                    }
                    continue;
                }
            }
            while i < v.len() && v[i].is_ascii_lowercase() {
                i += 1;
            }
            if !letter_segment(&v[start..i]) {
                return false;
            }
        } else if matches!(b, b'_' | b'-' | b'.' | b' ' | b'/') {
            i += 1;
        } else {
            return false;
        }
    }
    if segments == 0 {
        return false;
    }
    if segments >= 3 && short * 2 > segments {
        // Mostly one- and two-letter fragments: random mixed case, not words.
        return false;
    }
    // Letter pairs inside the segments (acronyms aside) must be the pairs words are made of.
    let (pairs, common) = if all_acronyms {
        (pairs_all, common_all)
    } else {
        (pairs_words, common_words)
    };
    pairs >= 3 && common * 100 >= pairs * 85
}

fn is_version_or_date(v: &[u8]) -> bool {
    // `1.2.3`, `2023-05-18`, `2023-05-18T06:58:25Z`, `v0.0.14`, `v0.0.0-2019…-0f29…/go.mod`.
    let body = v.strip_prefix(b"v").unwrap_or(v);
    let numeric = body
        .iter()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b':' | b'T' | b'Z' | b'+'))
        && body.iter().any(|b| matches!(b, b'.' | b'-' | b':'));
    let dotted =
        body.len() >= 3 && body[0].is_ascii_digit() && body[1] == b'.' && body[2].is_ascii_digit();
    numeric || dotted
}

/// A host name or a file name: dotted labels ending in a short alphabetic one
/// (`huggingface.co`, `api.example.com`, `config.yaml`).
fn is_host_or_file(v: &[u8]) -> bool {
    let Some(dot) = memchr::memrchr(b'.', v) else {
        return false;
    };
    let last = &v[dot + 1..];
    (2..=6).contains(&last.len())
        && last.iter().all(u8::is_ascii_lowercase)
        && v[..dot].iter().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'_')
        })
}

fn is_email(v: &[u8]) -> bool {
    match memchr::memchr(b'@', v) {
        Some(at) => at > 0 && v[at + 1..].contains(&b'.') && !v[at + 1..].contains(&b':'),
        None => false,
    }
}

/// What one look over a value learns: the counts of its byte kinds, how many distinct
/// bytes it holds and the sum of the squares of their counts, and the pairs whose second byte
/// repeats the first or follows it in the alphabet, case-insensitive (`aaaa`, `abcd`,
/// `1234`: most pairs of a hand-typed filler such as `abcdefghijklmnop` or
/// `0000000000TUVWXYZ`, about 1/8 of random hex and fewer of base62). Each is its own
/// simple loop, which the compiler turns into wide instructions.
struct Walk {
    digits: usize,
    lower: usize,
    upper: usize,
    other: usize,
    distinct: u32,
    /// The sum over distinct bytes of (count)²: `len² / sum_sq` is `2^H2`, the collision
    /// entropy, which no Shannon entropy is below.
    sum_sq: u64,
    predictable: usize,
    /// Whether `@`, `.`, and `-` or `:` occur.
    at: bool,
    dot: bool,
    dash_or_colon: bool,
    /// Whether every byte is a letter, a digit or one of `_-. /` (as in words and
    /// identifiers).
    only_word_bytes: bool,
}

/// ASCII lower case by arithmetic (no table, no branch), so that loops over it vectorise.
fn fold(b: u8) -> u8 {
    b | (u8::from(b.wrapping_sub(b'A') < 26) << 5)
}

/// How many bytes of `v` lie in `low..low + span`. Counted in chunks with byte-wide sums,
/// which the compiler turns into wide instructions.
fn count_in(v: &[u8], low: u8, span: u8) -> usize {
    v.chunks(255)
        .map(|chunk| {
            let n = chunk.iter().fold(0u8, |n, &b| {
                n.wrapping_add(u8::from(b.wrapping_sub(low) < span))
            });
            usize::from(n)
        })
        .sum()
}

/// The pairs of `v` whose second byte, case-insensitive, repeats the first (a letter or a
/// digit) or follows it.
fn predictable_pairs(v: &[u8]) -> usize {
    if v.len() < 2 {
        return 0;
    }
    let (firsts, seconds) = (&v[..v.len() - 1], &v[1..]);
    let count = |x: &[u8], y: &[u8]| {
        let n = x.iter().zip(y).fold(0u8, |n, (&a, &b)| {
            let (a, b) = (fold(a), fold(b));
            let alnum = (a.wrapping_sub(b'0') < 10) | (a.wrapping_sub(b'a') < 26);
            n.wrapping_add(u8::from(alnum & (b.wrapping_sub(a) <= 1)))
        });
        usize::from(n)
    };
    if firsts.len() <= 255 {
        // Most values: one byte-wide count holds them all.
        return count(firsts, seconds);
    }
    firsts
        .chunks(255)
        .zip(seconds.chunks(255))
        .map(|(x, y)| count(x, y))
        .sum()
}

/// Each byte's kind as an increment of one of three 21-bit counters packed in a `u64`:
/// digits (bits 0–20), lower-case letters (21–41), upper-case letters (42–62).
static KIND_STEP: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b.is_ascii_digit() {
            1
        } else if b.is_ascii_lowercase() {
            1 << 21
        } else if b.is_ascii_uppercase() {
            1 << 42
        } else {
            0
        };
        i += 1;
    }
    t
};

impl Walk {
    fn of(v: &[u8]) -> Walk {
        const LANE: u64 = (1 << 21) - 1;
        let mut distinct = 0u32;
        let mut kinds = 0u64;
        let mut counts = [0u32; 256];
        // The sum of each byte's count so far, over the bytes: for a byte counted c times in
        // all, 1 + 2 + … + c = c(c + 1)/2, so twice the sum, less the length, is the sum of
        // the squared counts.
        let mut running = 0u64;
        for &b in v {
            kinds = kinds.wrapping_add(KIND_STEP[usize::from(b)]);
            let c = &mut counts[usize::from(b)];
            *c += 1;
            distinct += u32::from(*c == 1);
            running += u64::from(*c);
        }
        let sum_sq = 2 * running - v.len() as u64;
        let count = |b: u8| counts[usize::from(b)] as usize;
        let (at, dot, dash_or_colon) = (
            count(b'@') > 0,
            count(b'.') > 0,
            count(b'-') + count(b':') > 0,
        );
        let separators = count(b'_') + count(b'-') + count(b'.') + count(b' ') + count(b'/');
        let packed = (v.len() as u64) < LANE;
        let (digits, lower, upper) = if packed {
            // Fewer bytes than a lane holds: no lane overflowed.
            let lane = |shift: u32| usize::try_from((kinds >> shift) & LANE).unwrap_or(0);
            (lane(0), lane(21), lane(42))
        } else {
            (
                count_in(v, b'0', 10),
                count_in(v, b'a', 26),
                count_in(v, b'A', 26),
            )
        };
        Walk {
            digits,
            lower,
            upper,
            other: v.len() - digits - lower - upper,
            distinct,
            sum_sq,
            predictable: predictable_pairs(v),
            at,
            dot,
            dash_or_colon,
            only_word_bytes: v.len() - digits - lower - upper == separators,
        }
    }

    /// Whether the value may be an e-mail address, a version or date, or a host or file
    /// name: each holds a byte the walk saw or not (`@`; `.`, `-` or `:`; `.`), so most
    /// values are cleared without a look.
    fn may_be_address_version_or_name(&self, v: &[u8]) -> bool {
        (self.at && is_email(v))
            || ((self.dot || self.dash_or_colon) && is_version_or_date(v))
            || (self.dot && is_host_or_file(v))
    }
}

/// Whether one byte, repeated (case-insensitive), fills more than half of `v`. Such a run
/// must cover the middle byte, so only the run through the middle is measured.
fn half_one_run(v: &[u8]) -> bool {
    let n = v.len();
    if n == 0 {
        return false;
    }
    let m = n / 2;
    let b = fold(v[m]);
    let left = v[..m].iter().rev().take_while(|&&c| fold(c) == b).count();
    let right = v[m + 1..].iter().take_while(|&&c| fold(c) == b).count();
    (left + 1 + right) * 2 > n
}

/// An entropy floor in bits per byte, with the powers of two its bounds are compared with.
#[derive(Debug, Clone, Copy)]
struct EntropyFloor {
    bits: f64,
    /// `2^(bits - MARGIN)`: fewer distinct bytes than this, and the entropy is below.
    below: f64,
    /// `2^(bits + MARGIN)`: a collision entropy (`len² / sum of squared counts`) above this
    /// power, and the entropy is above.
    above: f64,
}

impl EntropyFloor {
    fn new(bits: f64) -> EntropyFloor {
        const MARGIN: f64 = 1e-9;
        EntropyFloor {
            bits,
            below: (bits - MARGIN).exp2(),
            above: (bits + MARGIN).exp2(),
        }
    }
}

/// The floors the tests use, built once.
struct Floors {
    /// Random digits.
    digits: EntropyFloor,
    /// A value next to a credential word.
    credential: EntropyFloor,
    /// A machine-made token of each length up to 16 (and the same from there on):
    /// `min(0.8 * min(log2(len), 4), 3)`.
    random_by_len: Vec<EntropyFloor>,
}

impl Floors {
    fn random(&self, len: usize) -> EntropyFloor {
        self.random_by_len[len.min(16)]
    }
}

static FLOORS: std::sync::LazyLock<Floors> = std::sync::LazyLock::new(|| Floors {
    digits: EntropyFloor::new(2.5),
    credential: EntropyFloor::new(2.8),
    random_by_len: (0..=16usize)
        .map(|len| {
            let min_entropy = (len as f64).log2().min(4.0) * 0.8;
            EntropyFloor::new(min_entropy.min(3.0))
        })
        .collect(),
});

/// A value being judged: each test's answer, and the walk they share, computed at most once
/// and only when asked for. Every test is a pure function of the value, so asking the cheap
/// ones first changes no answer.
pub(crate) struct Judged<'a> {
    v: &'a [u8],
    walk: OnceCell<Walk>,
    placeholder: OnceCell<bool>,
    word_like: OnceCell<bool>,
}

impl<'a> Judged<'a> {
    pub(crate) fn new(v: &'a [u8]) -> Self {
        Judged {
            v,
            walk: OnceCell::new(),
            placeholder: OnceCell::new(),
            word_like: OnceCell::new(),
        }
    }

    fn walk(&self) -> &Walk {
        self.walk.get_or_init(|| Walk::of(self.v))
    }

    fn is_word_like(&self) -> bool {
        // Words and identifiers hold four digits at most; the walk has counted them.
        *self.word_like.get_or_init(|| {
            let w = self.walk();
            w.digits <= 4 && w.only_word_bytes && is_word_like(self.v)
        })
    }

    /// See [`is_placeholder`].
    pub(crate) fn is_placeholder(&self) -> bool {
        *self.placeholder.get_or_init(|| {
            let v = self.v;
            let n = v.len();
            if n <= 12
                && PLACEHOLDER_WORDS
                    .iter()
                    .any(|w| w.len() == n && w.as_bytes().eq_ignore_ascii_case(v))
            {
                return true;
            }
            let w = self.walk();
            (w.digits == n && n < 12)
                || (n >= 4 && w.distinct <= 3)
                || (n >= 8 && w.predictable as f64 / (n - 1) as f64 > 0.35)
                || (n >= 8 && half_one_run(v))
                || has_placeholder_part(v)
        })
    }

    /// `entropy(v) >= floor.bits`, most often without a logarithm: the entropy lies between
    /// `log2(len² / sum of squared counts)` (the collision entropy) and `log2(distinct
    /// bytes)`, so the counts are compared with the floor's powers of two. Only when the
    /// floor falls between the two bounds (with a margin far above the rounding error of the
    /// sum) is the entropy itself computed, so the answer is always that of the comparison.
    fn entropy_at_least(&self, floor: EntropyFloor) -> bool {
        let n = self.v.len();
        if n == 0 {
            return 0.0 >= floor.bits;
        }
        let w = self.walk();
        if f64::from(w.distinct) < floor.below {
            return false;
        }
        if (n as f64) * (n as f64) > w.sum_sq as f64 * floor.above {
            return true;
        }
        ByteCounts::of(self.v).entropy() >= floor.bits
    }

    /// A long run of random digits (an account number, a numeric key) rather than a count,
    /// a timestamp or an id: 14 digits or more, varied.
    fn random_digits(&self) -> bool {
        let n = self.v.len();
        n >= 14 && self.walk().digits == n && self.entropy_at_least(FLOORS.digits)
    }

    /// See [`looks_random_with`].
    pub(crate) fn looks_random_with(&self, uuid_ok: bool) -> bool {
        let v = self.v;
        if v.len() < 10 || v.len() > 1024 {
            return false;
        }
        if is_rfc_uuid(v) {
            return uuid_ok && !self.is_placeholder();
        }
        if is_variable_reference(v) {
            return false;
        }
        let c = self.walk();
        if c.may_be_address_version_or_name(v) {
            return false;
        }
        let letters = c.lower + c.upper;
        let mixed = (c.digits > 0 && letters > 0) || (c.lower > 0 && c.upper > 0 && v.len() >= 16);
        let random = if mixed {
            self.entropy_at_least(FLOORS.random(v.len()))
        } else {
            self.random_digits()
        };
        random && !self.is_word_like() && !self.is_placeholder()
    }

    /// See [`credential_value`].
    pub(crate) fn credential_value(&self, password_like: bool) -> bool {
        let v = self.v;
        let min = if password_like { 6 } else { 8 };
        if v.len() < min || v.len() > 4096 {
            return false;
        }
        if is_variable_reference(v) {
            return false;
        }
        let c = self.walk();
        if c.may_be_address_version_or_name(v) {
            return false;
        }
        if password_like {
            // A password that is one plain lowercase word is too often prose or a placeholder.
            let plain_word = c.digits == 0 && c.upper == 0 && c.other == 0;
            return c.distinct >= 5 && !plain_word && !self.is_placeholder();
        }
        let letters = c.lower + c.upper;
        let varied = c.digits > 0 && letters > 0
            || c.lower > 0 && c.upper > 0
            || c.other > 0 && letters > 0
            || v.len() >= 20;
        // Random digits pass whether varied or not; anything else must vary and, when long
        // enough, spread its bytes.
        let shaped = self.random_digits()
            || (varied && (v.len() < 12 || self.entropy_at_least(FLOORS.credential)));
        shaped && !self.is_word_like() && !self.is_placeholder()
    }
}

/// Strict test for a token whose only context is a provider's name or an identifier word:
/// it must look machine-made. RFC UUIDs are identifiers, not secrets, unless `uuid_ok`.
pub(crate) fn looks_random_with(v: &[u8], uuid_ok: bool) -> bool {
    Judged::new(v).looks_random_with(uuid_ok)
}

/// [`looks_random_with`], UUIDs excluded.
pub(crate) fn looks_random(v: &[u8]) -> bool {
    looks_random_with(v, false)
}

/// Test for a value that stands next to a credential word (`token`, `secret`, `password`,
/// `api_key`, …). `password_like` relaxes the word test: passwords are often words.
pub(crate) fn credential_value(v: &[u8], password_like: bool) -> bool {
    Judged::new(v).credential_value(password_like)
}

#[cfg(test)]
mod plain;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_recognised() {
        for p in [
            "xxxxxxxxxxxxxxxxxxxx",
            "AKIAXXXXXXXXXXXXXXXX",
            "AKIAIOSFODNN7EXAMPLE",
            "changeme",
            "abcdefghijklmnopqrstuvwxyz123",
            "00000000000000000000000000000000000TUVWXYZ",
            "aaaaaaaaaa1111111111bbbbbbbbbb2222222222",
            "1234567890",
        ] {
            assert!(is_placeholder(p.as_bytes()), "{p} should be a placeholder");
        }
        for s in [
            "8mcc284l3i4sph5a3mgf",
            "4b1dRdW3rOcB7xLthrM4BTBGK1qPLkHigpN1bXD6z",
            "237eb668c01429518426aa82b374c9da",
        ] {
            assert!(!is_placeholder(s.as_bytes()), "{s} is not a placeholder");
        }
    }

    #[test]
    fn variable_references_are_recognised() {
        for v in [
            "$API_KEY",
            "${TOKEN}",
            "{{ token }}",
            "<hunter2>",
            "%PASS%",
            "process.env.KEY",
        ] {
            assert!(is_variable_reference(v.as_bytes()), "{v}");
        }
        assert!(!is_variable_reference(b"ghp_abc123"));
    }

    #[test]
    fn rfc_uuids_differ_from_random_hex_in_uuid_shape() {
        assert!(is_rfc_uuid(b"1a8d0cca-e1a9-4318-bc2f-f5658ab2dcb5"));
        assert!(is_rfc_uuid(b"3636dd46-ea21-11e9-81b4-2a2ae2dbcce4"));
        assert!(!is_rfc_uuid(b"03f36108-730e-9061-ad3f-b77c910b2559"));
        assert!(!is_rfc_uuid(b"e8b13e2b-79a9-e75d-b8e3-b2200edbc52a"));
    }

    #[test]
    fn identifiers_made_of_words_are_word_like() {
        for w in [
            "ultraPictureBox1",
            "RANDOM_STRING",
            "insert_key_here",
            "a-fake-api-key",
            "NRG0-Hermes-INTERNAL-API",
            "GLC_CreateLightmapTextureArray",
            "HTTPServer",
        ] {
            assert!(is_word_like(w.as_bytes()), "{w} should be word-like");
        }
        for r in [
            "ZycQ0G6IBgNsBWytwzwVKixyz",
            "kxbj4b6u2iazvhc8n6b3oz0j5x6nrpyy",
            "seugeupfknprstoe",
            "WLCO3GIZN6QD2OO9DRNLM4PD7PMH7WH9",
        ] {
            assert!(!is_word_like(r.as_bytes()), "{r} should not be word-like");
        }
    }

    #[test]
    fn random_tokens_look_random_and_identifiers_do_not() {
        assert!(looks_random(b"d__9rvli8sm4jo18v5q0q4n7vhkwbv"));
        assert!(looks_random(b"e8b13e2b-79a9-e75d-b8e3-b2200edbc52a"));
        assert!(!looks_random(b"e8e4df51-2054-49b0-ab1c-516ac95c691d"));
        assert!(!looks_random(b"ultraPictureBox1"));
        assert!(!looks_random(b"rc0.15.0"));
        assert!(!looks_random(b"james.fake@ymail.com"));
    }

    #[test]
    fn credential_values_need_variety() {
        assert!(credential_value(b"rb1nz5xhues", false));
        assert!(credential_value(b"thisIsDog11", true));
        assert!(!credential_value(b"changeme", true));
        assert!(!credential_value(b"a-fake-api-key", false));
        assert!(!credential_value(b"AbCeFG123", false));
        assert!(!credential_value(b"insert_key_here", false));
    }

    mod same_as_plain {
        use super::super::plain;
        use super::*;
        use proptest::prelude::*;

        /// Values made of the pieces the tests look for: placeholder words, variable
        /// syntax, dots, `@`, runs, digits, and random bytes of every class.
        fn value() -> impl Strategy<Value = Vec<u8>> {
            let piece = prop_oneof![
                "[a-zA-Z0-9]{1,12}",
                "[a-f0-9]{8}-[a-f0-9]{4}-[1-8][a-f0-9]{3}-[89ab][a-f0-9]{3}-[a-f0-9]{12}",
                "[a-z]{2,8}",
                "[A-Z]{2,6}",
                "[0-9]{1,16}",
                "[-_./@:$%{}<>()\\[\\]#*+=~!^ ]{1,3}",
                Just("example".to_owned()),
                Just("XXXX".to_owned()),
                Just("your_".to_owned()),
                Just("Password".to_owned()),
                Just("process.env".to_owned()),
                Just("${".to_owned()),
                Just("abcdefgh".to_owned()),
                Just("aaaaaaa".to_owned()),
                Just(".com".to_owned()),
                Just("v1.2.3".to_owned()),
                Just("2023-05-18T06:58:25Z".to_owned()),
            ];
            prop_oneof![
                proptest::collection::vec(piece, 0..8).prop_map(|p| p.concat().into_bytes()),
                proptest::collection::vec(any::<u8>(), 0..64),
                "[a-zA-Z0-9+/]{10,1200}".prop_map(String::into_bytes),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            #[test]
            fn value_tests_answer_as_the_plain_ones(v in value()) {
                prop_assert_eq!(is_placeholder(&v), plain::is_placeholder(&v));
                prop_assert_eq!(is_variable_reference(&v), plain::is_variable_reference(&v));
                prop_assert_eq!(is_rfc_uuid(&v), plain::is_rfc_uuid(&v));
                prop_assert_eq!(is_word_like(&v), plain::is_word_like(&v));
                prop_assert_eq!(looks_random_with(&v, true), plain::looks_random_with(&v, true));
                prop_assert_eq!(looks_random(&v), plain::looks_random(&v));
                prop_assert_eq!(credential_value(&v, true), plain::credential_value(&v, true));
                prop_assert_eq!(credential_value(&v, false), plain::credential_value(&v, false));
            }

            #[test]
            fn entropy_thresholds_answer_as_the_entropy(
                v in value(),
                threshold in prop_oneof![Just(2.5), Just(2.8), Just(3.0), 0.0f64..4.0],
            ) {
                prop_assert_eq!(ByteCounts::of(&v).entropy().to_bits(), plain::entropy(&v).to_bits());
                prop_assert_eq!(Judged::new(&v).entropy_at_least(EntropyFloor::new(threshold)), plain::entropy(&v) >= threshold);
            }
        }

        #[test]
        fn placeholder_parts_at_every_offset_and_in_every_case() {
            let fill = b"Q7zW2kR9vT4m";
            for part in PLACEHOLDER_PARTS {
                for upper in [false, true] {
                    let part = if upper {
                        part.to_ascii_uppercase()
                    } else {
                        (*part).to_owned()
                    };
                    for before in 0..4 {
                        for after in 0..3 {
                            let mut v = fill[..before].to_vec();
                            v.extend_from_slice(part.as_bytes());
                            v.extend_from_slice(&fill[4..4 + after]);
                            assert_eq!(is_placeholder(&v), plain::is_placeholder(&v), "{v:?}");
                            assert!(has_placeholder_part(&v), "{v:?}");
                            // One byte of the part changed: no longer that part.
                            let last = before + part.len() - 1;
                            v[last] = b'#';
                            assert_eq!(is_placeholder(&v), plain::is_placeholder(&v), "{v:?}");
                        }
                    }
                }
            }
        }

        #[test]
        fn runs_of_one_byte_at_every_length_and_place() {
            let fill = b"Q7zW2kR9vT4mP8xY3nB6";
            for n in 1..=20 {
                for run in 0..=n {
                    for at in 0..=n - run {
                        // Letters (whose runs are also predictable pairs) and a symbol
                        // (whose runs are not).
                        for (a, b) in [(b'e', b'E'), (b'.', b'.')] {
                            let mut v = fill[..n].to_vec();
                            for (k, c) in v[at..at + run].iter_mut().enumerate() {
                                *c = if k % 3 == 1 { b } else { a };
                            }
                            assert_eq!(is_placeholder(&v), plain::is_placeholder(&v), "{v:?}");
                        }
                    }
                }
            }
        }

        #[test]
        fn entropy_at_exact_thresholds() {
            // Eight equally frequent bytes: exactly 3 bits; four: exactly 2.
            for v in [&b"abcdefgh"[..], b"aabbccddeeffgghh", b"abcd", b"abcdabcd"] {
                for t in [2.0, 2.5, 2.8, 3.0] {
                    assert_eq!(
                        Judged::new(v).entropy_at_least(EntropyFloor::new(t)),
                        plain::entropy(v) >= t,
                        "{v:?} {t}"
                    );
                }
            }
        }
    }
}
