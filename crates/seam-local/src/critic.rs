//! The Critic: every staged effect passes it before it reaches the queue.
//!
//! For a builder branch, in order: the diff's size (over the limit fails), the
//! paths it changes (a protected name, or seam's core when the repository is
//! seam's own source, fails), a `.gitattributes` that gains a filter, diff or
//! merge driver (git would run a program for it; approval refuses it too),
//! secrets in the lines it adds (any shape the
//! scrubber knows fails), then the configured check command in the worktree
//! with a timeout (not run when an earlier finding already failed the branch;
//! a non-zero exit or a timeout fails). For a note: its size and secrets. The
//! verdict and a summary are recorded in the agent's build records
//! (`<seam_home>/agent/builds.sqlite`, which `memory.build` reads).

use std::path::Path;
use std::time::Duration;

use seam_memory::{MemoryHome, NewBuildRecord, RunKind};
use seam_scrub::Scrubber;

use crate::git::{self, GitError};
use crate::guard::guarded;
use crate::process;
use crate::queue::Verdict;
use crate::repo_path::RepoPath;

/// The most of a diff kept as the queue item's preview.
pub const PREVIEW_BYTES: usize = 64 * 1024;
/// The most of a check's output kept (its end).
pub const CHECK_OUTPUT_BYTES: usize = 64 * 1024;

/// What the Critic is configured with.
#[derive(Debug, Clone)]
pub struct CriticConfig {
    /// argv run in the worktree (`["cargo", "check"]`); `None`: no check.
    pub check: Option<Vec<String>>,
    pub check_timeout: Duration,
    /// A diff larger than this fails.
    pub max_diff_bytes: usize,
    /// A note longer than this fails.
    pub max_note_bytes: usize,
}

/// A check command's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    pub command: String,
    pub exit_status: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
    /// The end of its output, scrubbed.
    pub output: String,
}

impl CheckRun {
    pub fn passed(&self) -> bool {
        self.exit_status == Some(0) && !self.timed_out
    }
}

/// The Critic's report on one staged effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriticReport {
    pub verdict: Verdict,
    /// Why it failed (empty when it passed).
    pub findings: Vec<String>,
    /// The check, when it ran.
    pub check: Option<CheckRun>,
    /// The diff (scrubbed, cut to [`PREVIEW_BYTES`]) or the note.
    pub preview: String,
    /// The files the branch changes.
    pub files: Vec<String>,
    pub diff_bytes: usize,
}

impl CriticReport {
    /// One line: `pass: …` or `fail: …; …`.
    pub fn summary(&self) -> String {
        let mut parts = self.findings.clone();
        match &self.check {
            Some(c) if c.passed() => parts.push(format!("check `{}` passed", c.command)),
            Some(_) => {}
            None if self.verdict == Verdict::Pass => parts.push("no check configured".to_owned()),
            None => {}
        }
        format!("{}: {}", self.verdict.as_str(), parts.join("; "))
    }
}

/// Runs a check command in `dir`.
pub(crate) fn run_check(
    argv: &[String],
    dir: &Path,
    timeout: Duration,
    scrubber: &Scrubber,
) -> std::io::Result<CheckRun> {
    let out = process::run(argv, dir, None, &[], timeout, CHECK_OUTPUT_BYTES)?;
    Ok(CheckRun {
        command: argv.join(" "),
        exit_status: out.status,
        timed_out: out.timed_out,
        duration: out.duration,
        output: scrubber.scrub(&out.text()).text,
    })
}

