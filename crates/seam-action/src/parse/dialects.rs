//! The dialects a model writes a call in besides JSON: Python calls (Llama's pythonic
//! calls), Qwen's XML (`<function=…><parameter=…>`), MiniMax's and Claude's `<invoke>`, GLM's
//! `<arg_key>`, and labelled calls (`[FUNCTION] … [ARGS] {…}`).

use serde_json::{Map, Value};

use crate::catalog::ToolCatalog;
use crate::correction::Corrections;
use crate::json::{self, Fuel};

use super::{RawCall, RawParams};

/// `NAME(key=value, …)` calls in Python syntax (Llama's "pythonic" tool calls,
/// `[get_weather(city="Paris"), …]`), for names that resolve to a tool: the
/// values are Python literals (strings, numbers, `True`/`False`/`None`,
/// lists and dicts); one positional string is the tool's one param.
pub(super) fn python_calls(text: &str, catalog: &ToolCatalog, fuel: &mut Fuel) -> Vec<RawCall> {
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
pub(super) fn xml_calls(text: &str, fuel: &mut Fuel) -> Vec<RawCall> {
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
        if !json_body.contains("<parameter=")
            && json_body.starts_with('{')
            && let Ok(r) = json::read_value(json_body, 0, fuel)
            && let Value::Object(m) = r.value
        {
            params = m;
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
                params.insert(key.clone(), xml_value(v, fuel));
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
pub(super) fn parameter_openers(text: &str, catalog: &ToolCatalog) -> Option<String> {
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
pub(super) fn invoke_calls(text: &str, fuel: &mut Fuel) -> Vec<RawCall> {
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
                params.insert(key.clone(), xml_value(v, fuel));
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
pub(super) fn arg_key_calls(text: &str, fuel: &mut Fuel) -> Vec<RawCall> {
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
                params.insert(key.clone(), xml_value(v, fuel));
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
/// A loose read spends from the reply's one budget: once it is spent, the text stays text.
fn xml_value(v: &str, fuel: &mut Fuel) -> Value {
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
    if (t.starts_with('{') || t.starts_with('['))
        && let Ok(r) = json::read_value(t, 0, fuel)
        && r.end == t.len()
    {
        return r.value;
    }
    Value::String(v.to_owned())
}

/// `[FUNCTION] NAME` … `[ARGS] {…}` and Qwen-Agent's `✿FUNCTION✿: NAME` … `✿ARGS✿: {…}`.
pub(super) fn labelled_call(
    text: &str,
    fuel: &mut Fuel,
    fixes: &mut Corrections,
) -> Option<RawCall> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A parameter's value that strict JSON refuses and the loose reader reads: each one read
    /// spends from the budget.
    const LOOSE: &str = "{'k': [1, 2, 3], 'more': 'text'}";

    /// What reading [`LOOSE`] once costs.
    fn cost_of_one() -> u64 {
        let mut fuel = Fuel(u64::MAX);
        assert!(xml_value(LOOSE, &mut fuel).is_object());
        u64::MAX - fuel.0
    }

    /// How many of a call's params were read as JSON, and how many were left as text.
    fn read_and_left(call: &RawCall) -> (usize, usize) {
        let RawParams::Object(params) = &call.params else {
            panic!("params as text: {:?}", call.params);
        };
        let read = params.values().filter(|v| v.is_object()).count();
        let left = params
            .values()
            .filter(|v| v.as_str() == Some(LOOSE))
            .count();
        (read, left)
    }

    /// One reply, one budget: every parameter of every dialect spends from the budget the
    /// reply was given, so a reply with many parameters does no more work than the budget
    /// allows. With a budget of its own for each parameter, every one of them would be read.
    #[test]
    fn many_parameters_spend_one_budget() {
        const PARAMS: usize = 200;
        const AFFORDED: u64 = 10;
        let one = cost_of_one();
        let each = |open: &dyn Fn(usize) -> String, close: &str| -> String {
            (0..PARAMS)
                .map(|i| format!("{}{LOOSE}{close}", open(i)))
                .collect()
        };
        let replies = [
            format!(
                "<function=t>{}</function>",
                each(&|i| format!("<parameter=p{i}>"), "</parameter>")
            ),
            format!(
                "<invoke name=\"t\">{}</invoke>",
                each(&|i| format!("<parameter name=\"p{i}\">"), "</parameter>")
            ),
            format!(
                "<tool_call>t{}</tool_call>",
                each(
                    &|i| format!("<arg_key>p{i}</arg_key><arg_value>"),
                    "</arg_value>"
                )
            ),
        ];
        for (reply, dialect) in replies.iter().zip([xml_calls, invoke_calls, arg_key_calls]) {
            let head = &reply[..40];
            let mut fuel = Fuel(AFFORDED * one);
            let calls = dialect(reply, &mut fuel);
            assert_eq!(calls.len(), 1, "{head}…");
            let (read, left) = read_and_left(&calls[0]);
            assert_eq!(read, AFFORDED as usize, "{head}…");
            assert_eq!(left, PARAMS - AFFORDED as usize, "{head}…");
            assert!(fuel.0 < one, "{head}…");
        }
    }
}
