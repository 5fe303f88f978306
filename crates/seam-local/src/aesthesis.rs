//! aesthesis: a critique of a staged branch — the repository's formatters and
//! linters on the files the branch changes (rustfmt for Rust, ruff for Python,
//! prettier for JavaScript/TypeScript/CSS, each only when installed), and
//! plain measures of size and hygiene (long lines, trailing spaces, no final
//! newline). It changes nothing.

use std::path::Path;
use std::time::Duration;

use seam_scrub::Scrubber;
use serde_json::{Value, json};

use crate::LocalRefusal;
use crate::git;
use crate::process;

/// How long one formatter or linter may run.
const TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// The most of one tool's output reported.
const TOOL_OUTPUT_BYTES: usize = 4096;
/// A line longer than this is counted as long.
const LONG_LINE: usize = 120;
/// A file larger than this is not read for hygiene.
const MAX_HYGIENE_FILE: u64 = 1 << 20;

/// One formatter or linter for some file extensions. prettier runs with
/// `--no-config`: a project's prettier config may be JavaScript, and the branch
/// is the model's.
struct Linter {
    program: &'static str,
    args: &'static [&'static str],
    extensions: &'static [&'static str],
}

const LINTERS: &[Linter] = &[
    Linter {
        program: "rustfmt",
        args: &["--check", "--edition", "2024"],
        extensions: &["rs"],
    },
    Linter {
        program: "ruff",
        args: &["check", "--no-fix", "--quiet"],
        extensions: &["py"],
    },
    Linter {
        program: "ruff",
        args: &["format", "--check", "--quiet"],
        extensions: &["py"],
    },
    Linter {
        program: "prettier",
        args: &["--check", "--no-config"],
        extensions: &["js", "jsx", "ts", "tsx", "css", "mjs", "cjs"],
    },
];

/// The programs of [`LINTERS`], each once.
pub(crate) fn programs() -> impl Iterator<Item = &'static str> {
    LINTERS
        .iter()
        .enumerate()
        .filter(|(i, l)| !LINTERS[..*i].iter().any(|e| e.program == l.program))
        .map(|(_, l)| l.program)
}

/// Critiques the branch checked out in `worktree`, changed since `base`.
pub(crate) fn critique(
    worktree: &Path,
    branch: &str,
    base: &str,
    scrubber: &Scrubber,
) -> Result<Value, LocalRefusal> {
    let numstat = git::git(
        worktree,
        &["diff", "--numstat", "--no-renames", base, "HEAD"],
    )
    .map_err(crate::builder::failed)?;
    let (mut added, mut removed) = (0u64, 0u64);
    let mut files: Vec<String> = Vec::new();
    for line in numstat.lines() {
        let mut parts = line.splitn(3, '\t');
        let a = parts.next().unwrap_or("-");
        let r = parts.next().unwrap_or("-");
        let name = parts.next().unwrap_or("");
        added += a.parse::<u64>().unwrap_or(0);
        removed += r.parse::<u64>().unwrap_or(0);
        if !name.is_empty() && worktree.join(name).is_file() {
            files.push(name.to_owned());
        }
    }
    let mut reports = Vec::new();
    for linter in LINTERS {
        let targets: Vec<&String> = files
            .iter()
            .filter(|f| {
                Path::new(f.as_str())
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| linter.extensions.contains(&e))
            })
            .collect();
        if targets.is_empty() {
            continue;
        }
        let name = format!("{} {}", linter.program, linter.args.join(" "));
        if !process::on_path(linter.program) {
            reports.push(json!({"tool": name, "ran": false, "output": "not installed"}));
            continue;
        }
        let mut argv: Vec<String> = std::iter::once(linter.program)
            .chain(linter.args.iter().copied())
            .map(str::to_owned)
            .collect();
        argv.push("--".to_owned());
        argv.extend(targets.iter().map(|t| (*t).clone()));
        match process::run(&argv, worktree, None, &[], TOOL_TIMEOUT, TOOL_OUTPUT_BYTES) {
            Ok(out) => reports.push(json!({
                "tool": name,
                "ran": true,
                "ok": out.success(),
                "output": scrubber.scrub(&out.text()).text,
            })),
            Err(e) => reports.push(json!({"tool": name, "ran": false, "output": e.to_string()})),
        }
    }
    let mut hygiene = Vec::new();
    for f in &files {
        let p = worktree.join(f);
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_HYGIENE_FILE {
            if meta.len() > MAX_HYGIENE_FILE {
                hygiene.push(format!("{f}: {} bytes", meta.len()));
            }
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let long = text
            .lines()
            .filter(|l| l.chars().count() > LONG_LINE)
            .count();
        let trailing = text
            .lines()
            .filter(|l| l.ends_with(' ') || l.ends_with('\t'))
            .count();
        if long > 0 {
            hygiene.push(format!("{f}: {long} lines over {LONG_LINE} characters"));
        }
        if trailing > 0 {
            hygiene.push(format!("{f}: {trailing} lines end in spaces"));
        }
        if !text.is_empty() && !text.ends_with('\n') {
            hygiene.push(format!("{f}: no newline at the end"));
        }
    }
    Ok(json!({
        "branch": branch,
        "files": files.len(),
        "lines_added": added,
        "lines_removed": removed,
        "linters": reports,
        "hygiene": hygiene,
    }))
}
