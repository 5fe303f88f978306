//! The shape of each JSON value found: a call, a plan, a reply to the operator, a chat
//! message, an echoed envelope, and the keys models use for a call's name and params.

use serde_json::{Map, Value};

use crate::catalog::ToolCatalog;
use crate::correction::{Correction, Corrections};
use crate::json::{self, Fuel};

use super::text::extract;
use super::{Item, RawCall, RawParams};

pub(super) const PARAM_KEYS: &[&str] = &[
    "params",
    "arguments",
    "parameters",
    "args",
    "input",
    "inputs",
    "action_input",
    "kwargs",
    "tool_input",
    "tool_args",
    "function_args",
    "function_arguments",
];

/// Keys that always hold a tool's name.
const NAME_KEYS: &[&str] = &[
    "tool",
    "tool_name",
    "recipient_name",
    "function_name",
    "actor",
];
/// Keys that hold a tool's name only beside a params key (else `name` is just data).
const WEAK_NAME_KEYS: &[&str] = &["name", "function", "action"];

pub(super) fn interpret(
    v: Value,
    catalog: &ToolCatalog,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
    items: &mut Vec<Item>,
    depth: usize,
) {
    if depth > 4 {
        return;
    }
    match v {
        Value::Array(a) => {
            for x in a {
                if x.is_object() || x.is_string() {
                    interpret(x, catalog, fuel, fixes, items, depth + 1);
                }
            }
        }
        Value::String(s) => {
            if let Some(inner) = json_in_string(&s, fuel, fixes) {
                fixes.add(Correction::JsonInString);
                interpret(inner, catalog, fuel, fixes, items, depth + 1);
            }
        }
        Value::Object(o) => interpret_object(o, catalog, fuel, fixes, items, depth),
        _ => {}
    }
}

