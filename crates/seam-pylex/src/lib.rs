//! What seam reads in a piece of Python code without running it: its string
//! literals, and which of them name files.
//!
//! Two sides ask the same question of the code a model hands `python.run`.
//! The gate makes each owner file the code names readable in the sandbox,
//! after path admission; the agent shows the model the first lines of a file
//! its code is about to open, when the turn has not read that file yet (so
//! the code is written against the file's real columns). They must agree on
//! what "a file the code names" is, so the answer lives here, once.
//!
//! Owns: a scan of Python's string literals, the rule for a file name, which files code
//! hands a table reader (`read_csv`, `csv.DictReader`), what code that
//! only prints literals prints, whether its brackets balance once stray closers at its
//! end are cut, where a line break inside a one-line literal stands for its escape, and
//! which literals in an f-string's fields need the other quote before Python 3.12,
//! which directory code lists when listing one and printing it is all it does, and
//! which files a line of code read, through the names it uses, and which numbers it
//! sets and never uses.
//! Must never: run or import code, touch the file system, or depend on
//! another seam crate (both the gate and the agent use it).

mod bindings;
mod listing;
mod literals;

pub use bindings::{figures_set_unused, files_behind_line};
pub use listing::directory_listed;

pub use literals::{
    compared_literals, files_read_as_tables, fstring_quotes_swapped, json_tail_at,
    newlines_in_strings_escaped, printed_words, shape, stray_closers_at_end, string_literals,
};

/// The literals of `code` that look like a file's name (see
/// [`looks_like_a_file`]), in order of appearance, each once.
pub fn file_names(code: &str) -> Vec<String> {
    string_literals(code)
        .into_iter()
        .filter(|l| looks_like_a_file(l))
        .collect()
}

/// A file's name, as code writes one: one line with no space at either end,
/// no URL, a last part that is not `.`, `..` or `~`, and either a `/` in it
/// or an extension (`runs.csv`, `notes/a.md`, `~/x.txt`, `/etc/hosts`).
/// `'2027-04'`, `'utf-8'`, `'r'`, `'%Y-%m-%d'` are not.
pub fn looks_like_a_file(lit: &str) -> bool {
    if lit.is_empty()
        || lit.contains(['\n', '\r', '\0'])
        || lit.contains("://")
        || lit.trim() != lit
    {
        return false;
    }
    let last = lit.rsplit('/').next().unwrap_or(lit);
    if last.is_empty() || last == "." || last == ".." || last == "~" {
        return false;
    }
    lit.contains('/') || has_extension(lit)
}

/// True when the last part of `name` ends in an extension: a stem, a dot and
/// 1–10 ASCII letters and digits, at least one a letter (`.csv`, `.mp4`; not
/// `.5` of `v1.5`).
pub fn has_extension(name: &str) -> bool {
    let last = name.rsplit('/').next().unwrap_or(name);
    last.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=10).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_the_literals_with_a_slash_or_an_extension() {
        let code = "import csv\nrows = csv.DictReader(open('data/runs.csv', 'r', encoding='utf-8'))\n\
                    month = '2027-04'\nfmt = '%Y-%m-%d'\nkey = open('~/.ssh/id_rsa').read()\n\
                    url = 'https://example.org/a.csv'\nname = 'plan.md'\nv = 'v1.5'";
        assert_eq!(
            file_names(code),
            ["data/runs.csv", "~/.ssh/id_rsa", "plan.md"]
        );
    }

    #[test]
    fn what_is_no_file_name() {
        for lit in [
            "",
            " a.md",
            "a.md\n",
            "~",
            "data/",
            "..",
            "x/..",
            "http://h/a.md",
            "v1.5",
            "r",
        ] {
            assert!(!looks_like_a_file(lit), "{lit:?}");
        }
        for lit in [
            "a.md",
            "/etc/hosts",
            "~/x.txt",
            "data/runs",
            "notes/trip-porto.md",
        ] {
            assert!(looks_like_a_file(lit), "{lit:?}");
        }
    }

    #[test]
    fn an_extension_is_a_dot_and_letters_or_digits_after_a_stem() {
        assert!(has_extension("data/runs.csv"));
        assert!(has_extension("clip.mp4"));
        assert!(!has_extension("data/runs"));
        assert!(!has_extension(".bashrc"));
        assert!(!has_extension("v1.5"));
        assert!(!has_extension("a.d/b"));
    }

    proptest::proptest! {
        // Any text, Python or not: the scan ends, and every file name it gives
        // is one of the literals and passes the rule.
        #[test]
        fn any_text_scans_to_an_end(code in "(?s).{0,400}") {
            let lits = string_literals(&code);
            for name in file_names(&code) {
                proptest::prop_assert!(lits.contains(&name));
                proptest::prop_assert!(looks_like_a_file(&name));
            }
            // A file read as a table is one of the file names.
            let names = file_names(&code);
            for name in files_read_as_tables(&code) {
                proptest::prop_assert!(names.contains(&name));
            }
        }

        #[test]
        fn quote_heavy_text_scans_to_an_end(code in "[\\'\"rbfRBF#\n{} a.]{0,200}") {
            let _ = file_names(&code);
        }
    }
}
