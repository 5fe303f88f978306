//! From raw model text to one action: the text-level steps (think blocks,
//! fences, tags, Qwen's XML dialect, labelled calls, JSON objects in prose),
//! then the shape of each object found, then names and params.

use seam_protocol::{Action, PlanStep};
use serde::{Deserialize, Serialize};

use serde_json::{Map, Value};

use crate::catalog::{Schema, ToolCatalog};
use crate::correction::{Correction, Corrections};
use crate::json::{self, Fuel, JsonError};

/// Largest reply parsed, in bytes. A reply this long is a runaway, not an action.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// What [`parse`] recovered: the canonical action and every repair made to reach it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parsed {
    pub action: Action,
    pub corrections: Vec<Correction>,
}

/// Why no action could be recovered from a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ParseFailure {
    pub reason: FailureReason,
}

/// The kinds of [`ParseFailure`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FailureReason {
    #[error("the reply is {len} bytes; at most {max} are parsed")]
    TooLong { len: usize, max: usize },
    #[error("the reply is empty")]
    Empty,
    #[error("no JSON object or tool call found in {len} bytes of prose")]
    NoAction { len: usize },
    #[error("the reply echoes a tool result envelope ({tool}) instead of acting")]
    EchoedEnvelope { tool: String },
    #[error("JSON found, but not an action: {what}")]
    NotAnAction { what: String },
    #[error(
        "the reply's JSON is too damaged or too deeply nested to read (at most {max_depth} levels)"
    )]
    Unreadable { max_depth: usize },
}

impl From<FailureReason> for ParseFailure {
    fn from(reason: FailureReason) -> Self {
        ParseFailure { reason }
    }
}

/// A call as written, before its name is resolved.
#[derive(Debug, Clone, PartialEq)]
struct RawCall {
    /// The name as written; `None` when the reply named no tool.
    name: Option<String>,
    /// The name came from `mode` (`{"mode":"queue",…}`): never a basis for inference.
    name_from_mode: bool,
    params: RawParams,
    /// For Qwen's XML dialect: each param's text as written, used when the
    /// schema says the param is a string.
    xml_text: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
enum RawParams {
    Object(Map<String, Value>),
    /// A string that is not JSON: fits a tool with exactly one param.
    Text(String),
}

#[derive(Debug)]
enum Item {
    Call(RawCall),
    Plan(Vec<RawCall>),
    Respond(String),
    Echo(String),
    NotAction(String),
}

/// Turns raw model text into one canonical [`Action`], naming every repair.
/// Never panics; input over [`MAX_REPLY_BYTES`] is refused.
pub fn parse(raw: &str, catalog: &ToolCatalog) -> Result<Parsed, ParseFailure> {
    if raw.len() > MAX_REPLY_BYTES {
        return Err(FailureReason::TooLong {
            len: raw.len(),
            max: MAX_REPLY_BYTES,
        }
        .into());
    }
    if raw.trim().is_empty() {
        return Err(FailureReason::Empty.into());
    }
    let mut fixes = Corrections::default();
    let mut fuel = Fuel::for_len(raw.len());
    let mut damaged = false;
    // A reply that is strict JSON throughout has no think block: a `</think>`
    // inside its strings is text.
    let strict = raw.trim_start().starts_with(['{', '['])
        && serde_json::from_str::<serde::de::IgnoredAny>(raw).is_ok();
    let (main, think) = if strict {
        (raw.to_owned(), None)
    } else {
        split_think(raw, &mut fixes)
    };
    let mut items = extract(&main, catalog, &mut fuel, &mut fixes, &mut damaged, 0);
    if !items
        .iter()
        .any(|i| matches!(i, Item::Call(_) | Item::Plan(_) | Item::Respond(_)))
        && let Some(think) = think
    {
        let mut inner = Corrections::default();
        let found = extract(&think, catalog, &mut fuel, &mut inner, &mut damaged, 0);
        if found
            .iter()
            .any(|i| matches!(i, Item::Call(_) | Item::Plan(_)))
        {
            fixes.add(Correction::CallInThink);
            fixes.extend(&inner);
            items = found;
        }
    }
    let action = assemble(items, catalog, &mut fixes).map_err(|reason| {
        if let FailureReason::NoAction { .. } = reason {
            if damaged {
                return FailureReason::Unreadable {
                    max_depth: json::MAX_DEPTH,
                };
            }
            return FailureReason::NoAction { len: raw.len() };
        }
        reason
    })?;
    Ok(Parsed {
        action,
        corrections: fixes.into_vec(),
    })
}

// ---------------------------------------------------------------- think blocks

/// Sets think blocks aside: returns the text outside them and the text inside.
fn split_think(raw: &str, fixes: &mut Corrections) -> (String, Option<String>) {
    const OPEN: [&str; 3] = ["<think>", "<thinking>", "<reasoning>"];
    const CLOSE: [&str; 3] = ["</think>", "</thinking>", "</reasoning>"];
    let mut main = String::new();
    let mut think = String::new();
    let mut rest = raw;
    // `…</think>` with no opener: the template opened it in the prompt.
    let first_open = OPEN.iter().filter_map(|o| rest.find(o)).min();
    let first_close = CLOSE
        .iter()
        .filter_map(|c| rest.find(c).map(|p| (p, c.len())))
        .min();
    if let Some((p, n)) = first_close
        && first_open.is_none_or(|o| o > p)
    {
        think.push_str(&rest[..p]);
        rest = &rest[p + n..];
        fixes.add(Correction::ThinkBlock);
    }
    loop {
        let open = OPEN
            .iter()
            .filter_map(|o| rest.find(o).map(|p| (p, o.len())))
            .min();
        let Some((p, n)) = open else {
            main.push_str(rest);
            break;
        };
        main.push_str(&rest[..p]);
        let after = &rest[p + n..];
        fixes.add(Correction::ThinkBlock);
        let close = CLOSE
            .iter()
            .filter_map(|c| after.find(c).map(|q| (q, c.len())))
            .min();
        match close {
            Some((q, m)) => {
                think.push_str(&after[..q]);
                think.push('\n');
                rest = &after[q + m..];
            }
            None => {
                fixes.add(Correction::UnclosedThink);
                think.push_str(after);
                break;
            }
        }
    }
    let think = (!think.trim().is_empty()).then_some(think);
    (main, think)
}

// ---------------------------------------------------------------- text level

const WRAPPER_TAGS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function_call>",
    "</function_call>",
    "<tools>",
    "</tools>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
];

