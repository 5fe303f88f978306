//! Known values: secrets the gate holds (its keeper hands them over), removed by identity in
//! every form a tool's output is likely to carry them.
//!
//! **Forms.** As they are; base64 and base64url (padded or not), at each of the three
//! alignments the value can have inside a longer encoded text (`base64("user:" + token)` is
//! HTTP basic auth): for each alignment, the characters of the encoding that depend on the
//! value's bytes only; base32 (RFC 4648, upper and lower case) at each of its five alignments
//! the same way; URL-encoded (reserved bytes only, `+` for space or not) and fully
//! percent-encoded (every byte `%XX`, upper- and lower-case hex); hex (lower and upper case).
//! A match of an encoded form is widened to the whole run of encoding characters around it,
//! so the partly-determined characters at its edges go too.
//!
//! **Normalised text.** The forms are searched in the normalised text ([`crate::normalise`]):
//! line breaks, soft breaks and default-ignorable characters dropped, escapes and HTML
//! references decoded, compatibility forms folded. The value itself is normalised the same
//! way. A match is redacted over the original bytes it came from.
//!
//! **Parts of a value.** A run of [`PART_LEN`] or more consecutive bytes of a known value of
//! at least twice that length is removed too, when the run looks machine-made (the crate's
//! `looks_random` test, which a run of plain words fails): either half of a token is caught,
//! however it was cut. Every such run of the value is a pattern; a hit is then extended, in
//! both directions, as far as the text goes on agreeing with the value. Ten bytes of a
//! machine-made token are some 50 bits of it: ordinary text does not hold them by chance.
//!
//! One Aho-Corasick automaton covers all forms of all values.

use std::collections::HashSet;
use std::fmt;

use aho_corasick::automaton::Automaton;
use aho_corasick::{
    AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Anchored, MatchKind, StartKind,
};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use crate::ScrubError;
use crate::normalise::Normalised;
use crate::value;

/// The shape id of a redaction by known value.
pub const KNOWN_VALUE_SHAPE: &str = "known-value";

/// The shortest known value accepted: anything shorter would redact ordinary text.
pub const MIN_KNOWN_VALUE_LEN: usize = 6;

/// The shortest part of a known value that is removed on its own (see the module doc); values
/// shorter than twice this are removed only whole.
pub const PART_LEN: usize = 10;

/// The fewest characters of an encoding's stable part worth searching for.
const MIN_STABLE: usize = 6;

/// A secret value handed to the scrubber. Its `Debug` output never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// Wrap a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        SecretValue(value.into())
    }

    /// The value itself. Call only to hand it to what needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretValue(<{} bytes, redacted>)", self.0.len())
    }
}

impl From<String> for SecretValue {
    fn from(s: String) -> Self {
        SecretValue(s)
    }
}

impl From<&str> for SecretValue {
    fn from(s: &str) -> Self {
        SecretValue(s.to_owned())
    }
}

/// What kind of form a pattern is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The value itself, or a URL-encoding of it.
    Plain,
    /// A base64, base32 or hex encoding: a match is widened to the run of encoding bytes.
    Encoded,
    /// A run of [`PART_LEN`] bytes of normalised value `value`, starting at `offset`.
    Part { value: usize, offset: usize },
}

/// The compiled forms of the known values.
pub(crate) struct KnownSet {
    automaton: AhoCorasick,
    /// The same patterns, anchored: whether a text is the start of one.
    prefixes: aho_corasick::dfa::DFA,
    forms: Vec<Form>,
    /// The normalised values (the parts are extended against them).
    values: Vec<Vec<u8>>,
    longest: usize,
    pub(crate) count: usize,
}

impl fmt::Debug for KnownSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KnownSet({} values, forms hidden)", self.count)
    }
}

/// A known value found: its original byte range, and the normalised one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) start: usize,
    pub(crate) end: usize,
    norm_end: usize,
}

