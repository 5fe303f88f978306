//! The builder's suggested replace: when a replace cannot run as written (its
//! file is not there, its `old` is not in the file, or is there more than
//! once), the change the model meant is often still plain from its own `old`
//! and `new`, and there is one line of the branch where that change belongs.
//! This module finds it and writes the replace that would make it, for the
//! refusal to show. It never edits anything: the model makes the call, or not.
//!
//! Two shapes of edit are read, both of a value:
//! - **a value changed** (`DEFAULT_PER_PAGE = 10` → `DEFAULT_PER_PAGE = 25`):
//!   `old` and `new` differ in one literal (a number, a quoted string, a
//!   boolean). The line of the branch most like `old` and the task that holds
//!   that literal once is where it changes; a line that sets it (`= 10`,
//!   `: 10`) comes first. qwen2.5-coder-1.5b, asked for 25 books a page,
//!   guessed `src/shelf.py` and `DEFAULT_PER_PAGE`; the value is set in
//!   `src/config.js` as `DEFAULT_PAGE_SIZE`.
//! - **a name replaced by a value** (`paginate(books, opts.page,
//!   DEFAULT_PAGE_SIZE)` → `paginate(books, opts.page, 25)`): `old`'s one
//!   name became a literal in `new`. The line that sets that name to a
//!   literal is where the value changes, for every place that uses it.
//!
//! Anything else (several tokens changed, a change of code rather than of a
//! value) gets no suggestion: guessing there would put words in the model's
//! mouth.

use std::collections::HashSet;

use serde_json::json;

use seam_memory::FileKind;

use crate::builder::{LIKE_MAX_FILE, NamedLine, Repo, TurnBranch, branch_texts, line_score, words};

/// A replace the builder suggests: a line of the branch, unique in its file,
/// and the same line with the model's change made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Suggestion {
    pub(crate) path: String,
    pub(crate) line: usize,
    pub(crate) old: String,
    pub(crate) new: String,
    /// What the model's edit changes, in words: `10 to 25`,
    /// `DEFAULT_PAGE_SIZE to 25`.
    what: String,
}

impl std::fmt::Display for Suggestion {
    /// The sentence a refusal ends with, the params to give in it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let params = json!({"op": "replace", "path": self.path, "old": self.old, "new": self.new});
        write!(
            f,
            "The change params.old and params.new make ({}) belongs on {}. To make it there, call builder with these params: {params}",
            self.what,
            NamedLine {
                path: &self.path,
                n: self.line,
                text: &self.old,
            }
        )
    }
}

/// The replace that makes the change `old` → `new` on the line of the branch
/// where it belongs, if the edit is one of the two shapes in the module doc
/// and such a line is there. `task` is the operator's task, whose words rank
/// the lines like [`crate::builder::lines_like`]'s. Files of prose are not
/// looked in, and a line of code wins over a line of settings or tests
/// that does as well (see [`FileKind`]): the change is in the code.
pub(crate) fn suggested_replace(
    b: &TurnBranch,
    repo: &Repo,
    old: &str,
    new: &str,
    task: &str,
) -> Option<Suggestion> {
    let change = Change::of(old, new)?;
    let wanted: HashSet<String> = words(&format!("{old}\n{task}")).collect();
    let texts = branch_texts(b, repo, LIKE_MAX_FILE).ok()?;
    let mut best: Option<(Rank, Suggestion)> = None;
    for (order, (path, content)) in texts.enumerate() {
        let kind = FileKind::of(path.as_str());
        if kind == FileKind::Prose {
            continue;
        }
        for (n, line) in content.lines().enumerate() {
            let text = line.trim();
            if text.is_empty() || text.len() > LINE_MAX {
                continue;
            }
            let Some((sets, changed)) = change.on(text) else {
                continue;
            };
            // The suggested old must be there once, or the replace fails.
            if content.matches(text).count() != 1 {
                continue;
            }
            let (shared, score) = line_score(&wanted, text);
            if shared < 2 && !matches!(change, Change::Inlined { .. }) {
                continue;
            }
            let key = (
                sets,
                kind == FileKind::Code,
                score,
                -(order as isize),
                -(n as isize),
            );
            if best.as_ref().is_none_or(|(k, _)| key > *k) {
                best = Some((
                    key,
                    Suggestion {
                        path: path.as_str().to_owned(),
                        line: n + 1,
                        old: text.to_owned(),
                        new: changed,
                        what: change.what(),
                    },
                ));
            }
        }
    }
    best.map(|(_, s)| s)
}

/// How a suggested line ranks, the greatest winning: (sets the value, in
/// code (not settings or tests), score, -file order, -line).
type Rank = (bool, bool, usize, isize, isize);

/// Lines over this length are not suggested (a minified line is no line to
/// copy).
const LINE_MAX: usize = 200;

/// The change an edit makes, when it is one the module reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    /// One literal of `old` became `to` in `new`.
    Value { from: String, to: String },
    /// One name of `old` became the literal `to` in `new`.
    Inlined { name: String, to: String },
}