fn extract(
    text: &str,
    catalog: &ToolCatalog,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
    damaged: &mut bool,
    depth: usize,
) -> Vec<Item> {
    let mut items = Vec::new();
    if text.trim().is_empty() || depth > 2 {
        return items;
    }
    // A reply that is strict JSON throughout is read as JSON: the dialects
    // below must not find their markers inside its strings.
    let trimmed = text.trim();
    if trimmed.starts_with(['{', '['])
        && let Ok(v) = serde_json::from_str::<Value>(trimmed)
    {
        interpret(v, catalog, fuel, fixes, &mut items, 0);
        return items;
    }
    if WRAPPER_TAGS.iter().any(|t| text.contains(t)) {
        fixes.add(Correction::ToolCallTags);
    }
    let opened = if text.contains("<parameter=") && !text.contains("<function=") {
        parameter_openers(text, catalog)
    } else {
        None
    };
    let xml = if let Some(rewritten) = &opened {
        fixes.add(Correction::XmlParameterAsFunction);
        xml_calls(rewritten)
    } else if text.contains("<function=") {
        xml_calls(text)
    } else if text.contains("<invoke") {
        invoke_calls(text)
    } else if text.contains("<arg_key>") {
        arg_key_calls(text)
    } else {
        vec![]
    };
    if !xml.is_empty() {
        fixes.add(Correction::XmlFunctionCall);
        items.extend(xml.into_iter().map(Item::Call));
        return items;
    }
    if let Some(call) = labelled_call(text, fuel, fixes) {
        fixes.add(Correction::LabelledCall);
        items.push(Item::Call(call));
        return items;
    }
    // The whole reply one JSON string holding JSON: `"{\n \"n\": 2\n}"`.
    if trimmed.starts_with('"')
        && trimmed.ends_with('"')
        && trimmed.len() >= 2
        && let Ok(inner) = serde_json::from_str::<String>(trimmed)
    {
        let t = inner.trim_start();
        if t.starts_with('{') || t.starts_with('[') {
            let mut inner_fixes = Corrections::default();
            let found = extract(&inner, catalog, fuel, &mut inner_fixes, damaged, depth + 1);
            if !found.is_empty() {
                fixes.add(Correction::JsonInString);
                fixes.extend(&inner_fixes);
                return found;
            }
        }
    }
    let body = strip_outer_fences(trimmed, fixes);
    let mut spans = scan(body, fuel, damaged);
    if let Some(per_block) = scan_fenced_blocks(body, &spans, fuel, damaged) {
        fixes.add(Correction::SeveralFencedBlocks);
        spans = per_block;
    }
    let mut scanned = body.to_owned();
    if spans.is_empty() && (body.contains("\"\"") || body.contains("''")) {
        // `{""key"":""v""}`: quotes doubled as CSV escapes them.
        let undoubled = body.replace("\"\"", "\"").replace("''", "'");
        let again = scan(&undoubled, fuel, damaged);
        if !again.is_empty() {
            fixes.add(Correction::DoubledQuotes);
            spans = again;
            scanned = undoubled;
        }
    }
    if spans.is_empty() {
        let calls = python_calls(body, catalog, fuel);
        if !calls.is_empty() {
            fixes.add(Correction::PythonCall);
            items.extend(calls.into_iter().map(Item::Call));
            return items;
        }
        if let Some(call) = name_then_command(trimmed, catalog) {
            fixes.add(Correction::NameThenCommand);
            items.push(Item::Call(call));
            return items;
        }
        if let Some(call) = bare_tool_name(trimmed, catalog, fixes) {
            items.push(Item::Call(call));
        }
        return items;
    }
    note_leftovers(&scanned, &spans, fixes);
    let mut prev_end = 0;
    for span in spans {
        let gap = &scanned[prev_end.min(span.start)..span.start];
        prev_end = span.end;
        fixes.extend(&span.repairs);
        let before = scanned[..span.start].trim_end();
        if before.ends_with('{') {
            fixes.add(Correction::DoubledBraces);
        }
        // `NAME({…})`
        let call_name = before.strip_suffix('(').and_then(|b| {
            let name: String = b
                .chars()
                .rev()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            catalog.resolve(&name).map(|_| name)
        });
        if let (Some(name), Value::Object(params)) = (&call_name, &span.value) {
            fixes.add(Correction::CallSyntax);
            items.push(Item::Call(RawCall {
                name: Some(name.clone()),
                name_from_mode: false,
                params: RawParams::Object(params.clone()),
                xml_text: vec![],
            }));
            continue;
        }
        let mut found = Vec::new();
        interpret(span.value, catalog, fuel, fixes, &mut found, 0);
        // A bare payload right after a tool's name: `get_weather\n{…}`,
        // `[TOOL_CALLS]get_weather[ARGS]{…}`, `to=functions.get_weather … {…}`.
        if let [Item::Call(c)] = found.as_mut_slice()
            && c.name.is_none()
            && let Some(name) = name_before(gap, catalog)
        {
            c.name = Some(name);
            fixes.add(Correction::NameBeforeArguments);
        }
        items.extend(found);
    }
    items
}

