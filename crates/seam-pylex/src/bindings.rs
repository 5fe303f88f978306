//! Which files a line of code read: the names it uses followed back to the
//! lines that bound them. The agent asks it of the line a traceback ends in,
//! to tell a KeyError of the file it was looked up in.

use std::collections::HashSet;

/// The files (as [`crate::file_names`] finds them) behind line `line`
/// (1-based) of `code`: those the line names, and those named where a name
/// it uses was last bound before it (`rows = csv.DictReader(open('a.csv'))`,
/// `for r in rows:`), followed back three bindings deep. Read by words, not
/// parsed: a name's binding is a line that starts with it and `=` (not
/// `==`), a `for` over it, or a `with … as` it. Which file a failing line read is what a
/// KeyError there is about: asked for a May target, qwen2.5-coder-1.5b
/// looked `target_km` up in the rows of a note, and was told it is no column
/// of the CSV the same code also opened.
pub fn files_behind_line(code: &str, line: usize) -> Vec<String> {
    let lines: Vec<&str> = code.lines().collect();
    let Some(at) = line.checked_sub(1).filter(|i| *i < lines.len()) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let mut todo = vec![(at, 0)];
    let mut seen = HashSet::new();
    while let Some((i, depth)) = todo.pop() {
        if !seen.insert(i) {
            continue;
        }
        for f in crate::file_names(lines[i]) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
        if depth == 3 {
            continue;
        }
        for name in identifiers(lines[i]) {
            if let Some(b) = (0..i).rev().find(|j| binds(lines[*j], name)) {
                todo.push((b, depth + 1));
            }
        }
    }
    out
}

/// The names `code` binds to a number and never names again: each as (name,
/// the number as written), in order. A binding is a line `name = 312.6` (or
/// `float('312.6')`, `int(700)`: a number's literal, or one such call of
/// it); a name counts as named again when it stands anywhere else in the
/// code, in a string too (an f-string's field), or later on its own line.
/// Read by words, so a name it cannot follow counts as used: the rule errs
/// towards silence. A number set and never used went into nothing the
/// program printed: told of the operator's starting mileage,
/// qwen2.5-coder-1.5b wrote `start_mileage = float('312.6')` and printed the
/// runs' sum without it. `_` and names that start with it are left alone,
/// as Python's own convention for a value kept on purpose.
pub fn figures_set_unused(code: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((name, number)) = figure_binding(line) else {
            continue;
        };
        if name.starts_with('_') || out.iter().any(|(n, _)| n == name) {
            continue;
        }
        let elsewhere = lines
            .iter()
            .enumerate()
            .any(|(j, l)| j != i && identifiers(l).contains(&name));
        let again_on_its_line = line.matches(name).count() > 1;
        if !elsewhere && !again_on_its_line {
            out.push((name.to_owned(), number.to_owned()));
        }
    }
    out
}

/// `name = N`, `name = float('N')` or `name = int(N)` on one line, N a
/// number's literal: (name, N).
fn figure_binding(line: &str) -> Option<(&str, &str)> {
    let (left, right) = line.trim().split_once('=')?;
    let name = left.trim();
    let right = right.trim();
    if right.starts_with('=') || identifiers(name) != [name] || name.contains(['.', '[']) {
        return None;
    }
    let mut value = right;
    for call in ["float(", "int("] {
        if let Some(inner) = value.strip_prefix(call).and_then(|v| v.strip_suffix(')')) {
            value = inner.trim().trim_matches(|c| c == '\'' || c == '"');
            break;
        }
    }
    let number = value.strip_prefix('-').unwrap_or(value);
    let mut parts = number.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let is_number = digits(whole) && parts.next().is_none_or(digits);
    is_number.then_some((name, value))
}

