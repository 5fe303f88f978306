//! Scrubbing a JSON value ([`Scrubber::scrub_json`]): the one JSON scrub, used by the gate
//! (every call's params and output) and by the agent's local tools (every answer).
//!
//! Leaf by leaf, so the result stays valid JSON and a secret is matched in its decoded form
//! (a PEM key inside a JSON string has real newlines here, not `\n` escapes). Object keys are
//! scrubbed too: a tool can make a key of any text it read (a map from file names, headers or
//! variable names to values), and a secret there leaves as surely as in a value.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::Scrubber;

impl Scrubber {
    /// Scrubs every string in `value` in place, object keys included, and returns the ids of
    /// the shapes that fired, sorted and unique. Two keys that scrub to the same text leave
    /// one entry: a redaction is never undone to tell them apart.
    pub fn scrub_json(&self, value: &mut Value) -> Vec<&'static str> {
        let mut fired = BTreeSet::new();
        scrub_value(self, value, &mut fired);
        fired.into_iter().collect()
    }
}

fn scrub_value(scrubber: &Scrubber, value: &mut Value, fired: &mut BTreeSet<&'static str>) {
    match value {
        Value::String(s) => scrub_string(scrubber, s, fired),
        Value::Array(items) => {
            for item in items {
                scrub_value(scrubber, item, fired);
            }
        }
        Value::Object(map) => {
            // Rebuilding the map costs an allocation per entry; most maps have no secret key.
            let needs_key_scrub = map.keys().any(|k| !scrubber.scrub(k).hits.is_empty());
            if needs_key_scrub {
                let old = std::mem::take(map);
                for (mut k, mut v) in old {
                    scrub_string(scrubber, &mut k, fired);
                    scrub_value(scrubber, &mut v, fired);
                    map.insert(k, v);
                }
            } else {
                for v in map.values_mut() {
                    scrub_value(scrubber, v, fired);
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn scrub_string(scrubber: &Scrubber, s: &mut String, fired: &mut BTreeSet<&'static str>) {
    let scrubbed = scrubber.scrub(s);
    if !scrubbed.hits.is_empty() {
        fired.extend(scrubbed.shapes());
        *s = scrubbed.text;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{Scrubber, SecretValue};

    const KEY: &str = "AKIAZ4X7QW3RT5YU8IOP";

    #[test]
    fn every_string_and_every_key_is_scrubbed_and_the_shapes_named() {
        let s = Scrubber::new();
        let mut v = json!({
            "plain": "nothing here",
            KEY: {"inner": [1, true, null, format!("aws {KEY}")]},
        });
        let fired = s.scrub_json(&mut v);
        let text = v.to_string();
        assert!(!text.contains(KEY), "{text}");
        assert_eq!(v["plain"], "nothing here");
        assert_eq!(fired, vec!["aws-access-key-id"]);
        let mut clean = json!({"a": ["b", 1], "c": {"d": null}});
        let before = clean.clone();
        assert!(s.scrub_json(&mut clean).is_empty());
        assert_eq!(clean, before);
    }

    #[test]
    fn a_known_value_as_a_key_is_removed() {
        let value = "operator-token-7f3a9c1e5b2d8f4a";
        let s = Scrubber::with_known_values([SecretValue::new(value)]).unwrap();
        let mut v = json!({value: "x", "list": [{value: value}]});
        s.scrub_json(&mut v);
        assert!(!v.to_string().contains(value), "{v}");
    }
}
