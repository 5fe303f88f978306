//! The value tests as they were first written: plain, allocating, one concern per pass.
//! The fast versions in the parent module must answer exactly what these answer; the
//! property tests there check it.

use super::{COMMON_BIGRAMS, PLACEHOLDER_PARTS, PLACEHOLDER_WORDS};

/// Shannon entropy of the bytes of `v`, in bits per byte.
pub(super) fn entropy(v: &[u8]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in v {
        counts[usize::from(b)] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// The share of adjacent pairs whose second byte repeats the first or follows it in the
/// alphabet (`aaaa`, `abcd`, `1234`, case-insensitive): high for keyboard-made placeholders
/// (`abcdefghijklmnop`, `0000000000TUVWXYZ`), about 1/8 for random hex and lower for base62.
pub(super) fn predictable_ratio(v: &[u8]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let pairs = v.len() - 1;
    let predictable = v
        .windows(2)
        .filter(|w| {
            let a = w[0].to_ascii_lowercase();
            let b = w[1].to_ascii_lowercase();
            a.is_ascii_alphanumeric() && (b == a || b == a.wrapping_add(1))
        })
        .count();
    predictable as f64 / pairs as f64
}

/// The longest run of one repeated byte.
fn longest_run(v: &[u8]) -> usize {
    let mut best = 0;
    let mut run = 0;
    let mut prev = None;
    for &b in v {
        if Some(b.to_ascii_lowercase()) == prev {
            run += 1;
        } else {
            run = 1;
            prev = Some(b.to_ascii_lowercase());
        }
        best = best.max(run);
    }
    best
}

/// A placeholder, a masked value or an obviously hand-typed filler.
pub(super) fn is_placeholder(v: &[u8]) -> bool {
    if v.len() <= 12
        && PLACEHOLDER_WORDS
            .iter()
            .any(|w| w.as_bytes().eq_ignore_ascii_case(v))
    {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if PLACEHOLDER_PARTS
        .iter()
        .any(|p| lower.windows(p.len()).any(|w| w == p.as_bytes()))
    {
        return true;
    }
    if v.iter().all(|b| b.is_ascii_digit()) && v.len() < 12 {
        return true;
    }
    let distinct = {
        let mut seen = [false; 256];
        v.iter().for_each(|&b| seen[usize::from(b)] = true);
        seen.iter().filter(|&&s| s).count()
    };
    if distinct <= 3 && v.len() >= 4 {
        return true;
    }
    if v.len() >= 8 && predictable_ratio(v) > 0.35 {
        return true;
    }
    v.len() >= 8 && longest_run(v) * 2 > v.len()
}

/// A reference to a value kept elsewhere: `$VAR`, `${VAR}`, `{{ var }}`, `<var>`, `%VAR%`,
/// `process.env.X`, `os.environ[...]`, `secrets.X`.
pub(super) fn is_variable_reference(v: &[u8]) -> bool {
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
    let lower = v.to_ascii_lowercase();
    [
        &b"process.env"[..],
        b"os.environ",
        b"os.getenv",
        b"getenv",
        b"env[",
        b"env(",
        b"env.",
        b"secrets.",
        b"vars.",
        b"config.",
        b"settings.",
        b"this.",
        b"self.",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
}

/// An RFC 4122 UUID (version 1–8, variant 10xx): mostly an identifier, not a credential.
pub(super) fn is_rfc_uuid(v: &[u8]) -> bool {
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
pub(super) fn is_word_like(v: &[u8]) -> bool {
    let mut letter_segments: Vec<&[u8]> = Vec::new();
    let mut digit_segments = 0usize;
    let mut digits = 0usize;
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
                    letter_segments.push(&v[start..i]);
                    continue;
                }
            }
            while i < v.len() && v[i].is_ascii_lowercase() {
                i += 1;
            }
            letter_segments.push(&v[start..i]);
        } else if matches!(b, b'_' | b'-' | b'.' | b' ' | b'/') {
            i += 1;
        } else {
            return false;
        }
    }
    if letter_segments.is_empty() || digit_segments > 2 || digits > 4 {
        return false;
    }
    let short = letter_segments.iter().filter(|s| s.len() <= 2).count();
    if letter_segments.len() >= 3 && short * 2 > letter_segments.len() {
        // Mostly one- and two-letter fragments: random mixed case, not words.
        return false;
    }
    if !letter_segments.iter().all(|s| pronounceable(s)) {
        return false;
    }
    // Letter pairs inside the segments (acronyms aside) must be the pairs words are made of.
    let (mut pairs, mut common) = (0usize, 0usize);
    let acronym = |s: &&[u8]| s.len() <= 5 && s.iter().all(u8::is_ascii_uppercase);
    let all_acronyms = letter_segments.iter().all(acronym);
    for s in &letter_segments {
        if !all_acronyms && acronym(s) {
            continue;
        }
        for w in s.windows(2) {
            pairs += 1;
            common += usize::from(common_pair(w[0], w[1]));
        }
    }
    pairs >= 3 && common * 100 >= pairs * 85
}

/// Counts of the character classes in a value.
struct Classes {
    digits: usize,
    lower: usize,
    upper: usize,
    other: usize,
}

fn classes(v: &[u8]) -> Classes {
    let mut c = Classes {
        digits: 0,
        lower: 0,
        upper: 0,
        other: 0,
    };
    for &b in v {
        if b.is_ascii_digit() {
            c.digits += 1;
        } else if b.is_ascii_lowercase() {
            c.lower += 1;
        } else if b.is_ascii_uppercase() {
            c.upper += 1;
        } else {
            c.other += 1;
        }
    }
    c
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

/// A long run of random digits (an account number, a numeric key) rather than a count, a
/// timestamp or an id: 14 digits or more, varied.
fn random_digits(v: &[u8]) -> bool {
    v.len() >= 14 && v.iter().all(u8::is_ascii_digit) && entropy(v) >= 2.5
}

/// A host name or a file name: dotted labels ending in a short alphabetic one
/// (`huggingface.co`, `api.example.com`, `config.yaml`).
fn is_host_or_file(v: &[u8]) -> bool {
    let Some(dot) = v.iter().rposition(|&b| b == b'.') else {
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
    match v.iter().position(|&b| b == b'@') {
        Some(at) => at > 0 && v[at + 1..].contains(&b'.') && !v[at + 1..].contains(&b':'),
        None => false,
    }
}

/// Strict test for a token whose only context is a provider's name or an identifier word:
/// it must look machine-made. RFC UUIDs are identifiers, not secrets, unless `uuid_ok`.
pub(super) fn looks_random_with(v: &[u8], uuid_ok: bool) -> bool {
    if v.len() < 10 || v.len() > 1024 {
        return false;
    }
    if is_rfc_uuid(v) {
        return uuid_ok && !is_placeholder(v);
    }
    if is_placeholder(v) || is_variable_reference(v) || is_word_like(v) {
        return false;
    }
    if is_version_or_date(v) || is_email(v) || is_host_or_file(v) {
        return false;
    }
    let c = classes(v);
    let letters = c.lower + c.upper;
    let mixed = (c.digits > 0 && letters > 0) || (c.lower > 0 && c.upper > 0 && v.len() >= 16);
    if !mixed {
        return random_digits(v);
    }
    let min_entropy = (v.len() as f64).log2().min(4.0) * 0.8;
    entropy(v) >= min_entropy.min(3.0)
}

/// [`looks_random_with`], UUIDs excluded.
pub(super) fn looks_random(v: &[u8]) -> bool {
    looks_random_with(v, false)
}

/// Test for a value that stands next to a credential word (`token`, `secret`, `password`,
/// `api_key`, …). `password_like` relaxes the word test: passwords are often words.
pub(super) fn credential_value(v: &[u8], password_like: bool) -> bool {
    let min = if password_like { 6 } else { 8 };
    if v.len() < min || v.len() > 4096 {
        return false;
    }
    if is_placeholder(v) || is_variable_reference(v) || is_email(v) {
        return false;
    }
    if is_version_or_date(v) || is_host_or_file(v) {
        return false;
    }
    let c = classes(v);
    if password_like {
        let distinct = {
            let mut seen = [false; 256];
            v.iter().for_each(|&b| seen[usize::from(b)] = true);
            seen.iter().filter(|&&s| s).count()
        };
        // A password that is one plain lowercase word is too often prose or a placeholder.
        let plain_word = c.digits == 0 && c.upper == 0 && c.other == 0;
        return distinct >= 5 && !plain_word;
    }
    if is_word_like(v) {
        return false;
    }
    if random_digits(v) {
        return true;
    }
    let letters = c.lower + c.upper;
    let varied = c.digits > 0 && letters > 0
        || c.lower > 0 && c.upper > 0
        || c.other > 0 && letters > 0
        || v.len() >= 20;
    if !varied {
        return false;
    }
    v.len() < 12 || entropy(v) >= 2.8
}