fn json_in_string(s: &str, fuel: &mut Fuel, fixes: &mut Corrections) -> Option<Value> {
    let t = s.trim();
    if !(t.starts_with('{') || t.starts_with('[') || t.starts_with("\"{")) {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Value>(t)
        && !v.is_string()
    {
        return Some(v);
    }
    // Encoded twice: `"\"{\\\"city\\\": …}\""`.
    if t.starts_with('"')
        && let Ok(inner) = serde_json::from_str::<String>(t)
    {
        let i = inner.trim();
        if i.starts_with('{') || i.starts_with('[') {
            return serde_json::from_str::<Value>(i).ok();
        }
    }
    let r = json::read_value(t, 0, fuel).ok()?;
    fixes.extend(&r.repairs);
    Some(r.value)
}

fn interpret_object(
    mut o: Map<String, Value>,
    catalog: &ToolCatalog,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
    items: &mut Vec<Item>,
    depth: usize,
) {
    if let Some(assistant) = chat_message_role(&o) {
        fixes.add(Correction::ChatMessages);
        if assistant {
            read_chat_message(o, catalog, fuel, fixes, items, depth);
        }
        return;
    }
    restyle_call_keys(&mut o, fixes);
    let mode = o
        .get("mode")
        .and_then(Value::as_str)
        .map(|m| m.trim().to_owned());
    if let Some(mode) = mode {
        o.remove("mode");
        let lower = mode.to_ascii_lowercase();
        match lower.as_str() {
            "action" | "call" | "tool" | "tool_call" | "function" | "function_call" | "act" => {
                if lower != "action" {
                    fixes.add(Correction::UnknownMode);
                }
                match call_from(o, catalog, fuel, fixes) {
                    Some(c) => items.push(Item::Call(c)),
                    None => items.push(Item::NotAction("an action without a tool".into())),
                }
            }
            "plan" | "steps" => {
                if lower != "plan" {
                    fixes.add(Correction::UnknownMode);
                }
                plan_from(o, catalog, fuel, fixes, items);
            }
            "respond" | "response" | "answer" | "final" | "final_answer" | "reply" | "message"
            | "text" | "say" => {
                if lower != "respond" {
                    fixes.add(Correction::UnknownMode);
                }
                push_answer(&o, catalog, fuel, fixes, items, depth);
            }
            _ if catalog.resolve(&mode).is_some() => {
                fixes.add(Correction::ToolNameAsMode);
                let params = match take_params(&mut o, fuel, fixes) {
                    Some(p) => p,
                    None => flatten(o, fixes),
                };
                items.push(Item::Call(RawCall {
                    name: Some(mode),
                    name_from_mode: true,
                    params,
                    xml_text: vec![],
                }));
            }
            _ => {
                if has_name(&o) {
                    fixes.add(Correction::UnknownMode);
                    if let Some(c) = call_from(o, catalog, fuel, fixes) {
                        items.push(Item::Call(c));
                    }
                } else if o.contains_key("steps") {
                    fixes.add(Correction::UnknownMode);
                    plan_from(o, catalog, fuel, fixes, items);
                } else if o.contains_key("text") {
                    fixes.add(Correction::UnknownMode);
                    push_answer(&o, catalog, fuel, fixes, items, depth);
                } else {
                    items.push(Item::NotAction(format!(
                        "mode {mode:?} is none of action, plan, respond, and names no tool"
                    )));
                }
            }
        }
        return;
    }
    // No mode.
    if let Some(Value::Array(calls)) = o.remove("tool_calls") {
        fixes.add(Correction::OpenAiCallShape);
        for c in calls {
            interpret(c, catalog, fuel, fixes, items, depth + 1);
        }
        return;
    }
    // `{"function_call": {"name":…, "arguments":…}}`, `{"action": {"tool":…}}`
    if let Some(inner) = WRAPPER_KEYS.iter().find_map(|k| match o.get(*k) {
        Some(Value::Object(w)) if has_name(w) || w.get("name").is_some_and(Value::is_string) => {
            Some(w.clone())
        }
        _ => None,
    }) {
        fixes.add(Correction::OpenAiCallShape);
        interpret_object(inner, catalog, fuel, fixes, items, depth + 1);
        return;
    }
    if let Some(Value::Object(f)) = o.get("function")
        && f.contains_key("name")
    {
        let f = f.clone();
        fixes.add(Correction::OpenAiCallShape);
        interpret_object(f, catalog, fuel, fixes, items, depth + 1);
        return;
    }
    if let Some(tool) = echoed_envelope(&o) {
        items.push(Item::Echo(tool));
        return;
    }
    if has_name(&o) || has_weak_name(&o, catalog) {
        let grammar = o.contains_key("tool") || o.contains_key("actor");
        fixes.add(if grammar {
            Correction::MissingMode
        } else {
            Correction::OpenAiCallShape
        });
        if let Some(c) = call_from(o, catalog, fuel, fixes) {
            items.push(Item::Call(c));
        }
        return;
    }
    if o.contains_key("steps") {
        fixes.add(Correction::MissingMode);
        plan_from(o, catalog, fuel, fixes, items);
        return;
    }
    // A bare payload: the params with no name.
    items.push(Item::Call(RawCall {
        name: None,
        name_from_mode: false,
        params: RawParams::Object(o),
        xml_text: vec![],
    }));
}

/// The keys of a chat message (OpenAI's, and what the servers add).
const CHAT_MESSAGE_KEYS: &[&str] = &[
    "role",
    "content",
    "tool_calls",
    "function_call",
    "name",
    "tool_call_id",
    "refusal",
    "reasoning_content",
    "reasoning",
    "audio",
    "annotations",
];

/// Whether the object is a chat message (a `role` the chat formats define and
/// no key a message lacks): `Some(true)` for the assistant's (or the model's) own.
fn chat_message_role(o: &Map<String, Value>) -> Option<bool> {
    let role = o.get("role")?.as_str()?;
    let known = matches!(
        role,
        "assistant" | "model" | "user" | "system" | "developer" | "tool" | "function" | "ipython"
    );
    let shaped = o.keys().all(|k| CHAT_MESSAGE_KEYS.contains(&k.as_str()))
        && (o.contains_key("content") || o.contains_key("tool_calls"));
    (known && shaped).then_some(matches!(role, "assistant" | "model"))
}

/// The calls of an assistant's chat message: its `tool_calls` (or
/// `function_call`), then what its `content` holds, read as a reply is (a
/// string, or the text parts of a list).
fn read_chat_message(
    mut o: Map<String, Value>,
    catalog: &ToolCatalog,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
    items: &mut Vec<Item>,
    depth: usize,
) {
    if let Some(Value::Array(calls)) = o.remove("tool_calls") {
        for c in calls {
            interpret(c, catalog, fuel, fixes, items, depth + 1);
        }
    }
    if let Some(Value::Object(f)) = o.remove("function_call") {
        interpret_object(f, catalog, fuel, fixes, items, depth + 1);
    }
    let texts: Vec<String> = match o.remove("content") {
        Some(Value::String(s)) => vec![s],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_owned))
            .collect(),
        _ => vec![],
    };
    for t in texts {
        let mut damaged = false;
        // Read as a reply is, at the last text level (a JSON string in it is
        // not opened again); each nested content is shorter than the text
        // around it, and the reply's fuel bounds the whole.
        items.extend(extract(&t, catalog, fuel, fixes, &mut damaged, 2));
    }
}