impl Change {
    /// The change from `old` to `new`: their tokens compared, the common
    /// start and end left out; what is left of `old` must be one token, a
    /// literal or a name, and what is left of `new` one literal (for a name)
    /// or anything not blank on one line (for a literal).
    fn of(old: &str, new: &str) -> Option<Change> {
        let a = tokens(old);
        let b = tokens(new);
        let same = |x: &Token, y: &Token| x.text == y.text;
        let pre = a.iter().zip(&b).take_while(|(x, y)| same(x, y)).count();
        let max_suf = a.len().min(b.len()) - pre;
        let suf = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take(max_suf)
            .take_while(|(x, y)| same(x, y))
            .count();
        let [gone] = &a[pre..a.len() - suf] else {
            return None;
        };
        let came = &b[pre..b.len() - suf];
        let (first, last) = (came.first()?, came.last()?);
        let to = new[first.start..last.end].to_owned();
        if to.contains('\n') {
            return None;
        }
        match gone.kind {
            Kind::Literal => Some(Change::Value {
                from: gone.text.to_owned(),
                to,
            }),
            Kind::Name if came.len() == 1 && first.kind == Kind::Literal => Some(Change::Inlined {
                name: gone.text.to_owned(),
                to,
            }),
            _ => None,
        }
    }

    fn what(&self) -> String {
        match self {
            Change::Value { from, to } => format!("{from} to {to}"),
            Change::Inlined { name, to } => format!("{name} to {to}"),
        }
    }

