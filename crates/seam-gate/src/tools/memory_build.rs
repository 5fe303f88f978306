//! `memory.build`: what past builds and critic runs did (command, exit status, duration,
//! summary, the end of the log), from the build memory.
//!
//! The records were scrubbed before they were stored, and are scrubbed again on the way out
//! like every answer. They quote the owner's code and the output of the owner's programs
//! (compiler errors show source lines), so an answer taints the turn.

use seam_memory::{ALL_SUMMARIES_LIMIT, BUILD_SEARCH_LIMIT, BuildMemory, MemoryHome};
use seam_policy::Policy;
use seam_protocol::RefusalCode;
use serde_json::{Value, json};

use super::memory_store::{
    LookupParams, LookupWords, StorePool, cut_note, failure, limit, limit_words, lookup_decl,
    with_notes,
};
use seam_toolbox::{GovernedTool, ToolCall, ToolDecl, ToolFailure};

#[derive(Debug)]
pub struct MemoryBuild {
    decl: ToolDecl,
    stores: StorePool<BuildMemory>,
}

impl MemoryBuild {
    pub fn new(policy: &Policy) -> Self {
        Self::with_home(Some(MemoryHome::new(&policy.env().seam_home)))
    }

    pub fn with_home(home: Option<MemoryHome>) -> Self {
        MemoryBuild {
            decl: lookup_decl(
                "memory.build",
                "Look up past builds and critic runs. op=all_summaries lists the newest first; op=search finds runs by words in their command, summary or log (query); op=get gives one run with the end of its log (id).",
                LookupWords {
                    ops: ["all_summaries", "search", "get"],
                    op: "all_summaries: newest runs first; search: runs matching words; get: one run by id, with its log excerpt",
                    query: "search: words to find (runs holding them all, else those holding some)",
                    id: "get: the run's id (from all_summaries or search)",
                    limit: limit_words(
                        "runs",
                        [
                            ("all_summaries", ALL_SUMMARIES_LIMIT),
                            ("search", BUILD_SEARCH_LIMIT),
                        ],
                    ),
                },
            ),
            // The agent's Critic and `builder check` write these records in the agent's
            // own directory (agent/builds.sqlite): agent-authored text, so an answer taints.
            stores: StorePool::new(home, |h: &MemoryHome| h.existing_agent_builds()),
        }
    }
}

impl GovernedTool for MemoryBuild {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure> {
        let p = LookupParams::of(&call)?;
        let op = p.op.as_str();
        let answer = self.stores.with(|builds| {
            let mut notes = Vec::new();
            let out = match op {
                "all_summaries" => {
                    let lim = limit(p.limit, ALL_SUMMARIES_LIMIT, &mut notes);
                    let s = builds.all_summaries(lim).map_err(failure)?;
                    if s.truncated {
                        notes.push(format!(
                            "{} of {} runs shown; {}",
                            s.runs.len(),
                            s.total,
                            cut_note("runs", lim, ALL_SUMMARIES_LIMIT)
                        ));
                    }
                    json!({"op": op, "runs": s.runs, "total": s.total, "truncated": s.truncated})
                }
                "search" => {
                    let query = p.query.as_deref().unwrap_or_default();
                    let lim = limit(p.limit, BUILD_SEARCH_LIMIT, &mut notes);
                    let h = builds.search(query, lim).map_err(failure)?;
                    if h.truncated {
                        notes.push(cut_note("runs", lim, BUILD_SEARCH_LIMIT));
                    }
                    if h.matched == seam_memory::Matched::Some {
                        notes.push(super::memory_store::SOME_WORDS.to_owned());
                    }
                    json!({"op": op, "query": query, "hits": h.hits, "truncated": h.truncated})
                }
                "get" => {
                    let id = p.id.unwrap_or_default();
                    let Some(run) = builds.get(id).map_err(failure)? else {
                        let last = builds.last_id().map_err(failure)?;
                        return Err(ToolFailure::new(
                            RefusalCode::NotFound,
                            match last {
                                Some(n) => format!("no run has id {id}; the ids go up to {n}"),
                                None => format!("no run has id {id}: no run is recorded yet"),
                            },
                        ));
                    };
                    if run.log_cut {
                        notes.push(format!(
                            "the log was {} bytes; only its end is kept",
                            run.log_bytes
                        ));
                    }
                    json!({"op": op, "run": run})
                }
                other => {
                    return Err(ToolFailure::new(
                        RefusalCode::InvalidParams,
                        format!("memory.build has no op {other:?}"),
                    ));
                }
            };
            Ok(with_notes(out, notes))
        })?;
        match answer {
            Some(a) => Ok(a),
            None if op == "get" => Err(ToolFailure::new(
                RefusalCode::NotFound,
                format!(
                    "no run has id {}: no run is recorded yet",
                    p.id.unwrap_or_default()
                ),
            )),
            None => Ok(json!({
                "op": op,
                "runs": [],
                "hits": [],
                "truncated": false,
                "note": "no build or critic run is recorded yet",
            })),
        }
    }
}