/// Keys whose object value is the whole call.
const WRAPPER_KEYS: &[&str] = &[
    "function_call",
    "tool_call",
    "tool_use",
    "call",
    "invoke",
    "action",
    "tool",
];

/// The call's own keys that a model may write in another case or style
/// (`Tool`, `toolName`, `Params`). `name`, `input` and `text` are left alone:
/// in a bare payload they are data.
const RESTYLED_KEYS: &[&str] = &[
    "mode",
    "tool",
    "tool_name",
    "function_name",
    "actor",
    "params",
    "arguments",
    "parameters",
    "action_input",
    "tool_input",
    "tool_args",
    "function_args",
    "function_arguments",
    "steps",
    "tool_calls",
];

/// Renames keys like `Tool`, `toolName`, `PARAMS` to the call's own keys,
/// when the object then reads as a call (it has a mode or a tool's name).
fn restyle_call_keys(o: &mut Map<String, Value>, fixes: &mut Corrections) {
    if o.len() > 16
        || o.keys()
            .all(|k| !k.bytes().any(|b| b.is_ascii_uppercase() || b == b'-'))
    {
        return;
    }
    let renames: Vec<(String, &str)> = o
        .keys()
        .filter(|k| !RESTYLED_KEYS.contains(&k.as_str()))
        .filter_map(|k| {
            let w = crate::catalog::normalize_camel(k).replace('.', "_");
            RESTYLED_KEYS
                .iter()
                .find(|r| **r == w)
                .map(|r| (k.clone(), *r))
        })
        .filter(|(_, r)| !o.contains_key(*r))
        .collect();
    if renames.is_empty() {
        return;
    }
    let mut renamed = o.clone();
    for (from, to) in &renames {
        if let Some(v) = renamed.remove(from) {
            renamed.insert((*to).to_owned(), v);
        }
    }
    let reads_as_call = renamed.contains_key("mode")
        || renamed.contains_key("steps")
        || renamed.contains_key("tool_calls")
        || has_name(&renamed);
    if reads_as_call {
        *o = renamed;
        fixes.add(Correction::CallKeyCase);
    }
}

fn has_name(o: &Map<String, Value>) -> bool {
    NAME_KEYS
        .iter()
        .any(|k| o.get(*k).is_some_and(Value::is_string))
}

