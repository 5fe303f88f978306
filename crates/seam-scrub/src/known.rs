//! Known values: secrets the gate holds (its keeper hands them over), removed by identity in
//! every form a tool's output is likely to carry them: as they are, base64 (padded or not),
//! base64url, URL-encoded and hex (lower and upper case). One Aho-Corasick automaton covers
//! all forms of all values.

use std::fmt;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use crate::ScrubError;

/// The shape id of a redaction by known value.
pub const KNOWN_VALUE_SHAPE: &str = "known-value";

/// The shortest known value accepted: anything shorter would redact ordinary text.
pub const MIN_KNOWN_VALUE_LEN: usize = 6;

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

/// The compiled forms of the known values.
pub(crate) struct KnownSet {
    pub(crate) automaton: AhoCorasick,
    pub(crate) count: usize,
}

impl fmt::Debug for KnownSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KnownSet({} values, forms hidden)", self.count)
    }
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

/// Every form of one value worth searching for.
fn forms(value: &str) -> Vec<String> {
    let v = value.as_bytes();
    let mut f = vec![
        value.to_owned(),
        STANDARD.encode(v),
        STANDARD_NO_PAD.encode(v),
        URL_SAFE.encode(v),
        URL_SAFE_NO_PAD.encode(v),
        url_encode(v, false),
        url_encode(v, true),
        url_encode(v, false).to_ascii_lowercase(),
        hex(v, false),
        hex(v, true),
    ];
    f.sort();
    f.dedup();
    f
}

impl KnownSet {
    pub(crate) fn build(values: &[SecretValue]) -> Result<Option<KnownSet>, ScrubError> {
        let mut patterns = Vec::new();
        for (index, value) in values.iter().enumerate() {
            // A value with line breaks is matched line by line: redaction never spans lines.
            for line in value.0.split(['\n', '\r']).filter(|l| !l.is_empty()) {
                if line.len() < MIN_KNOWN_VALUE_LEN {
                    return Err(ScrubError::KnownValueTooShort {
                        index,
                        len: line.len(),
                        min: MIN_KNOWN_VALUE_LEN,
                    });
                }
                patterns.extend(forms(line));
            }
        }
        if patterns.is_empty() {
            return Ok(None);
        }
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .map_err(|e| ScrubError::Automaton(e.to_string()))?;
        Ok(Some(KnownSet {
            automaton,
            count: values.len(),
        }))
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
