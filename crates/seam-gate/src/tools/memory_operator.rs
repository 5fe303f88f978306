//! `memory.operator`: the operator's own notes (`seam note add`), found by words or by id.
//!
//! The notes are the owner's words, so an answer taints the turn.

use seam_memory::{MemoryHome, NOTES_LIST_LIMIT, NOTES_SEARCH_LIMIT, OperatorNotes};
use seam_policy::Policy;
use seam_protocol::RefusalCode;
use serde_json::{Value, json};

use super::memory_store::{
    LookupParams, LookupWords, StorePool, cut_note, failure, limit, limit_words, lookup_decl,
    with_notes,
};
use seam_toolbox::{GovernedTool, ToolCall, ToolDecl, ToolFailure};

#[derive(Debug)]
pub struct MemoryOperator {
    decl: ToolDecl,
    stores: StorePool<OperatorNotes>,
}

impl MemoryOperator {
    pub fn new(policy: &Policy) -> Self {
        Self::with_home(Some(MemoryHome::new(&policy.env().seam_home)))
    }

    pub fn with_home(home: Option<MemoryHome>) -> Self {
        MemoryOperator {
            decl: lookup_decl(
                "memory.operator",
                "Recall what the operator told you to remember (saved with `seam note add`). Not for files: a file such as notes.md or docs/setup.md is read with files.read. op=search finds what was remembered by words (query); op=get gives one item whole (id); op=list gives the newest.",
                LookupWords {
                    ops: ["search", "get", "list"],
                    op: "search: notes matching words; get: one note by id; list: the newest notes",
                    query: "search: words to find (notes holding them all, else those holding some); word* matches a prefix",
                    id: "get: the note's id",
                    limit: limit_words(
                        "notes",
                        [("search", NOTES_SEARCH_LIMIT), ("list", NOTES_LIST_LIMIT)],
                    ),
                },
            ),
            stores: StorePool::new(home, |h: &MemoryHome| h.existing_notes()),
        }
    }
}

impl GovernedTool for MemoryOperator {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure> {
        let p = LookupParams::of(&call)?;
        let op = p.op.as_str();
        let id = p.id.unwrap_or_default();
        let no_note = |total: Option<u64>| {
            ToolFailure::new(
                RefusalCode::NotFound,
                match total {
                    Some(n) if n > 0 => format!("no note has id {id} ({n} notes are kept)"),
                    _ => format!("no note has id {id}: the operator has written no note"),
                },
            )
        };
        let answer = self.stores.with(|notes_store| {
            let mut notes = Vec::new();
            let out = match op {
                "search" => {
                    let query = p.query.as_deref().unwrap_or_default();
                    let lim = limit(p.limit, NOTES_SEARCH_LIMIT, &mut notes);
                    let h = notes_store.search(query, lim).map_err(failure)?;
                    if h.truncated {
                        notes.push(cut_note("notes", lim, NOTES_SEARCH_LIMIT));
                    }
                    if h.matched == seam_memory::Matched::Some {
                        notes.push(super::memory_store::SOME_WORDS.to_owned());
                    }
                    if h.hits.iter().any(|n| n.text_cut) {
                        notes.push("long notes are cut; op=get gives the whole note".into());
                    }
                    if h.hits.is_empty() {
                        // A small model searches with words of its own
                        // ("mileage" for a note that says "312.6 km on
                        // them"), and the operator keeps few notes: with
                        // nothing found, the newest are the answer's best
                        // guess, and it says so.
                        let l = notes_store.list(NOTES_LIST_LIMIT.default).map_err(failure)?;
                        if !l.notes.is_empty() {
                            notes.push(format!(
                                "no note holds a word of the query, so the newest {} of the operator's {} notes are shown",
                                l.notes.len(),
                                l.total
                            ));
                            notes.extend(file_hint(query));
                            return Ok(with_notes(
                                json!({"op": op, "query": query, "notes": l.notes, "truncated": l.truncated, "newest": true}),
                                notes,
                            ));
                        }
                    }
                    notes.extend(file_hint(query));
                    json!({"op": op, "query": query, "notes": h.hits, "truncated": h.truncated})
                }
                "get" => {
                    let Some(note) = notes_store.get(id).map_err(failure)? else {
                        let total = notes_store.list(1).map_err(failure)?.total;
                        return Err(no_note(Some(total)));
                    };
                    json!({"op": op, "note": note})
                }
                "list" => {
                    let lim = limit(p.limit, NOTES_LIST_LIMIT, &mut notes);
                    let l = notes_store.list(lim).map_err(failure)?;
                    if l.truncated {
                        notes.push(format!(
                            "the newest {} of {} notes are shown; {}",
                            l.notes.len(),
                            l.total,
                            cut_note("notes", lim, NOTES_LIST_LIMIT)
                        ));
                    }
                    json!({"op": op, "notes": l.notes, "total": l.total, "truncated": l.truncated})
                }
                other => {
                    return Err(ToolFailure::new(
                        RefusalCode::InvalidParams,
                        format!("memory.operator has no op {other:?}"),
                    ));
                }
            };
            Ok(with_notes(out, notes))
        })?;
        match answer {
            Some(a) => Ok(a),
            None if op == "get" => Err(no_note(None)),
            None => {
                let mut note = "the operator has written no note (`seam note add TEXT`)".to_owned();
                match file_hint(p.query.as_deref().unwrap_or_default()) {
                    Some(hint) => note = format!("{note}; {hint}"),
                    None => note.push_str("; a file is read with files.read, by its path"),
                }
                Ok(json!({"op": op, "notes": [], "truncated": false, "note": note}))
            }
        }
    }
}

/// A note for a search whose words name a file (`notes/rota.md`): small
/// models search the operator's notes for a file they were told to read.
/// The answer says which tool reads it; it calls nothing itself.
fn file_hint(query: &str) -> Option<String> {
    let files: Vec<&str> = query
        .split(|c: char| c.is_whitespace() || c == ',' || c == '"' || c == '\'')
        .map(|w| w.trim_end_matches(['.', '?', '!', ':', ';', ')']))
        .filter(|w| looks_like_a_file(w))
        .collect();
    let first = files.first()?;
    Some(format!(
        "{} {} a file: files.read reads a file by its path (files.read {{\"path\": \"{first}\"}})",
        files.join(", "),
        if files.len() == 1 { "is" } else { "are" }
    ))
}

/// A word with a name, a dot and a short extension of letters or digits
/// (`rota.md`, `data/runs.csv`), not a version or a number (`1.5`), nor an
/// abbreviation (`e.g`: a one-letter name needs a directory before it).
fn looks_like_a_file(w: &str) -> bool {
    let Some((stem, ext)) = w.rsplit_once('.') else {
        return false;
    };
    let name = stem.rsplit('/').next().unwrap_or(stem);
    (1..=5).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic())
        && name.chars().any(|c| c.is_alphabetic())
        && (name.chars().count() > 1 || w.contains('/'))
        && w.chars()
            .all(|c| c.is_alphanumeric() || "._-/~".contains(c))
}