/// The tool named in the text just before a bare JSON payload: its last word
/// (special tokens `<|…|>`, `[ARGS]`, tags, fences, `json` and indexes set
/// aside), or the last word of the line before a label (`Action Input:`). A
/// word inside a sentence is not a name.
fn name_before(gap: &str, catalog: &ToolCatalog) -> Option<String> {
    let mut start = gap.len().saturating_sub(400);
    while !gap.is_char_boundary(start) {
        start += 1;
    }
    let tail = &gap[start..];
    // Special tokens and tags become spaces.
    let mut plain = String::with_capacity(tail.len());
    let mut rest = tail;
    while let Some(c) = rest.chars().next() {
        let close = match c {
            '<' => rest.find('>').filter(|&e| e <= 64).map(|e| e + 1),
            '[' => rest.find(']').filter(|&e| {
                e <= 32
                    && rest[1..e]
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b == b'_')
            }),
            _ => None,
        }
        .map(|e| if c == '[' { e + 1 } else { e });
        match close {
            Some(n) => {
                plain.push(' ');
                rest = &rest[n..];
            }
            None => {
                plain.push(if c == '`' { ' ' } else { c });
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    // The last word of a line, past `json` and numbers (`functions.get_weather:0`).
    let last_word = |line: &str| -> Option<String> {
        line.split(|c: char| c.is_whitespace() || matches!(c, ':' | '=' | '(' | ',' | '"' | '\''))
            .filter(|w| !w.is_empty())
            .rev()
            .find(|w| !w.eq_ignore_ascii_case("json") && !w.bytes().all(|b| b.is_ascii_digit()))
            .map(str::to_owned)
    };
    let lines: Vec<&str> = plain.lines().filter(|l| last_word(l).is_some()).collect();
    let resolves = |w: &String| w.len() <= 200 && catalog.resolve(w).is_some();
    let last = lines.last()?;
    if let Some(w) = last_word(last).filter(resolves) {
        return Some(w);
    }
    // `Action: get_weather` / `Action Input: {…}`: a label, the name on the line before.
    let label = last.trim_end().ends_with(':') && last.split_whitespace().count() <= 3;
    if label && lines.len() >= 2 {
        return last_word(lines[lines.len() - 2]).filter(resolves);
    }
    None
}

/// Several fenced blocks, when a loosely read object ran on from one block
/// into the next (a cut-off object swallowing the fence and what follows):
/// each block scanned on its own. Taken only when that finds more objects
/// with members than the scan of the whole did; an object that holds a fence
/// in a string it was meant to hold is left as read.
fn scan_fenced_blocks(
    body: &str,
    spans: &[Span],
    fuel: &mut Fuel,
    damaged: &mut bool,
) -> Option<Vec<Span>> {
    let crossed = spans
        .iter()
        .any(|sp| sp.repairs != Corrections::default() && body[sp.start..sp.end].contains("```"));
    if !crossed {
        return None;
    }
    // The blocks: what lies between fence markers (```, with a language word after an opener).
    let mut blocks = Vec::new();
    let mut start = 0;
    let mut rest = body;
    while let Some(p) = rest[..].find("```") {
        let abs = body.len() - rest.len() + p;
        blocks.push((start, abs));
        let after = &body[abs + 3..];
        let word = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(after.len());
        start = abs + 3 + word;
        rest = &body[start..];
    }
    blocks.push((start, body.len()));
    let members = |spans: &[Span]| {
        spans
            .iter()
            .filter(|sp| match &sp.value {
                Value::Object(o) => !o.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => false,
            })
            .count()
    };
    let mut per_block = Vec::new();
    for (a, b) in blocks {
        // a block's last newline is the fence's, not a cut-off string's
        let b = a + body[a..b].trim_end().len();
        for mut sp in scan(&body[a..b], fuel, damaged) {
            sp.start += a;
            sp.end += a;
            per_block.push(sp);
        }
    }
    (members(&per_block) >= 2 && members(&per_block) > members(spans)).then_some(per_block)
}

/// The tool's name alone on the first line and its whole command on the next
/// (or in one fenced block after it), nothing else: `bash` / `ls -la`. The
/// command is the tool's one string param (the one required string param, or
/// its only string param); a tool whose schema is not known gets `command`,
/// the key every shell tool's format uses (OpenAI's `shell`, Anthropic's
/// `bash`). A tool with no such param is no fit: nothing is made up for it.
fn name_then_command(t: &str, catalog: &ToolCatalog) -> Option<RawCall> {
    let (first, rest) = t.split_once('\n')?;
    let name = first.trim();
    if name.is_empty() || name.len() > 200 || name.contains(char::is_whitespace) {
        return None;
    }
    let (i, _) = catalog.resolve(name)?;
    let mut command = rest.trim();
    if let Some(inner) = command.strip_prefix("```") {
        let (_, body) = inner.split_once('\n')?;
        command = body.trim_end().strip_suffix("```")?.trim();
    } else if command.contains('\n') {
        return None;
    }
    if command.is_empty() || command.contains("```") {
        return None;
    }
    let key = match Schema::of(&catalog.entries()[i]) {
        Some(schema) => schema.command_param()?.to_owned(),
        None => "command".to_owned(),
    };
    let mut params = Map::new();
    params.insert(key, Value::String(command.to_owned()));
    Some(RawCall {
        name: Some(name.to_owned()),
        name_from_mode: false,
        params: RawParams::Object(params),
        xml_text: vec![],
    })
}

/// A leading ```lang line and a trailing ``` (the fences inside are left to the scan).
/// An opener with the JSON on its own line (```` ```json {…} ``` ````) keeps the JSON.
fn strip_outer_fences<'a>(t: &'a str, fixes: &mut Corrections) -> &'a str {
    let mut s = t;
    if let Some(after) = s.strip_prefix("```") {
        fixes.add(Correction::MarkdownFence);
        let word = after.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
        s = if word.trim_start_matches([' ', '\t']).starts_with(['{', '[']) {
            word
        } else {
            match after.find('\n') {
                Some(n) => &after[n + 1..],
                None => word,
            }
        };
    }
    let end = s.trim_end();
    if let Some(before) = end.strip_suffix("```") {
        fixes.add(Correction::MarkdownFence);
        s = before;
    }
    s
}

struct Span {
    start: usize,
    end: usize,
    value: Value,
    repairs: Corrections,
}

/// Every JSON object (or array of objects) in the text, in order. Each `{`
/// is tried strictly, then loosely; a failure moves on to the next `{`.
fn scan(text: &str, fuel: &mut Fuel, damaged: &mut bool) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if fuel.0 == 0 {
            *damaged = true;
            break;
        }
        fuel.0 -= 1;
        let b = bytes[i];
        let starts = b == b'{'
            || (b == b'[' && {
                let rest = text[i + 1..].trim_start();
                rest.starts_with('{')
            });
        if !starts {
            i += 1;
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        let strict = match stream.next() {
            Some(Ok(v)) => Some((v, i + stream.byte_offset())),
            _ => None,
        };
        if let Some((value, end)) = strict {
            fuel.0 = fuel.0.saturating_sub((end - i) as u64);
            spans.push(Span {
                start: i,
                end,
                value,
                repairs: Corrections::default(),
            });
            i = end;
            continue;
        }
        match json::read_value(text, i, fuel) {
            Ok(r) if r.end > i => {
                let end = r.end;
                spans.push(Span {
                    start: i,
                    end,
                    value: r.value,
                    repairs: r.repairs,
                });
                i = end;
            }
            Ok(_) | Err(JsonError::Invalid) => i += 1,
            // Every `{` inside would fail the same way, one level shallower:
            // the text is not an action.
            Err(JsonError::TooDeep | JsonError::OutOfFuel) => {
                *damaged = true;
                break;
            }
        }
    }
    spans
}

