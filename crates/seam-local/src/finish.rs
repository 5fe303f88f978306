//! Ending a turn: what it staged goes through the Critic and into the return
//! queue.

use crate::{LocalError, LocalTools, QueueItem, ReturnQueue, Staged, TurnInfo, Verdict};
use crate::{builder, critic, git, queue};

impl LocalTools {
    /// Ends a turn: its branch (if it committed anything) goes through the
    /// Critic and into the queue as one item; each note and diagram likewise.
    /// A branch with no commit is removed. Returns the new items.
    pub fn finish_turn(&self, turn: &TurnInfo) -> Result<Vec<QueueItem>, LocalError> {
        let state = {
            let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
            turns.remove(&turn.turn)
        };
        let Some(state) = state else {
            return Ok(Vec::new());
        };
        let state = std::mem::take(&mut *state.lock().unwrap_or_else(|p| p.into_inner()));
        let mut queue = ReturnQueue::open(&self.config.seam_home)?;
        let critic = self.config.critic();
        let mut items = Vec::new();
        if let (Some(b), Ok(repo)) = (state.branch, &self.repo) {
            if b.commits == 0 {
                builder::discard(&b)?;
            } else {
                let tip = git::rev(&b.worktree, "HEAD")?;
                let report = critic::critique_branch(
                    &critic,
                    &self.scrubber,
                    &b.worktree,
                    &b.base,
                    repo.self_source,
                )?;
                let _ = critic::record(&self.config.seam_home, &self.scrubber, &b.branch, &report);
                let summary = format!(
                    "{}: {} file{} changed ({}) for {}",
                    b.branch,
                    report.files.len(),
                    if report.files.len() == 1 { "" } else { "s" },
                    first_files(&report.files),
                    b.target
                );
                items.push(queue.push(queue::NewItem {
                    turn: turn.turn.clone(),
                    summary,
                    preview: report.preview.clone(),
                    verdict: report.verdict,
                    critic: report.summary(),
                    staged: Staged::Branch {
                        repo: repo.root.clone(),
                        branch: b.branch.clone(),
                        worktree: b.worktree.clone(),
                        base: b.base.clone(),
                        target: b.target.clone(),
                        staging_repo: b.staging_repo.clone(),
                        tip,
                        commits: b.commits,
                        files: report.files.clone(),
                    },
                })?);
            }
        }
        for (title, text) in state.notes {
            let report = critic::critique_note(&critic, &self.scrubber, &text);
            let _ = critic::record(&self.config.seam_home, &self.scrubber, "note", &report);
            let shown = if title.is_empty() {
                seam_term::head(text.lines().next().unwrap_or(""), 80)
                    .0
                    .to_owned()
            } else {
                title.clone()
            };
            items.push(queue.push(queue::NewItem {
                turn: turn.turn.clone(),
                summary: format!("note: {}", self.scrubber.scrub(&shown).text),
                preview: report.preview.clone(),
                verdict: report.verdict,
                critic: report.summary(),
                staged: Staged::Note {
                    title,
                    text: report.preview.clone(),
                },
            })?);
        }
        for (path, dot) in state.images {
            let dot = self.scrubber.scrub(&dot).text;
            items.push(queue.push(queue::NewItem {
                turn: turn.turn.clone(),
                summary: format!("image: {}", path.display()),
                preview: critic::cut(&dot, critic::PREVIEW_BYTES),
                verdict: Verdict::Pass,
                critic: "pass: rendered by dot with no file access".to_owned(),
                staged: Staged::Image { path },
            })?);
        }
        Ok(items)
    }
}

fn first_files(files: &[String]) -> String {
    let mut s = files.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if files.len() > 3 {
        s.push_str(&format!(", +{}", files.len() - 3));
    }
    s
}
