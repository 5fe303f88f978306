//! The tools a model may name, how a name it wrote resolves to one of them,
//! and the params repairs a tool's schema makes possible.

use std::collections::BTreeSet;

use seam_protocol::ToolSpec;
use serde_json::{Map, Value};

use crate::correction::{Correction, Corrections};

/// One tool the model may name.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CatalogEntry {
    /// Name, description and params schema, as the model is shown them. A
    /// schema that is `null` or has no `properties` means "unknown": any
    /// params fit it and none of the schema repairs apply.
    pub spec: ToolSpec,
    /// May run as a plan step (the local tools except `builder`). The model
    /// never learns this; [`crate::route`] uses it.
    #[serde(default)]
    pub plan_actor: bool,
}

/// The tools the model may name. Resolution of a written name never guesses
/// between two tools: a name that could be either resolves to none.
#[derive(Debug, Clone, Default)]
pub struct ToolCatalog {
    entries: Vec<CatalogEntry>,
    /// Each entry's name, lower case, with `.` for every separator.
    normalized: Vec<String>,
    /// The same, with camelCase words separated too (`getWeather` → `get.weather`).
    camel: Vec<String>,
    /// Every enum value of every tool: (tool, key, value, value normalized).
    enum_values: Vec<(usize, String, String, String)>,
    /// Every param name any tool declares, as written and normalized.
    declared: BTreeSet<String>,
    declared_normalized: BTreeSet<String>,
}

/// Namespaces models put before a tool's name (`functions.files_read`). A
/// one-part tool name is only found behind one of these; a name of two parts
/// or more behind any prefix.
const KNOWN_NAMESPACES: &[&str] = &[
    "functions",
    "function",
    "tools",
    "tool",
    "default.api",
    "api",
    "mcp",
    "plugins",
    "plugin",
];

impl ToolCatalog {
    /// A catalog of these tools (in this order).
    pub fn new(entries: Vec<CatalogEntry>) -> Self {
        let normalized = entries.iter().map(|e| normalize(&e.spec.name)).collect();
        let camel = entries
            .iter()
            .map(|e| normalize_camel(&e.spec.name))
            .collect();
        let mut enum_values = Vec::new();
        let mut declared = BTreeSet::new();
        for (i, e) in entries.iter().enumerate() {
            let Some(schema) = Schema::of(e) else {
                continue;
            };
            for k in schema.properties.keys() {
                declared.insert(k.clone());
                for v in schema.enum_values(k) {
                    enum_values.push((i, k.clone(), v.to_owned(), normalize_camel(v)));
                }
            }
        }
        let declared_normalized = declared.iter().map(|k| normalize_camel(k)).collect();
        ToolCatalog {
            entries,
            normalized,
            camel,
            enum_values,
            declared,
            declared_normalized,
        }
    }

