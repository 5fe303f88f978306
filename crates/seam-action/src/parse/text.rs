//! The text level: think blocks set aside, then the calls a reply holds as text, fences,
//! wrapper tags and prose around them, JSON objects found by a scan of every `{`; each object
//! found goes to [`super::shape`], each dialect's call to [`super::dialects`].

use serde_json::{Map, Value};

use crate::catalog::{Schema, ToolCatalog};
use crate::correction::{Correction, Corrections};
use crate::json::{self, Fuel, JsonError};

use super::dialects::{
    arg_key_calls, invoke_calls, labelled_call, parameter_openers, python_calls, xml_calls,
};
use super::shape::interpret;
use super::{Item, RawCall, RawParams};

/// Sets think blocks aside: returns the text outside them and the text inside.
pub(super) fn split_think(raw: &str, fixes: &mut Corrections) -> (String, Option<String>) {
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

pub(super) fn extract(
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
        xml_calls(rewritten, fuel)
    } else if text.contains("<function=") {
        xml_calls(text, fuel)
    } else if text.contains("<invoke") {
        invoke_calls(text, fuel)
    } else if text.contains("<arg_key>") {
        arg_key_calls(text, fuel)
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
    let tail = seam_term::tail_bytes(gap, 400);
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
