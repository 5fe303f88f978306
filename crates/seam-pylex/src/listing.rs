//! Code that does nothing but list a directory and print what it found.
//!
//! python.run runs code in an empty scratch directory, so `os.listdir('.')`
//! or `subprocess.check_output(['ls', '-la'])` there lists nothing of the
//! owner's: asked to fix a bug in a repository, qwen2.5-coder-1.5b listed
//! the scratch directory, was shown `total 0`, and made the same plan again
//! until it was stopped. Such code means "which files are there", which the
//! agent answers with the code index's tree. Read by lines, not parsed: a
//! line that is not an import, a print, a loop header or a listing makes
//! the code something else, and it runs as written.

use crate::literals::string_literals;

/// The modules listing code imports.
const MODULES: &[&str] = &["os", "os.path", "subprocess", "glob", "pathlib", "sys"];

/// What a line calls when it lists a directory.
const LISTERS: &[&str] = &[
    "listdir(", "scandir(", "glob(", "walk(", "iterdir(", "rglob(",
];

/// The directory `code` lists, when listing one and printing what it found
/// is all the code does: `.` for the working directory, else the relative
/// path it names (`src`). `None` for any other code, for an absolute path or
/// one that climbs out (`..`), and for a listing whose literal is no
/// directory's name.
pub fn directory_listed(code: &str) -> Option<String> {
    let mut dir: Option<String> = None;
    let mut listed = false;
    for line in code.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if imports_listing_modules(line) {
            continue;
        }
        let here = match listing_dir(line) {
            Some(here) => here,
            // A print or a loop over what was listed.
            None if is_print(line) || is_loop_header(line) => continue,
            None => return None,
        };
        listed = true;
        if let Some(d) = here {
            if dir.as_ref().is_some_and(|seen| *seen != d) {
                return None;
            }
            dir = Some(d);
        }
    }
    if !listed {
        return None;
    }
    let dir = dir.unwrap_or_else(|| ".".to_owned());
    let d = dir.trim_end_matches('/');
    let d = d.strip_prefix("./").unwrap_or(d);
    let d = if d.is_empty() { "." } else { d };
    let climbs = d.split('/').any(|part| part == "..");
    (!d.starts_with(['/', '~']) && !climbs).then(|| d.to_owned())
}

/// `import os, subprocess` or `from pathlib import Path`, of listing modules only.
fn imports_listing_modules(line: &str) -> bool {
    let known = |m: &str| MODULES.contains(&m.split(" as ").next().unwrap_or(m).trim());
    if let Some(rest) = line.strip_prefix("import ") {
        return rest.split(',').all(|m| known(m.trim()));
    }
    if let Some(rest) = line.strip_prefix("from ") {
        return rest
            .split_once(" import ")
            .is_some_and(|(m, _)| known(m.trim()));
    }
    false
}

/// A line that only prints: `print(…)`, closed on the line.
fn is_print(line: &str) -> bool {
    line.starts_with("print(") && line.ends_with(')')
}

/// `for name in …:`, its body on the lines below.
fn is_loop_header(line: &str) -> bool {
    line.starts_with("for ") && line.contains(" in ") && line.ends_with(':')
}

/// For a line that lists a directory: the directory it names, if it names
/// one (`Some(None)` for none, the working directory); `None` for a line
/// that does not list one.
fn listing_dir(line: &str) -> Option<Option<String>> {
    let lists = LISTERS.iter().any(|l| line.contains(l)) || runs_ls(line);
    if !lists {
        return None;
    }
    let names: Vec<String> = string_literals(line)
        .into_iter()
        .filter(|l| !is_incidental(l))
        .collect();
    match names.as_slice() {
        [] => Some(None),
        [one] => {
            // A glob's pattern lists the directory it stands in.
            let dir = match one.rfind(['*', '?']) {
                Some(_) => one.rsplit_once('/').map_or("", |(d, _)| d).to_owned(),
                None => one.clone(),
            };
            Some((!dir.is_empty()).then_some(dir))
        }
        _ => None,
    }
}

/// A shell `ls` run from Python: `['ls', …]`, `"ls -la"`, `os.system('ls')`.
fn runs_ls(line: &str) -> bool {
    let runs = [
        "subprocess.",
        "check_output(",
        "run(",
        "os.system(",
        "os.popen(",
        "Popen(",
    ]
    .iter()
    .any(|r| line.contains(r));
    runs && string_literals(line)
        .iter()
        .any(|l| l == "ls" || l.starts_with("ls "))
}

/// A literal of a listing line that names no directory: the command, its
/// flags, an encoding, a separator, a mode.
fn is_incidental(lit: &str) -> bool {
    let t = lit.trim();
    t.is_empty()
        || t == "ls"
        || t.starts_with('-')
        || matches!(
            t.to_ascii_lowercase().as_str(),
            "utf-8" | "utf8" | "ascii" | "latin-1" | "r" | "rb"
        )
        || t.starts_with("ls ") && t.split_whitespace().skip(1).all(|w| w.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::directory_listed;

    #[test]
    fn listing_code_names_the_directory_it_lists() {
        // The 1.5B's own listing, and the usual ways of writing one.
        let ls = "import os\nimport subprocess\nfiles = subprocess.check_output(['ls', '-la']).decode('utf-8').split('\\n')\nprint(files)";
        assert_eq!(directory_listed(ls).as_deref(), Some("."));
        assert_eq!(
            directory_listed("import os\nprint(os.listdir('.'))").as_deref(),
            Some(".")
        );
        assert_eq!(
            directory_listed("import os\nfor f in os.listdir('src/'):\n    print(f)").as_deref(),
            Some("src")
        );
        assert_eq!(
            directory_listed("import glob\nprint(glob.glob('./src/*.js'))").as_deref(),
            Some("src")
        );
        assert_eq!(
            directory_listed("import os\nos.system('ls -la')").as_deref(),
            Some(".")
        );
        assert_eq!(
            directory_listed("from pathlib import Path\nprint(list(Path('data').iterdir()))")
                .as_deref(),
            Some("data")
        );
    }

    #[test]
    fn code_that_does_more_than_list_is_not_a_listing() {
        for code in [
            // Works something out.
            "import os\nfiles = os.listdir('.')\nprint(len(files) * 2)\ntotal = 3",
            "import csv\nprint(os.listdir('.'))",
            "print(sum([1, 2]))",
            // Opens a file, or lists nothing.
            "import os\nprint(open('a.txt').read())",
            "import os",
            // Outside the workspace, or two directories.
            "import os\nprint(os.listdir('/etc'))",
            "import os\nprint(os.listdir('../other'))",
            "import os\nprint(os.listdir('~'))",
            "import os\nprint(os.listdir('a'))\nprint(os.listdir('b'))",
            // A shell command that is not ls.
            "import subprocess\nprint(subprocess.check_output(['cat', 'x']))",
        ] {
            assert_eq!(directory_listed(code), None, "{code}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Never panics, and what it gives is relative and does not climb.
        #[test]
        fn a_listed_directory_stays_inside(code in "[a-z()'./\\[\\]\n *-]{0,60}") {
            if let Some(d) = directory_listed(&format!("import os\n{code}")) {
                proptest::prop_assert!(!d.starts_with('/') && !d.split('/').any(|p| p == ".."));
            }
        }
    }
}