    /// A catalog of names only: no schemas (any params fit), and no tool may
    /// run as a plan step (each step is dispatched as a direct call).
    pub fn from_names<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        let entries = names
            .into_iter()
            .map(|n| CatalogEntry {
                spec: ToolSpec {
                    name: n.into(),
                    version: String::new(),
                    description: String::new(),
                    input_schema: Value::Null,
                },
                plan_actor: false,
            })
            .collect();
        ToolCatalog::new(entries)
    }

    /// The tools, in catalog order.
    pub fn entries(&self) -> &[CatalogEntry] {
        &self.entries
    }

    /// The tool of exactly this name.
    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
        self.entries.iter().find(|e| e.spec.name == name)
    }

    /// The tools' names, in catalog order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.spec.name.as_str())
    }

    /// Which tool a written name stands for, and what had to be repaired to
    /// see it. `None` when it is none of them, or could be more than one.
    pub(crate) fn resolve(&self, written: &str) -> Option<(usize, Vec<Correction>)> {
        if let Some(i) = self.entries.iter().position(|e| e.spec.name == written) {
            return Some((i, vec![]));
        }
        let mut fixes = Vec::new();
        let trimmed = written.trim_matches(|c: char| {
            c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '*' | '<' | '>' | ':' | ',' | ';')
        });
        let trimmed = trimmed.strip_suffix("()").unwrap_or(trimmed);
        if trimmed.is_empty() || trimmed.len() > 200 {
            return None;
        }
        if trimmed != written {
            fixes.push(Correction::ToolNamePadded);
            if let Some(i) = self.entries.iter().position(|e| e.spec.name == trimmed) {
                return Some((i, fixes));
            }
        }
        if let Some(i) = unique(
            self.entries
                .iter()
                .map(|e| e.spec.name.eq_ignore_ascii_case(trimmed)),
        ) {
            fixes.push(Correction::ToolNameCase);
            return Some((i, fixes));
        }
        let norm = normalize(trimmed);
        if norm.is_empty() {
            return None;
        }
        if let Some((i, c)) = match_normalized(&norm, &self.normalized) {
            fixes.push(c);
            return Some((i, fixes));
        }
        // `filesRead`, `functions.webSearch`: camelCase words.
        let camel = normalize_camel(trimmed);
        if camel != norm
            && let Some((i, c)) = match_normalized(&camel, &self.camel)
        {
            fixes.push(Correction::ToolNameCamelCase);
            if c != Correction::ToolNameSeparators {
                fixes.push(c);
            }
            return Some((i, fixes));
        }
        None
    }

    /// A written name that [`ToolCatalog::resolve`] finds no tool for, but
    /// whose words are one tool's in another order or number (`read_file`,
    /// `get_facts`), or that is one tool's but for a slip of spelling (the
    /// only tool within [`near_distance`]). Never for a short name: `seam`
    /// is no misspelt `seer`.
    pub(crate) fn resolve_near(&self, written: &str) -> Option<(usize, Correction)> {
        let trimmed = written.trim_matches(|c: char| {
            c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '*' | '<' | '>' | ':' | ',' | ';')
        });
        if trimmed.is_empty() || trimmed.len() > 100 {
            return None;
        }
        let w = normalize_camel(trimmed);
        let words = word_set(&w);
        if words.len() >= 2
            && let Some(i) = unique(self.camel.iter().map(|n| word_set(n) == words))
        {
            return Some((i, Correction::ToolNameWordOrder));
        }
        nearest(&w, self.camel.iter().map(String::as_str))
            .map(|i| (i, Correction::ToolNameNearMatch))
    }

    /// A written name that is no tool's but one value of exactly one tool's
    /// enum param (`os` → `facts.get`, `fact: "os"`): the tool, the key and
    /// the value. A value that is also some tool's param name (`path`) or a
    /// part of a tool's name is no evidence, and neither is a value two tools have.
    pub(crate) fn enum_value_named(&self, written: &str) -> Option<(usize, String, String)> {
        if written.trim().is_empty() || written.len() > 64 {
            return None;
        }
        let w = normalize_camel(written.trim());
        if w.is_empty()
            || self.declared_normalized.contains(&w)
            || self.camel.iter().any(|n| n.split('.').any(|p| p == w))
        {
            return None;
        }
        let mut found: Option<&(usize, String, String, String)> = None;
        for e in self.enum_values.iter().filter(|e| e.3 == w) {
            if found.is_some_and(|f| (f.0, &f.1) != (e.0, &e.1)) {
                return None;
            }
            found = Some(e);
        }
        found.map(|(i, k, v, _)| (*i, k.clone(), v.clone()))
    }

    /// The one tool whose enums hold `value` at all, when its enum for `key`
    /// is one of them (`{"op":"neighbors"}` → `graph`).
    pub(crate) fn enum_value_owner(&self, key: &str, value: &str) -> Option<usize> {
        let mut owner = None;
        for e in self.enum_values.iter().filter(|e| e.2 == value) {
            if owner.is_some_and(|o| o != e.0) {
                return None;
            }
            owner = Some(e.0);
        }
        let i = owner?;
        self.enum_values
            .iter()
            .any(|e| e.0 == i && e.1 == key && e.2 == value)
            .then_some(i)
    }

    /// Whether any tool with a schema declares this param.
    pub(crate) fn declares_anywhere(&self, key: &str) -> bool {
        self.declared.contains(key)
    }

    /// Whether at least one tool has a schema with properties (a catalog of
    /// names only knows no params).
    pub(crate) fn knows_params(&self) -> bool {
        !self.declared.is_empty()
    }

    /// The entries whose schemas the params fit (keys all declared, values of
    /// the declared types; missing required params allowed).
    pub(crate) fn fitting(&self, params: &Map<String, Value>) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&i| Schema::of(&self.entries[i]).is_none_or(|s| s.fits_loosely(params)))
            .collect()
    }
}

/// A normalized written name against the normalized tool names: equal, behind
/// a namespace, or the tail of one longer name.
fn match_normalized(norm: &str, names: &[String]) -> Option<(usize, Correction)> {
    if let Some(i) = unique(names.iter().map(|n| n == norm)) {
        return Some((i, Correction::ToolNameSeparators));
    }
    let parts: Vec<&str> = norm.split('.').collect();
    // A namespace before the name: `functions.bash`, `myserver.files.read`.
    for k in 1..parts.len() {
        let prefix = parts[..k].join(".");
        let tail = parts[k..].join(".");
        let tail_parts = parts.len() - k;
        let known = KNOWN_NAMESPACES.contains(&prefix.as_str());
        if !known && tail_parts < 2 {
            continue;
        }
        if let Some(i) = unique(names.iter().map(|n| *n == tail)) {
            return Some((i, Correction::ToolNamePrefix));
        }
    }
    // The tail of a longer name: `execute_javascript` for `QuickJS_execute_javascript`.
    if parts.len() >= 2 {
        let dotted = format!(".{norm}");
        if let Some(i) = unique(names.iter().map(|n| n.ends_with(&dotted))) {
            return Some((i, Correction::ToolNameSuffix));
        }
    }
    None
}

/// The edits a name or key of this many characters may be away from the
/// one it stands for: none under 5 (`seam` and `seer`, `path` and `patch`
/// are different words), one up to 9, two from 10.
pub(crate) fn near_distance(len: usize) -> usize {
    match len {
        0..5 => 0,
        5..10 => 1,
        _ => 2,
    }
}

/// The one candidate within [`near_distance`] of `w` (both normalized), by
/// Damerau-Levenshtein distance (a swap of two letters is one edit), or
/// whose words are `w`'s in another number (`paths`, `queues`). `None` when
/// none is, or two are.
pub(crate) fn nearest<'a>(w: &str, candidates: impl Iterator<Item = &'a str>) -> Option<usize> {
    let max = near_distance(w.chars().count());
    let words = word_list(w);
    let hits = candidates.map(|c| {
        c != w
            && ((max > 0 && strsim::damerau_levenshtein(w, c) <= max)
                || (w.len() >= 4 && word_list(c) == words))
    });
    unique(hits)
}

