//! One walk of a tool's JSON Schema, for every rule the gate holds a schema to: closing
//! every object (`close_schema`), checking that every object is closed (`check_closed`) and
//! finding every place a path can be (`leaves`).
//!
//! The walk goes into every place a schema can describe a value: `properties`,
//! `patternProperties`, `additionalProperties` (a schema), `items` (a schema or the old
//! array form), `prefixItems`, `contains`, `anyOf`, `oneOf`, `allOf`, `not`,
//! `if`/`then`/`else`, `dependentSchemas`, `$defs`/`definitions`, and through `$ref`. A
//! `$ref` must be a local JSON pointer (`#/$defs/X`, `#/definitions/X`, `#`); one that
//! points elsewhere, points at nothing, or refers back to itself on the way from the root (a
//! recursive schema: its values have no depth limit) is refused, and so is a schema nested
//! deeper than [`MAX_DEPTH`].
//!
//! Each schema is visited with its *location*: where its value sits in the params, as
//! segments below the root, `*` standing for any array item or any key of an object
//! (`opts/where`, `files/*`). A schema under `$defs` is visited on its own (no location) and
//! again, with the location of each `$ref` to it.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// How deep a schema may nest (counting the steps through `$ref`).
pub const MAX_DEPTH: usize = 64;

/// The segment standing for any array item or any key of an object.
pub(crate) const ANY: &str = "*";

/// Why a schema cannot be walked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error(
        "{at}: $ref {reference:?} is not a local JSON pointer (#/$defs/NAME); seam resolves no schema from elsewhere"
    )]
    NonLocalRef { at: String, reference: String },
    #[error("{at}: $ref {reference:?} points at nothing in the schema")]
    DanglingRef { at: String, reference: String },
    #[error(
        "{at}: $ref {reference:?} refers back to itself (a recursive schema): its values have \
         no depth limit, so seam cannot find every path in them"
    )]
    RecursiveRef { at: String, reference: String },
    #[error("{at}: the schema nests deeper than {limit} levels")]
    TooDeep { at: String, limit: usize },
}

/// One schema met on the walk.
#[derive(Debug)]
pub(crate) struct Node<'a> {
    pub schema: &'a Map<String, Value>,
    /// Where this schema is in the whole schema, as a JSON pointer (`#/properties/a`).
    pub pointer: &'a str,
    /// Where its value sits in the params; `None` for a schema under `$defs` visited on its own.
    pub location: Option<&'a [String]>,
    /// The name of the nearest property above (or at) this schema.
    pub name: Option<&'a str>,
    /// Below `not` or `if`: a condition on the value, not a shape it takes.
    pub condition: bool,
}

/// Walks `root`, calling `visit` once for every schema object met.
pub(crate) fn walk(root: &Value, visit: &mut dyn FnMut(&Node<'_>)) -> Result<(), SchemaError> {
    let mut w = Walker {
        root,
        visit,
        refs: Vec::new(),
    };
    w.node(root, "#".to_owned(), Some(Vec::new()), None, false, 0)
}

struct Walker<'r, 'v> {
    root: &'r Value,
    visit: &'v mut dyn FnMut(&Node<'_>),
    /// The `$ref` targets being expanded, from the root down (for recursion).
    refs: Vec<String>,
}

/// A JSON pointer's escape of one key (RFC 6901).
pub(crate) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The inverse of [`escape`].
pub(crate) fn unescape(seg: &str) -> String {
    seg.replace("~1", "/").replace("~0", "~")
}

/// A location as text: segments escaped and joined by `/` (`opts/where`, `files/*`).
pub fn location_text(location: &[String]) -> String {
    location
        .iter()
        .map(|s| escape(s))
        .collect::<Vec<_>>()
        .join("/")
}

/// The inverse of [`location_text`] (a leading `/` is allowed).
pub fn parse_location(text: &str) -> Vec<String> {
    let text = text.strip_prefix('/').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    text.split('/').map(unescape).collect()
}