/// Names what lies outside the JSON: fences, wrapper tags, extra closers, prose.
fn note_leftovers(text: &str, spans: &[Span], fixes: &mut Corrections) {
    let mut pos = 0;
    let mut outside = String::new();
    for s in spans {
        outside.push_str(&text[pos..s.start.max(pos)]);
        outside.push('\n');
        pos = s.end.max(pos);
    }
    outside.push_str(&text[pos.min(text.len())..]);
    let mut rest = outside;
    if rest.contains("```") {
        fixes.add(Correction::MarkdownFence);
        rest = rest
            .replace("```json", "")
            .replace("```xml", "")
            .replace("```", "");
    }
    for t in WRAPPER_TAGS {
        rest = rest.replace(t, "");
    }
    // `\n` written as an escape around the JSON (see `escaped-whitespace`) is no prose.
    rest = rest
        .replace("\\n", " ")
        .replace("\\t", " ")
        .replace("\\r", " ");
    let left = rest.trim();
    if left.is_empty() {
        return;
    }
    if left
        .chars()
        .all(|c| matches!(c, '}' | ']') || c.is_whitespace())
    {
        fixes.add(Correction::ExtraClosingBracket);
    } else if left != "json" {
        fixes.add(Correction::ProseAroundJson);
    }
}

/// The whole reply is one tool's name (`bash`, `functions.bash`, `` `files.read` ``, `files.read()`).
fn bare_tool_name(t: &str, catalog: &ToolCatalog, fixes: &mut Corrections) -> Option<RawCall> {
    let mut untagged = t.to_owned();
    for tag in WRAPPER_TAGS {
        untagged = untagged.replace(tag, " ");
    }
    let t = untagged.trim_matches(|c: char| c.is_whitespace() || c == '`');
    if t.is_empty() || t.len() > 200 || t.chars().any(char::is_whitespace) {
        return None;
    }
    catalog.resolve(t)?;
    fixes.add(Correction::BareToolName);
    Some(RawCall {
        name: Some(t.to_owned()),
        name_from_mode: false,
        params: RawParams::Object(Map::new()),
        xml_text: vec![],
    })
}

/// `NAME(key=value, …)` calls in Python syntax (Llama's "pythonic" tool calls,
/// `[get_weather(city="Paris"), …]`), for names that resolve to a tool: the
/// values are Python literals (strings, numbers, `True`/`False`/`None`,
/// lists and dicts); one positional string is the tool's one param.
fn python_calls(text: &str, catalog: &ToolCatalog, fuel: &mut Fuel) -> Vec<RawCall> {
    let mut calls = Vec::new();
    let mut i = 0;
    while let Some(off) = text[i..].find('(') {
        if fuel.0 == 0 || calls.len() >= 32 {
            break;
        }
        fuel.0 -= 1;
        let open = i + off;
        let start = text[..open]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | ':'))
            .last()
            .map_or(open, |(p, _)| p);
        let name = &text[start..open];
        if name.is_empty() || name.len() > 200 || catalog.resolve(name).is_none() {
            i = open + 1;
            continue;
        }
        match python_args(text, open + 1, fuel) {
            Some((params, end)) => {
                calls.push(RawCall {
                    name: Some(name.to_owned()),
                    name_from_mode: false,
                    params,
                    xml_text: vec![],
                });
                i = end;
            }
            None => i = open + 1,
        }
    }
    calls
}

fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && b[p].is_ascii_whitespace() {
        p += 1;
    }
    p
}

/// The arguments after `(` up to the matching `)`: the params and the byte after `)`.
fn python_args(text: &str, pos: usize, fuel: &mut Fuel) -> Option<(RawParams, usize)> {
    let b = text.as_bytes();
    let mut p = skip_ws(b, pos);
    let mut params = Map::new();
    if b.get(p) == Some(&b')') {
        return Some((RawParams::Object(params), p + 1));
    }
    // One positional value: a string (the tool's one param) or an object.
    let key_end = p + b[p..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let q = skip_ws(b, key_end);
    let keyword = key_end > p
        && !b[p].is_ascii_digit()
        && b.get(q) == Some(&b'=')
        && b.get(q + 1) != Some(&b'=');
    if !keyword {
        let (v, end) = python_value(text, p, fuel)?;
        let end = skip_ws(b, end);
        if b.get(end) != Some(&b')') {
            return None;
        }
        return match v {
            Value::Object(m) => Some((RawParams::Object(m), end + 1)),
            Value::String(s) => Some((RawParams::Text(s), end + 1)),
            _ => None,
        };
    }
    loop {
        let key_end = p + b[p..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        if key_end == p {
            return None;
        }
        let key = text[p..key_end].to_owned();
        p = skip_ws(b, key_end);
        if b.get(p) != Some(&b'=') {
            return None;
        }
        p = skip_ws(b, p + 1);
        let (v, end) = python_value(text, p, fuel)?;
        params.insert(key, v);
        p = skip_ws(b, end);
        match b.get(p) {
            Some(b',') => {
                p = skip_ws(b, p + 1);
                if b.get(p) == Some(&b')') {
                    return Some((RawParams::Object(params), p + 1));
                }
            }
            Some(b')') => return Some((RawParams::Object(params), p + 1)),
            _ => return None,
        }
    }
}

/// One Python literal at `p`: the value and the byte after it.
fn python_value(text: &str, p: usize, fuel: &mut Fuel) -> Option<(Value, usize)> {
    let b = text.as_bytes();
    match *b.get(p)? {
        q @ (b'"' | b'\'') => {
            let triple = b.get(p + 1) == Some(&q) && b.get(p + 2) == Some(&q);
            if triple {
                let delim = if q == b'"' { "\"\"\"" } else { "'''" };
                let body = p + 3;
                let close = text[body..].find(delim)?;
                let s = text[body..body + close].to_owned();
                return Some((Value::String(s), body + close + 3));
            }
            let mut out = String::new();
            let mut chars = text[p + 1..].char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        let (_, e) = chars.next()?;
                        match e {
                            'n' => out.push('\n'),
                            't' => out.push('\t'),
                            'r' => out.push('\r'),
                            '0' => out.push('\0'),
                            '\\' | '\'' | '"' => out.push(e),
                            other => {
                                out.push('\\');
                                out.push(other);
                            }
                        }
                    }
                    '\n' => return None,
                    c if c as u32 == u32::from(q) => {
                        return Some((Value::String(out), p + 1 + i + 1));
                    }
                    c => out.push(c),
                }
            }
            None
        }
        b'{' | b'[' => {
            let r = json::read_value(text, p, fuel).ok()?;
            Some((r.value, r.end))
        }
        _ => {
            let len = b[p..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'_'))
                .count();
            let word = &text[p..p + len];
            let v = match word {
                "True" | "true" => Value::Bool(true),
                "False" | "false" => Value::Bool(false),
                "None" | "null" => Value::Null,
                w => {
                    let w = w.replace('_', "");
                    if let Ok(n) = w.parse::<i64>() {
                        Value::from(n)
                    } else {
                        let f = w.parse::<f64>().ok()?;
                        Value::Number(serde_json::Number::from_f64(f)?)
                    }
                }
            };
            Some((v, p + len))
        }
    }
}

