//! Judging a candidate value: does it look like a secret, or like a placeholder, a variable
//! reference, an identifier made of words, a hash or a UUID?
//!
//! These tests are what lets the context shapes (a credential word or a provider's name next to
//! a token) stay quiet on `password = "changeme"`, `token: ${TOKEN}`, `name = "ultraPictureBox1"`
//! and `"_id": "1a8d0cca-e1a9-4318-bc2f-f5658ab2dcb5"`.

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

/// `entropy(v) >= threshold`, most often without the logarithms: the entropy lies between
/// `log2(len / most frequent count)` (the min-entropy) and `log2(distinct bytes)`. Only when
/// the threshold falls between the two bounds (with a margin far above the rounding error of
/// the sum) is the entropy itself computed, so the answer is always that of the comparison.
fn entropy_at_least(v: &[u8], threshold: f64) -> bool {
    const MARGIN: f64 = 1e-9;
    let c = ByteCounts::of(v);
    if c.len == 0 {
        return 0.0 >= threshold;
    }
    let distinct: u32 = c.present.iter().map(|w| w.count_ones()).sum();
    if f64::from(distinct).log2() < threshold - MARGIN {
        return false;
    }
    let most = c.bytes().map(|b| c.counts[b]).max().unwrap_or(1);
    if (c.len as f64 / f64::from(most)).log2() > threshold + MARGIN {
        return true;
    }
    c.entropy() >= threshold
}

/// The number of distinct bytes in `v`.
fn distinct_bytes(v: &[u8]) -> usize {
    let mut present = [0u64; 4];
    for &b in v {
        present[usize::from(b >> 6)] |= 1 << (b & 63);
    }
    present.iter().map(|w| w.count_ones() as usize).sum()
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

static PLACEHOLDER_PARTS_AC: std::sync::LazyLock<aho_corasick::AhoCorasick> =
    std::sync::LazyLock::new(|| {
        aho_corasick::AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(PLACEHOLDER_PARTS)
            .unwrap_or_else(|e| panic!("the placeholder words must compile: {e}"))
    });

/// A placeholder, a masked value or an obviously hand-typed filler.
pub(crate) fn is_placeholder(v: &[u8]) -> bool {
    let n = v.len();
    if n <= 12
        && PLACEHOLDER_WORDS
            .iter()
            .any(|w| w.len() == n && w.as_bytes().eq_ignore_ascii_case(v))
    {
        return true;
    }
    // One walk for the rest, case-insensitive: all digits; how many distinct bytes; the
    // pairs whose second byte repeats the first or follows it in the alphabet (`aaaa`,
    // `abcd`, `1234`: most pairs of keyboard-made fillers such as `abcdefghijklmnop` or
    // `0000000000TUVWXYZ`, about 1/8 of random hex and fewer of base62); the longest run of
    // one repeated byte.
    let mut all_digits = true;
    let mut present = [0u64; 4];
    let mut predictable = 0usize;
    let (mut run, mut longest) = (0usize, 0usize);
    let mut prev: Option<u8> = None;
    for &b in v {
        let lower = b.to_ascii_lowercase();
        all_digits &= b.is_ascii_digit();
        present[usize::from(b >> 6)] |= 1 << (b & 63);
        match prev {
            Some(a) if a == lower => {
                run += 1;
                predictable += usize::from(a.is_ascii_alphanumeric());
            }
            Some(a) => {
                run = 1;
                predictable += usize::from(a.is_ascii_alphanumeric() && lower == a.wrapping_add(1));
            }
            None => run = 1,
        }
        longest = longest.max(run);
        prev = Some(lower);
    }
    let distinct: u32 = present.iter().map(|w| w.count_ones()).sum();
    if (all_digits && n < 12)
        || (n >= 4 && distinct <= 3)
        || (n >= 8 && predictable as f64 / (n - 1) as f64 > 0.35)
        || (n >= 8 && longest * 2 > n)
    {
        return true;
    }
    PLACEHOLDER_PARTS_AC.is_match(v)
}

/// A reference to a value kept elsewhere: `$VAR`, `${VAR}`, `{{ var }}`, `<var>`, `%VAR%`,
/// `process.env.X`, `os.environ[...]`, `secrets.X`.
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
    [
        &b"process.env"[..],
        b"os.environ",
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
    v.len() >= 14 && v.iter().all(u8::is_ascii_digit) && entropy_at_least(v, 2.5)
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
pub(crate) fn looks_random_with(v: &[u8], uuid_ok: bool) -> bool {
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
    entropy_at_least(v, min_entropy.min(3.0))
}

/// [`looks_random_with`], UUIDs excluded.
pub(crate) fn looks_random(v: &[u8]) -> bool {
    looks_random_with(v, false)
}

/// Test for a value that stands next to a credential word (`token`, `secret`, `password`,
/// `api_key`, …). `password_like` relaxes the word test: passwords are often words.
pub(crate) fn credential_value(v: &[u8], password_like: bool) -> bool {
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
        let distinct = distinct_bytes(v);
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
    v.len() < 12 || entropy_at_least(v, 2.8)
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
                prop_assert_eq!(entropy_at_least(&v, threshold), plain::entropy(&v) >= threshold);
            }
        }

        #[test]
        fn entropy_at_exact_thresholds() {
            // Eight equally frequent bytes: exactly 3 bits; four: exactly 2.
            for v in [&b"abcdefgh"[..], b"aabbccddeeffgghh", b"abcd", b"abcdabcd"] {
                for t in [2.0, 2.5, 2.8, 3.0] {
                    assert_eq!(entropy_at_least(v, t), plain::entropy(v) >= t, "{v:?} {t}");
                }
            }
        }
    }
}