/// The identifiers of a line of code, each once, in order.
fn identifiers(line: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        let ident = c.is_alphanumeric() || c == '_';
        match (start, ident) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let w = &line[s..i];
                if !w.starts_with(|c: char| c.is_ascii_digit()) && !out.contains(&w) {
                    out.push(w);
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Does `line` bind `name`: `name = …`, `for name in …`, or `with … as name`?
fn binds(line: &str, name: &str) -> bool {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix("for ")
        && let Some((targets, _)) = rest.split_once(" in ")
    {
        return identifiers(targets).contains(&name);
    }
    if t.starts_with("with ") {
        return t
            .split(" as ")
            .skip(1)
            .any(|after| identifiers(after).first() == Some(&name));
    }
    let Some(rest) = t.strip_prefix(name) else {
        return false;
    };
    let rest = rest.trim_start();
    rest.starts_with('=') && !rest.starts_with("==")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_number_set_and_never_named_again_is_found() {
        let code = "import csv\nruns = csv.DictReader(open('data/runs.csv'))\n\
                    km = [float(r['distance_km']) for r in runs]\n\
                    start_mileage = float('312.6')\nretire_at = float('700.0')\n\
                    now = sum(km)\nleft = retire_at - now\n\
                    print(f'{now:.2f} km, {left:.2f} to go')";
        assert_eq!(
            super::figures_set_unused(code),
            [("start_mileage".to_owned(), "312.6".to_owned())]
        );
        // Named in an f-string's field, in another binding, on its own line
        // again, or by a function written before it: used.
        for used in [
            "start = 312.6\nprint(f'{start + 1}')",
            "start = 312.6\nstart = start + 2",
            "start = 312.6; print(start)",
            "def f():\n    return start\nstart = 312.6\nprint(f())",
            "start = int(700)\ntotal = start",
        ] {
            assert!(super::figures_set_unused(used).is_empty(), "{used}");
        }
        // Plain and negative literals, int() of one; `_` kept on purpose; a
        // comparison, an attribute, an item and a non-number are no bindings.
        assert_eq!(
            super::figures_set_unused("a = 700\nb = -2.5\nc = int(\"12\")\n_ = 1\nprint(1)"),
            [
                ("a".to_owned(), "700".to_owned()),
                ("b".to_owned(), "-2.5".to_owned()),
                ("c".to_owned(), "12".to_owned())
            ]
        );
        for none in [
            "a == 700",
            "self.a = 700",
            "d['a'] = 700",
            "a = 700 + 1",
            "a = 'x'",
            "a = 1.2.3",
            "a, b = 1, 2",
            "a = float(x)",
        ] {
            assert!(super::figures_set_unused(none).is_empty(), "{none}");
        }
    }

    #[test]
    fn the_files_behind_a_line_are_followed_through_its_names() {
        let code = "import csv\nnotes = csv.DictReader(open('notes/plan.md'))\n\
                    runs = csv.DictReader(open('data/runs.csv'))\ntarget = next(notes)['target_km']\n\
                    total = sum(float(r['km']) for r in runs)";
        assert_eq!(super::files_behind_line(code, 4), ["notes/plan.md"]);
        assert_eq!(super::files_behind_line(code, 5), ["data/runs.csv"]);
        // A `for` and a `with` bind names too, followed back.
        let code = "import csv\nwith open('data/runs.csv') as f:\n    rows = list(csv.DictReader(f))\n\
                    for r in rows:\n    print(r['km'])";
        assert_eq!(super::files_behind_line(code, 5), ["data/runs.csv"]);
        // A comparison binds nothing; a line past the end has no files.
        let code = "rows = open('a.csv')\nrows == 1\nprint(rows)";
        assert_eq!(super::files_behind_line(code, 3), ["a.csv"]);
        assert!(super::files_behind_line(code, 9).is_empty());
        assert!(super::files_behind_line(code, 0).is_empty());
        // A name bound later than the line, or never, names no file.
        let code = "print(rows['x'])\nrows = open('a.csv')";
        assert!(super::files_behind_line(code, 1).is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Never panics; a name it finds stands on exactly one line of the
        /// code, once, and the number it gives is on that line.
        #[test]
        fn a_name_set_and_unused_stands_once(
            code in "[a-z_0-9=.()'\"+\\- \n{}f]{0,80}"
        ) {
            for (name, number) in super::figures_set_unused(&code) {
                let lines: Vec<&str> = code
                    .lines()
                    .filter(|l| super::identifiers(l).contains(&name.as_str()))
                    .collect();
                proptest::prop_assert_eq!(lines.len(), 1, "{:?} in {:?}", name, code);
                proptest::prop_assert!(lines[0].contains(number.as_str()));
            }
        }
    }
}
