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
}