fn has_weak_name(o: &Map<String, Value>, catalog: &ToolCatalog) -> bool {
    WEAK_NAME_KEYS.iter().any(|k| {
        o.get(*k).and_then(Value::as_str).is_some_and(|n| {
            PARAM_KEYS.iter().any(|p| o.contains_key(*p)) || catalog.resolve(n).is_some()
        })
    })
}

/// Keys of a tool result envelope (or refusal) that a model copied back.
pub(super) fn looks_like_envelope(o: &Map<String, Value>) -> bool {
    o.contains_key("invocation_id")
        || o.contains_key("invoke_id")
        || o.contains_key("refused")
        || (o.contains_key("output")
            && (o.contains_key("tainted")
                || o.contains_key("scrubbed")
                || o.contains_key("version")))
}

fn echoed_envelope(o: &Map<String, Value>) -> Option<String> {
    looks_like_envelope(o).then(|| {
        o.get("tool")
            .and_then(Value::as_str)
            .unwrap_or("a tool")
            .to_owned()
    })
}

fn take_params(
    o: &mut Map<String, Value>,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
) -> Option<RawParams> {
    let key = match PARAM_KEYS.iter().find(|k| o.contains_key(**k)) {
        Some(k) => (*k).to_owned(),
        // `tool_arguments`, `functionParams`: a key that ends like one.
        None => {
            let like: Vec<&String> = o
                .keys()
                .filter(|k| {
                    let n = crate::catalog::normalize_camel(k);
                    let last = n.rsplit('.').next().unwrap_or("");
                    n.contains('.')
                        && matches!(
                            last,
                            "args" | "arguments" | "params" | "parameters" | "input" | "inputs"
                        )
                })
                .collect();
            match like.as_slice() {
                [only] if o[only.as_str()].is_object() || o[only.as_str()].is_string() => {
                    (*only).clone()
                }
                _ => return None,
            }
        }
    };
    let v = o.remove(&key)?;
    Some(match v {
        Value::Object(m) => RawParams::Object(m),
        Value::Null => RawParams::Object(Map::new()),
        Value::Array(a) => match list_to_object(&a) {
            Some(m) => {
                fixes.add(Correction::ParamsAsList);
                RawParams::Object(m)
            }
            None => RawParams::Text(Value::Array(a).to_string()),
        },
        Value::String(s) => match json_in_string(&s, fuel, fixes) {
            Some(Value::Object(m)) => {
                fixes.add(Correction::ArgumentsAsString);
                RawParams::Object(m)
            }
            _ if s.trim().is_empty() => RawParams::Object(Map::new()),
            _ => RawParams::Text(s),
        },
        other => RawParams::Text(other.to_string()),
    })
}

/// `[{"name":"path","value":"a"}, …]` or `[{"path":"a"}, {"limit":3}]` as one object.
fn list_to_object(a: &[Value]) -> Option<Map<String, Value>> {
    if a.is_empty() || a.len() > 64 {
        return None;
    }
    let mut out = Map::new();
    for x in a {
        let o = x.as_object()?;
        let name = ["name", "key", "param", "parameter", "param_name"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str));
        let value = ["value", "val", "param_value", "argument"]
            .iter()
            .find_map(|k| o.get(*k));
        let (k, v) = match (name, value) {
            (Some(k), Some(v)) if o.len() <= 3 => (k.to_owned(), v.clone()),
            _ if o.len() == 1 => {
                let (k, v) = o.iter().next()?;
                (k.clone(), v.clone())
            }
            _ => return None,
        };
        if out.contains_key(&k) {
            return None;
        }
        out.insert(k, v);
    }
    Some(out)
}

fn flatten(mut o: Map<String, Value>, fixes: &mut Corrections) -> RawParams {
    if o.get("type").and_then(Value::as_str) == Some("function") {
        o.remove("type");
    }
    if !o.is_empty() {
        fixes.add(Correction::FlattenedParams);
    }
    RawParams::Object(o)
}

