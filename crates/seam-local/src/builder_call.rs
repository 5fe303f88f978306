//! The builder tool's call: its params read and checked (before a branch is
//! made for them), the turn's branch opened on first use, and the op run by
//! the `builder` module; `check` runs the operator's check command there.

use seam_policy::Decision;
use seam_protocol::RefusalCode;
use serde_json::{Map, Value};

use crate::builder::{self, Repo, TurnBranch};
use crate::{LocalRefusal, LocalTools, TurnInfo, TurnState, critic, refusal, required, str_param};

impl LocalTools {
    /// The builder's repository, or why the builder cannot work on it.
    fn repo(&self) -> Result<&Repo, LocalRefusal> {
        let repo = self
            .repo
            .as_ref()
            .map_err(|why| refusal(RefusalCode::Unavailable, why.clone()))?;
        if repo.self_source && self.config.self_modify == Decision::Deny {
            return Err(refusal(
                RefusalCode::CapabilityDenied,
                "the repository is seam's own source and the policy denies self.modify: the builder cannot change it",
            ));
        }
        Ok(repo)
    }

    /// The builder tool's call.
    pub(crate) fn builder(
        &self,
        turn: &TurnInfo,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal> {
        let repo = self.repo()?;
        let op = required(params, "op", "")?;
        let message = str_param(params, "message");
        // Check the params before a branch is made for them.
        let mut notes = Vec::new();
        let (path, payload, edit) = match op {
            "write" => {
                let path = required(params, "path", "for write")?;
                // `text` is what append takes: read it as the content.
                let content = match (str_param(params, "content"), str_param(params, "text")) {
                    (Some(c), _) => c,
                    (None, Some(t)) => {
                        notes.push("read params.text as the file's content".to_owned());
                        t
                    }
                    (None, None) => required(params, "content", "for write")?,
                };
                (Some(path), Some(content), None)
            }
            "append" => {
                let path = required(params, "path", "for append")?;
                // `content` is what write takes: read it as the text.
                let text = match (str_param(params, "text"), str_param(params, "content")) {
                    (Some(t), Some(_)) => {
                        notes.push(
                            "params.content is not used by append: it adds params.text".to_owned(),
                        );
                        t
                    }
                    (Some(t), None) => t,
                    (None, Some(c)) => {
                        notes.push("read params.content as the text to append".to_owned());
                        c
                    }
                    (None, None) => required(params, "text", "for append")?,
                };
                if text.is_empty() {
                    return Err(refusal(
                        RefusalCode::InvalidParams,
                        format!("params.text is empty: give the text to add to {path}"),
                    ));
                }
                (Some(path), None, Some(builder::Edit::Append { text }))
            }
            "replace" => {
                // A replace that names no path is of the one file holding `old`,
                // found once the branch is there (below).
                let mut path = str_param(params, "path").filter(|p| !p.trim().is_empty());
                let Some(mut old) = str_param(params, "old") else {
                    // Without old the call cannot run; a path that is no file
                    // of the branch is the first thing to say (a small model
                    // guessed both), so it is looked for on the branch.
                    let e = required(params, "old", "for replace").unwrap_err();
                    let Some(p) = path else {
                        return Err(e);
                    };
                    builder::admit(repo, p)?;
                    let state = self.turn_state(&turn.turn);
                    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
                    let b = self.branch_of(&mut state, repo, turn)?;
                    return Err(
                        builder::missing_file(repo, b, p, self.config.max_file_bytes).unwrap_or(e),
                    );
                };
                // `old` copied from the builder's own list of lines: one line
                // names its file and text; several cannot be one replace.
                if let Some(named) = builder::NamedLine::parse_all(old) {
                    let [one] = named.as_slice() else {
                        return Err(refusal(RefusalCode::InvalidParams, listed_old(&named)));
                    };
                    if let Some(p) = path.filter(|p| *p != one.path) {
                        notes.push(format!(
                            "params.path {p} was not used: params.old names {}",
                            one.path
                        ));
                    }
                    notes.push(format!(
                        "params.old is the builder's line `{one}`: read as line {} of {} without the `{}:{}: ` before it",
                        one.n, one.path, one.path, one.n
                    ));
                    path = Some(one.path);
                    old = one.text;
                }
                let mut new = required(params, "new", "for replace (\"\" deletes old)")?;
                if let Some([l]) = builder::NamedLine::parse_all(new).as_deref()
                    && Some(l.path) == path
                {
                    notes.push(format!(
                        "params.new was read without the `{}:{}: ` before it",
                        l.path, l.n
                    ));
                    new = l.text;
                }
                if old.is_empty() {
                    return Err(refusal(
                        RefusalCode::InvalidParams,
                        format!(
                            "params.old is empty: give the exact text to replace in {} (append adds text at its end)",
                            path.unwrap_or("the file")
                        ),
                    ));
                }
                if new == old {
                    // qwen2.5-coder-1.5b, shown the line to change, gave it
                    // back as both old and new. The call stands (it changes
                    // nothing, and says so); the note says why.
                    notes.push(
                        "params.new is the same as params.old, so nothing changed: give as params.new the text as the task wants it"
                            .to_owned(),
                    );
                }
                (path, None, Some(builder::Edit::Replace { old, new }))
            }
            "patch" => (None, Some(required(params, "diff", "for patch")?), None),
            "delete" => (Some(required(params, "path", "for delete")?), None, None),
            _ => (None, None, None),
        };
        if let Some(p) = path {
            builder::admit(repo, p)?;
        }
        let state = self.turn_state(&turn.turn);
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        let b = self.branch_of(&mut state, repo, turn)?;
        let max = self.config.max_file_bytes;
        match (op, path, payload, edit) {
            ("write", Some(p), Some(content), _) => {
                builder::write(repo, b, p, content, message, max, notes)
            }
            ("append" | "replace", Some(p), _, Some(edit)) => {
                builder::edit(repo, b, p, edit, message, max, notes)
            }
            ("replace", None, _, Some(edit @ builder::Edit::Replace { old, new })) => {
                let found = builder::file_holding(repo, b, old, new, max)?;
                notes.push(format!(
                    "params.path was not given: {found} is the one file that holds params.old"
                ));
                builder::edit(repo, b, &found, edit, message, max, notes)
            }
            ("patch", _, Some(diff), _) => builder::patch(repo, b, diff, message, max),
            ("delete", Some(p), _, _) => builder::delete(repo, b, p, message),
            ("check", _, _, _) => self.check(b),
            _ => Err(refusal(
                RefusalCode::InvalidParams,
                format!("params.op {op:?} is not an op"),
            )),
        }
    }

    /// The turn's branch, opened on its first use (one at a time: two turns
    /// must not pick the same free name).
    fn branch_of<'s>(
        &self,
        state: &'s mut TurnState,
        repo: &Repo,
        turn: &TurnInfo,
    ) -> Result<&'s mut TurnBranch, LocalRefusal> {
        if state.branch.is_none() {
            let _opening = self.opening.lock().unwrap_or_else(|p| p.into_inner());
            let b = builder::open_branch(&self.home(), repo, &turn.turn, &turn.task)?;
            state.branch = Some(b);
        }
        Ok(state.branch.as_mut().expect("made above"))
    }

    fn check(&self, b: &TurnBranch) -> Result<Value, LocalRefusal> {
        let Some(argv) = &self.config.check else {
            return Err(refusal(
                RefusalCode::Unavailable,
                "no check command is configured for this repository",
            ));
        };
        let run = critic::run_check(argv, &b.worktree, self.config.check_timeout, &self.scrubber)
            .map_err(|e| {
            refusal(
                RefusalCode::Failed,
                format!("cannot run `{}`: {e}", argv.join(" ")),
            )
        })?;
        if let Ok(mut builds) = seam_memory::MemoryHome::new(&self.config.seam_home).agent_builds()
        {
            let _ = builds.record(
                &self.scrubber,
                &seam_memory::NewBuildRecord {
                    kind: seam_memory::RunKind::Build,
                    command: &run.command,
                    exit_status: run.exit_status,
                    duration: run.duration,
                    summary: &format!(
                        "builder check on {}: {}",
                        b.branch,
                        if run.passed() { "passed" } else { "failed" }
                    ),
                    log: &run.output,
                },
            );
        }
        let output = critic::cut_end(&run.output, 4096);
        Ok(serde_json::json!({
            "branch": b.branch,
            "passed": run.passed(),
            "exit_status": run.exit_status,
            "timed_out": run.timed_out,
            "output": output,
        }))
    }
}

/// The refusal of a replace whose `old` is several lines of the builder's own
/// list (`path:N: line`): it names them and says how to make one replace of
/// one of them.
fn listed_old(named: &[builder::NamedLine<'_>]) -> String {
    let mut files: Vec<&str> = Vec::new();
    for l in named {
        if !files.contains(&l.path) {
            files.push(l.path);
        }
    }
    let first = named[0];
    format!(
        "params.old is {} lines of the builder's list (`path:N: line` each, from {}): a replace changes one place of one file. \
         Pick the one line the task changes; give its file as params.path, the line without its `path:N: ` as params.old, \
         and the line as the task wants it as params.new. For the first line listed: params.path {:?}, params.old {:?}",
        named.len(),
        files.join(", "),
        first.path,
        first.text
    )
}