impl<'r> Walker<'r, '_> {
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        schema: &Value,
        pointer: String,
        location: Option<Vec<String>>,
        name: Option<&str>,
        condition: bool,
        depth: usize,
    ) -> Result<(), SchemaError> {
        let Some(obj) = schema.as_object() else {
            return Ok(());
        };
        if depth > MAX_DEPTH {
            return Err(SchemaError::TooDeep {
                at: pointer,
                limit: MAX_DEPTH,
            });
        }
        (self.visit)(&Node {
            schema: obj,
            pointer: &pointer,
            location: location.as_deref(),
            name,
            condition,
        });
        let d = depth + 1;
        let below = |seg: &str| {
            location.as_ref().map(|l| {
                let mut l = l.clone();
                l.push(seg.to_owned());
                l
            })
        };
        let at = |key: &str| format!("{pointer}/{}", escape(key));

        if let Some(Value::Object(props)) = obj.get("properties") {
            for (k, v) in props {
                let p = format!("{}/{}", at("properties"), escape(k));
                self.node(v, p, below(k), Some(k), condition, d)?;
            }
        }
        if let Some(Value::Object(props)) = obj.get("patternProperties") {
            for (k, v) in props {
                let p = format!("{}/{}", at("patternProperties"), escape(k));
                self.node(v, p, below(ANY), name, condition, d)?;
            }
        }
        if let Some(v @ Value::Object(_)) = obj.get("additionalProperties") {
            self.node(
                v,
                at("additionalProperties"),
                below(ANY),
                name,
                condition,
                d,
            )?;
        }
        match obj.get("items") {
            Some(v @ Value::Object(_)) => {
                self.node(v, at("items"), below(ANY), name, condition, d)?;
            }
            Some(Value::Array(items)) => {
                for (i, v) in items.iter().enumerate() {
                    let p = format!("{}/{i}", at("items"));
                    self.node(v, p, below(ANY), name, condition, d)?;
                }
            }
            _ => {}
        }
        for key in ["prefixItems"] {
            if let Some(Value::Array(items)) = obj.get(key) {
                for (i, v) in items.iter().enumerate() {
                    let p = format!("{}/{i}", at(key));
                    self.node(v, p, below(ANY), name, condition, d)?;
                }
            }
        }
        for key in ["contains", "additionalItems", "unevaluatedItems"] {
            if let Some(v @ Value::Object(_)) = obj.get(key) {
                self.node(v, at(key), below(ANY), name, condition, d)?;
            }
        }
        if let Some(v @ Value::Object(_)) = obj.get("unevaluatedProperties") {
            self.node(
                v,
                at("unevaluatedProperties"),
                below(ANY),
                name,
                condition,
                d,
            )?;
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(items)) = obj.get(key) {
                for (i, v) in items.iter().enumerate() {
                    let p = format!("{}/{i}", at(key));
                    self.node(v, p, location.clone(), name, condition, d)?;
                }
            }
        }
        for (key, cond) in [
            ("not", true),
            ("if", true),
            ("then", condition),
            ("else", condition),
        ] {
            if let Some(v) = obj.get(key) {
                self.node(v, at(key), location.clone(), name, cond, d)?;
            }
        }
        // `dependencies` is draft 7's `dependentSchemas` (an array there lists names only)
        for key in ["dependentSchemas", "dependencies"] {
            if let Some(Value::Object(deps)) = obj.get(key) {
                for (k, v) in deps {
                    let p = format!("{}/{}", at(key), escape(k));
                    self.node(v, p, location.clone(), name, condition, d)?;
                }
            }
        }
        for key in ["$dynamicRef", "$recursiveRef"] {
            if let Some(r) = obj.get(key) {
                return Err(SchemaError::NonLocalRef {
                    at: at(key),
                    reference: r.as_str().unwrap_or_default().to_owned(),
                });
            }
        }
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = obj.get(key) {
                for (k, v) in defs {
                    let p = format!("{}/{}", at(key), escape(k));
                    self.node(v, p, None, None, false, d)?;
                }
            }
        }
        if let Some(r) = obj.get("$ref") {
            let reference = r.as_str().unwrap_or_default().to_owned();
            let target = self.resolve(&pointer, &reference)?;
            // A schema under $defs on its own: its $ref is checked, and followed only from
            // the root (where it has a location).
            if location.is_some() {
                if self.refs.contains(&reference) {
                    return Err(SchemaError::RecursiveRef {
                        at: pointer,
                        reference,
                    });
                }
                self.refs.push(reference.clone());
                let walked = self.node(target, reference, location, name, condition, d);
                self.refs.pop();
                walked?;
            }
        }
        Ok(())
    }

    fn resolve(&self, at: &str, reference: &str) -> Result<&'r Value, SchemaError> {
        let Some(local) = reference.strip_prefix('#') else {
            return Err(SchemaError::NonLocalRef {
                at: at.to_owned(),
                reference: reference.to_owned(),
            });
        };
        if !(local.is_empty() || local.starts_with('/')) {
            // `#anchor`: a name seam does not resolve
            return Err(SchemaError::NonLocalRef {
                at: at.to_owned(),
                reference: reference.to_owned(),
            });
        }
        let decoded = percent_decode(local);
        self.root
            .pointer(&decoded)
            .ok_or_else(|| SchemaError::DanglingRef {
                at: at.to_owned(),
                reference: reference.to_owned(),
            })
    }
}

