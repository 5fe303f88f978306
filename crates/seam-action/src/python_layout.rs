//! Python source that small models squeeze onto one line, laid out again.
//!
//! A 1.5B model asked for Python through a JSON string writes
//! `with open(p) as f: rows = f.readlines(); for r in rows: if r: print(r)`
//! or escapes its newlines twice (`import csv\nprint(1)` with a backslash
//! and an `n`). Python refuses both with a `SyntaxError`, and the model,
//! shown the error, rarely writes the code another way. The two repairs here
//! apply only to source Python cannot compile, by two facts of its grammar:
//!
//! - Outside a string literal or a comment, a backslash may only end a line
//!   (an explicit line join). `\n`, `\t` or `\"` there is an escape that was
//!   meant for the JSON string one level up ([`Correction::PythonEscapesUnescaped`]).
//! - A compound statement (`if`, `for`, `while`, `with`, `try`, `def`,
//!   `class`, `async …`, and the clauses `elif`, `else`, `except`, `finally`)
//!   must begin a logical line. After a `;`, or after the `:` that ends a
//!   compound statement's header, only simple statements may follow on the
//!   same line ([`Correction::PythonOneLineRelaid`]).
//!
//! The relayout reads each header `:` as opening a block that holds what
//! follows it on the line, and a `;` as staying in the current block; a
//! clause (`else:`) closes blocks back to the header it belongs to. That is
//! the only reading under which every statement the model wrote runs, and the
//! one the model's order of words implies. Anything the scanner cannot read
//! for certain (an unterminated string, unbalanced brackets, a clause without
//! its header) leaves the code as written, for Python to refuse.
//!
//! The scanner is written here rather than taken from a Python parser crate
//! because what it must know is narrow (where strings, comments and brackets
//! are, and where a logical line ends), and because a parser of correct
//! Python would only report the error, not the layout the model meant.

use crate::correction::Correction;

/// The statements that must begin a logical line.
const COMPOUND: &[&str] = &[
    "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "def", "class",
];

/// Source longer than this is left alone (the tool's own limit is lower).
const MAX_SOURCE_BYTES: usize = 1 << 20;

/// The code laid out again, and the repairs made, or `None` when it needs none
/// (or cannot be read for certain).
pub(crate) fn repair(code: &str) -> Option<(String, Vec<Correction>)> {
    if code.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let mut fixes = Vec::new();
    let (mut code, spans) = match scan(code) {
        Some(s) if !s.stray_escape => (code.to_owned(), s),
        first => {
            // Escapes outside strings only (`\n` between statements, a
            // string's own `\n` kept), else the whole source once more (its
            // quotes were escaped too, so the first scan could not read it).
            let (c, s) = first
                .and_then(|s| unescape_outside_strings(code, &s.tokens))
                .and_then(scanned_clean)
                .or_else(|| unescape_all(code).and_then(scanned_clean))?;
            fixes.push(Correction::PythonEscapesUnescaped);
            (c, s)
        }
    };
    if let Some(relaid) = relay(&code, &spans.tokens) {
        code = relaid;
        fixes.push(Correction::PythonOneLineRelaid);
    }
    (!fixes.is_empty()).then_some((code, fixes))
}

/// The source with its scan, when it scans with no stray escape.
fn scanned_clean(code: String) -> Option<(String, Scanned)> {
    let s = scan(&code).filter(|s| !s.stray_escape)?;
    Some((code, s))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A string literal, prefix and quotes included.
    Str,
    /// `#` to the end of the line.
    Comment,
    /// `;` outside brackets.
    Semi,
    /// `:` outside brackets (not `:=`).
    Colon,
    /// A newline outside brackets that ends a logical line.
    Newline,
    /// Any other run of code.
    Code,
}

#[derive(Debug, Clone, Copy)]
struct Tok {
    kind: Kind,
    start: usize,
    end: usize,
}

struct Scanned {
    tokens: Vec<Tok>,
    /// A backslash outside a string that does not end the line.
    stray_escape: bool,
}

