//! Step 5: scrubbing a JSON value leaf by leaf, so the result stays valid JSON
//! and a secret is matched in its decoded form (a PEM key inside a JSON string
//! has real newlines here, not `\n` escapes).

use std::collections::BTreeSet;

use seam_scrub::Scrubber;
use serde_json::Value;

/// Scrubs every string in `value` (object keys included) in place and adds the
/// ids of the shapes that fired to `fired`.
pub(crate) fn scrub_value(scrubber: &Scrubber, value: &mut Value, fired: &mut BTreeSet<String>) {
    match value {
        Value::String(s) => scrub_string(scrubber, s, fired),
        Value::Array(items) => {
            for item in items {
                scrub_value(scrubber, item, fired);
            }
        }
        Value::Object(map) => {
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

pub(crate) fn scrub_string(scrubber: &Scrubber, s: &mut String, fired: &mut BTreeSet<String>) {
    let scrubbed = scrubber.scrub(s);
    if !scrubbed.hits.is_empty() {
        fired.extend(scrubbed.shapes().into_iter().map(str::to_owned));
        *s = scrubbed.text;
    }
}