/// Qwen's XML dialect, with or without `<tool_call>` and with missing closers:
/// `<function=NAME><parameter=KEY>VALUE</parameter>…</function>`.
fn xml_calls(text: &str) -> Vec<RawCall> {
    let mut calls = Vec::new();
    let mut rest = text;
    while let Some(p) = rest.find("<function=") {
        let after = &rest[p + "<function=".len()..];
        let Some(gt) = after.find(['>', '\n']) else {
            break;
        };
        let name = after[..gt].trim().trim_matches('"').to_owned();
        let body_all = &after[(gt + 1).min(after.len())..];
        let end = ["</function>", "<function="]
            .iter()
            .filter_map(|m| body_all.find(m))
            .min()
            .unwrap_or(body_all.len());
        let body = &body_all[..end];
        let mut params = Map::new();
        let mut xml_text = Vec::new();
        // `<function=NAME>{…}</function>`: the arguments as JSON (Llama 3.1).
        let json_body = body.trim();
        if !json_body.contains("<parameter=") && json_body.starts_with('{') {
            let mut fuel = Fuel::for_len(json_body.len());
            if let Ok(r) = json::read_value(json_body, 0, &mut fuel)
                && let Value::Object(m) = r.value
            {
                params = m;
            }
        }
        let mut b = body;
        while let Some(q) = b.find("<parameter=") {
            let a = &b[q + "<parameter=".len()..];
            let Some(gt) = a.find(['>', '\n']) else {
                break;
            };
            let key = a[..gt].trim().trim_matches('"').to_owned();
            let v_all = &a[(gt + 1).min(a.len())..];
            let v_end = ["</parameter>", "<parameter="]
                .iter()
                .filter_map(|m| v_all.find(m))
                .min()
                .unwrap_or(v_all.len());
            let mut v = &v_all[..v_end];
            v = v
                .strip_prefix("\r\n")
                .or_else(|| v.strip_prefix('\n'))
                .unwrap_or(v);
            v = v
                .strip_suffix("\r\n")
                .or_else(|| v.strip_suffix('\n'))
                .unwrap_or(v);
            if !key.is_empty() {
                params.insert(key.clone(), xml_value(v));
                xml_text.push((key, v.to_owned()));
            }
            b = &v_all[v_end..];
        }
        if !name.is_empty() {
            calls.push(RawCall {
                name: Some(name),
                name_from_mode: false,
                params: RawParams::Object(params),
                xml_text,
            });
        }
        rest = &body_all[end..];
    }
    calls
}

/// Qwen's XML with `<parameter=NAME>` for its `<function=NAME>`: each
/// `<parameter=…>` whose name is a tool's and whose body is empty (the next
/// tag is another `<parameter=`) or a JSON object opens a call. The text with
/// those tags made `<function=…>`; `None` when no tag opens one. A key is
/// never a call: a tag whose body is a value stays a param.
fn parameter_openers(text: &str, catalog: &ToolCatalog) -> Option<String> {
    const TAG: &str = "<parameter=";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut found = false;
    while let Some(p) = rest.find(TAG) {
        let after = &rest[p + TAG.len()..];
        let Some(gt) = after.find(['>', '\n']) else {
            break;
        };
        let name = after[..gt].trim().trim_matches('"');
        let body = after[(gt + 1).min(after.len())..].trim_start();
        let opens = (body.starts_with(TAG) || body.starts_with('{'))
            && name.len() <= 200
            && catalog.resolve(name).is_some();
        out.push_str(&rest[..p]);
        if opens {
            found = true;
            out.push_str("<function=");
        } else {
            out.push_str(TAG);
        }
        rest = after;
    }
    out.push_str(rest);
    found.then_some(out)
}

/// The text between `open` and the first of `closers` (or the end).
fn until<'a>(text: &'a str, closers: &[&str]) -> &'a str {
    let end = closers
        .iter()
        .filter_map(|c| text.find(c))
        .min()
        .unwrap_or(text.len());
    &text[..end]
}

/// A param's text without the one newline models put after the opening tag
/// and before the closing one.
fn trim_one_newline(v: &str) -> &str {
    let v = v
        .strip_prefix("\r\n")
        .or_else(|| v.strip_prefix('\n'))
        .unwrap_or(v);
    v.strip_suffix("\r\n")
        .or_else(|| v.strip_suffix('\n'))
        .unwrap_or(v)
}

/// The value of `attr="…"` (or `'…'`, or bare up to `>`) at the start of `s`.
fn attr_value(s: &str) -> &str {
    let s = s.trim_start();
    match s.chars().next() {
        Some(q @ ('"' | '\'')) => until(&s[1..], &[&q.to_string(), ">", "\n"]),
        _ => until(s, &[">", " ", "\n"]),
    }
}

