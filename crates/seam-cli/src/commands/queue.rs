//! `seam queue list|show|approve|reject`: the return queue, where the operator
//! decides what the agent staged (seam-local's `ReturnQueue`).
//!
//! Exit codes: a missing id is the operator's mistake (2); an item already
//! decided, a target branch that moved, or an item the Critic failed is a
//! refusal (3).

use anyhow::Context as _;
use seam_local::{QueueError, QueueItem, ReturnQueue, Staged};

use crate::cli::QueueCommand;
use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

pub fn run(ctx: &Context, cmd: QueueCommand) -> anyhow::Result<Exit> {
    match cmd {
        QueueCommand::List { json, limit } => {
            let items = match ReturnQueue::existing(&ctx.seam_home).context("opening the queue")? {
                Some(q) => q.list(limit.max(1)).context("listing the queue")?,
                None => Vec::new(),
            };
            if json {
                output::json(&items);
            } else if items.is_empty() {
                output::notice("the queue is empty");
            } else {
                for item in &items {
                    output::line(&list_line(item));
                }
            }
            Ok(Exit::Ok)
        }
        QueueCommand::Show { id, json } => {
            let item = match ReturnQueue::existing(&ctx.seam_home).context("opening the queue")? {
                Some(q) => q.get(id).context("reading the queue")?,
                None => None,
            };
            let Some(item) = item else {
                return Err(UsageError(QueueError::NotFound(id).to_string()).into());
            };
            if json {
                output::json(&item);
            } else {
                show(&item);
            }
            Ok(Exit::Ok)
        }
        QueueCommand::Approve { id } => decide(ctx, id, true),
        QueueCommand::Reject { id } => decide(ctx, id, false),
    }
}

fn decide(ctx: &Context, id: i64, approve: bool) -> anyhow::Result<Exit> {
    let Some(mut q) = ReturnQueue::existing(&ctx.seam_home).context("opening the queue")? else {
        return Err(UsageError(QueueError::NotFound(id).to_string()).into());
    };
    let result = if approve { q.approve(id) } else { q.reject(id) };
    match result {
        Ok(d) => {
            output::line(&format!("#{} {}: {}", d.id, d.status, d.message));
            Ok(Exit::Ok)
        }
        Err(e @ QueueError::NotFound(_)) => Err(UsageError(e.to_string()).into()),
        Err(
            e @ (QueueError::AlreadyDecided { .. }
            | QueueError::TargetMoved { .. }
            | QueueError::CriticRejected { .. }
            | QueueError::Apply { .. }),
        ) => {
            output::error(&e.to_string());
            Ok(Exit::Refused)
        }
        Err(e) => Err(e.into()),
    }
}

/// `#ID  STATUS  KIND  VERDICT  SUMMARY`.
pub fn list_line(item: &QueueItem) -> String {
    format!(
        "#{:<4} {:<8} {:<6} {:<4}  {}",
        item.id,
        item.status.as_str(),
        item.kind,
        item.verdict.as_str(),
        item.summary
    )
}

fn show(item: &QueueItem) {
    output::line(&list_line(item));
    output::line(&format!("turn:    {}", item.turn));
    output::line(&format!("created: {}", item.created));
    if let Some(d) = &item.decided {
        output::line(&format!("decided: {d}"));
    }
    output::line(&format!("critic:  {}", item.critic));
    match &item.staged {
        Staged::Branch {
            repo,
            branch,
            worktree,
            base,
            target,
            commits,
            ..
        } => {
            output::line(&format!("repo:    {}", repo.display()));
            output::line(&format!(
                "branch:  {branch} ({commits} commit{}) from {base:.12}, into {target}",
                if *commits == 1 { "" } else { "s" }
            ));
            output::line(&format!("worktree: {}", worktree.display()));
        }
        Staged::Note { title, .. } if !title.is_empty() => {
            output::line(&format!("title:   {title}"));
        }
        Staged::Note { .. } => {}
        Staged::Image { path } => output::line(&format!("file:    {}", path.display())),
    }
    if !item.preview.is_empty() {
        output::text("\n");
        output::text_ln(&item.preview);
    }
}