/// Percent-encode every byte outside the URL "unreserved" set.
fn url_encode(v: &[u8], plus_for_space: bool) -> String {
    let mut out = String::with_capacity(v.len() * 3);
    for &b in v {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else if b == b' ' && plus_for_space {
            out.push('+');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-encode every byte.
fn percent_all(v: &[u8], upper: bool) -> String {
    v.iter()
        .map(|b| {
            if upper {
                format!("%{b:02X}")
            } else {
                format!("%{b:02x}")
            }
        })
        .collect()
}

fn hex(v: &[u8], upper: bool) -> String {
    v.iter()
        .map(|b| {
            if upper {
                format!("{b:02X}")
            } else {
                format!("{b:02x}")
            }
        })
        .collect()
}

/// The characters of an encoding (`bits` bits a character, groups of `group` bytes) that
/// depend only on `v` when `v` starts `align` bytes into a group: `v` is encoded between
/// zero bytes and the characters whose bits all fall inside it are kept.
fn stable(
    encode: impl Fn(&[u8]) -> String,
    group: usize,
    bits: usize,
    v: &[u8],
    align: usize,
) -> Option<String> {
    let mut input = vec![0u8; align];
    input.extend_from_slice(v);
    input.extend(std::iter::repeat_n(0u8, group));
    let encoded = encode(&input);
    let first = (8 * align).div_ceil(bits);
    let last = (8 * (align + v.len())) / bits;
    (last >= first + MIN_STABLE).then(|| encoded[first..last].to_owned())
}

/// Every encoded form of one value (see the module doc), with its kind.
fn encodings(v: &[u8]) -> Vec<(String, Form)> {
    let mut f: Vec<(String, Form)> = Vec::new();
    for full in [
        STANDARD.encode(v),
        STANDARD_NO_PAD.encode(v),
        URL_SAFE.encode(v),
        URL_SAFE_NO_PAD.encode(v),
        data_encoding::BASE32.encode(v),
        data_encoding::BASE32_NOPAD.encode(v),
        data_encoding::BASE32.encode(v).to_ascii_lowercase(),
        hex(v, false),
        hex(v, true),
    ] {
        f.push((full, Form::Encoded));
    }
    for align in 0..3 {
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            if let Some(s) = stable(|b| engine.encode(b), 3, 6, v, align) {
                f.push((s, Form::Encoded));
            }
        }
    }
    for align in 0..5 {
        if let Some(s) = stable(|b| data_encoding::BASE32_NOPAD.encode(b), 5, 5, v, align) {
            f.push((s.to_ascii_lowercase(), Form::Encoded));
            f.push((s, Form::Encoded));
        }
    }
    for plain in [
        url_encode(v, false),
        url_encode(v, true),
        url_encode(v, false).to_ascii_lowercase(),
        percent_all(v, true),
        percent_all(v, false),
    ] {
        f.push((plain, Form::Plain));
    }
    f
}

/// Every form of one value worth searching for (the value itself and its encodings).
#[cfg(test)]
fn forms(value: &str) -> Vec<String> {
    let mut f: Vec<String> = encodings(value.as_bytes())
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    f.push(value.to_owned());
    f.sort();
    f.dedup();
    f
}

/// Whether `i` is not inside a UTF-8 character of `v`.
fn boundary(v: &[u8], i: usize) -> bool {
    i == v.len() || v.get(i).is_some_and(|&b| b & 0xC0 != 0x80)
}

/// Bytes of the encodings a match is widened over.
fn encoding_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

impl KnownSet {
    pub(crate) fn build(values: &[SecretValue]) -> Result<Option<KnownSet>, ScrubError> {
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut forms: Vec<Form> = Vec::new();
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        let mut add = |p: Vec<u8>, form: Form| {
            if !p.is_empty() && seen.insert(p.clone()) {
                patterns.push(p);
                forms.push(form);
            }
        };
        let mut normalised = Vec::new();
        for (index, value) in values.iter().enumerate() {
            let lines: Vec<&str> = value
                .0
                .split(['\n', '\r'])
                .filter(|l| !l.is_empty())
                .collect();
            for line in &lines {
                if line.len() < MIN_KNOWN_VALUE_LEN {
                    return Err(ScrubError::KnownValueTooShort {
                        index,
                        len: line.len(),
                        min: MIN_KNOWN_VALUE_LEN,
                    });
                }
            }
            if lines.is_empty() {
                continue;
            }
            // The value as it is, normalised, and each of its lines; their encodings.
            let nv = Normalised::of(&value.0);
            add(nv.clone(), Form::Plain);
            add(value.0.as_bytes().to_vec(), Form::Plain);
            for (e, form) in encodings(value.0.as_bytes()) {
                add(e.into_bytes(), form);
            }
            if lines.len() > 1 {
                for line in &lines {
                    add(Normalised::of(line), Form::Plain);
                    for (e, form) in encodings(line.as_bytes()) {
                        add(e.into_bytes(), form);
                    }
                }
            }
            // Its parts.
            let which = normalised.len();
            if nv.len() >= 2 * PART_LEN {
                for offset in 0..=nv.len() - PART_LEN {
                    let part = &nv[offset..offset + PART_LEN];
                    if boundary(&nv, offset)
                        && boundary(&nv, offset + PART_LEN)
                        && value::looks_random(part)
                    {
                        add(
                            part.to_vec(),
                            Form::Part {
                                value: which,
                                offset,
                            },
                        );
                    }
                }
            }
            normalised.push(nv);
        }
        if patterns.is_empty() {
            return Ok(None);
        }
        // A DFA: the set is small, and it runs over every byte of every text scrubbed.
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&patterns)
            .map_err(|e| ScrubError::Automaton(e.to_string()))?;
        let prefixes = aho_corasick::dfa::Builder::new()
            .match_kind(MatchKind::Standard)
            .start_kind(StartKind::Anchored)
            .build(&patterns)
            .map_err(|e| ScrubError::Automaton(e.to_string()))?;
        Ok(Some(KnownSet {
            automaton,
            prefixes,
            longest: patterns.iter().map(Vec::len).max().unwrap_or(0),
            forms,
            values: normalised,
            count: values.len(),
        }))
    }

    /// The known values in `text` (cut into regions at `cuts`), by original byte range.
    pub(crate) fn find(&self, text: &[u8], cuts: &[usize]) -> Vec<Found> {
        self.find_in(text, &Normalised::new(text, cuts))
    }

    fn find_in(&self, text: &[u8], n: &Normalised) -> Vec<Found> {
        let norm = &n.text;
        let mut out = Vec::new();
        for m in self.automaton.find_iter(norm.as_slice()) {
            let (mut s, mut e) = (m.start(), m.end());
            let form = self.forms[m.pattern().as_usize()];
            if let Form::Part { value, offset } = form {
                let v = &self.values[value];
                let (mut vs, mut ve) = (offset, offset + PART_LEN);
                while s > 0 && vs > 0 && norm[s - 1] == v[vs - 1] {
                    s -= 1;
                    vs -= 1;
                }
                while e < norm.len() && ve < v.len() && norm[e] == v[ve] {
                    e += 1;
                    ve += 1;
                }
            }
            let (mut os, mut oe) = n.original(s, e);
            if form == Form::Encoded {
                while os > 0 && encoding_byte(text[os - 1]) {
                    os -= 1;
                }
                while oe < text.len() && (encoding_byte(text[oe]) || text[oe] == b'=') {
                    oe += 1;
                }
            }
            out.push(Found {
                start: os,
                end: oe,
                norm_end: e,
            });
        }
        out
    }

    /// For the streaming scrubber: the earliest original position before `cut` from which
    /// the text may hold a known value that the bytes after `cut` could still change: a match
    /// that reaches `cut` (or the end of the text before it, which the next bytes may go on
    /// from), or text before `cut` that is the start of a form. `cut` if there is none.
    pub(crate) fn hold_from(&self, text: &[u8], cuts: &[usize], cut: usize) -> usize {
        let n = Normalised::new(text, cuts);
        let ncut = n.position_of(cut);
        let mut hold = cut;
        for f in self.find_in(text, &n) {
            if f.start < cut && (f.end > cut || f.norm_end >= ncut) {
                hold = hold.min(f.start);
            }
        }
        // A form that the text before the cut begins and the bytes after it may finish.
        let Ok(start) = self.prefixes.start_state(Anchored::Yes) else {
            return hold;
        };
        for s in ncut.saturating_sub(self.longest)..ncut {
            let mut sid = start;
            let mut alive = true;
            for &b in &n.text[s..ncut] {
                sid = self.prefixes.next_state(Anchored::Yes, sid, b);
                if self.prefixes.is_dead(sid) {
                    alive = false;
                    break;
                }
            }
            if alive {
                hold = hold.min(n.original(s, s + 1).0);
                break;
            }
        }
        hold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let v = SecretValue::new("hunter2-is-my-password");
        let shown = format!("{v:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn forms_include_every_encoding() {
        let f = forms("a b/c?");
        assert!(f.iter().any(|x| x == "%61%20%62%2f%63%3f"), "{f:?}");
        for expected in [
            "a b/c?",
            "YSBiL2M/",
            "YSBiL2M_",
            "a%20b%2Fc%3F",
            "a+b%2Fc%3F",
            "6120622f633f",
        ] {
            assert!(
                f.iter().any(|x| x == expected),
                "missing {expected} in {f:?}"
            );
        }
    }
}