/// MiniMax's (and Claude's) XML: `<invoke name="NAME"><parameter name="KEY">VALUE</parameter></invoke>`.
fn invoke_calls(text: &str) -> Vec<RawCall> {
    let mut calls = Vec::new();
    for chunk in text.split("<invoke").skip(1) {
        let Some(n) = chunk.find("name=") else {
            continue;
        };
        let name = attr_value(&chunk[n + 5..]).trim().to_owned();
        let body = until(chunk, &["</invoke>"]);
        let mut params = Map::new();
        let mut xml_text = Vec::new();
        for p in body.split("<parameter").skip(1) {
            let Some(k) = p.find("name=") else { continue };
            let key = attr_value(&p[k + 5..]).trim().to_owned();
            let Some(gt) = p.find('>') else { continue };
            let v = trim_one_newline(until(&p[gt + 1..], &["</parameter>"]));
            if !key.is_empty() {
                params.insert(key.clone(), xml_value(v));
                xml_text.push((key, v.to_owned()));
            }
        }
        if !name.is_empty() {
            calls.push(RawCall {
                name: Some(name),
                name_from_mode: false,
                params: RawParams::Object(params),
                xml_text,
            });
        }
    }
    calls
}

/// GLM's dialect: `<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…</tool_call>`.
fn arg_key_calls(text: &str) -> Vec<RawCall> {
    let mut calls = Vec::new();
    let chunks: Vec<&str> = if text.contains("<tool_call>") {
        text.split("<tool_call>").skip(1).collect()
    } else {
        vec![text]
    };
    for chunk in chunks {
        let chunk = until(chunk, &["</tool_call>"]);
        let first = chunk.find("<arg_key>").unwrap_or(chunk.len());
        let name = chunk[..first].trim();
        let name = name.lines().last().unwrap_or("").trim().to_owned();
        let mut params = Map::new();
        let mut xml_text = Vec::new();
        for p in chunk.split("<arg_key>").skip(1) {
            let key = until(p, &["</arg_key>", "<arg_value>"]).trim().to_owned();
            let v = p
                .find("<arg_value>")
                .map(|a| trim_one_newline(until(&p[a + "<arg_value>".len()..], &["</arg_value>"])))
                .unwrap_or("");
            if !key.is_empty() {
                params.insert(key.clone(), xml_value(v));
                xml_text.push((key, v.to_owned()));
            }
        }
        if !name.is_empty() && !name.contains(char::is_whitespace) {
            calls.push(RawCall {
                name: Some(name),
                name_from_mode: false,
                params: RawParams::Object(params),
                xml_text,
            });
        }
    }
    calls
}

/// A parameter's text as a JSON value when it is one (`10`, `true`, `True`,
/// `[1,2]`), else the text itself. The schema has the last word (see `RawCall::xml_text`).
fn xml_value(v: &str) -> Value {
    let t = v.trim();
    if t.is_empty() {
        return Value::String(v.to_owned());
    }
    if let Ok(x) = serde_json::from_str::<Value>(t)
        && !x.is_string()
    {
        return x;
    }
    match t {
        "True" => return Value::Bool(true),
        "False" => return Value::Bool(false),
        "None" => return Value::Null,
        _ => {}
    }
    if t.starts_with('{') || t.starts_with('[') {
        let mut fuel = Fuel::for_len(t.len());
        if let Ok(r) = json::read_value(t, 0, &mut fuel)
            && r.end == t.len()
        {
            return r.value;
        }
    }
    Value::String(v.to_owned())
}

/// `[FUNCTION] NAME` … `[ARGS] {…}` and Qwen-Agent's `✿FUNCTION✿: NAME` … `✿ARGS✿: {…}`.
fn labelled_call(text: &str, fuel: &mut Fuel, fixes: &mut Corrections) -> Option<RawCall> {
    let (f, a) = if text.contains("[FUNCTION]") {
        ("[FUNCTION]", "[ARGS]")
    } else if text.contains("\u{273f}FUNCTION\u{273f}") {
        ("\u{273f}FUNCTION\u{273f}", "\u{273f}ARGS\u{273f}")
    } else {
        return None;
    };
    let p = text.find(f)? + f.len();
    let after = text[p..].trim_start_matches(':');
    let line_end = after.find('\n').unwrap_or(after.len());
    let name = after[..line_end].trim();
    let name = name.split(a).next().unwrap_or(name).trim().to_owned();
    if name.is_empty() {
        return None;
    }
    let mut params = Map::new();
    if let Some(q) = after.find(a) {
        let args = &after[q + a.len()..];
        if let Some(b) = args.find('{') {
            let start = args.len() - args[b..].len();
            if let Ok(r) = json::read_value(args, start, fuel) {
                fixes.extend(&r.repairs);
                if let Value::Object(m) = r.value {
                    params = m;
                }
            }
        }
    }
    Some(RawCall {
        name: Some(name),
        name_from_mode: false,
        params: RawParams::Object(params),
        xml_text: vec![],
    })
}

// ---------------------------------------------------------------- shapes