/// Splits the source into strings, comments, and the punctuation the layout
/// needs. `None` when a string is not closed or the brackets do not balance.
fn scan(src: &str) -> Option<Scanned> {
    let b = src.as_bytes();
    let mut tokens = Vec::new();
    let mut stray_escape = false;
    let mut depth: usize = 0;
    let mut i = 0;
    let mut code_start = 0;
    let flush = |tokens: &mut Vec<Tok>, from: usize, to: usize| {
        if to > from {
            tokens.push(Tok {
                kind: Kind::Code,
                start: from,
                end: to,
            });
        }
    };
    while i < b.len() {
        let c = b[i];
        if let Some(quote_at) = string_start(b, i) {
            flush(&mut tokens, code_start, i);
            let end = string_end(b, quote_at)?;
            tokens.push(Tok {
                kind: Kind::Str,
                start: i,
                end,
            });
            i = end;
            code_start = i;
            continue;
        }
        let single = match c {
            b'#' => {
                flush(&mut tokens, code_start, i);
                let end = b[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(b.len(), |p| i + p);
                tokens.push(Tok {
                    kind: Kind::Comment,
                    start: i,
                    end,
                });
                i = end;
                code_start = i;
                continue;
            }
            b'\\' => {
                match b.get(i + 1) {
                    Some(b'\n') => {
                        i += 2;
                        continue;
                    }
                    Some(b'\r') if b.get(i + 2) == Some(&b'\n') => {
                        i += 3;
                        continue;
                    }
                    _ => stray_escape = true,
                }
                None
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                None
            }
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                None
            }
            b';' if depth == 0 => Some(Kind::Semi),
            b':' if depth == 0 && b.get(i + 1) != Some(&b'=') => Some(Kind::Colon),
            b'\n' if depth == 0 => Some(Kind::Newline),
            _ => None,
        };
        if let Some(kind) = single {
            flush(&mut tokens, code_start, i);
            tokens.push(Tok {
                kind,
                start: i,
                end: i + 1,
            });
            code_start = i + 1;
        }
        i += 1;
    }
    flush(&mut tokens, code_start, b.len());
    (depth == 0).then_some(Scanned {
        tokens,
        stray_escape,
    })
}

/// Where the opening quote is, when a string literal starts at `i` (a quote,
/// or a prefix of `r`, `b`, `u`, `f` letters right before one).
fn string_start(b: &[u8], i: usize) -> Option<usize> {
    if matches!(b[i], b'\'' | b'"') {
        return Some(i);
    }
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] >= 0x80) {
        return None;
    }
    let mut j = i;
    while j < b.len() && j - i < 2 && matches!(b[j].to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f')
    {
        j += 1;
    }
    (j > i && matches!(b.get(j), Some(b'\'' | b'"'))).then_some(j)
}

/// The end (exclusive) of the string literal whose opening quote is at `q`;
/// `None` when it is not closed (or a one-quote string meets a newline).
fn string_end(b: &[u8], q: usize) -> Option<usize> {
    let quote = b[q];
    let triple = b.get(q + 1) == Some(&quote) && b.get(q + 2) == Some(&quote);
    let mut i = if triple { q + 3 } else { q + 1 };
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == quote => {
                if !triple {
                    return Some(i + 1);
                }
                if b.get(i + 1) == Some(&quote) && b.get(i + 2) == Some(&quote) {
                    return Some(i + 3);
                }
                i += 1;
            }
            b'\n' if !triple => return None,
            _ => i += 1,
        }
    }
    None
}

/// `\n`, `\r`, `\t` outside string literals read as the characters they
/// escape. `None` when another escape stands outside a string.
fn unescape_outside_strings(src: &str, tokens: &[Tok]) -> Option<String> {
    let mut out = String::with_capacity(src.len());
    for t in tokens {
        let text = &src[t.start..t.end];
        if t.kind != Kind::Code {
            out.push_str(text);
            continue;
        }
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => {}
                Some('\n') => out.push_str("\\\n"),
                _ => return None,
            }
        }
    }
    Some(out)
}

/// The whole source read once more as the body of a JSON string (a model
/// that escaped every quote and newline twice).
fn unescape_all(src: &str) -> Option<String> {
    let quoted = format!("\"{}\"", src.replace('\n', "\\n").replace('\t', "\\t"));
    serde_json::from_str::<String>(&quoted).ok()
}

/// The first word of a statement: a keyword or a name.
fn first_word(s: &str) -> &str {
    let s = s.trim_start();
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The compound keyword a statement starts with (`async` read with the word after it).
fn compound(stmt: &str) -> Option<&'static str> {
    let w = first_word(stmt);
    let w = if w == "async" {
        first_word(&stmt.trim_start()[5..])
    } else {
        w
    };
    COMPOUND.iter().copied().find(|k| *k == w)
}

/// The headers a clause may follow.
fn opens_for(clause: &str) -> &'static [&'static str] {
    match clause {
        "elif" => &["if", "elif"],
        "else" => &["if", "elif", "for", "while", "try", "except"],
        "except" => &["try", "except"],
        "finally" => &["try", "except", "else"],
        _ => &[],
    }
}

/// One statement of a logical line, and whether it is a compound header (it
/// ends in the `:` that opens a block).
struct Stmt {
    text: String,
    header: bool,
}