/// A `$ref`'s fragment is a URI fragment: `%xx` escapes are decoded before it is a pointer.
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|b| hex(*b)),
                bytes.get(i + 2).and_then(|b| hex(*b)),
            )
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Is this schema one of an object (so it must be closed)?
pub(crate) fn is_object_schema(obj: &Map<String, Value>) -> bool {
    let typed = match obj.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    typed || obj.contains_key("properties") || obj.contains_key("patternProperties")
}

/// `schema` with `additionalProperties: false` on every object schema, as the toolbox
/// requires: a parameter the tool would take but did not declare is refused by seam. A
/// schema under `not` or `if` is a condition, not a shape: it is not closed (a closed
/// condition holds for fewer values, and so `not` or `if` would let more through).
pub fn close_schema(schema: &mut Value) -> Result<(), SchemaError> {
    let mut objects = BTreeSet::new();
    walk(schema, &mut |n| {
        // A condition (`not`, `if`) is left as it is: closing it would loosen the schema.
        if !n.condition && is_object_schema(n.schema) {
            objects.insert(n.pointer.to_owned());
        }
    })?;
    for p in objects {
        let p = p.strip_prefix('#').unwrap_or(&p);
        if let Some(Value::Object(obj)) = schema.pointer_mut(p) {
            obj.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    Ok(())
}

/// Every object schema says `additionalProperties: false`; `Err` names the first that does not.
pub(crate) fn check_closed(schema: &Value) -> Result<(), String> {
    let mut open = None;
    walk(schema, &mut |n| {
        if open.is_none()
            && !n.condition
            && is_object_schema(n.schema)
            && n.schema.get("additionalProperties") != Some(&Value::Bool(false))
        {
            open = Some(n.pointer.to_owned());
        }
    })
    .map_err(|e| e.to_string())?;
    match open {
        Some(at) => Err(format!(
            "{at}: an object schema without additionalProperties: false"
        )),
        None => Ok(()),
    }
}

/// What a string the params can hold is, as far as its schema tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeafKind {
    /// A path by its name or `format: path`.
    Path,
    /// A URI by its name (`uri`, `url`, `*_uri`) or format (`uri`, `iri`, …): a path when it
    /// holds a `file:` URI.
    Uri,
    /// A string (or a schema that takes anything) the schema says nothing more about.
    Unclassified,
}

/// A place in the params where a string can be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    pub location: Vec<String>,
    pub kind: LeafKind,
}

/// Keys that give a schema a shape of its own (it is not a leaf).
const STRUCTURE: &[&str] = &[
    "properties",
    "patternProperties",
    "additionalProperties",
    "items",
    "prefixItems",
    "contains",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "enum",
    "const",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
];

/// Formats that say a string is not a path.
const NOT_PATH_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "uuid",
    "ipv4",
    "ipv6",
    "hostname",
    "idn-hostname",
    "regex",
];

const URI_FORMATS: &[&str] = &[
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
];

/// Every place in the params a string can be, classified: the toolbox admits paths and
/// an upstream withholds what it cannot classify. Each location appears once, with the most
/// path-like kind any schema gives it; fixed values (`enum`, `const`) and the formats of
/// dates, addresses and the like are not leaves.
pub fn leaves(schema: &Value) -> Result<Vec<Leaf>, SchemaError> {
    let mut found: Vec<Leaf> = Vec::new();
    walk(schema, &mut |n| {
        let (Some(location), false) = (n.location, n.condition) else {
            return;
        };
        let Some(kind) = leaf_kind(n.schema, n.name) else {
            return;
        };
        match found.iter_mut().find(|l| l.location == location) {
            Some(l) => l.kind = stronger(l.kind, kind),
            None => found.push(Leaf {
                location: location.to_vec(),
                kind,
            }),
        }
    })?;
    Ok(found)
}

