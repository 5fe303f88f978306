//! The schema a reply is constrained to, as both backends are given it.

use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON Schema for constrained decoding, with the text every backend is
/// given. llama.cpp's grammar (in seam's engine and in llama-server alike)
/// asks for an object's properties in the order its schema text lists them,
/// and serde_json's map is sorted, which puts `params` before `tool`: the
/// model would then write a tool's parameters before choosing the tool. So
/// where an object schema has `required`, its `properties` are written in the
/// order of `required`, then the others in the order the schema lists them
/// (serde_json keeps that order in this workspace: its `preserve_order`
/// feature is on, so a tool's spec decides it). One text for both backends,
/// made here: sent to a server as the sorted map instead, qwen2.5-coder-1.5b
/// wrote `"params":{"path":"notes/trip-porto.md","offset":1000000000000000}`
/// before `"tool":"files.read"`, and read an empty page.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonSchema {
    value: Value,
    text: String,
}

impl JsonSchema {
    pub fn new(value: Value) -> Self {
        let mut text = String::new();
        write_schema(&value, None, &mut text);
        Self { value, text }
    }

    /// The schema as a value (what tests and the router look into).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The schema as JSON text, properties in the order of `required`.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text as a raw JSON value, to be put into a request body as it is.
    pub(crate) fn raw(&self) -> Box<RawValue> {
        RawValue::from_string(self.text.clone()).expect("written as JSON by write_schema")
    }
}

impl std::ops::Index<&str> for JsonSchema {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        &self.value[key]
    }
}

fn write_schema(v: &Value, order: Option<&[Value]>, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            if let Some(order) = order {
                let rank = |k: &str| {
                    order
                        .iter()
                        .position(|r| r.as_str() == Some(k))
                        .unwrap_or(usize::MAX)
                };
                keys.sort_by_key(|k| rank(k));
            }
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                // Inside an object schema, `properties` is ordered by its sibling `required`.
                let child_order = (order.is_none() && k.as_str() == "properties")
                    .then(|| map.get("required").and_then(Value::as_array))
                    .flatten()
                    .map(Vec::as_slice);
                write_schema(&map[k.as_str()], child_order, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_schema(item, None, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::JsonSchema;

    #[test]
    fn properties_follow_the_order_of_required() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "params": {"type": "object", "properties": {"zz": {}, "aa": {}, "mm": {}}, "required": ["zz", "mm"]},
                "mode": {"const": "action"},
                "extra": {"type": "string"},
                "tool": {"enum": ["b", "a"]}
            },
            "required": ["mode", "tool", "params"]
        });
        let s = JsonSchema::new(schema.clone());
        let text = s.text();
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
        assert!(
            at("\"mode\"") < at("\"tool\"") && at("\"tool\"") < at("\"params\""),
            "{text}"
        );
        assert!(at("\"params\"") < at("\"extra\""), "{text}");
        assert!(
            at("\"zz\"") < at("\"mm\"") && at("\"mm\"") < at("\"aa\""),
            "{text}"
        );
        // The enum's order is kept, and the text is the same JSON value.
        assert!(text.contains("[\"b\",\"a\"]"), "{text}");
        let back: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(back, schema);
        assert_eq!(s.raw().get(), text);
        // The others keep the order the schema lists them (builder: `path`
        // before `text`, `old` before `new`; sorted, `content` came first
        // and qwen2.5-coder-1.5b wrote a whole file's content for an append).
        let builder = serde_json::json!({
            "type": "object",
            "properties": {"op": {}, "path": {}, "text": {}, "old": {}, "new": {}, "content": {}},
            "required": ["op"]
        });
        let text = JsonSchema::new(builder).text().to_owned();
        let order: Vec<usize> = ["op", "path", "text", "old", "new", "content"]
            .iter()
            .map(|k| text.find(&format!("\"{k}\":")).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        // A property named `properties` is a property, not a schema keyword.
        let odd = serde_json::json!({"properties": {"properties": {"required": 1}, "b": {}}, "required": ["properties"]});
        let back: serde_json::Value =
            serde_json::from_str(JsonSchema::new(odd.clone()).text()).unwrap();
        assert_eq!(back, odd);
    }
}