/// A normalized name's words, each without a plural ending, in order.
fn word_list(n: &str) -> Vec<String> {
    n.split('.')
        .filter(|p| !p.is_empty())
        .map(singular)
        .collect()
}

/// A normalized name's words, each without a plural ending, sorted.
fn word_set(n: &str) -> Vec<String> {
    let mut w = word_list(n);
    w.sort();
    w
}

/// `files` → `file`, `queues` → `queue`, `summaries` → `summary`; a short
/// word or one ending in `ss` is left as it is.
fn singular(w: &str) -> String {
    if w.len() > 4
        && let Some(stem) = w.strip_suffix("ies")
    {
        return format!("{stem}y");
    }
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        return w[..w.len() - 1].to_owned();
    }
    w.to_owned()
}

fn unique(hits: impl Iterator<Item = bool>) -> Option<usize> {
    let mut found = None;
    for (i, hit) in hits.enumerate() {
        if hit {
            if found.is_some() {
                return None;
            }
            found = Some(i);
        }
    }
    found
}

/// Lower case, every separator (`_ - / : space` and runs of them) as one `.`.
pub(crate) fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if matches!(c, '.' | '_' | '-' | '/' | ':' | ' ')
            && !out.is_empty()
            && !out.ends_with('.')
        {
            out.push('.');
        }
    }
    while out.ends_with('.') {
        out.pop();
    }
    out
}

/// [`normalize`], with a camelCase word boundary (`filesRead`, `HTTPServer`)
/// counted as a separator too.
pub(crate) fn normalize_camel(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut split = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                split.push('.');
            }
        }
        split.push(c);
    }
    normalize(&split)
}

/// A tool's params schema, as far as the repairs read it.
pub(crate) struct Schema<'a> {
    properties: &'a Map<String, Value>,
    required: Vec<&'a str>,
    root: &'a Map<String, Value>,
}