/// Lays out again every logical line that holds a compound statement after a
/// `;` or a header's `:`; `None` when no line does, or one cannot be laid out.
fn relay(src: &str, tokens: &[Tok]) -> Option<String> {
    let mut lines: Vec<&[Tok]> = Vec::new();
    let mut from = 0;
    for (i, t) in tokens.iter().enumerate() {
        if t.kind == Kind::Newline {
            lines.push(&tokens[from..i]);
            from = i + 1;
        }
    }
    lines.push(&tokens[from..]);

    let mut changed = false;
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        let (Some(first), Some(last)) = (line.first(), line.last()) else {
            out.push(String::new());
            continue;
        };
        let text = &src[first.start..last.end];
        let stmts = statements(src, line);
        let misplaced = stmts.iter().skip(1).any(|s| compound(&s.text).is_some());
        if !misplaced {
            out.push(text.to_owned());
            continue;
        }
        let base: String = text
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        out.extend(layout(&base, &stmts)?);
        changed = true;
    }
    changed.then(|| out.join("\n"))
}

/// The statements of one logical line: cut at each `;`, and after the `:`
/// that ends a compound header.
fn statements(src: &str, line: &[Tok]) -> Vec<Stmt> {
    let mut stmts = Vec::new();
    let mut cur = String::new();
    let mut comment = String::new();
    let push = |cur: &mut String, header: bool, stmts: &mut Vec<Stmt>| {
        let text = cur.trim().to_owned();
        cur.clear();
        if !text.is_empty() {
            stmts.push(Stmt { text, header });
        }
    };
    for t in line {
        let text = &src[t.start..t.end];
        match t.kind {
            Kind::Semi => push(&mut cur, false, &mut stmts),
            // The first `:` of a compound statement ends its header; any
            // other is a simple statement's (an annotation, a lambda).
            Kind::Colon if compound(&cur).is_some() => {
                cur.push(':');
                push(&mut cur, true, &mut stmts);
            }
            Kind::Comment => comment.push_str(text),
            _ => cur.push_str(text),
        }
    }
    push(&mut cur, false, &mut stmts);
    if !comment.is_empty()
        && let Some(last) = stmts.last_mut()
    {
        last.text.push_str("  ");
        last.text.push_str(&comment);
    }
    stmts
}