/// Every location the schema describes (for checking that a declared field exists).
pub(crate) fn locations(schema: &Value) -> Result<BTreeSet<Vec<String>>, SchemaError> {
    let mut out = BTreeSet::new();
    walk(schema, &mut |n| {
        if let Some(l) = n.location {
            out.insert(l.to_vec());
        }
    })?;
    Ok(out)
}

fn stronger(a: LeafKind, b: LeafKind) -> LeafKind {
    use LeafKind::*;
    match (a, b) {
        (Path, _) | (_, Path) => Path,
        (Uri, _) | (_, Uri) => Uri,
        _ => Unclassified,
    }
}

fn leaf_kind(obj: &Map<String, Value>, name: Option<&str>) -> Option<LeafKind> {
    let string = match obj.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        // no type: a leaf takes anything (a string among it), unless it has a shape
        Some(_) => false,
        None => !STRUCTURE.iter().any(|k| obj.contains_key(*k)),
    };
    if !string || obj.contains_key("enum") || obj.contains_key("const") {
        return None;
    }
    let format = obj.get("format").and_then(Value::as_str);
    let named = name.map(name_kind);
    if format == Some("path") || named == Some(Some(LeafKind::Path)) {
        return Some(LeafKind::Path);
    }
    if format.is_some_and(|f| URI_FORMATS.contains(&f)) || named == Some(Some(LeafKind::Uri)) {
        return Some(LeafKind::Uri);
    }
    if format.is_some_and(|f| NOT_PATH_FORMATS.contains(&f)) {
        return None;
    }
    Some(LeafKind::Unclassified)
}