    /// `line` with the change made, and whether the line sets the value
    /// (the literal comes right after `=` or `:`), when the change belongs
    /// there: for a value, `line` holds that literal once; for a name,
    /// `line` sets that name to a literal (`NAME = 10`, `NAME: 10`).
    fn on(&self, line: &str) -> Option<(bool, String)> {
        let t = tokens(line);
        let at = match self {
            Change::Value { from, .. } => {
                let mut hits = t.iter().enumerate().filter(|(_, x)| x.text == from);
                let (i, _) = hits.next()?;
                if hits.next().is_some() {
                    return None;
                }
                i
            }
            Change::Inlined { name, .. } => {
                let i = t.iter().position(|x| x.text == name)?;
                let is_set = t.get(i + 1).is_some_and(|x| x.text == "=" || x.text == ":")
                    && t.get(i + 2).is_some_and(|x| x.kind == Kind::Literal);
                if !is_set {
                    return None;
                }
                i + 2
            }
        };
        let to = match self {
            Change::Value { to, .. } | Change::Inlined { to, .. } => to,
        };
        let sets = at >= 1
            && matches!(t[at - 1].text, "=" | ":")
            && !(at >= 2 && matches!(t[at - 2].text, "=" | "!" | "<" | ">"));
        let hit = &t[at];
        let changed = format!("{}{to}{}", &line[..hit.start], &line[hit.end..]);
        Some((sets, changed))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A number, a quoted string, or a boolean or null word.
    Literal,
    /// An identifier.
    Name,
    /// One character of anything else.
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: Kind,
    text: &'a str,
    start: usize,
    end: usize,
}

/// Words that are values, in the languages a repository is likely to hold.
const VALUE_WORDS: &[&str] = &[
    "true",
    "false",
    "True",
    "False",
    "null",
    "None",
    "nil",
    "undefined",
];

/// `text` as tokens: names (`[A-Za-z_$][A-Za-z0-9_$]*`), numbers (a digit
/// and what follows of digits, letters, `.` and `_`: `10`, `0x1F`, `2.5e3`),
/// strings (from a quote to the same quote unescaped, or to the line's end),
/// and single characters of anything else; whitespace separates. Written by
/// hand: what is needed is a language-neutral split into values and names,
/// which no lexer crate gives for the whole set of languages a repository
/// may hold, and a wrong split only costs a suggestion.
fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let kind = if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if c.is_ascii_digit() {
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.' || bytes[i] == b'_')
            {
                i += 1;
            }
            Kind::Literal
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
            {
                i += 1;
            }
            if VALUE_WORDS.contains(&&text[start..i]) {
                Kind::Literal
            } else {
                Kind::Name
            }
        } else if matches!(c, b'"' | b'\'' | b'`') {
            i += 1;
            let step = |i: usize| text[i..].chars().next().map_or(1, char::len_utf8);
            while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                if bytes[i] == b'\\' && i + 1 < bytes.len() {
                    i += 1;
                }
                i += step(i);
            }
            if i < bytes.len() && bytes[i] == c {
                i += 1;
            }
            Kind::Literal
        } else {
            // One character, whole (it may be more than one byte).
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            Kind::Other
        };
        out.push(Token {
            kind,
            text: &text[start..i],
            start,
            end: i,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn change(old: &str, new: &str) -> Option<Change> {
        Change::of(old, new)
    }

    #[test]
    fn a_changed_number_is_a_value_change() {
        assert_eq!(
            change("DEFAULT_PER_PAGE = 10", "DEFAULT_PER_PAGE = 25"),
            Some(Change::Value {
                from: "10".into(),
                to: "25".into()
            })
        );
        assert_eq!(
            change("timeout: 'fast'", "timeout: \"slow\""),
            Some(Change::Value {
                from: "'fast'".into(),
                to: "\"slow\"".into()
            })
        );
        assert_eq!(
            change("DEBUG = True", "DEBUG = False"),
            Some(Change::Value {
                from: "True".into(),
                to: "False".into()
            })
        );
    }

    #[test]
    fn a_name_that_became_a_value_is_inlined() {
        assert_eq!(
            change(
                "printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));",
                "printPage(paginate(books, opts.page, 25));"
            ),
            Some(Change::Inlined {
                name: "DEFAULT_PAGE_SIZE".into(),
                to: "25".into()
            })
        );
    }

    #[test]
    fn other_edits_get_no_suggestion() {
        // Nothing changed.
        assert_eq!(change("a = 10", "a = 10"), None);
        // Code changed, not a value.
        assert_eq!(
            change("start = page * size", "start = (page - 1) * size"),
            None
        );
        // Two values changed.
        assert_eq!(change("f(1, 2)", "f(3, 4)"), None);
        // A name renamed.
        assert_eq!(change("let a = 1", "let b = 1"), None);
        // A name became code, not a value.
        assert_eq!(change("f(SIZE)", "f(size())"), None);
        // A value became several lines.
        assert_eq!(change("x = 1", "x = 1\ny = 2"), None);
    }

    #[test]
    fn a_value_changes_on_the_line_that_holds_it_once() {
        let c = change("PER_PAGE = 10", "PER_PAGE = 25").unwrap();
        assert_eq!(
            c.on("const DEFAULT_PAGE_SIZE = 10;"),
            Some((true, "const DEFAULT_PAGE_SIZE = 25;".into()))
        );
        assert_eq!(
            c.on("assert.equal(pageCount(23, 10), 3);"),
            Some((false, "assert.equal(pageCount(23, 25), 3);".into()))
        );
        // Twice on one line: which one is not plain.
        assert_eq!(c.on("range(10, 10)"), None);
        // Part of a longer number is not the number.
        assert_eq!(c.on("x = 100"), None);
        // A comparison does not set.
        assert_eq!(
            c.on("if (n == 10) {"),
            Some((false, "if (n == 25) {".into()))
        );
    }

    #[test]
    fn a_name_changes_where_it_is_set_to_a_literal() {
        let c = change("f(a, DEFAULT_PAGE_SIZE)", "f(a, 25)").unwrap();
        assert_eq!(
            c.on("const DEFAULT_PAGE_SIZE = 10;"),
            Some((true, "const DEFAULT_PAGE_SIZE = 25;".into()))
        );
        assert_eq!(
            c.on("  DEFAULT_PAGE_SIZE: 10,"),
            Some((true, "  DEFAULT_PAGE_SIZE: 25,".into()))
        );
        // A use is not where it is set.
        assert_eq!(
            c.on("printPage(paginate(books, 1, DEFAULT_PAGE_SIZE));"),
            None
        );
        // Set to code, not to a literal.
        assert_eq!(c.on("const DEFAULT_PAGE_SIZE = env.size;"), None);
    }

    #[test]
    fn the_suggestion_shows_copyable_params() {
        let s = Suggestion {
            path: "src/config.js".into(),
            line: 7,
            old: "const S = 'a\"b';".into(),
            new: "const S = 'c';".into(),
            what: "'a\"b' to 'c'".into(),
        };
        let shown = s.to_string();
        let params = shown.rsplit_once("these params: ").unwrap().1;
        let v: serde_json::Value = serde_json::from_str(params).unwrap();
        assert_eq!(v["op"], "replace");
        assert_eq!(v["path"], "src/config.js");
        assert_eq!(v["old"], "const S = 'a\"b';");
        assert_eq!(v["new"], "const S = 'c';");
        assert!(
            shown.contains("src/config.js:7: const S = 'a\"b';"),
            "{shown}"
        );
    }

    proptest! {
        /// The tokens cover the text but for whitespace, in order, and a
        /// change found from a line is made on that line alone.
        #[test]
        fn tokens_cover_the_text(text in "\\PC{0,80}") {
            let t = tokens(&text);
            let mut at = 0;
            for tok in &t {
                prop_assert!(tok.start >= at);
                prop_assert!(text[at..tok.start].chars().all(char::is_whitespace));
                prop_assert_eq!(&text[tok.start..tok.end], tok.text);
                at = tok.end;
            }
            prop_assert!(text[at..].chars().all(char::is_whitespace));
        }

        #[test]
        fn a_value_change_keeps_the_rest_of_the_line(
            head in "[a-z_]{1,8} = ",
            from in 0u32..1000,
            to in 1000u32..2000,
            tail in "[;,]?",
        ) {
            let old = format!("{head}{from}{tail}");
            let new = format!("{head}{to}{tail}");
            let c = Change::of(&old, &new).unwrap();
            let (sets, changed) = c.on(&old).unwrap();
            prop_assert!(sets);
            prop_assert_eq!(changed, new);
        }
    }
}
