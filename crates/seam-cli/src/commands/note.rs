//! `seam note add|list|search|get`: the operator's notes, which memory.operator reads.

use std::io::Read;

use anyhow::Context as _;
use seam_memory::{MemoryError, MemoryHome, Note};

use crate::cli::NoteCommand;
use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

pub fn run(ctx: &Context, cmd: NoteCommand) -> anyhow::Result<Exit> {
    let memory = MemoryHome::new(&ctx.seam_home);
    match cmd {
        NoteCommand::Add { text } => {
            let text = if text.len() == 1 && text[0] == "-" {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .context("reading the note from stdin")?;
                s
            } else {
                text.join(" ")
            };
            ctx.ensure_home()?;
            let mut notes = memory.notes().context("opening the notes")?;
            let id = notes.add(&text).map_err(usage)?;
            output::line(&format!("note {id} added"));
            Ok(Exit::Ok)
        }
        NoteCommand::List { limit, json } => {
            let Some(notes) = memory.existing_notes().context("opening the notes")? else {
                if json {
                    output::json(&serde_json::json!({"notes": [], "total": 0, "truncated": false}));
                } else {
                    output::notice("no notes yet (seam note add TEXT)");
                }
                return Ok(Exit::Ok);
            };
            let list = notes.list(limit.max(1))?;
            if json {
                output::json(&list);
            } else {
                for n in &list.notes {
                    show(n);
                }
                if list.truncated {
                    output::notice(&format!(
                        "the newest {} of {} notes are shown (--limit N for more)",
                        list.notes.len(),
                        list.total
                    ));
                }
            }
            Ok(Exit::Ok)
        }
        NoteCommand::Search { query, limit, json } => {
            let query = query.join(" ");
            let Some(notes) = memory.existing_notes().context("opening the notes")? else {
                if json {
                    output::json(&serde_json::json!({"hits": [], "truncated": false}));
                }
                return Ok(Exit::Ok);
            };
            let hits = notes.search(&query, limit.max(1)).map_err(usage)?;
            if json {
                output::json(&hits);
            } else {
                for h in &hits.hits {
                    let mut text = h.text.clone();
                    if h.text_cut {
                        text.push_str(&format!("\n(cut: seam note get {})", h.id));
                    }
                    show(&Note {
                        id: h.id,
                        at: h.at.clone(),
                        text,
                    });
                }
                if hits.truncated {
                    output::notice("more notes match (--limit N for more)");
                }
            }
            Ok(Exit::Ok)
        }
        NoteCommand::Get { id, json } => {
            let note = match memory.existing_notes().context("opening the notes")? {
                Some(notes) => notes.get(id)?,
                None => None,
            };
            let Some(note) = note else {
                output::error(&format!("no note has id {id}"));
                return Ok(Exit::Refused);
            };
            if json {
                output::json(&note);
            } else {
                show(&note);
            }
            Ok(Exit::Ok)
        }
    }
}

/// `#ID  TIME` on one line, then the note's text (layout kept, controls shown).
fn show(n: &Note) {
    output::line(&format!("#{}  {}", n.id, n.at));
    output::text_ln(&n.text);
}

/// The operator's mistakes (an empty note, a query without words) exit 2.
fn usage(e: MemoryError) -> anyhow::Error {
    match e {
        MemoryError::EmptyNote | MemoryError::NoteTooLong { .. } | MemoryError::EmptyQuery => {
            UsageError(e.to_string()).into()
        }
        other => other.into(),
    }
}