/// The statements as lines: each header opens a block for what follows it,
/// a clause goes back to its header's level. An empty block gets `pass`.
fn layout(base: &str, stmts: &[Stmt]) -> Option<Vec<String>> {
    let mut lines = Vec::new();
    let mut open: Vec<(&'static str, usize)> = Vec::new();
    let mut level = 0;
    let mut body_empty = false;
    for s in stmts {
        let kw = compound(&s.text);
        if let Some(clause) = kw.filter(|k| !opens_for(k).is_empty()) {
            if body_empty {
                lines.push(format!("{base}{}pass", "    ".repeat(level)));
            }
            let allowed = opens_for(clause);
            while let Some((k, _)) = open.last() {
                if allowed.contains(k) {
                    break;
                }
                open.pop();
            }
            let (_, at) = open.pop()?;
            level = at;
        }
        lines.push(format!("{base}{}{}", "    ".repeat(level), s.text));
        body_empty = s.header;
        if s.header {
            open.push((kw?, level));
            level += 1;
        }
    }
    if body_empty {
        lines.push(format!("{base}{}pass", "    ".repeat(level)));
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(code: &str) -> Option<String> {
        repair(code).map(|(c, _)| c)
    }

    #[test]
    fn compound_statements_after_a_semicolon_or_a_header_get_their_own_lines() {
        let code = "with open('notes/trip.md') as f: lines = f.readlines(); for i, line in enumerate(lines): if 'sleep' in line: print(i+1, line.strip())";
        let (out, fixes) = repair(code).unwrap();
        assert_eq!(fixes, [Correction::PythonOneLineRelaid]);
        assert_eq!(
            out,
            "with open('notes/trip.md') as f:\n    lines = f.readlines()\n    for i, line in enumerate(lines):\n        if 'sleep' in line:\n            print(i+1, line.strip())"
        );
        assert_eq!(
            fixed("import csv; total = 0; for row in csv.reader(open('a.csv')): total += float(row[1])").unwrap(),
            "import csv\ntotal = 0\nfor row in csv.reader(open('a.csv')):\n    total += float(row[1])"
        );
    }

    #[test]
    fn clauses_go_back_to_their_header() {
        assert_eq!(
            fixed("for x in xs: if x > 0: print(x); else: print(-x)").unwrap(),
            "for x in xs:\n    if x > 0:\n        print(x)\n    else:\n        print(-x)"
        );
        assert_eq!(
            fixed("try: import numpy; except ImportError: numpy = None; finally: print('done')")
                .unwrap(),
            "try:\n    import numpy\nexcept ImportError:\n    numpy = None\nfinally:\n    print('done')"
        );
        // A clause with no header to go back to: left for Python to refuse.
        assert_eq!(fixed("x = 1; else: y = 2"), None);
    }

    #[test]
    fn valid_python_is_left_alone() {
        for code in [
            "print(1); print(2)",
            "for x in range(3): print(x); print(x * 2)",
            "if a: b = 1",
            "x = {'a: b; c': 1}; print(x)",
            "f = lambda x: x + 1; print(f(2))",
            "y: int = 3; print(y)",
            "s = 'for x in y: pass'; print(s)",
            "print('a\\nb')",
            "import os\nfor x in os.listdir('.'):\n    print(x)",
            "# a; for x in y: z\nprint(1)",
            "if (n := 10) > 5: print(n)",
            "x = [i for i in range(3) if i]; print(x)",
            "total = 1 if a else 2; print(total)",
        ] {
            assert_eq!(fixed(code), None, "{code}");
        }
    }

    #[test]
    fn a_bad_line_is_laid_out_where_it_stands_in_its_block() {
        let code = "def f(rows):\n    n = 0; for r in rows: n += r\n    return n\nprint(f([1, 2]))";
        assert_eq!(
            fixed(code).unwrap(),
            "def f(rows):\n    n = 0\n    for r in rows:\n        n += r\n    return n\nprint(f([1, 2]))"
        );
    }

    #[test]
    fn escapes_meant_for_json_are_read_once_more() {
        let (out, fixes) = repair("import math\\nprint(math.sqrt(2))").unwrap();
        assert_eq!(out, "import math\nprint(math.sqrt(2))");
        assert_eq!(fixes, [Correction::PythonEscapesUnescaped]);
        // An escape inside a string literal is Python's own and stays.
        assert_eq!(
            fixed("x = 'a\\nb'\\nprint(x)").unwrap(),
            "x = 'a\\nb'\nprint(x)"
        );
        // Quotes escaped twice: the whole source was escaped once too often.
        assert_eq!(
            fixed("print(\\\"hi\\\")\\nprint(\\\"a\\\\nb\\\")").unwrap(),
            "print(\"hi\")\nprint(\"a\\nb\")"
        );
        // Both at once.
        let (out, fixes) = repair("total = 0\\nfor x in [1, 2]: total += x; print(total)").unwrap();
        assert_eq!(fixes, [Correction::PythonEscapesUnescaped]);
        assert_eq!(out, "total = 0\nfor x in [1, 2]: total += x; print(total)");
        let (out, fixes) = repair("n = 0\\nfor x in [1]: n += x; if n: print(n)").unwrap();
        assert_eq!(
            fixes,
            [
                Correction::PythonEscapesUnescaped,
                Correction::PythonOneLineRelaid
            ]
        );
        assert_eq!(
            out,
            "n = 0\nfor x in [1]:\n    n += x\n    if n:\n        print(n)"
        );
    }

    #[test]
    fn what_cannot_be_read_for_certain_is_left_alone() {
        for code in [
            "print('unterminated; for x in y: z",
            "print((1); for x in y: pass",
            "x = 1)",
            "s = '''open; for x: y",
        ] {
            assert_eq!(fixed(code), None, "{code}");
        }
    }

    #[test]
    fn string_prefixes_and_triple_quotes_are_strings() {
        assert_eq!(
            fixed("s = rb'x;y'; t = f\"\"\"a: {1}; for\"\"\"; for c in s: print(c)").unwrap(),
            "s = rb'x;y'\nt = f\"\"\"a: {1}; for\"\"\"\nfor c in s:\n    print(c)"
        );
        // A name ending in a prefix letter is a name, not a prefix.
        assert_eq!(
            fixed("bar = 'x'; for c in bar: print(c)").unwrap(),
            "bar = 'x'\nfor c in bar:\n    print(c)"
        );
    }

    #[test]
    fn a_header_with_nothing_after_it_gets_pass_and_comments_stay() {
        assert_eq!(
            fixed("x = 1; if x:  # check").unwrap(),
            "x = 1\nif x:  # check\n    pass"
        );
        assert_eq!(
            fixed("async def f(): return 1; async with a: pass").unwrap(),
            "async def f():\n    return 1\n    async with a:\n        pass"
        );
    }

    proptest::proptest! {
        /// Any text: no panic, and what a repair makes needs no second one.
        #[test]
        fn repairs_never_panic_and_settle_in_one_pass(
            code in r#"([a-z ]{0,6}|if|for x in y|else|try|except|with|[;:'"\\#(){}\[\]\n]|\\n){0,40}"#
        ) {
            if let Some((out, _)) = repair(&code) {
                proptest::prop_assert_eq!(repair(&out).map(|(c, _)| c), None, "{:?} -> {:?}", code, out);
            }
        }
    }
}