/// Names that mark a parameter as a path (or a URI, which may be a `file:` one).
pub(crate) fn name_kind(name: &str) -> Option<LeafKind> {
    let n: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    const EXACT: &[&str] = &[
        "cwd",
        "root",
        "roots",
        "dest",
        "destination",
        "src",
        "source",
        "sources",
        "target",
        "targets",
    ];
    const ENDINGS: &[&str] = &[
        "path",
        "paths",
        "file",
        "files",
        "filename",
        "filenames",
        "dir",
        "dirs",
        "directory",
        "directories",
        "folder",
        "folders",
        "location",
        "locations",
    ];
    const URI_ENDINGS: &[&str] = &["uri", "uris", "url", "urls", "iri"];
    if EXACT.contains(&n.as_str()) || ENDINGS.iter().any(|e| n.ends_with(e)) {
        Some(LeafKind::Path)
    } else if URI_ENDINGS.iter().any(|e| n.ends_with(e)) {
        Some(LeafKind::Uri)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(schema: Value) -> Vec<(String, LeafKind)> {
        leaves(&schema)
            .unwrap()
            .into_iter()
            .map(|l| (location_text(&l.location), l.kind))
            .collect()
    }

    #[test]
    fn paths_are_found_behind_every_combinator_and_ref() {
        let s = json!({
            "type": "object",
            "properties": {
                "req": {"$ref": "#/$defs/Req"},
                "opt": {"anyOf": [{"$ref": "#/definitions/Opt"}, {"type": "null"}]},
                "map": {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
                "extra": {"type": "object", "additionalProperties": {"type": "string", "format": "path"}},
                "tuple": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
                "cond": {"if": {"type": "string"}, "then": {"type": "string", "format": "uri"}},
                "dep": {"type": "object", "dependentSchemas": {"a": {"properties": {"where_file": {"type": "string"}}}}},
                "list": {"type": "array", "contains": {"oneOf": [{"allOf": [{"type": "string", "format": "iri"}]}]}},
                "n": {"type": "integer"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "when": {"type": "string", "format": "date-time"},
                "no": {"not": {"type": "string"}, "type": "integer"}
            },
            "$defs": {"Req": {"type": "object", "properties": {"file_name": {"type": "string"}, "n": {"type": "number"}}}},
            "definitions": {"Opt": {"type": "object", "properties": {"location": {"type": "string"}}}}
        });
        let mut f = found(s);
        f.sort();
        assert_eq!(
            f,
            vec![
                ("cond".to_owned(), LeafKind::Uri),
                ("dep/where_file".to_owned(), LeafKind::Path),
                ("extra/*".to_owned(), LeafKind::Path),
                ("list/*".to_owned(), LeafKind::Uri),
                ("map/*".to_owned(), LeafKind::Unclassified),
                ("opt/location".to_owned(), LeafKind::Path),
                ("req/file_name".to_owned(), LeafKind::Path),
                ("tuple/*".to_owned(), LeafKind::Unclassified),
            ]
        );
    }

    #[test]
    fn bad_refs_are_refused() {
        let remote = json!({"properties": {"a": {"$ref": "https://example.org/s.json"}}});
        assert!(matches!(
            leaves(&remote),
            Err(SchemaError::NonLocalRef { .. })
        ));
        let dynamic = json!({"properties": {"a": {"$dynamicRef": "#meta"}}});
        assert!(matches!(
            leaves(&dynamic),
            Err(SchemaError::NonLocalRef { .. })
        ));
        let dangling = json!({"properties": {"a": {"$ref": "#/$defs/Nope"}}});
        assert!(matches!(
            leaves(&dangling),
            Err(SchemaError::DanglingRef { .. })
        ));
        let recursive = json!({
            "properties": {"tree": {"$ref": "#/$defs/T"}},
            "$defs": {"T": {"type": "object", "properties": {
                "path": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/T"}}}}}
        });
        assert!(matches!(
            leaves(&recursive),
            Err(SchemaError::RecursiveRef { .. })
        ));
        // a ref used twice side by side is not a recursion
        let twice = json!({
            "properties": {"a": {"$ref": "#/$defs/P"}, "b": {"$ref": "#/$defs/P"}},
            "$defs": {"P": {"type": "string", "format": "path"}}
        });
        assert_eq!(found(twice).len(), 2);
        let mut deep = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH + 2) {
            deep = json!({"allOf": [deep]});
        }
        assert!(matches!(leaves(&deep), Err(SchemaError::TooDeep { .. })));
    }

    #[test]
    fn closing_reaches_defs_patterns_and_combinators() {
        let mut s = json!({"type":"object","properties":{
            "a":{"type":"object","properties":{"b":{"type":"string"}}},
            "c":{"type":"array","items":{"type":"object","properties":{}}},
            "d":{"anyOf":[{"type":"object"},{"type":"null"}]},
            "e":{"type":"object","patternProperties":{"x":{"type":"object"}}},
            "f":{"if":{"type":"object"},"then":{"type":["object","null"]}},
            "g":{"not":{"type":"object","properties":{"x":{}}}},
            "r":{"$ref":"#/$defs/x"}},
            "$defs":{"x":{"type":"object"}}});
        close_schema(&mut s).unwrap();
        check_closed(&s).unwrap();
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(s["properties"]["a"]["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["c"]["items"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            s["properties"]["d"]["anyOf"][0]["additionalProperties"],
            json!(false)
        );
        assert!(
            s["properties"]["d"]["anyOf"][1]
                .get("additionalProperties")
                .is_none()
        );
        assert_eq!(
            s["properties"]["e"]["patternProperties"]["x"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            s["properties"]["f"]["then"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(s["$defs"]["x"]["additionalProperties"], json!(false));
        assert!(
            s["properties"]["f"]["if"]
                .get("additionalProperties")
                .is_none()
        );
        assert!(
            s["properties"]["g"]["not"]
                .get("additionalProperties")
                .is_none()
        );
        let open = json!({"type":"object","additionalProperties":false,
            "properties":{"r":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"object"}}});
        let e = check_closed(&open).unwrap_err();
        assert!(e.contains("#/$defs/x"), "{e}");
    }

    /// Every subschema of `v` (JSON pointers), found plainly from JSON Schema's own list of
    /// the keywords that hold one (2020-12, and draft 7's `definitions`, `dependencies`,
    /// `additionalItems` and array `items`), `$ref` not followed. `propertyNames` and
    /// `contentSchema` are left out: they describe a key or a string's decoded content, not a
    /// value of the params, and the walk does not enter them.
    fn every_subschema(v: &Value, pointer: String, out: &mut Vec<String>) {
        let Some(obj) = v.as_object() else {
            return;
        };
        out.push(pointer.clone());
        for (k, sub) in obj {
            let here = format!("{pointer}/{}", escape(k));
            match (k.as_str(), sub) {
                (
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas" | "dependencies",
                    Value::Object(m),
                ) => {
                    for (n, s) in m {
                        every_subschema(s, format!("{here}/{}", escape(n)), out);
                    }
                }
                ("allOf" | "anyOf" | "oneOf" | "prefixItems" | "items", Value::Array(a)) => {
                    for (i, s) in a.iter().enumerate() {
                        every_subschema(s, format!("{here}/{i}"), out);
                    }
                }
                (
                    "additionalProperties"
                    | "unevaluatedProperties"
                    | "items"
                    | "contains"
                    | "additionalItems"
                    | "unevaluatedItems"
                    | "not"
                    | "if"
                    | "then"
                    | "else",
                    _,
                ) => every_subschema(sub, here, out),
                _ => {}
            }
        }
    }

    const ONE: &[&str] = &[
        "additionalProperties",
        "unevaluatedProperties",
        "items",
        "contains",
        "additionalItems",
        "unevaluatedItems",
        "not",
        "if",
        "then",
        "else",
    ];
    const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
    const NAMED: &[&str] = &[
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "dependencies",
    ];

    /// Random schemas without `$ref`: any keyword that holds subschemas, nested, several to
    /// a schema, with names that need escaping in a pointer (`/`, `~`).
    fn arb_schema() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(json!({"type": "string"})),
            Just(json!({"type": "object"})),
            Just(json!({})),
            Just(json!(true)),
            Just(json!(false)),
            Just(json!({"type": "string", "format": "path"})),
        ];
        leaf.prop_recursive(5, 48, 4, |inner| {
            let one = (prop::sample::select(ONE), inner.clone()).prop_map(|(k, s)| json!({ k: s }));
            let many = (
                prop::sample::select(MANY),
                prop::collection::vec(inner.clone(), 0..3),
            )
                .prop_map(|(k, v)| json!({ k: v }));
            let named = (
                prop::sample::select(NAMED),
                prop::collection::btree_map("[a-z/~]{1,3}", inner, 0..3),
            )
                .prop_map(|(k, m)| json!({ k: m }));
            prop::collection::vec(prop_oneof![one, many, named], 1..3).prop_map(|parts| {
                let mut merged = Map::new();
                for p in parts {
                    if let Value::Object(m) = p {
                        merged.extend(m);
                    }
                }
                Value::Object(merged)
            })
        })
    }

    proptest::proptest! {
        /// The one walk meets every subschema a plain recursion over JSON Schema's keywords
        /// finds, each once: no rule that rides on it can miss a place.
        #[test]
        fn the_walk_meets_every_subschema_once(schema in arb_schema()) {
            let mut want = Vec::new();
            every_subschema(&schema, "#".to_owned(), &mut want);
            let mut met = Vec::new();
            walk(&schema, &mut |n| met.push(n.pointer.to_owned())).unwrap();
            want.sort();
            met.sort();
            proptest::prop_assert_eq!(met, want);
        }
    }

    #[test]
    fn locations_round_trip() {
        let l = vec!["a/b".to_owned(), "~c".to_owned(), ANY.to_owned()];
        assert_eq!(location_text(&l), "a~1b/~0c/*");
        assert_eq!(parse_location(&location_text(&l)), l);
        assert_eq!(parse_location("/x/y"), vec!["x".to_owned(), "y".to_owned()]);
    }

    #[test]
    fn path_like_names() {
        for n in [
            "path",
            "file",
            "dir",
            "out_path",
            "config_file",
            "workdir",
            "filepath",
            "file_name",
            "fileName",
            "location",
            "root",
            "directory",
            "target_dir",
            "paths",
        ] {
            assert_eq!(name_kind(n), Some(LeafKind::Path), "{n}");
        }
        for n in ["uri", "url", "resource_uri", "baseUrl"] {
            assert_eq!(name_kind(n), Some(LeafKind::Uri), "{n}");
        }
        for n in ["query", "offset", "limit", "code", "name", "text"] {
            assert_eq!(name_kind(n), None, "{n}");
        }
    }
}