fn call_from(
    mut o: Map<String, Value>,
    catalog: &ToolCatalog,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
) -> Option<RawCall> {
    let named: Vec<&str> = NAME_KEYS
        .iter()
        .chain(WEAK_NAME_KEYS)
        .copied()
        .filter(|k| o.get(*k).is_some_and(Value::is_string))
        .collect();
    let first = *named.first()?;
    let resolves = |k: &str| {
        o.get(k)
            .and_then(Value::as_str)
            .is_some_and(|n| catalog.resolve(n).is_some())
    };
    // `{"actor":"seam","action":"files.read",…}`: the key whose name is a tool.
    let key = if resolves(first) {
        first
    } else {
        match named.iter().copied().find(|k| resolves(k)) {
            Some(k) => {
                o.remove(first);
                fixes.add(Correction::ToolInParams);
                k
            }
            None => first,
        }
    };
    let name = o.remove(key)?.as_str().unwrap_or_default().to_owned();
    let params = match take_params(&mut o, fuel, fixes) {
        Some(p) => p,
        None => flatten(o, fixes),
    };
    Some(RawCall {
        name: Some(name),
        name_from_mode: false,
        params,
        xml_text: vec![],
    })
}

fn plan_from(
    mut o: Map<String, Value>,
    catalog: &ToolCatalog,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
    items: &mut Vec<Item>,
) {
    let steps = match o.remove("steps") {
        Some(Value::Array(a)) => a,
        Some(Value::String(s)) => match json_in_string(&s, fuel, fixes) {
            Some(Value::Array(a)) => a,
            _ => vec![],
        },
        Some(Value::Object(one)) => vec![Value::Object(one)],
        _ if has_name(&o) => vec![Value::Object(o)],
        _ => vec![],
    };
    let mut calls = Vec::new();
    let mut answers = Vec::new();
    for s in steps {
        let Value::Object(mut step) = s else { continue };
        restyle_call_keys(&mut step, fixes);
        // A step written as a final answer: `{"mode":"respond","text":…}`,
        // `{"actor":"respond","params":{"text":…}}`.
        if let Some(text) = respond_step(&step) {
            answers.push(text);
            continue;
        }
        let call = match call_from(step.clone(), catalog, fuel, fixes) {
            Some(c) => c,
            None => {
                let mut step = step;
                let params = take_params(&mut step, fuel, fixes).unwrap_or(RawParams::Object(step));
                RawCall {
                    name: None,
                    name_from_mode: false,
                    params,
                    xml_text: vec![],
                }
            }
        };
        calls.push(call);
    }
    // Placeholder steps beside real ones (all placeholders: kept, and refused by name).
    if calls.iter().any(|c| !is_placeholder_step(c)) {
        let before = calls.len();
        calls.retain(|c| !is_placeholder_step(c));
        if calls.len() < before {
            fixes.add(Correction::EmptyStepDropped);
        }
    }
    if calls.is_empty() && !answers.is_empty() {
        fixes.add(Correction::AnswerInPlan);
    }
    items.extend(answers.into_iter().map(Item::Respond));
    if calls.is_empty() {
        if !items.iter().any(|i| matches!(i, Item::Respond(_))) {
            items.push(Item::NotAction("a plan with no steps".into()));
        }
    } else {
        items.push(Item::Plan(calls));
    }
}

/// A plan step with no tool and no params, or the prompt's own placeholder.
pub(super) fn is_placeholder_step(c: &RawCall) -> bool {
    let name = c
        .name
        .as_deref()
        .map(crate::catalog::normalize)
        .unwrap_or_default();
    let placeholder_name = matches!(
        name.as_str(),
        "" | "name" | "tool" | "actor" | "tool.name" | "actor.name" | "function" | "function.name"
    );
    let empty_params = match &c.params {
        RawParams::Object(m) => {
            m.is_empty()
                || m.iter().all(|(k, v)| {
                    let dots = |t: &str| t.trim().trim_matches(['.', '\u{2026}']).is_empty();
                    dots(k) && (v.is_null() || v.as_str().is_some_and(dots))
                })
        }
        RawParams::Text(t) => t
            .trim_matches(|c: char| c == '.' || c.is_whitespace())
            .is_empty(),
    };
    placeholder_name && empty_params
}