impl<'a> Schema<'a> {
    pub(crate) fn of(entry: &'a CatalogEntry) -> Option<Schema<'a>> {
        let root = entry.spec.input_schema.as_object()?;
        let properties = root.get("properties")?.as_object()?;
        let required = root
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        Some(Schema {
            properties,
            required,
            root,
        })
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.properties.contains_key(key)
    }

    /// A word of `written` (a name the model used) is one of this tool's enum
    /// values or one of the parts of its name (`tool_name`).
    pub(crate) fn corroborated_by(&self, written: &str, tool_name: &str) -> bool {
        let words: Vec<String> = normalize(written)
            .split('.')
            .filter(|w| w.len() >= 3)
            .map(str::to_owned)
            .collect();
        if words.is_empty() {
            return false;
        }
        let own = normalize(tool_name);
        if own.split('.').any(|p| words.iter().any(|w| w == p)) {
            return true;
        }
        self.properties.keys().any(|k| {
            self.enum_values(k)
                .iter()
                .any(|v| words.iter().any(|w| w == v))
        })
    }

    fn enum_values(&self, key: &str) -> Vec<&'a str> {
        self.properties
            .get(key)
            .and_then(|p| p.get("enum"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    fn types(&self, key: &str) -> Vec<&'a str> {
        match self.properties.get(key).and_then(|p| p.get("type")) {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        }
    }

    /// True when the declared property `key` would accept `v` (type, enum, const).
    pub(crate) fn accepts(&self, key: &str, v: &Value) -> bool {
        let Some(p) = self.properties.get(key) else {
            return false;
        };
        let types = self.types(key);
        if !types.is_empty() && !types.iter().any(|t| type_matches(t, v)) {
            return false;
        }
        if let Some(Value::Array(e)) = p.get("enum")
            && !e.contains(v)
        {
            return false;
        }
        if let Some(c) = p.get("const")
            && c != v
        {
            return false;
        }
        true
    }

    fn fits_loosely(&self, params: &Map<String, Value>) -> bool {
        params.iter().all(|(k, v)| self.accepts(k, v))
    }

    /// For an enum property `key` and each of its values, the params that
    /// `allOf: [{if: {properties: {key: {const: v}}}, then: {required: […]}}]` adds.
    fn conditional_requirements(&self, key: &str) -> Vec<(&'a str, Vec<&'a str>)> {
        let mut out = Vec::new();
        let Some(Value::Array(all)) = self.root.get("allOf") else {
            return out;
        };
        for clause in all {
            let Some(v) = clause
                .pointer(&format!("/if/properties/{}/const", escape_pointer(key)))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let req: Vec<&str> = clause
                .pointer("/then/required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            out.push((v, req));
        }
        out
    }

    /// Is `key` required somewhere other than the root's `required`: by an
    /// `if`/`then` clause, an `anyOf` branch, `dependentRequired` or draft-7
    /// `dependencies` (an `id` that `op: "get"` requires)? Read broadly: any
    /// `required` list outside `properties` counts.
    fn conditionally_required(&self, key: &str) -> bool {
        fn walk(v: &Value, key: &str, depth: usize) -> bool {
            if depth > 16 {
                return true;
            }
            match v {
                Value::Object(m) => m.iter().any(|(k, v)| match k.as_str() {
                    "properties" => false,
                    "required" => v
                        .as_array()
                        .is_some_and(|a| a.iter().any(|r| r.as_str() == Some(key))),
                    "dependentRequired" | "dependencies" => v.as_object().is_some_and(|d| {
                        d.values().any(|r| {
                            r.as_array()
                                .is_some_and(|a| a.iter().any(|r| r.as_str() == Some(key)))
                                || walk(r, key, depth + 1)
                        })
                    }),
                    _ => walk(v, key, depth + 1),
                }),
                Value::Array(a) => a.iter().any(|v| walk(v, key, depth + 1)),
                _ => false,
            }
        }
        self.root
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "properties" | "required"))
            .any(|(_, v)| walk(v, key, 0))
    }

    /// The range a value of `key` is clamped to, when `key` is a bounded
    /// optional number: not required (at the root or by a condition), of
    /// type `integer` or `number`, with no `enum` or `const`, and with a
    /// bound. For an integer an exclusive bound is the next integer inside;
    /// for a number an exclusive bound has no nearest value and is not
    /// clamped to (the tool refuses). `None` when nothing would be clamped.
    fn clamp_range(&self, key: &str) -> Option<Range> {
        let p = self.properties.get(key)?.as_object()?;
        if self.required.contains(&key)
            || p.contains_key("enum")
            || p.contains_key("const")
            || self.conditionally_required(key)
        {
            return None;
        }
        let types = self.types(key);
        let integer = if types.contains(&"number") {
            false
        } else if types.contains(&"integer") {
            true
        } else {
            return None;
        };
        let bound = |k: &str| p.get(k).filter(|v| v.is_number());
        // Draft 4: `exclusiveMinimum: true` makes `minimum` exclusive.
        let (min, x_min) = match p.get("exclusiveMinimum") {
            Some(Value::Bool(true)) => (None, bound("minimum")),
            _ => (bound("minimum"), bound("exclusiveMinimum")),
        };
        let (max, x_max) = match p.get("exclusiveMaximum") {
            Some(Value::Bool(true)) => (None, bound("maximum")),
            _ => (bound("maximum"), bound("exclusiveMaximum")),
        };
        let f = |v: &Value| v.as_f64().filter(|x| x.abs() < 9.0e15);
        let range = if integer {
            let int = |x: f64| Value::from(x as i64);
            let lo = [
                min.and_then(f).map(f64::ceil),
                x_min.and_then(f).map(|x| x.floor() + 1.0),
            ]
            .into_iter()
            .flatten()
            .reduce(f64::max);
            let hi = [
                max.and_then(f).map(f64::floor),
                x_max.and_then(f).map(|x| x.ceil() - 1.0),
            ]
            .into_iter()
            .flatten()
            .reduce(f64::min);
            Range {
                lo: lo.map(|x| (x, int(x))),
                hi: hi.map(|x| (x, int(x))),
                enforces: vec!["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"],
            }
        } else {
            let lo = min.and_then(|v| Some((f(v)?, v.clone())));
            let hi = max.and_then(|v| Some((f(v)?, v.clone())));
            let enforces = [("minimum", lo.is_some()), ("maximum", hi.is_some())]
                .into_iter()
                .filter_map(|(k, on)| on.then_some(k))
                .collect();
            Range { lo, hi, enforces }
        };
        match (&range.lo, &range.hi) {
            (None, None) => None,
            (Some((lo, _)), Some((hi, _))) if lo > hi => None,
            _ => Some(range),
        }
    }

    /// The declared params whose numbers [`Schema::repair`] clamps, each with
    /// the bound keywords the clamp enforces.
    fn clamped_keys(&self) -> Vec<(&'a str, Vec<&'static str>)> {
        self.properties
            .keys()
            .filter_map(|k| Some((k.as_str(), self.clamp_range(k)?.enforces)))
            .collect()
    }

    /// The schema repairs, in order: types, empty optionals, keys renamed by
    /// an enum value, missing required enum values inferred, keys the schema
    /// does not have dropped. `hint` is a name the model used for the tool
    /// that was not the tool's (its words may say which `op`).
    pub(crate) fn repair(
        &self,
        params: &mut Map<String, Value>,
        hint: &str,
        fixes: &mut Corrections,
    ) {
        // Keys in another case or style: `Path`, `timeoutS`, `timeout-s`.
        let undeclared: Vec<String> = params
            .keys()
            .filter(|k| !self.has(k) && *k != "tool")
            .cloned()
            .collect();
        for k in undeclared {
            let w = normalize_camel(&k);
            let same: Vec<&String> = self
                .properties
                .keys()
                .filter(|p| normalize_camel(p) == w)
                .collect();
            if let [only] = same.as_slice()
                && !params.contains_key(only.as_str())
                && let Some(v) = params.remove(&k)
            {
                params.insert((*only).clone(), v);
                fixes.add(Correction::ParamKeyCase);
            }
        }
        self.rename_near_keys(params, fixes);
        // Types: "20" for an integer, 3 for a string.
        let keys: Vec<String> = params.keys().cloned().collect();
        for k in &keys {
            if !self.has(k) {
                continue;
            }
            let v = &params[k];
            if self.accepts(k, v) {
                continue;
            }
            if let Some(c) = self.types(k).iter().find_map(|t| coerce(t, v))
                && self.accepts(k, &c)
            {
                params.insert(k.clone(), c);
                fixes.add(Correction::ParamTypeCoerced);
                continue;
            }
            // An enum value in another case or style: `Tree`, `find-symbol`.
            if let Some(s) = v.as_str() {
                let w = normalize_camel(s);
                let same: Vec<&str> = self
                    .enum_values(k)
                    .into_iter()
                    .filter(|e| normalize_camel(e) == w)
                    .collect();
                if let [only] = same.as_slice() {
                    params.insert(k.clone(), Value::String((*only).to_owned()));
                    fixes.add(Correction::EnumValueCase);
                } else if same.is_empty() {
                    // A slip of spelling or number: `find_symbols`, `queues`.
                    let values = self.enum_values(k);
                    let normed: Vec<String> = values.iter().map(|e| normalize_camel(e)).collect();
                    if let Some(i) = nearest(&w, normed.iter().map(String::as_str)) {
                        params.insert(k.clone(), Value::String(values[i].to_owned()));
                        fixes.add(Correction::EnumValueNearMatch);
                    }
                }
            }
        }
        // A bounded optional number out of its range: the nearest bound.
        for k in &keys {
            let Some(x) = params.get(k).and_then(Value::as_f64) else {
                continue;
            };
            let Some(range) = self.clamp_range(k) else {
                continue;
            };
            let to = match (&range.lo, &range.hi) {
                (Some((lo, v)), _) if x < *lo => v.clone(),
                (_, Some((hi, v))) if x > *hi => v.clone(),
                _ => continue,
            };
            params.insert(k.clone(), to);
            fixes.add(Correction::ParamClamped);
        }
        // Optional params given as "" or null.
        for k in &keys {
            let empty = matches!(params.get(k), Some(Value::Null))
                || matches!(params.get(k), Some(Value::String(s)) if s.trim().is_empty());
            if empty && self.has(k) && !self.required.contains(&k.as_str()) {
                params.remove(k);
                fixes.add(Correction::EmptyOptionalDropped);
            }
        }
        // Missing required enum params: a stray key holding one of their values.
        for req in self.required.clone() {
            if params.contains_key(req) {
                continue;
            }
            let values = self.enum_values(req);
            if values.is_empty() {
                continue;
            }
            let strays: Vec<String> = params
                .iter()
                .filter(|(k, v)| {
                    !self.has(k) && *k != "tool" && v.as_str().is_some_and(|s| values.contains(&s))
                })
                .map(|(k, _)| k.clone())
                .collect();
            if let [only] = strays.as_slice()
                && let Some(v) = params.remove(only)
            {
                params.insert(req.to_owned(), v);
                fixes.add(Correction::ParamRenamedByEnum);
            }
        }
        // Still missing: a word of the name the model used, or the one value
        // whose conditional requirements the params meet best.
        for req in self.required.clone() {
            if params.contains_key(req) {
                continue;
            }
            let values = self.enum_values(req);
            if values.is_empty() {
                continue;
            }
            let words: Vec<String> = normalize(hint).split('.').map(str::to_owned).collect();
            let named: Vec<&str> = values
                .iter()
                .copied()
                .filter(|v| words.iter().any(|w| w == v))
                .collect();
            let chosen = if let [only] = named.as_slice() {
                Some(*only)
            } else {
                let met: Vec<(&str, usize)> = self
                    .conditional_requirements(req)
                    .into_iter()
                    .filter(|(v, r)| {
                        values.contains(v)
                            && !r.is_empty()
                            && r.iter().all(|k| params.contains_key(*k))
                    })
                    .map(|(v, r)| (v, r.len()))
                    .collect();
                let best = met.iter().map(|(_, n)| *n).max().unwrap_or(0);
                let top: Vec<&str> = met
                    .iter()
                    .filter(|(_, n)| *n == best)
                    .map(|(v, _)| *v)
                    .collect();
                match top.as_slice() {
                    [only] => Some(*only),
                    _ => None,
                }
            };
            if let Some(v) = chosen {
                params.insert(req.to_owned(), Value::String(v.to_owned()));
                fixes.add(Correction::ParamInferred);
            }
        }
        // Exactly one required param still missing (with those the chosen enum
        // values require), and exactly one key the schema does not have whose
        // value it accepts: that key was meant (`file` for `path`).
        let mut missing: Vec<&str> = self
            .required
            .iter()
            .copied()
            .filter(|r| !params.contains_key(*r))
            .collect();
        for k in self.properties.keys() {
            let Some(v) = params.get(k).and_then(Value::as_str) else {
                continue;
            };
            for (value, req) in self.conditional_requirements(k) {
                if value == v {
                    for r in req {
                        if !params.contains_key(r) && !missing.contains(&r) {
                            missing.push(r);
                        }
                    }
                }
            }
        }
        if let [want] = missing.as_slice() {
            let candidates: Vec<String> = params
                .iter()
                .filter(|(k, v)| !self.has(k) && *k != "tool" && self.accepts(want, v))
                .map(|(k, _)| k.clone())
                .collect();
            if let [only] = candidates.as_slice()
                && let Some(v) = params.remove(only)
            {
                params.insert((*want).to_owned(), v);
                fixes.add(Correction::ParamRenamedToRequired);
            }
        }
        // Python source Python cannot compile, in the two ways small models
        // write it (see `python_layout`).
        for k in &keys {
            if !self.is_python(k) {
                continue;
            }
            if let Some(code) = params.get(k).and_then(Value::as_str)
                && let Some((relaid, made)) = crate::python_layout::repair(code)
            {
                params.insert(k.clone(), Value::String(relaid));
                for c in made {
                    fixes.add(c);
                }
            }
        }
        // Keys the schema does not have (a `tool` key is the router's to strip).
        let extra: Vec<String> = params
            .keys()
            .filter(|k| !self.has(k) && *k != "tool")
            .cloned()
            .collect();
        for k in extra {
            params.remove(&k);
            fixes.add(Correction::ExtraParamDropped);
        }
    }

    /// Keys the schema does not have that stand for one param it has and the
    /// params lack: the only param near it (see [`nearest`]) or whose leading
    /// words it is (`timeout` for `timeout_s`), else the only param whose own
    /// description has its words (`file` for `path`: "file to read"). The
    /// value must suit that param. A param already given is never a target:
    /// its near twin is an extra, dropped later.
    fn rename_near_keys(&self, params: &mut Map<String, Value>, fixes: &mut Corrections) {
        let undeclared: Vec<String> = params
            .keys()
            .filter(|k| !self.has(k) && *k != "tool")
            .cloned()
            .collect();
        let all: Vec<&'a String> = self.properties.keys().collect();
        let normed: Vec<String> = all.iter().map(|p| normalize_camel(p)).collect();
        for k in undeclared {
            let w = normalize_camel(&k);
            if w.len() < 3 {
                continue;
            }
            let near = nearest(&w, normed.iter().map(String::as_str))
                .map(|i| (i, Correction::ParamKeyNearMatch))
                .or_else(|| {
                    let lead = format!("{w}.");
                    (w.len() >= 4)
                        .then(|| unique(normed.iter().map(|n| n.starts_with(&lead))))
                        .flatten()
                        .map(|i| (i, Correction::ParamKeyNearMatch))
                })
                .or_else(|| {
                    self.described_by(&w, &all)
                        .map(|i| (i, Correction::ParamKeySynonym))
                });
            let Some((i, fix)) = near else { continue };
            let target = all[i].as_str();
            let Some(v) = params.get(&k) else { continue };
            let suits = self.accepts(target, v)
                || self
                    .types(target)
                    .iter()
                    .any(|t| coerce(t, v).is_some_and(|c| self.accepts(target, &c)));
            if params.contains_key(target) || !suits {
                continue;
            }
            if let Some(v) = params.remove(&k) {
                params.insert(target.to_owned(), v);
                fixes.add(fix);
            }
        }
    }

    /// The one property whose own `description` has every word of the
    /// normalized key `w` (each 3 letters or more, plural or not).
    fn described_by(&self, w: &str, props: &[&String]) -> Option<usize> {
        let words = word_list(w);
        if words.is_empty() || words.iter().any(|x| x.len() < 3) {
            return None;
        }
        unique(props.iter().map(|p| {
            let Some(d) = self
                .properties
                .get(p.as_str())
                .and_then(|x| x.get("description"))
                .and_then(Value::as_str)
            else {
                return false;
            };
            let said: Vec<String> = d
                .split(|c: char| !c.is_alphanumeric())
                .filter(|x| !x.is_empty())
                .map(|x| singular(&x.to_lowercase()))
                .collect();
            words.iter().all(|x| said.contains(x))
        }))
    }

    /// Whether the schema says the property holds Python source
    /// (`"contentMediaType": "text/x-python"`, JSON Schema's word for what a
    /// string encodes).
    fn is_python(&self, key: &str) -> bool {
        self.properties
            .get(key)
            .and_then(|p| p.get("contentMediaType"))
            .and_then(Value::as_str)
            .is_some_and(|m| m.eq_ignore_ascii_case("text/x-python"))
    }

    /// The one property of a schema that has exactly one (for `params: "x"`).
    pub(crate) fn single_property(&self) -> Option<&'a str> {
        if self.properties.len() == 1 {
            self.properties.keys().next().map(String::as_str)
        } else if let [only] = self.required.as_slice() {
            Some(only)
        } else {
            None
        }
    }