const PARAM_KEYS: &[&str] = &[
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

fn interpret(
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
                items.push(respond_from(&o));
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
                    items.push(respond_from(&o));
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
fn looks_like_envelope(o: &Map<String, Value>) -> bool {
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
fn is_placeholder_step(c: &RawCall) -> bool {
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

// ---------------------------------------------------------------- assembly

fn assemble(
    items: Vec<Item>,
    catalog: &ToolCatalog,
    fixes: &mut Corrections,
) -> Result<Action, FailureReason> {
    let mut calls: Vec<RawCall> = Vec::new();
    let mut plans = 0usize;
    let mut loose_calls = 0usize;
    let mut responds = Vec::new();
    let mut echo = None;
    let mut not_action = None;
    for item in items {
        match item {
            Item::Call(c) => {
                loose_calls += 1;
                calls.push(c);
            }
            Item::Plan(steps) => {
                plans += 1;
                calls.extend(steps);
            }
            Item::Respond(t) => responds.push(t),
            Item::Echo(t) => echo = echo.or(Some(t)),
            Item::NotAction(w) => not_action = not_action.or(Some(w)),
        }
    }
    // Calls with no tool and no params beside real ones (as in a plan).
    if calls.iter().any(|c| !is_placeholder_step(c)) {
        let before = calls.len();
        calls.retain(|c| !is_placeholder_step(c));
        if calls.len() < before {
            fixes.add(Correction::EmptyStepDropped);
        }
    }
    // Calls to no tool that only carry a message: the answer, unless real calls run.
    let mut messages = Vec::new();
    calls.retain(|c| match message_of(c, catalog) {
        Some(text) => {
            messages.push(text);
            false
        }
        None => true,
    });
    if !messages.is_empty() {
        fixes.add(Correction::MessageAsRespond);
        responds.extend(messages);
    }
    if calls.is_empty() {
        if let Some(text) = responds.into_iter().next() {
            return Ok(Action::Respond { text });
        }
        if let Some(tool) = echo {
            return Err(FailureReason::EchoedEnvelope { tool });
        }
        if let Some(what) = not_action {
            return Err(FailureReason::NotAnAction { what });
        }
        return Err(FailureReason::NoAction { len: 0 });
    }
    if !responds.is_empty() {
        fixes.add(Correction::RespondDropped);
    }
    let mut resolved = Vec::with_capacity(calls.len());
    let mut errors = Vec::new();
    for c in calls {
        match resolve_call(c, catalog, fixes) {
            Ok(step) => resolved.push(step),
            Err(e) => errors.push(e),
        }
    }
    // A call repeated word for word (compared once resolved and repaired).
    let before = resolved.len();
    resolved.dedup();
    if resolved.len() < before {
        fixes.add(Correction::DuplicateCallDropped);
    }
    if resolved.is_empty() {
        return Err(FailureReason::NotAnAction {
            what: errors.join("; "),
        });
    }
    if plans == 1 && loose_calls == 0 {
        return Ok(Action::Plan { steps: resolved });
    }
    if resolved.len() == 1 && plans == 0 {
        let PlanStep { actor, params } = resolved.remove(0);
        return Ok(Action::Call {
            tool: actor,
            params,
        });
    }
    if loose_calls > 1 || plans > 0 {
        fixes.add(Correction::SeveralCallsAsPlan);
    }
    Ok(Action::Plan { steps: resolved })
}

/// The text of a call that names no tool and whose params are only text under
/// keys no tool has (and name no tool), some of it prose (three words or
/// more): a message, not a call. Only with a
/// catalog that knows params (with names only, any key could be a param).
fn message_of(c: &RawCall, catalog: &ToolCatalog) -> Option<String> {
    let name = c.name.as_deref()?.trim();
    if name.is_empty() || c.name_from_mode || !catalog.knows_params() {
        return None;
    }
    let RawParams::Object(params) = &c.params else {
        return None;
    };
    if params.is_empty() || params.len() > 8 || looks_like_envelope(params) {
        return None;
    }
    if catalog.resolve(name).is_some() || catalog.enum_value_named(name).is_some() {
        return None;
    }
    let mut parts = Vec::new();
    for (k, v) in params {
        let text = v.as_str()?;
        let bare = k.trim().trim_end_matches('?');
        if catalog.declares_anywhere(bare)
            || catalog.declares_anywhere(&bare.to_ascii_lowercase())
            || catalog.resolve(bare).is_some()
            || (text.len() <= 100 && catalog.resolve(text).is_some())
        {
            return None;
        }
        if !text.trim().is_empty() {
            parts.push(text.trim());
        }
    }
    // A message is words, not a value: a path or a name alone is a param.
    let prose = parts.iter().any(|p| p.split_whitespace().count() >= 3);
    prose.then(|| parts.join("\n"))
}

/// The name resolved (or inferred, or kept as written) and the params repaired.
fn resolve_call(
    c: RawCall,
    catalog: &ToolCatalog,
    fixes: &mut Corrections,
) -> Result<PlanStep, String> {
    let written = c.name.clone().unwrap_or_default();
    let mut params = match &c.params {
        RawParams::Object(m) => m.clone(),
        RawParams::Text(_) => Map::new(),
    };
    strip_optional_marks(&mut params, fixes);
    let mut tool: Option<usize> = None;
    if let Some((i, f)) = catalog.resolve(&written) {
        for x in f {
            fixes.add(x);
        }
        tool = Some(i);
        unnest_params(&mut params, Schema::of(&catalog.entries()[i]), fixes);
    } else if !c.name_from_mode {
        if let Some((i, fix)) = catalog.resolve_near(&written) {
            // `read_file`, `web.serach`: the tool the model named, in other words.
            fixes.add(fix);
            tool = Some(i);
            unnest_params(&mut params, Schema::of(&catalog.entries()[i]), fixes);
        } else if let Some((i, key, value)) = catalog.enum_value_named(&written) {
            // `{"tool":"os"}`: the name is one tool's enum value.
            let entry = &catalog.entries()[i];
            let fits = match &c.params {
                RawParams::Object(_) => catalog.fitting(&params).contains(&i),
                RawParams::Text(_) => {
                    Schema::of(entry).and_then(|s| s.single_property()) == Some(key.as_str())
                }
            };
            if fits
                && params
                    .get(&key)
                    .is_none_or(|v| v.as_str() == Some(value.as_str()))
            {
                params.insert(key, Value::String(value));
                fixes.add(Correction::ToolNameIsEnumValue);
                tool = Some(i);
            }
        }
        if tool.is_none() && !written.trim().is_empty() {
            unnest_params(&mut params, None, fixes);
        }
        if tool.is_none() {
            tool = hidden_tool(&written, &mut params, catalog, fixes);
            if let Some(i) = tool {
                unnest_params(&mut params, Schema::of(&catalog.entries()[i]), fixes);
            }
        }
    }
    // `params` given as one string: the tool's one param.
    if let RawParams::Text(s) = &c.params {
        let target = tool
            .and_then(|i| Schema::of(&catalog.entries()[i]))
            .and_then(|sc| sc.single_property().map(str::to_owned));
        match target {
            // Already given by the name (`{"tool":"os","params":"linux"}`).
            Some(p) if params.contains_key(&p) => {
                fixes.add(Correction::ExtraParamDropped);
            }
            Some(p) => {
                params.insert(p, Value::String(s.clone()));
                fixes.add(Correction::ParamsNotObject);
            }
            None => {
                return Err(format!(
                    "the params of {:?} are {:?}, not an object",
                    if written.is_empty() {
                        "the call"
                    } else {
                        written.as_str()
                    },
                    truncate(s, 60)
                ));
            }
        }
    }
    let Some(i) = tool else {
        if written.trim().is_empty() {
            fixes.add(Correction::UnnamedCall);
        }
        return Ok(PlanStep {
            actor: written,
            params,
        });
    };
    let entry = &catalog.entries()[i];
    if let Some(schema) = Schema::of(entry) {
        for (k, text) in &c.xml_text {
            if schema.takes_string(k) && params.get(k).is_some_and(|v| !v.is_string()) {
                params.insert(k.clone(), Value::String(text.clone()));
            }
        }
        let hint = if written == entry.spec.name {
            ""
        } else {
            written.as_str()
        };
        schema.repair(&mut params, hint, fixes);
    }
    Ok(PlanStep {
        actor: entry.spec.name.clone(),
        params,
    })
}

/// `{"params": {…}}` inside the params: unwrapped, unless the tool's schema
/// has that key (without a schema, only a key the call shapes use).
fn unnest_params(
    params: &mut Map<String, Value>,
    schema: Option<Schema<'_>>,
    fixes: &mut Corrections,
) {
    for _ in 0..3 {
        if params.len() != 1 {
            return;
        }
        let Some((k, Value::Object(_))) = params.iter().next() else {
            return;
        };
        let wraps = match &schema {
            Some(s) => PARAM_KEYS.contains(&k.as_str()) && !s.has(k),
            None => matches!(
                k.as_str(),
                "params" | "arguments" | "parameters" | "args" | "kwargs"
            ),
        };
        if !wraps {
            return;
        }
        let k = k.clone();
        if let Some(Value::Object(inner)) = params.remove(&k) {
            *params = inner;
            fixes.add(Correction::ParamsNested);
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// `key?` → `key` (the prompt's optional mark copied into the key).
fn strip_optional_marks(params: &mut Map<String, Value>, fixes: &mut Corrections) {
    let marked: Vec<String> = params
        .keys()
        .filter(|k| k.trim_end().ends_with('?'))
        .cloned()
        .collect();
    for k in marked {
        let bare = k.trim_end().trim_end_matches('?').trim().to_owned();
        if bare.is_empty() || params.contains_key(&bare) {
            continue;
        }
        if let Some(v) = params.remove(&k) {
            params.insert(bare, v);
            fixes.add(Correction::OptionalMarkerInKey);
        }
    }
}

/// A name that is none of the tools (often the assistant's own): the tool may
/// still be in the params — a value naming one, a key naming one — or the
/// params may fit exactly one tool's schema. A tool found only by the fit is
/// taken when it is the catalog's only tool, or a plan actor (local and
/// reversible: its effects are reviewed), or when a word of the name the
/// model wrote is one of the tool's enum values or name parts
/// (`files.write` + `{path, content}` → `builder`, op `write`). A governed
/// tool is never dispatched on a guess from params alone: its call cannot be
/// undone. Nothing else is guessed.
fn hidden_tool(
    written: &str,
    params: &mut Map<String, Value>,
    catalog: &ToolCatalog,
    fixes: &mut Corrections,
) -> Option<usize> {
    // Params that carry a copied tool result name the tool that produced it,
    // not one to call.
    if looks_like_envelope(params) {
        return None;
    }
    // The name split between the tool and a param: {"tool":"files","op":"read"}.
    if !written.trim().is_empty() && written.len() <= 100 {
        let joined: Vec<(String, usize)> = params
            .iter()
            .filter_map(|(k, v)| {
                let s = v.as_str()?.trim();
                (!s.is_empty() && s.len() <= 40 && !s.contains(char::is_whitespace))
                    .then_some(())?;
                // a value that is a whole name is the next rule's
                catalog.resolve(s).is_none().then_some(())?;
                let (i, _) = catalog.resolve(&format!("{}.{s}", written.trim()))?;
                Some((k.clone(), i))
            })
            .collect();
        if let [(k, i)] = joined.as_slice() {
            let keep = Schema::of(&catalog.entries()[*i])
                .is_some_and(|sc| params.get(k).is_some_and(|v| sc.accepts(k, v)));
            if !keep {
                params.remove(k);
            }
            fixes.add(Correction::ToolNameSplit);
            return Some(*i);
        }
    }
    // A value naming a tool: {"task": "memory.build", …}
    let named: Vec<(String, usize)> = params
        .iter()
        .filter_map(|(k, v)| {
            let s = v.as_str()?;
            (s.len() <= 100).then_some(())?;
            catalog.resolve(s).map(|(i, _)| (k.clone(), i))
        })
        .collect();
    if let [(k, i)] = named.as_slice() {
        params.remove(k);
        fixes.add(Correction::ToolInParams);
        return Some(*i);
    }
    if named.len() > 1 {
        return None;
    }
    // A key naming a tool: {"aesthesis": "ui/index.html"}
    let keyed: Vec<(String, usize)> = params
        .keys()
        .filter_map(|k| catalog.resolve(k).map(|(i, _)| (k.clone(), i)))
        .collect();
    if let [(k, i)] = keyed.as_slice() {
        let entry = &catalog.entries()[*i];
        let v = params.get(k).cloned().unwrap_or(Value::Null);
        match v {
            Value::Object(inner) => {
                params.remove(k);
                for (ik, iv) in inner {
                    params.insert(ik, iv);
                }
                fixes.add(Correction::ToolNameAsKey);
                return Some(*i);
            }
            Value::String(s) => {
                let prop = Schema::of(entry).and_then(|sc| sc.single_property().map(str::to_owned));
                if let Some(p) = prop
                    && !params.contains_key(&p)
                {
                    params.remove(k);
                    params.insert(p, Value::String(s));
                    fixes.add(Correction::ToolNameAsKey);
                    return Some(*i);
                }
            }
            _ => {}
        }
    }
    // A value only one tool's enum has, under its own key: {"op": "all_summaries"}.
    let owners: Vec<usize> = params
        .iter()
        .filter_map(|(k, v)| catalog.enum_value_owner(k, v.as_str()?))
        .collect();
    if let Some(&i) = owners.first()
        && owners.iter().all(|&o| o == i)
    {
        // every other key is the tool's, or no tool's at all
        let schema = Schema::of(&catalog.entries()[i]);
        let consistent = params.iter().all(|(k, v)| {
            schema.as_ref().is_some_and(|s| s.accepts(k, v)) || !catalog.declares_anywhere(k)
        });
        if consistent {
            fixes.add(Correction::ToolInferredFromEnumValue);
            return Some(i);
        }
    }
    // Params that fit exactly one tool's schema.
    let mut probe = params.clone();
    probe.retain(|_, v| !(v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty())));
    if let [only] = catalog.fitting(&probe).as_slice() {
        let entry = &catalog.entries()[*only];
        let allowed = catalog.entries().len() == 1
            || entry.plan_actor
            || Schema::of(entry).is_some_and(|s| s.corroborated_by(written, &entry.spec.name));
        if allowed {
            fixes.add(Correction::ToolInferredFromParams);
            return Some(*only);
        }
    }
    None
}