/// The text of a plan step that is a final answer, not a call.
fn respond_step(step: &Map<String, Value>) -> Option<String> {
    let mode = step.get("mode").and_then(Value::as_str).map(str::trim);
    let actor = NAME_KEYS
        .iter()
        .chain(WEAK_NAME_KEYS)
        .find_map(|k| step.get(*k).and_then(Value::as_str))
        .map(crate::catalog::normalize);
    let answer_word = |w: &str| {
        matches!(
            w,
            "respond" | "response" | "answer" | "final.answer" | "reply" | "final"
        )
    };
    let is_answer = mode.is_some_and(|m| answer_word(&m.to_ascii_lowercase()))
        || actor.as_deref().is_some_and(answer_word);
    if !is_answer {
        return None;
    }
    let holder = PARAM_KEYS
        .iter()
        .find_map(|k| step.get(*k).and_then(Value::as_object))
        .unwrap_or(step);
    ["text", "response", "answer", "content", "message"]
        .iter()
        .find_map(|k| holder.get(*k).and_then(Value::as_str))
        .filter(|t| !t.trim().is_empty())
        .map(str::to_owned)
}

/// A reply's answer, or, when its text is one call or plan written whole as
/// JSON, that call ([`Correction::ActionInAnswer`]).
fn push_answer(
    o: &Map<String, Value>,
    catalog: &ToolCatalog,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
    items: &mut Vec<Item>,
    depth: usize,
) {
    let item = respond_from(o);
    if let Item::Respond(text) = &item
        && let Some((found, inner)) = action_in_answer(text, catalog, fuel, depth)
    {
        fixes.add(Correction::ActionInAnswer);
        fixes.extend(&inner);
        items.extend(found);
        return;
    }
    items.push(item);
}

/// The call or plan an answer's text is, whole: an object (nothing around
/// it) that says it is one, by a `mode` of `action` or `plan`, or by a tool
/// of the catalog under a key that always names one (`tool`, `actor`, …).
/// JSON that is data (`{"os":"Debian",…}`) stays the answer, and so does a
/// call written inside prose: the model may be showing it to the operator.
fn action_in_answer(
    text: &str,
    catalog: &ToolCatalog,
    fuel: &mut Fuel,
    depth: usize,
) -> Option<(Vec<Item>, Corrections)> {
    let t = text.trim();
    if depth > 3 || !t.starts_with('{') || !t.ends_with('}') {
        return None;
    }
    let mut inner = Corrections::default();
    let Value::Object(o) = json_in_string(t, fuel, &mut inner)? else {
        return None;
    };
    let says_action = o
        .get("mode")
        .and_then(Value::as_str)
        .is_some_and(|m| matches!(m.trim().to_ascii_lowercase().as_str(), "action" | "plan"))
        || NAME_KEYS.iter().any(|k| {
            o.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|n| catalog.resolve(n).is_some())
        });
    if !says_action {
        return None;
    }
    let mut found = Vec::new();
    interpret_object(o, catalog, fuel, &mut inner, &mut found, depth + 1);
    found
        .iter()
        .any(|i| matches!(i, Item::Call(_) | Item::Plan(_)))
        .then_some((found, inner))
}

fn respond_from(o: &Map<String, Value>) -> Item {
    for k in ["text", "response", "answer", "content", "message"] {
        match o.get(k) {
            Some(Value::String(s)) => return Item::Respond(s.clone()),
            Some(Value::Null) | None => {}
            Some(other) => return Item::Respond(other.to_string()),
        }
    }
    Item::NotAction("a respond with no text".into())
}
