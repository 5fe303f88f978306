//! Fixed-size byte values shown as hex ([`Sha256Digest`], [`Ed25519Signature`])
//! and the canonical JSON form of params.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// A SHA-256 digest. Shown, serialized and parsed as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256Digest(pub [u8; 32]);

/// An Ed25519 signature. Shown, serialized and parsed as 128 hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ed25519Signature(pub [u8; 64]);

/// Why a text is not the hex of a fixed number of bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected} hex digits, got {got:?}")]
pub struct HexParseError {
    expected: usize,
    got: String,
}

impl Sha256Digest {
    /// The all-zero digest: the `prev_hash` of the first record and the hash
    /// of the empty ledger's head.
    pub const ZERO: Sha256Digest = Sha256Digest([0; 32]);

    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256Digest {
        Sha256Digest(Sha256::digest(bytes).into())
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl Ed25519Signature {
    pub fn as_bytes(&self) -> &[u8; 64] {
        &self.0
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }
}

fn parse_hex<const N: usize>(text: &str) -> Result<[u8; N], HexParseError> {
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out).map_err(|_| HexParseError {
        expected: N * 2,
        got: crate::clipped(text, N * 2 + 8),
    })?;
    Ok(out)
}

macro_rules! hex_value {
    ($ty:ident, $n:expr) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&hex::encode(self.0))
            }
        }
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($ty), self)
            }
        }
        impl FromStr for $ty {
            type Err = HexParseError;
            fn from_str(text: &str) -> Result<$ty, HexParseError> {
                parse_hex::<$n>(text).map($ty)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$ty, D::Error> {
                let text = String::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
        impl TryFrom<&[u8]> for $ty {
            type Error = usize;
            /// Fails with the actual length when it is not the right one.
            fn try_from(bytes: &[u8]) -> Result<$ty, usize> {
                <[u8; $n]>::try_from(bytes)
                    .map($ty)
                    .map_err(|_| bytes.len())
            }
        }
    };
}

hex_value!(Sha256Digest, 32);
hex_value!(Ed25519Signature, 64);

/// The canonical JSON text of a value: no whitespace, object keys sorted by
/// their UTF-8 bytes at every level, strings escaped as `serde_json` escapes
/// them, numbers as `serde_json` prints them. Equal values give equal text
/// whatever the key order they were built with, and parsing the text and
/// canonicalising again gives the same text. `params_sha256` is the SHA-256
/// of this text.
pub fn canonical_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(key, out);
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

fn write_json_string(s: &str, out: &mut String) {
    // Serializing a &str to JSON cannot fail.
    out.push_str(&serde_json::Value::from(s).to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let v = json!({"b": 1, "a": {"z": [1, {"y": null, "x": true}], "c": "\u{1b}"}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"c":"\u001b","z":[1,{"x":true,"y":null}]},"b":1}"#
        );
    }

    #[test]
    fn hex_round_trips_and_rejects_wrong_lengths() {
        let d = Sha256Digest::of(b"abc");
        assert_eq!(
            d.to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.to_string().parse::<Sha256Digest>().unwrap(), d);
        assert!("abcd".parse::<Sha256Digest>().is_err());
        assert!(
            "zz".repeat(32).parse::<Sha256Digest>().is_err(),
            "non-hex accepted"
        );
        assert_eq!(Sha256Digest::try_from(&[1u8; 31][..]), Err(31));
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("\\PC{0,6}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn canonical_json_is_a_fixed_point(v in arb_json()) {
            let text = canonical_json(&v);
            let reparsed: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(&reparsed, &v);
            prop_assert_eq!(canonical_json(&reparsed), text);
        }
    }
}
