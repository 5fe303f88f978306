//! The string literals of a piece of Python code, as values: what `python.run` looks at to
//! find the owner's files the code opens (`open('data/runs.csv')`,
//! `Path("notes/a.md").read_text()`, `pd.read_csv(r'~/x.csv')`).
//!
//! A tokenizer-level scan, by hand: no parser is needed to find literals, only Python's
//! lexical rules for strings (prefixes `r`, `b`, `u`, `f`, `t` in any case and order Python
//! allows; single, double and triple quotes; backslash escapes; comments), and the maintained
//! Python parsers are not usable here: ruff's parser is not published as a crate, RustPython's
//! standalone `rustpython-parser` is no longer developed (RustPython moved to ruff's), and
//! tree-sitter's grammar is C built by a build script — each far more than a string scan,
//! and each would refuse the slightly broken code a small model writes, where a scan still
//! finds the file names.
//!
//! An f-string (or t-string) is a literal only when it interpolates nothing (`f"data.csv"`,
//! `f"{{x}}"`); one with a `{…}` field is skipped, its nested strings with it. Implicit
//! concatenation (`'data/' 'runs.csv'`) gives two literals, as the tokenizer does.

/// The value of every string literal of `code`, in order of appearance, each once.
pub fn string_literals(code: &str) -> Vec<String> {
    let mut scan = Scan::new(code);
    let mut out: Vec<String> = Vec::new();
    while let Some(lit) = scan.next_literal() {
        if let Some(v) = lit
            && !out.contains(&v)
        {
            out.push(v);
        }
    }
    out
}

/// The text `code` prints when every statement of it is a `print` of plain string literals
/// (`print('a')`, `print("a", 'b')`, several lines of them, comments and blank lines
/// between), each call's literals joined by a space and each call ending a line, as Python
/// prints them. `None` for anything else: a name, a number, an interpolating f-string, a
/// keyword argument, a byte string, another call.
pub fn printed_words(code: &str) -> Option<String> {
    let mut scan = Scan::new(code);
    // The code with each literal as one byte, `\0`, and the literals' values in order.
    let mut skeleton: Vec<u8> = Vec::new();
    let mut values: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(found) = scan.next_literal() {
        let start = scan.start;
        skeleton.extend_from_slice(&code.as_bytes()[from..start]);
        let plain_str = !code.as_bytes()[start..scan.i]
            .iter()
            .take_while(|b| **b != b'\'' && **b != b'"')
            .any(|b| b.eq_ignore_ascii_case(&b'b'));
        values.push(found.filter(|_| plain_str)?);
        skeleton.push(0);
        from = scan.i;
    }
    skeleton.extend_from_slice(&code.as_bytes()[from..]);
    let mut out = String::new();
    let mut taken = values.into_iter();
    let mut calls = 0;
    for line in skeleton.split(|b| *b == b'\n') {
        let line = match line.iter().position(|b| *b == b'#') {
            Some(at) => &line[..at],
            None => line,
        };
        let words: Vec<u8> = line
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        if words.is_empty() {
            continue;
        }
        for stmt in words.split(|b| *b == b';').filter(|s| !s.is_empty()) {
            let args = stmt.strip_prefix(b"print(")?.strip_suffix(b")")?;
            let args = args.strip_suffix(b",").unwrap_or(args);
            let mut parts: Vec<String> = Vec::new();
            if !args.is_empty() {
                for a in args.split(|b| *b == b',') {
                    if a != [0] {
                        return None;
                    }
                    parts.push(taken.next()?);
                }
            }
            out.push_str(&parts.join(" "));
            out.push('\n');
            calls += 1;
        }
    }
    (calls > 0).then_some(out)
}

/// `code` with every string literal (its prefix and quotes too) replaced by `''`: two
/// pieces of code of the same shape differ only in the strings they hold, as a plan's steps
/// do that run one program for one name after another.
pub fn shape(code: &str) -> String {
    let b = code.as_bytes();
    let mut scan = Scan::new(code);
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut from = 0;
    while scan.next_literal().is_some() {
        out.extend_from_slice(&b[from..scan.start]);
        out.extend_from_slice(b"''");
        from = scan.i;
    }
    out.extend_from_slice(&b[from.min(b.len())..]);
    String::from_utf8_lossy(&out).into_owned()
}

/// Where the closing brackets at the very end of `code` that open nowhere begin
/// (`print(total)}`), when dropping them, and only them, leaves every bracket of the code
/// balanced: what is left of the JSON object around the code when a model closes the object
/// inside the string. Brackets in string literals and comments do not count. `None` when the
/// code's brackets balance as they are, or when anything but those last closers is out.
pub fn stray_closers_at_end(code: &str) -> Option<usize> {
    if balanced(&shape(code)) {
        return None;
    }
    let trimmed = code.trim_end();
    let mut end = trimmed.len();
    // at most three: `)}` and `}]}` are what a JSON object or two leave behind
    for _ in 0..3 {
        match trimmed[..end].chars().last() {
            Some(c @ ('}' | ']' | ')')) => end -= c.len_utf8(),
            _ => return None,
        }
        let rest = trimmed[..end].trim_end();
        if balanced(&shape(rest)) {
            return Some(rest.len());
        }
    }
    None
}