    /// The param a bare command or text is meant for: the one required param
    /// that takes a free string (not an enum), or else the only param that takes one.
    pub(crate) fn command_param(&self) -> Option<&'a str> {
        let strings = |keys: Vec<&'a str>| -> Option<&'a str> {
            let s: Vec<&str> = keys
                .into_iter()
                .filter(|k| {
                    self.types(k).contains(&"string")
                        && self
                            .properties
                            .get(*k)
                            .is_some_and(|p| p.get("enum").is_none())
                })
                .collect();
            match s.as_slice() {
                [only] => Some(*only),
                _ => None,
            }
        };
        strings(self.required.clone())
            .or_else(|| strings(self.properties.keys().map(String::as_str).collect()))
    }

    /// Whether a string value suits the property (its type allows strings, or says nothing).
    pub(crate) fn takes_string(&self, key: &str) -> bool {
        let t = self.types(key);
        t.is_empty() || t.contains(&"string")
    }
}

/// The range of a bounded optional number: each end as a number to compare
/// with and the value to write.
struct Range {
    lo: Option<(f64, Value)>,
    hi: Option<(f64, Value)>,
    /// The schema's bound keywords the clamp enforces.
    enforces: Vec<&'static str>,
}

/// A tool's params schema as constrained decoding should see it: the same,
/// except that the bounds of the params the parser clamps (see
/// [`Correction::ParamClamped`]) are left out. A grammar that holds an integer
/// to its maximum does not make the model mean a smaller number: it cuts the
/// number it meant (`limit: 20` with maximum 10 is written `2`). Without the
/// bound the model writes 20, and the clamp makes it 10. Bounds the clamp
/// does not enforce stay: those of required params, a number's exclusive
/// bounds, lengths and item counts.
pub fn schema_for_grammar(input_schema: &Value) -> Value {
    let mut out = input_schema.clone();
    let entry = CatalogEntry {
        spec: ToolSpec {
            name: String::new(),
            version: String::new(),
            description: String::new(),
            input_schema: input_schema.clone(),
        },
        plan_actor: false,
    };
    let Some(schema) = Schema::of(&entry) else {
        return out;
    };
    let keys = schema.clamped_keys();
    if let Some(Value::Object(props)) = out.get_mut("properties") {
        for (k, bounds) in keys {
            if let Some(Value::Object(p)) = props.get_mut(k) {
                for b in bounds {
                    p.remove(b);
                }
            }
        }
    }
    out
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn coerce(t: &str, v: &Value) -> Option<Value> {
    match (t, v) {
        ("integer", Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
        ("number", Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        ("boolean", Value::String(s)) => match s.trim() {
            "true" | "True" => Some(Value::Bool(true)),
            "false" | "False" => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cat() -> ToolCatalog {
        ToolCatalog::from_names([
            "files.read",
            "web.search",
            "QuickJS_execute_javascript",
            "Bash",
            "llm_time",
        ])
    }

    fn resolved(c: &ToolCatalog, name: &str) -> Option<(String, Vec<Correction>)> {
        c.resolve(name)
            .map(|(i, f)| (c.entries()[i].spec.name.clone(), f))
    }

    #[test]
    fn names_resolve_with_the_repair_named() {
        let c = cat();
        let cases = [
            ("files.read", "files.read", vec![]),
            (
                " files.read ",
                "files.read",
                vec![Correction::ToolNamePadded],
            ),
            ("Files.Read", "files.read", vec![Correction::ToolNameCase]),
            (
                " Files.Read ",
                "files.read",
                vec![Correction::ToolNamePadded, Correction::ToolNameCase],
            ),
            (
                "files_read",
                "files.read",
                vec![Correction::ToolNameSeparators],
            ),
            (
                "functions.files_read",
                "files.read",
                vec![Correction::ToolNamePrefix],
            ),
            ("functions.bash", "Bash", vec![Correction::ToolNamePrefix]),
            (
                "functions.llm_time",
                "llm_time",
                vec![Correction::ToolNamePrefix],
            ),
            (
                "myserver.web_search",
                "web.search",
                vec![Correction::ToolNamePrefix],
            ),
            (
                "execute_javascript",
                "QuickJS_execute_javascript",
                vec![Correction::ToolNameSuffix],
            ),
            ("bash", "Bash", vec![Correction::ToolNameCase]),
        ];
        for (w, want, fixes) in cases {
            assert_eq!(resolved(&c, w), Some((want.to_owned(), fixes)), "{w}");
        }
    }

    #[test]
    fn names_that_could_be_anything_resolve_to_nothing() {
        let c = cat();
        for w in [
            "seam",
            "search",
            "read",
            "files.write",
            "memory.web",
            "",
            "  ",
            "javascript",
        ] {
            assert_eq!(resolved(&c, w), None, "{w}");
        }
        // two tools ending the same way: no guess
        let two = ToolCatalog::from_names(["a.run_code", "b.run_code"]);
        assert!(two.resolve("run_code").is_none());
    }

    fn seer() -> CatalogEntry {
        CatalogEntry {
            spec: ToolSpec {
                name: "memory.operator".into(),
                version: "1".into(),
                description: String::new(),
                input_schema: json!({
                    "type": "object", "additionalProperties": false, "required": ["op"],
                    "properties": {"op": {"type": "string", "enum": ["search", "get", "list"]},
                                   "query": {"type": "string"}, "id": {"type": "integer"}, "limit": {"type": "integer"}},
                    "allOf": [{"if": {"properties": {"op": {"const": "search"}}}, "then": {"required": ["query"]}},
                              {"if": {"properties": {"op": {"const": "get"}}}, "then": {"required": ["id"]}}]
                }),
            },
            plan_actor: false,
        }
    }

    fn repaired(params: Value, hint: &str) -> (Value, Vec<Correction>) {
        let e = seer();
        let s = Schema::of(&e).unwrap();
        let mut p = params.as_object().unwrap().clone();
        let mut f = Corrections::default();
        s.repair(&mut p, hint, &mut f);
        (Value::Object(p), f.into_vec())
    }

    #[test]
    fn schema_repairs_are_named() {
        assert_eq!(
            repaired(json!({"op": "get", "id": "7"}), ""),
            (
                json!({"op": "get", "id": 7}),
                vec![Correction::ParamTypeCoerced]
            )
        );
        assert_eq!(
            repaired(json!({"op": "list", "query": "", "limit": null}), ""),
            (
                json!({"op": "list"}),
                vec![Correction::EmptyOptionalDropped]
            )
        );
        assert_eq!(
            repaired(json!({"what": "search", "query": "x"}), ""),
            (
                json!({"op": "search", "query": "x"}),
                vec![Correction::ParamRenamedByEnum]
            )
        );
        assert_eq!(
            repaired(json!({"query": "x"}), ""),
            (
                json!({"op": "search", "query": "x"}),
                vec![Correction::ParamInferred]
            )
        );
        assert_eq!(
            repaired(json!({"id": 3}), "notes.get"),
            (
                json!({"op": "get", "id": 3}),
                vec![Correction::ParamInferred]
            )
        );
        assert_eq!(
            repaired(
                json!({"op": "search", "query": "x", "value": 1, "tool": "t"}),
                ""
            ),
            (
                json!({"op": "search", "query": "x", "tool": "t"}),
                vec![Correction::ExtraParamDropped]
            )
        );
        // nothing says which op: left for the gate to refuse
        assert_eq!(
            repaired(json!({"limit": 3}), ""),
            (json!({"limit": 3}), vec![])
        );
    }

    fn bounded() -> CatalogEntry {
        CatalogEntry {
            spec: ToolSpec {
                name: "python.run".into(),
                version: "1".into(),
                description: String::new(),
                input_schema: json!({
                    "type": "object", "additionalProperties": false, "required": ["code", "lines"],
                    "properties": {
                        "code": {"type": "string", "maxLength": 5},
                        "lines": {"type": "integer", "minimum": 1, "maximum": 9},
                        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 20},
                        "limit": {"type": ["integer", "null"], "minimum": 1, "exclusiveMaximum": 10.5},
                        "op": {"enum": ["get", "list"]},
                        "id": {"type": "integer", "minimum": 1},
                        "mode": {"type": "integer", "enum": [1, 2], "maximum": 2},
                        "files": {"type": "array", "maxItems": 2}
                    },
                    "allOf": [{"if": {"properties": {"op": {"const": "get"}}}, "then": {"required": ["id"]}}]
                }),
            },
            plan_actor: false,
        }
    }

    fn clamped(params: Value) -> (Value, Vec<Correction>) {
        let e = bounded();
        let s = Schema::of(&e).unwrap();
        let mut p = params.as_object().unwrap().clone();
        let mut f = Corrections::default();
        s.repair(&mut p, "", &mut f);
        (Value::Object(p), f.into_vec())
    }

    #[test]
    fn a_bounded_optional_number_out_of_range_is_clamped_to_the_bound() {
        let c = vec![Correction::ParamClamped];
        assert_eq!(
            clamped(json!({"code": "1", "lines": 2, "timeout_s": 60})),
            (json!({"code": "1", "lines": 2, "timeout_s": 20}), c.clone())
        );
        // after the type repair: "60" is 60, then 20
        assert_eq!(
            clamped(json!({"code": "1", "lines": 2, "timeout_s": "60"})).0,
            json!({"code": "1", "lines": 2, "timeout_s": 20})
        );
        // an integer's exclusive bound is the next integer inside; a fraction's is rounded in
        assert_eq!(
            clamped(json!({"code": "1", "lines": 2, "limit": 50})),
            (json!({"code": "1", "lines": 2, "limit": 10}), c.clone())
        );
        assert_eq!(
            clamped(json!({"code": "1", "lines": 2, "limit": -3})),
            (json!({"code": "1", "lines": 2, "limit": 1}), c.clone())
        );
        // in range: untouched
        assert_eq!(
            clamped(json!({"code": "1", "lines": 2, "timeout_s": 20, "limit": 1})).1,
            vec![]
        );
    }

    #[test]
    fn what_is_not_clamped() {
        for params in [
            // required: the number is what the call is about
            json!({"code": "1", "lines": 40}),
            // required by the op: `get` with id 0 is not note 1
            json!({"code": "1", "lines": 2, "op": "get", "id": 0}),
            // a number's exclusive bound has no nearest value
            json!({"code": "1", "lines": 2, "timeout_s": 0}),
            json!({"code": "1", "lines": 2, "timeout_s": -1}),
            // an enum is not a range
            json!({"code": "1", "lines": 2, "mode": 7}),
            // lengths and item counts are not clamped
            json!({"code": "123456789", "lines": 2}),
            json!({"code": "1", "lines": 2, "files": [1, 2, 3]}),
        ] {
            let (out, fixes) = clamped(params.clone());
            assert_eq!(out, params);
            assert!(!fixes.contains(&Correction::ParamClamped), "{params}");
        }
        // a missing param is not added
        assert_eq!(
            clamped(json!({"code": "1", "lines": 2})),
            (json!({"code": "1", "lines": 2}), vec![])
        );
    }

    #[test]
    fn the_grammar_sees_no_bound_the_parser_clamps() {
        let e = bounded();
        let g = schema_for_grammar(&e.spec.input_schema);
        let p = &g["properties"];
        assert_eq!(
            p["timeout_s"],
            json!({"type": "number", "exclusiveMinimum": 0})
        );
        assert_eq!(p["limit"], json!({"type": ["integer", "null"]}));
        // what is not clamped keeps its bounds
        for k in ["lines", "id", "mode", "code", "files"] {
            assert_eq!(p[k], e.spec.input_schema["properties"][k], "{k}");
        }
        assert_eq!(g["allOf"], e.spec.input_schema["allOf"]);
        assert_eq!(schema_for_grammar(&Value::Null), Value::Null);
    }

    #[test]
    fn fitting_needs_every_key_declared_and_typed() {
        let c = ToolCatalog::new(vec![seer()]);
        let p = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(c.fitting(&p(json!({"query": "x"}))), vec![0]);
        assert!(c.fitting(&p(json!({"query": 3}))).is_empty());
        assert!(c.fitting(&p(json!({"note": "x"}))).is_empty());
        assert!(c.fitting(&p(json!({"op": "delete"}))).is_empty());
    }
}