/// The Critic on a builder branch: `worktree` holds it, `base` is where it started.
pub(crate) fn critique_branch(
    config: &CriticConfig,
    scrubber: &Scrubber,
    worktree: &Path,
    base: &str,
    self_source: bool,
) -> Result<CriticReport, GitError> {
    let mut findings = Vec::new();
    let names = git::git_bytes(
        worktree,
        &["diff", "--name-only", "-z", "--no-renames", base, "HEAD"],
        None,
    )?;
    let files: Vec<String> = names
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    for f in &files {
        match RepoPath::parse(f) {
            Ok(p) => {
                if let Some(g) = guarded(&p, self_source) {
                    findings.push(g.message(f));
                }
            }
            Err(r) => findings.push(r.message),
        }
    }
    for f in files.iter().filter(|f| {
        f.rsplit('/')
            .next()
            .is_some_and(|n| n.eq_ignore_ascii_case(".gitattributes"))
    }) {
        let Ok(new) = git::git(worktree, &["cat-file", "blob", &format!("HEAD:{f}")]) else {
            continue; // deleted
        };
        let old =
            git::git(worktree, &["cat-file", "blob", &format!("{base}:{f}")]).unwrap_or_default();
        findings.extend(crate::apply::program_attributes(f, &old, &new));
    }
    let links = git::git(
        worktree,
        &["diff", "--summary", "--no-renames", base, "HEAD"],
    )?;
    if links.lines().any(|l| l.contains(" mode 120000 ")) {
        findings.push("the branch adds a symbolic link".to_owned());
    }
    let diff = git::git_bytes(
        worktree,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            base,
            "HEAD",
        ],
        None,
    )?;
    let diff = String::from_utf8_lossy(&diff).into_owned();
    if diff.len() > config.max_diff_bytes {
        findings.push(format!(
            "the diff is {} bytes, over the limit of {}",
            diff.len(),
            config.max_diff_bytes
        ));
    }
    let added: String = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| &l[1..])
        .collect::<Vec<_>>()
        .join("\n");
    let secrets = scrubber.scrub(&added).shapes();
    if !secrets.is_empty() {
        findings.push(format!(
            "the diff adds what looks like a secret ({})",
            secrets.join(", ")
        ));
    }
    let scrubbed = scrubber.scrub(&diff).text;
    let preview = cut(&scrubbed, PREVIEW_BYTES);
    let mut check = None;
    if findings.is_empty()
        && let Some(argv) = &config.check
    {
        match run_check(argv, worktree, config.check_timeout, scrubber) {
            Ok(run) => {
                if run.timed_out {
                    findings.push(format!(
                        "check `{}` timed out after {} s",
                        run.command,
                        config.check_timeout.as_secs()
                    ));
                } else if !run.passed() {
                    findings.push(format!(
                        "check `{}` failed (exit {})",
                        run.command,
                        run.exit_status
                            .map_or("by signal".to_owned(), |c| c.to_string())
                    ));
                }
                check = Some(run);
            }
            Err(e) => findings.push(format!("check `{}` could not run: {e}", argv.join(" "))),
        }
    }
    let report = CriticReport {
        verdict: if findings.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        findings,
        check,
        preview,
        files,
        diff_bytes: diff.len(),
    };
    Ok(report)
}

/// The Critic on a scribe note.
pub(crate) fn critique_note(
    config: &CriticConfig,
    scrubber: &Scrubber,
    text: &str,
) -> CriticReport {
    let mut findings = Vec::new();
    if text.len() > config.max_note_bytes {
        findings.push(format!(
            "the note is {} bytes, over the limit of {}",
            text.len(),
            config.max_note_bytes
        ));
    }
    let scrubbed = scrubber.scrub(text);
    let secrets = scrubbed.shapes();
    if !secrets.is_empty() {
        findings.push(format!(
            "the note holds what looks like a secret ({})",
            secrets.join(", ")
        ));
    }
    CriticReport {
        verdict: if findings.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        findings,
        check: None,
        preview: cut(&scrubbed.text, PREVIEW_BYTES),
        files: Vec::new(),
        diff_bytes: 0,
    }
}

/// Records the Critic's run in the agent's build records,
/// `<seam_home>/agent/builds.sqlite` (`memory.build` reads them, marked as
/// the agent's).
pub(crate) fn record(
    seam_home: &Path,
    scrubber: &Scrubber,
    what: &str,
    report: &CriticReport,
) -> Result<i64, seam_memory::MemoryError> {
    let mut builds = MemoryHome::new(seam_home).agent_builds()?;
    let command = match &report.check {
        Some(c) => format!("critic {what}: {}", c.command),
        None => format!("critic {what}"),
    };
    let log = report
        .check
        .as_ref()
        .map(|c| c.output.as_str())
        .unwrap_or("");
    builds.record(
        scrubber,
        &NewBuildRecord {
            kind: RunKind::Critic,
            command: &command,
            exit_status: match report.verdict {
                Verdict::Pass => Some(0),
                Verdict::Fail => Some(1),
            },
            duration: report
                .check
                .as_ref()
                .map(|c| c.duration)
                .unwrap_or_default(),
            summary: &report.summary(),
            log,
        },
    )
}

/// The first `max` bytes of `s`, on a character boundary, with a note when cut.
pub(crate) fn cut(s: &str, max: usize) -> String {
    let kept = seam_term::head_bytes(s, max);
    if kept.len() == s.len() {
        return s.to_owned();
    }
    format!("{kept}\n… ({} more bytes)", s.len() - kept.len())
}

/// The last `max` bytes of `s`, on a character boundary.
pub(crate) fn cut_end(s: &str, max: usize) -> String {
    let kept = seam_term::tail_bytes(s, max);
    if kept.len() == s.len() {
        return s.to_owned();
    }
    format!("… ({} bytes before)\n{kept}", s.len() - kept.len())
}