/// Where a piece of code ends when a model closed its JSON string one brace early and wrote
/// on: the first closing bracket that opens nowhere (brackets in string literals and comments
/// aside), when at most three closers follow it and then the `"` that closed the JSON string,
/// itself followed by what closes JSON (`}`, `,`, `]`, or nothing), and when every bracket
/// before it balances. qwen2.5-coder-1.5b wrote `print(total)}"}` and a second action after
/// it; the JSON reader, seeing the quote was no end, kept it all as the code, and Python
/// stopped on the stray `}` (dev suite, multi-shoe-mileage). [`stray_closers_at_end`] is the
/// case where nothing follows the closers. `None` for anything else.
pub fn json_tail_at(code: &str) -> Option<usize> {
    let b = code.as_bytes();
    let mut literals = Vec::new();
    let mut scan = Scan::new(code);
    while scan.next_literal().is_some() {
        literals.push((scan.start, scan.i));
    }
    let mut literals = literals.into_iter().peekable();
    let mut open: Vec<u8> = Vec::new();
    let mut i = 0;
    let mut comment = false;
    while i < b.len() {
        if let Some(&(start, end)) = literals.peek()
            && i >= start
        {
            literals.next();
            i = end.max(i + 1);
            continue;
        }
        let c = b[i];
        match c {
            b'\n' => comment = false,
            _ if comment => {}
            b'#' => comment = true,
            b'(' | b'[' | b'{' => open.push(c),
            b')' | b']' | b'}' => {
                let want = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if open.pop() != Some(want) {
                    return closed_in_json(code, i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// [`json_tail_at`] at `at`, the first closer of `code` that opens nowhere.
fn closed_in_json(code: &str, at: usize) -> Option<usize> {
    let rest = &code[at..];
    let closers = rest
        .bytes()
        .take_while(|c| matches!(c, b')' | b']' | b'}'))
        .count();
    let after = rest[closers..].strip_prefix('"')?.trim_start();
    let json = after.is_empty() || after.starts_with(['}', ',', ']']);
    let head = code[..at].trim_end();
    (closers <= 3 && json && !head.is_empty() && balanced(&shape(head))).then_some(head.len())
}

/// Do the brackets of `shaped` (code whose string literals [`shape`] emptied) balance,
/// comments aside?
fn balanced(shaped: &str) -> bool {
    let mut open = Vec::new();
    for line in shaped.lines() {
        for c in line.chars() {
            match c {
                '#' => break,
                '(' | '[' | '{' => open.push(c),
                ')' | ']' | '}' => {
                    let want = match c {
                        ')' => '(',
                        ']' => '[',
                        _ => '{',
                    };
                    if open.pop() != Some(want) {
                        return false;
                    }
                }
                _ => {}
            }
        }
    }
    open.is_empty()
}

/// At most this many line breaks in one one-line literal are taken for escapes. The
/// JSON-decoded `\n`s a model meant stand in short literals: a separator
/// (`split('\n\n')`), a joiner, a regex (the 3 of the case below); 4 leaves one to spare.
/// Past it, the quote that seems to close the literal is more likely a later literal's
/// opening one, and the mend would swallow lines of code into a string.
const MAX_BREAKS_IN_LITERAL: usize = 4;

/// `code` with each line break that stands inside a one-line string literal written as the
/// escape `\n`, or `None` when there is none or the code so mended would still not lex.
/// Such a break is always a syntax error in Python; it is what a model gets that meant the
/// escape and wrote `\n` in the JSON string that carries the code, where it stands for a
/// line break (qwen2.5-coder-1.5b: `output.split('\n')` reached Python as a quote, a line
/// break and a quote).
///
/// The breaks of a literal are taken for escapes when its own quote closes it within
/// [`MAX_BREAKS_IN_LITERAL`] breaks, and the mended code is lexically sound: every literal
/// in it closes and its brackets balance. At first only a literal closed on the very next
/// line was mended; the same model, writing `re.findall(r'### (.+?)\n\n(.*?)(?=\n###)',
/// content, re.DOTALL)`, handed Python a literal over four lines (two breaks in a row), and
/// Python refused it as unterminated. A literal left open (`print('a` and code below it),
/// or one whose closing quote would leave the rest unsound (`print('a`, a break, `b =
/// 'x'`: `x'` opens a literal nothing closes), stays as it was, for Python to refuse.
/// Correct code never changes: a one-line literal holds no raw break in valid Python (a
/// backslash-newline is an escape the scan reads past), and triple-quoted strings and
/// comments hold theirs as they should.
pub fn newlines_in_strings_escaped(code: &str) -> Option<String> {
    let mut scan = Scan {
        breaks: Some(Vec::new()),
        ..Scan::new(code)
    };
    while scan.next_literal().is_some() {}
    let breaks = scan.breaks.unwrap_or_default();
    if breaks.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(code.len() + breaks.len());
    let mut from = 0;
    for at in breaks {
        out.push_str(&code[from..at]);
        out.push_str("\\n");
        from = at + 1;
    }
    out.push_str(&code[from..]);
    lexically_sound(&out).then_some(out)
}

/// Whether every string literal of `code` closes and its brackets balance (literals and
/// comments aside): the code lexes, as far as literals and brackets go.
fn lexically_sound(code: &str) -> bool {
    let mut scan = Scan::new(code);
    while scan.next_literal().is_some() {}
    !scan.unclosed && balanced(&shape(code))
}

/// `code` with each one-line string literal that stands in an f-string's field and is
/// quoted like the f-string itself (`f'{row['km']}'`, `f"{x or ""}"`) quoted with the other
/// quote, or `None` when there is none. Python reads such code only from 3.12 on (PEP 701);
/// before, the f-string ends at the inner quote and the program is a syntax error, and models
/// write it often (qwen2.5-coder-1.5b: `f'You were {difference} km {'' if difference > 0
/// else ''}'`, refused by Python 3.11). A literal whose text holds the other quote or a
/// backslash is left as it is: no swap writes it the same.
pub fn fstring_quotes_swapped(code: &str) -> Option<String> {
    let mut scan = Scan {
        nested: Some(Vec::new()),
        ..Scan::new(code)
    };
    while scan.next_literal().is_some() {}
    let b = code.as_bytes();
    let mut out = b.to_vec();
    let mut swapped = false;
    for (open, close) in scan.nested.unwrap_or_default() {
        let q = b[open];
        let other = if q == b'\'' { b'"' } else { b'\'' };
        if b[open + 1..close].iter().any(|&c| c == other || c == b'\\') {
            continue;
        }
        out[open] = other;
        out[close] = other;
        swapped = true;
    }
    // Only ASCII quotes changed, so the bytes are still UTF-8.
    swapped.then(|| String::from_utf8(out).unwrap_or_else(|_| code.to_owned()))
}

/// Whether `rest` (what follows a line break in a one-line literal quoted with `q`) closes
/// the literal with `q` before more than `breaks` further line breaks. A backslash escapes
/// what follows it, a line break too.
fn closes_within(rest: &[u8], q: u8, breaks: usize) -> bool {
    let mut left = breaks;
    let mut i = 0;
    while let Some(&b) = rest.get(i) {
        match b {
            b'\n' if left == 0 => return false,
            b'\n' => {
                left -= 1;
                i += 1;
            }
            b'\\' => i += 2,
            _ if b == q => return true,
            _ => i += 1,
        }
    }
    false
}

/// The plain string literals of `code` that stand on one side of `==` (`row['date'] ==
/// '2027-04'`, `'Lars' == name`), in order, each once: the values the code looks for exactly.
pub fn compared_literals(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let mut scan = Scan::new(code);
    let mut out: Vec<String> = Vec::new();
    while let Some(found) = scan.next_literal() {
        let before = b[..scan.start].trim_ascii_end();
        let after = b[scan.i..].trim_ascii_start();
        let compared =
            (before.ends_with(b"==") && !before.ends_with(b"===")) || after.starts_with(b"==");
        if let Some(v) = found
            && compared
            && !out.contains(&v)
        {
            out.push(v);
        }
    }
    out
}

/// The calls that read a file as a table of delimited rows: pandas'
/// `read_csv`/`read_table`/`read_fwf`, the `csv` module's `reader` and
/// `DictReader`, numpy's `loadtxt`/`genfromtxt`.
const TABLE_READERS: &[&[u8]] = &[
    b"read_csv",
    b"read_table",
    b"read_fwf",
    b"reader",
    b"DictReader",
    b"loadtxt",
    b"genfromtxt",
];

/// The file names (see [`crate::looks_like_a_file`]) that `code` hands a
/// table reader as its first argument, directly (`pd.read_csv('a.csv')`) or
/// opened (`csv.DictReader(open('a.csv'))`), in order, each once: the files
/// the code reads as rows of delimited values. A file opened into a name
/// first (`f = open(…)`, then `csv.reader(f)`) is not followed.
pub fn files_read_as_tables(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let mut scan = Scan::new(code);
    let mut out: Vec<String> = Vec::new();
    while let Some(found) = scan.next_literal() {
        let Some(v) = found else { continue };
        if out.contains(&v) || !crate::looks_like_a_file(&v) {
            continue;
        }
        let Some(mut before) = b[..scan.start].trim_ascii_end().strip_suffix(b"(") else {
            continue;
        };
        before = before.trim_ascii_end();
        if let Some(rest) = name_before(before, b"open")
            && let Some(rest) = rest.trim_ascii_end().strip_suffix(b"(")
        {
            before = rest.trim_ascii_end();
        }
        if TABLE_READERS
            .iter()
            .any(|r| name_before(before, r).is_some())
        {
            out.push(v);
        }
    }
    out
}

/// `code` without `name` at its end, when it ends in that whole name (no
/// identifier character before it).
fn name_before<'a>(code: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let rest = code.strip_suffix(name)?;
    (!rest.last().is_some_and(|&c| is_ident(c))).then_some(rest)
}

struct Scan<'a> {
    s: &'a [u8],
    i: usize,
    /// Where the literal `next_literal` last gave starts (its prefix included).
    start: usize,
    /// When kept: where a one-line literal holds a line break, in a literal its own quote
    /// closes within [`MAX_BREAKS_IN_LITERAL`] breaks (see [`newlines_in_strings_escaped`]);
    /// the scan reads such a literal on, instead of dropping it.
    breaks: Option<Vec<usize>>,
    /// Some literal ran to a line break (one-line) or to the end of the code unclosed.
    unclosed: bool,
    /// When kept: the opening and closing quotes of each one-line literal in an f-string's
    /// field that is quoted like the f-string itself (see [`fstring_quotes_swapped`]).
    nested: Option<Vec<(usize, usize)>>,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// The prefix letters Python allows before a quote (any case).
fn string_prefix(word: &[u8]) -> Option<Prefix> {
    let lower: Vec<u8> = word.iter().map(u8::to_ascii_lowercase).collect();
    let (raw, bytes, fmt) = match &lower[..] {
        b"r" => (true, false, false),
        b"u" => (false, false, false),
        b"b" => (false, true, false),
        b"br" | b"rb" => (true, true, false),
        b"f" | b"t" => (false, false, true),
        b"fr" | b"rf" | b"tr" | b"rt" => (true, false, true),
        _ => return None,
    };
    Some(Prefix { raw, bytes, fmt })
}

#[derive(Debug, Clone, Copy, Default)]
struct Prefix {
    raw: bool,
    bytes: bool,
    fmt: bool,
}

impl<'a> Scan<'a> {
    /// A scan of `code` from its start that keeps neither breaks nor nested literals.
    fn new(code: &'a str) -> Scan<'a> {
        Scan {
            s: code.as_bytes(),
            i: 0,
            start: 0,
            breaks: None,
            unclosed: false,
            nested: None,
        }
    }

    fn peek(&self, k: usize) -> Option<u8> {
        self.s.get(self.i + k).copied()
    }

    /// The next literal: `Some(Some(value))`, `Some(None)` for one that gives no plain value
    /// (an interpolating f-string, undecodable bytes, unterminated), `None` at the end.
    fn next_literal(&mut self) -> Option<Option<String>> {
        while let Some(b) = self.peek(0) {
            match b {
                b'#' => {
                    while self.peek(0).is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                b'\'' | b'"' => {
                    self.start = self.i;
                    return Some(self.literal(Prefix::default()));
                }
                _ if is_ident_start(b) => {
                    let start = self.i;
                    while self.peek(0).is_some_and(is_ident) {
                        self.i += 1;
                    }
                    if let (Some(q @ (b'\'' | b'"')), Some(p)) =
                        (self.peek(0), string_prefix(&self.s[start..self.i]))
                    {
                        let _ = q;
                        self.start = start;
                        return Some(self.literal(p));
                    }
                }
                // a number such as 1e5 or 0x1F must not start an identifier mid-way
                _ if b.is_ascii_digit() => {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
                    {
                        self.i += 1;
                    }
                }
                _ => self.i += 1,
            }
        }
        None
    }

    /// At a quote: reads the literal through its closing quote.
    fn literal(&mut self, p: Prefix) -> Option<String> {
        let q = self.s[self.i];
        let triple = self.peek(1) == Some(q) && self.peek(2) == Some(q);
        self.i += if triple { 3 } else { 1 };
        let mut body: Vec<u8> = Vec::new();
        let mut plain = true;
        // line breaks met so far in this one-line literal
        let mut run = 0;
        loop {
            let Some(b) = self.peek(0) else {
                self.unclosed = true;
                return None;
            };
            if b == q && (!triple || (self.peek(1) == Some(q) && self.peek(2) == Some(q))) {
                self.i += if triple { 3 } else { 1 };
                break;
            }
            if b == b'\n' && !triple {
                run += 1;
                if let Some(breaks) = self.breaks.as_mut()
                    && run <= MAX_BREAKS_IN_LITERAL
                    && closes_within(&self.s[self.i + 1..], q, MAX_BREAKS_IN_LITERAL - run)
                {
                    breaks.push(self.i);
                    body.push(b);
                    self.i += 1;
                    continue;
                }
                // unterminated: Python would refuse the code; give nothing
                self.unclosed = true;
                self.i += 1;
                return None;
            }
            if b == b'\\' {
                let Some(next) = self.peek(1) else {
                    self.unclosed = true;
                    self.i += 1;
                    return None;
                };
                if p.raw {
                    body.extend_from_slice(&[b'\\', next]);
                } else {
                    self.i += 1;
                    self.escape(&mut body, p.bytes);
                    continue;
                }
                self.i += 2;
                continue;
            }
            if p.fmt && (b == b'{' || b == b'}') {
                if self.peek(1) == Some(b) {
                    body.push(b);
                    self.i += 2;
                    continue;
                }
                if b == b'{' {
                    plain = false;
                    if self.skip_field((!triple).then_some(q)).is_none() {
                        // the field, and so the literal, runs to the end of the code
                        self.unclosed = true;
                        return None;
                    }
                    continue;
                }
            }
            body.push(b);
            self.i += 1;
        }
        if !plain {
            return None;
        }
        String::from_utf8(body).ok()
    }

    /// After a backslash (at the escaped character) of a literal that is not raw: appends
    /// what the escape stands for. Unknown escapes keep their backslash, as Python does.
    fn escape(&mut self, body: &mut Vec<u8>, bytes: bool) {
        let Some(c) = self.peek(0) else { return };
        self.i += 1;
        let simple = match c {
            b'\n' => Some(None),
            b'\\' => Some(Some(b'\\')),
            b'\'' => Some(Some(b'\'')),
            b'"' => Some(Some(b'"')),
            b'a' => Some(Some(7)),
            b'b' => Some(Some(8)),
            b'f' => Some(Some(12)),
            b'n' => Some(Some(b'\n')),
            b'r' => Some(Some(b'\r')),
            b't' => Some(Some(b'\t')),
            b'v' => Some(Some(11)),
            _ => None,
        };
        if let Some(v) = simple {
            body.extend(v);
            return;
        }
        let hex = |scan: &mut Self, n: usize| -> Option<u32> {
            let digits = scan.s.get(scan.i..scan.i + n)?;
            let text = std::str::from_utf8(digits).ok()?;
            let v = u32::from_str_radix(text, 16).ok()?;
            scan.i += n;
            Some(v)
        };
        let code = match c {
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match self.peek(0) {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            self.i += 1;
                        }
                        _ => break,
                    }
                }
                Some(v)
            }
            b'x' => hex(self, 2),
            b'u' if !bytes => hex(self, 4),
            b'U' if !bytes => hex(self, 8),
            _ => None,
        };
        match code.and_then(char::from_u32) {
            Some(ch) if bytes || ch.is_ascii() => {
                if bytes {
                    body.push(code.unwrap_or_default() as u8);
                } else {
                    body.push(ch as u8);
                }
            }
            Some(ch) => {
                let mut buf = [0u8; 4];
                body.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            None => body.extend_from_slice(&[b'\\', c]),
        }
    }

    /// Inside an f-string at `{`: skips the replacement field through its `}`, nested strings
    /// and brackets included.
    /// `outer`: the quote of a one-line f-string around the field (a triple-quoted one's
    /// fields may hold its quote before Python 3.12 as well).
    fn skip_field(&mut self, outer: Option<u8>) -> Option<()> {
        let mut depth = 0usize;
        loop {
            let b = self.peek(0)?;
            match b {
                b'{' | b'[' | b'(' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' | b']' | b')' => {
                    self.i += 1;
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(());
                    }
                }
                b'\'' | b'"' => {
                    let start = self.i;
                    let triple = self.peek(1) == Some(b) && self.peek(2) == Some(b);
                    let found = self.literal(Prefix::default());
                    if let Some(nested) = self.nested.as_mut()
                        && Some(b) == outer
                        && !triple
                        && found.is_some()
                    {
                        nested.push((start, self.i - 1));
                    }
                }
                _ if is_ident_start(b) => {
                    let start = self.i;
                    while self.peek(0).is_some_and(is_ident) {
                        self.i += 1;
                    }
                    if let (Some(b'\'' | b'"'), Some(p)) =
                        (self.peek(0), string_prefix(&self.s[start..self.i]))
                    {
                        let _ = self.literal(p);
                    }
                }
                _ => self.i += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        MAX_BREAKS_IN_LITERAL, Scan, balanced, compared_literals, files_read_as_tables,
        fstring_quotes_swapped, json_tail_at, lexically_sound, newlines_in_strings_escaped,
        printed_words, shape, stray_closers_at_end, string_literals,
    };

    #[test]
    fn the_files_a_table_reader_is_handed_are_found() {
        let code = "import pandas as pd, csv\n\
                    plan = pd.read_csv('notes/plan.md')\n\
                    runs = csv.DictReader(open( \"data/runs.csv\" , 'r'))\n\
                    rows = list(csv.reader (open('data/b.tsv')))\n\
                    text = open('notes/a.md').read()\n\
                    x = my_reader('data/c.csv')\n\
                    pd.read_csv(f'{d}/x.csv')";
        assert_eq!(
            files_read_as_tables(code),
            ["notes/plan.md", "data/runs.csv", "data/b.tsv"]
        );
        // A name between the open and the reader is not followed; a string
        // that is no file name is no file.
        assert!(files_read_as_tables("f = open('a.csv')\nrows = csv.reader(f)").is_empty());
        assert!(files_read_as_tables("csv.reader(io.StringIO('a,b'))").is_empty());
        assert!(files_read_as_tables("pd.read_csv('2027-04')").is_empty());
    }

    #[test]
    fn a_stray_closer_left_by_json_at_the_end_is_found() {
        let code = "total = sum(float(r['km']) for r in rows)\nprint(total)}";
        assert_eq!(stray_closers_at_end(code), Some(code.len() - 1));
        let code = "print({'a': [1, 2]})}]  \n";
        assert_eq!(
            stray_closers_at_end(code),
            Some("print({'a': [1, 2]})".len())
        );
        // brackets in strings and comments do not count
        let code = "print('(')  # )\nx = 1}";
        assert_eq!(stray_closers_at_end(code), Some(code.len() - 1));
        // balanced code, an unclosed bracket, or a stray closer elsewhere: none
        for code in [
            "print({'a': 1})",
            "print('}')",
            "print((1)",
            "x = 1)\nprint(x)",
            "print(1)))))",
            "",
        ] {
            assert_eq!(stray_closers_at_end(code), None, "{code:?}");
        }
    }

    /// Where each literal of `code` starts and ends, as the scan reads them.
    fn literal_ranges(code: &str) -> Vec<(usize, usize)> {
        let mut scan = Scan::new(code);
        let mut out = Vec::new();
        while scan.next_literal().is_some() {
            out.push((scan.start, scan.i));
        }
        out
    }

    #[test]
    fn code_closed_in_json_and_written_on_ends_at_its_stray_closer() {
        let code = "import csv\nrows = csv.DictReader(open('data/runs.csv'))\n\
                    print(sum(float(r['km']) for r in rows))}\"}\n\n{\"mode\":\"action";
        let n = json_tail_at(code).unwrap();
        assert!(code[..n].ends_with("for r in rows))"), "{:?}", &code[..n]);
        let code = "print(x)]\", \"stdin\": \"\"";
        assert_eq!(json_tail_at(code), Some("print(x)".len()));
        let code = "x = {'a': '}'}  # }\nprint(x) }\"";
        assert_eq!(
            json_tail_at(code),
            Some("x = {'a': '}'}  # }\nprint(x)".len())
        );
        // No quote after the closers (stray_closers_at_end's case), a quote that
        // JSON would not close with, a closer that is matched, brackets still
        // open before it, or nothing before it: none.
        for code in [
            "print(total)}",
            "print(total)}\" and more",
            "d = {\"a\": \"b\"}\nprint(d)",
            "print((x}\"}",
            "}\"}",
            "print(x)}}}}\"}",
        ] {
            assert_eq!(json_tail_at(code), None, "{code:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// What it finds is a cut after which only closers are left and before which every
        /// bracket balances; code that balances has none.
        #[test]
        fn a_found_cut_leaves_balanced_code_and_only_closers(
            code in "[()\\[\\]{}a'\"# \n]{0,40}"
        ) {
            if let Some(n) = stray_closers_at_end(&code) {
                proptest::prop_assert!(balanced(&shape(&code[..n])));
                let rest: String = code[n..].chars().filter(|c| !c.is_whitespace()).collect();
                proptest::prop_assert!((1..=3).contains(&rest.len()), "{:?}", rest);
                let only_closers = rest.chars().all(|c| matches!(c, ')' | ']' | '}'));
                proptest::prop_assert!(only_closers, "{:?}", rest);
                proptest::prop_assert!(!balanced(&shape(&code)));
            }
            if balanced(&shape(&code)) {
                proptest::prop_assert_eq!(stray_closers_at_end(&code), None);
            }
        }

        /// A cut it finds leaves code whose brackets balance, followed by one to three
        /// closers and a quote; balanced code with a JSON tail written after a stray closer
        /// is cut back to itself.
        #[test]
        fn a_json_tail_cut_leaves_balanced_code(
            code in "[()\\[\\]{}a'\"# \n,]{0,40}",
            closers in "[)\\]}]{1,3}",
            tail in "[}\\],][a-z\"{}:, \n]{0,12}",
        ) {
            if let Some(n) = json_tail_at(&code) {
                proptest::prop_assert!(balanced(&shape(&code[..n])));
                let rest = code[n..].trim_start();
                let k = rest.bytes().take_while(|c| matches!(c, b')' | b']' | b'}')).count();
                proptest::prop_assert!((1..=3).contains(&k), "{:?}", rest);
                proptest::prop_assert!(rest[k..].starts_with('"'), "{:?}", rest);
            }
            let base = code.trim_end();
            let written = format!("{base}{closers}\"{tail}");
            // The closers stand outside every literal of `base` (none runs on into them)
            // and outside a comment.
            let theirs = literal_ranges(base);
            let outside = literal_ranges(&written)
                .into_iter()
                .take(theirs.len())
                .eq(theirs.iter().copied())
                && theirs.iter().all(|&(_, end)| end <= base.len())
                && !base.lines().last().is_some_and(|l| l.contains('#'));
            if balanced(&shape(base)) && !base.is_empty() && outside {
                proptest::prop_assert_eq!(json_tail_at(&written), Some(base.len()), "{:?}", written);
            }
        }

        /// Swapping changes quotes only, in pairs, and only where the code has an f-string.
        #[test]
        fn swapping_changes_only_quotes(code in "[fa'\"{}\\\\\\[\\] \n]{0,40}") {
            if let Some(swapped) = fstring_quotes_swapped(&code) {
                proptest::prop_assert_eq!(swapped.len(), code.len());
                let changed: Vec<(char, char)> = code
                    .chars()
                    .zip(swapped.chars())
                    .filter(|(a, b)| a != b)
                    .collect();
                proptest::prop_assert!(!changed.is_empty() && changed.len().is_multiple_of(2));
                for (a, b) in changed {
                    proptest::prop_assert!(
                        (a == '\'' && b == '"') || (a == '"' && b == '\''),
                        "{:?} -> {:?}", code, swapped
                    );
                }
                proptest::prop_assert!(code.contains("f'") || code.contains("f\""));
            }
        }

        /// Escaped code differs from the code only where a line break became `\n`:
        /// taking those back gives the code again. (Escaping twice may find more: an
        /// escape written in one literal can let an earlier open one close, as in
        /// `'`, a break, `"`, a break, `'"`.)
        #[test]
        fn escaping_changes_only_breaks(
            code in "[a'\"\\f{}# \n]{0,40}"
        ) {
            if let Some(fixed) = newlines_in_strings_escaped(&code) {
                proptest::prop_assert!(fixed.len() > code.len());
                proptest::prop_assert!(fixed.matches('\n').count() < code.matches('\n').count());
                // Every break kept or escaped, nothing else touched.
                let mut back = String::new();
                let (mut f, mut c) = (fixed.as_str(), code.as_str());
                while let Some(ch) = c.chars().next() {
                    if f.starts_with(ch) {
                        back.push(ch);
                        f = &f[ch.len_utf8()..];
                    } else {
                        proptest::prop_assert!(ch == '\n' && f.starts_with("\\n"), "{:?} / {:?}", code, fixed);
                        back.push('\n');
                        f = &f[2..];
                    }
                    c = &c[ch.len_utf8()..];
                }
                proptest::prop_assert_eq!(back, code);
                proptest::prop_assert_eq!(f, "");
            }
        }

        /// Escaped code lexes (its literals close, its brackets balance), and code that
        /// lexes is left as it is.
        #[test]
        fn escaped_code_is_sound_and_sound_code_stays(
            code in "[a'\"\\\\f{}()# \n]{0,40}"
        ) {
            if let Some(fixed) = newlines_in_strings_escaped(&code) {
                proptest::prop_assert!(lexically_sound(&fixed), "{:?} / {:?}", code, fixed);
            }
            if lexically_sound(&code) {
                proptest::prop_assert_eq!(newlines_in_strings_escaped(&code), None);
            }
        }

        /// Against what was meant: correct lines around one literal whose text (no quote,
        /// no backslash) JSON split at each `\n`. Its breaks, all and only they, are
        /// escaped when there are at most `MAX_BREAKS_IN_LITERAL`; past that, none is.
        #[test]
        fn the_breaks_of_one_literal_are_escaped_up_to_the_bound(
            before in proptest::collection::vec(0..SOUND_LINES.len(), 0..3),
            pieces in proptest::collection::vec("[a-z ()\\[\\]{}#\"]{0,6}", 1..8),
            after in proptest::collection::vec(0..SOUND_LINES.len(), 0..3),
        ) {
            let lines = |ix: &[usize]| ix.iter().map(|&i| SOUND_LINES[i]).collect::<String>();
            let (before, after) = (lines(&before), lines(&after));
            let code = format!("{before}x = s.split('{}')\n{after}", pieces.join("\n"));
            let meant = format!("{before}x = s.split('{}')\n{after}", pieces.join("\\n"));
            let breaks = pieces.len() - 1;
            let want = (1..=MAX_BREAKS_IN_LITERAL).contains(&breaks).then_some(meant);
            proptest::prop_assert_eq!(newlines_in_strings_escaped(&code), want, "{:?}", code);
        }
    }

    /// Lines of correct code, each with its line break, around a literal under test.
    const SOUND_LINES: &[&str] = &[
        "y = 1\n",
        "print('ok', \"a'b\")\n",
        "# it's (\n",
        "doc = '''a\n(b'''\n",
        "z = {'k': [1, 2]}\n",
        "s = 'a\\\nb'\n",
    ];

    #[test]
    fn code_that_differs_only_in_its_strings_has_one_shape() {
        let a = "for l in open('r.md'):\n    if 'Lars' in l:\n        print(l)";
        let b = "for l in open('r.md'):\n    if \"Priya Raman\" in l:\n        print(l)";
        assert_eq!(shape(a), shape(b));
        assert_eq!(
            shape(a),
            "for l in open(''):\n    if '' in l:\n        print(l)"
        );
        assert_ne!(shape(a), shape("for l in open('r.md'):\n    print(l)"));
        assert_eq!(shape("x = 1 # 'not a string'"), "x = 1 # 'not a string'");
    }

    #[test]
    fn the_literals_compared_with_equals_are_found_on_either_side() {
        let code = "for r in rows:\n    if r['date'] == '2027-04' and 'Lars' ==r['who']:\n        \
                    print(r['km'] != 'x', r.get('a') >= 'b')";
        assert_eq!(compared_literals(code), ["2027-04", "Lars"]);
        assert!(compared_literals("x = 'a'\nprint(x)").is_empty());
    }

    #[test]
    fn code_that_only_prints_literals_gives_the_printed_text() {
        assert_eq!(
            printed_words("print('The path is protected.')").as_deref(),
            Some("The path is protected.\n")
        );
        assert_eq!(
            printed_words(
                "# say it\nprint(\"a\", 'b',)\n\nprint()  # done\nprint(r'c\\d'); print(f'{{x}}')\n"
            )
            .as_deref(),
            Some("a b\n\nc\\d\n{x}\n")
        );
        for code in [
            "",
            "# nothing",
            "print(7**23)",
            "print('a', x)",
            "print(f'{x}')",
            "print('a', end='')",
            "print(b'a')",
            "x = 'a'\nprint(x)",
            "print('a')\nprint(open('data/runs.csv').read())",
            "print('a') or exit(1)",
            "import os\nprint('a')",
            "print('a'",
        ] {
            assert_eq!(printed_words(code), None, "{code:?}");
        }
    }

    #[test]
    fn finds_the_literals_a_model_opens_files_with() {
        let code = r#"
import csv, pandas as pd
from pathlib import Path
rows = list(csv.reader(open('data/runs.csv')))  # 'a comment.txt'
df = pd.read_csv("data/other.csv")
text = Path('notes/a.md').read_text()
with open(f"notes/b.md") as f: pass
raw = open(r'C:\x\y.txt')
b = open(b'bytes.bin', 'rb')
doc = """triple
quoted.md"""
s = 'it\'s.txt'
"#;
        let lits = string_literals(code);
        for want in [
            "data/runs.csv",
            "data/other.csv",
            "notes/a.md",
            "notes/b.md",
            r"C:\x\y.txt",
            "bytes.bin",
            "rb",
            "triple\nquoted.md",
            "it's.txt",
        ] {
            assert!(lits.contains(&want.to_owned()), "{want:?} not in {lits:?}");
        }
        assert!(!lits.iter().any(|l| l.contains("comment")), "{lits:?}");
    }

    #[test]
    fn interpolating_f_strings_give_nothing_and_do_not_derail_the_scan() {
        let code = r#"x = f"{name}.csv"; y = f'{d["k"]}/a.md'; z = F"{{lit}}.txt"; w = 'after.md'"#;
        let lits = string_literals(code);
        assert_eq!(lits, ["{lit}.txt", "after.md"], "{lits:?}");
    }

    #[test]
    fn identifiers_ending_in_prefix_letters_are_not_prefixes() {
        let lits = string_literals("attr'x.md' or 'y.md'\nnumber = 1e5\nrb'z.bin'");
        assert_eq!(lits, ["x.md", "y.md", "z.bin"]);
    }

    #[test]
    fn a_line_break_a_one_line_literal_holds_is_written_as_its_escape() {
        for (code, want) in [
            (
                "x = s.split('\n')\nprint(x)",
                "x = s.split('\\n')\nprint(x)",
            ),
            ("print('a\nb')", "print('a\\nb')"),
            ("print(\"\n\".join(rows))", "print(\"\\n\".join(rows))"),
            ("print(f'{total}\n')", "print(f'{total}\\n')"),
            // two literals on one line, each with its break
            ("a = '\n'; b = '\n'", "a = '\\n'; b = '\\n'"),
            // a literal its own quote closes two lines on
            ("print('a\nb\nc')", "print('a\\nb\\nc')"),
        ] {
            let fixed = newlines_in_strings_escaped(code);
            assert_eq!(fixed.as_deref(), Some(want), "{code:?}");
        }
        for code in [
            // correct code: breaks between statements, in triple quotes, in comments,
            // an escape already written, a line continued by a backslash
            "x = 1\nprint('a')\n",
            "doc = '''a\nb'''\nprint(doc)",
            "# it's\nprint('x')",
            "print('a\\nb')",
            "s = 'a\\\nb'",
            // a literal left open: not a break the model meant as an escape
            "print('a\nx = 1\n",
        ] {
            assert_eq!(newlines_in_strings_escaped(code), None, "{code:?}");
        }
    }

    #[test]
    fn a_run_of_breaks_a_literal_closes_within_the_bound_is_escaped() {
        // qwen2.5-coder-1.5b's regex: three breaks JSON decoded, two of them in a row
        let code = "import re\n\
                    with open('notes/deploy-checklist.md', 'r') as f:\n    \
                    content = f.read()\n    \
                    steps = re.findall(r'### (.+?)\n\n(.*?)(?=\n###)', content, re.DOTALL)\n    \
                    print(steps[2])";
        let want = "import re\n\
                    with open('notes/deploy-checklist.md', 'r') as f:\n    \
                    content = f.read()\n    \
                    steps = re.findall(r'### (.+?)\\n\\n(.*?)(?=\\n###)', content, re.DOTALL)\n    \
                    print(steps[2])";
        assert_eq!(newlines_in_strings_escaped(code).as_deref(), Some(want));
        for (code, want) in [
            (
                "parts = x.split('\n\n')\nprint(parts)",
                "parts = x.split('\\n\\n')\nprint(parts)",
            ),
            // as many breaks as the bound allows
            ("print('a\nb\nc\nd\ne')", "print('a\\nb\\nc\\nd\\ne')"),
        ] {
            assert_eq!(
                newlines_in_strings_escaped(code).as_deref(),
                Some(want),
                "{code:?}"
            );
        }
        for code in [
            // a literal left open, code below it and no quote to close it
            "print('a\nx = 1\ny = [x, 2]\nprint(y)\n",
            // the quote that closes it opens the rest into a literal nothing closes
            "print('a\nb = 'x'",
            "print('a\nx = 1\nb = 'x'\nprint(b)",
            // closed, but the brackets of the mended code do not balance
            "print(x.split('\n')",
            // more breaks in the one literal than the bound
            "print('a\nb\nc\nd\ne\nf')",
        ] {
            assert_eq!(newlines_in_strings_escaped(code), None, "{code:?}");
        }
    }

    #[test]
    fn a_literal_quoted_like_its_f_string_takes_the_other_quote() {
        for (code, want) in [
            ("print(f'{row['km']} km')", "print(f'{row[\"km\"]} km')"),
            (
                "print(f\"{d[\"a\"] + d[\"b\"]}\")",
                "print(f\"{d['a'] + d['b']}\")",
            ),
            (
                "print(f'You were {d} km {'' if d > 0 else ''}')",
                "print(f'You were {d} km {\"\" if d > 0 else \"\"}')",
            ),
        ] {
            assert_eq!(
                fstring_quotes_swapped(code).as_deref(),
                Some(want),
                "{code:?}"
            );
        }
        for code in [
            // already the other quote, or a plain string, or no field
            "print(f'{row[\"km\"]}')",
            "print('{row['km']}')",
            "print(f'{{x}}', 'a')",
            // a literal that holds the other quote or a backslash stays
            "print(f'{d['it\"s']}')",
            "print(f'{d['a\\'b']}')",
            // a triple-quoted f-string's fields may hold its quote once
            "print(f'''{d['km']}''')",
        ] {
            assert_eq!(fstring_quotes_swapped(code), None, "{code:?}");
        }
    }

    #[test]
    fn escapes_are_decoded_and_unterminated_literals_dropped() {
        let lits = string_literals("a = 'd\\x61ta/\\u00e9.csv'\nb = 'open\nc = \"ok.md\"");
        assert_eq!(lits, ["data/é.csv", "ok.md"], "{lits:?}");
    }
}
