//! aesthesis: a critique of a staged branch — the repository's formatters and
//! linters on the files the branch changes (rustfmt for Rust, ruff for Python,
//! prettier for JavaScript/TypeScript/CSS, each only when installed), and
//! plain measures of size and hygiene (long lines, trailing spaces, no final
//! newline). It changes nothing.

use std::path::Path;
use std::time::Duration;

use seam_protocol::RefusalCode;
use seam_scrub::Scrubber;
use serde_json::{Map, Value, json};

use crate::git;
use crate::process;
use crate::queue::{ReturnQueue, Staged, Status};
use crate::{LocalRefusal, LocalTools, TurnInfo, refusal, str_param};

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

impl LocalTools {
    /// The aesthesis tool's call: a critique of this turn's branch, or of a
    /// pending queue item's named by `branch`.
    pub(crate) fn aesthesis(
        &self,
        turn: &TurnInfo,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal> {
        let repo = self
            .repo
            .as_ref()
            .map_err(|why| refusal(RefusalCode::Unavailable, why.clone()))?;
        let own = self.turn_branch(&turn.turn);
        let wanted = str_param(params, "branch");
        // This turn's branch, or a pending queue item's.
        if let Some((branch, worktree)) = own.filter(|(b, _)| wanted.is_none_or(|w| w == b)) {
            let state = self.turn_state(&turn.turn);
            let state = state.lock().unwrap_or_else(|p| p.into_inner());
            let base = state
                .branch
                .as_ref()
                .map(|b| b.base.clone())
                .unwrap_or_default();
            return critique(&worktree, &branch, &base, &self.scrubber);
        }
        let Some(wanted) = wanted else {
            return Err(refusal(
                RefusalCode::NotFound,
                "this turn has no staged branch yet (builder makes one)",
            ));
        };
        let queue = ReturnQueue::existing(&self.config.seam_home)
            .map_err(|e| refusal(RefusalCode::Failed, e.to_string()))?;
        let items = match queue {
            Some(q) => q
                .list(500)
                .map_err(|e| refusal(RefusalCode::Failed, e.to_string()))?,
            None => Vec::new(),
        };
        for item in items.into_iter().filter(|i| i.status == Status::Pending) {
            if let Staged::Branch {
                repo: r,
                branch,
                worktree,
                base,
                ..
            } = &item.staged
                && branch == wanted
                && *r == repo.root
            {
                return critique(worktree, branch, base, &self.scrubber);
            }
        }
        Err(refusal(
            RefusalCode::NotFound,
            format!("no staged branch named {wanted:?} (seer what=queue lists them)"),
        ))
    }
}
