//! What the three `memory.*` tools share: a small pool of open stores, the mapping of a
//! store's errors to refusals, and the notes that say a result was cut; and what the two that
//! look records up by an `op` (`memory.build`, `memory.operator`) share: their params, and
//! their declaration but for its words.

use std::sync::Mutex;

use seam_memory::{Limit, MemoryError, MemoryHome};
use seam_policy::Capability;
use seam_protocol::RefusalCode;
use serde::Deserialize;
use serde_json::json;

use seam_toolbox::{ToolDecl, ToolFailure};

/// Open stores kept between calls (each call takes one; concurrent calls open more).
const IDLE_STORES: usize = 4;

/// Opens a store only if it exists: a read never creates one.
pub(super) type OpenExisting<S> = fn(&MemoryHome) -> Result<Option<S>, MemoryError>;

/// A pool of one kind of store in `<seam_home>/memory/`.
#[derive(Debug)]
pub(super) struct StorePool<S> {
    home: Option<MemoryHome>,
    open: OpenExisting<S>,
    idle: Mutex<Vec<S>>,
}

impl<S> StorePool<S> {
    pub fn new(home: Option<MemoryHome>, open: OpenExisting<S>) -> Self {
        StorePool {
            home,
            open,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` on an open store; `Ok(None)` when the store was never made (nothing to read).
    pub fn with<R>(
        &self,
        f: impl FnOnce(&S) -> Result<R, ToolFailure>,
    ) -> Result<Option<R>, ToolFailure> {
        let Some(home) = &self.home else {
            return Err(ToolFailure::new(
                RefusalCode::ToolFailed,
                "this gate has no memory directory (seam's home is not set)",
            ));
        };
        let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let store = match pooled {
            Some(s) => s,
            None => match (self.open)(home).map_err(failure)? {
                Some(s) => s,
                None => return Ok(None),
            },
        };
        let out = f(&store);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < IDLE_STORES {
            idle.push(store);
        }
        out.map(Some)
    }
}

/// A store's error as the tool's refusal: a query with nothing to search for is the caller's
/// mistake; the rest is the tool failing.
pub(super) fn failure(e: MemoryError) -> ToolFailure {
    let code = match e {
        MemoryError::EmptyQuery => RefusalCode::InvalidParams,
        _ => RefusalCode::ToolFailed,
    };
    ToolFailure::new(code, e.to_string())
}

/// The limit in force and, when the caller asked for more than the maximum, a note saying so.
pub(super) fn limit(requested: Option<u64>, bound: Limit, notes: &mut Vec<String>) -> usize {
    let requested = requested.map(|r| usize::try_from(r).unwrap_or(usize::MAX));
    if bound.clamped(requested) {
        notes.push(format!(
            "limit is at most {}: used {}",
            bound.max, bound.max
        ));
    }
    bound.effective(requested)
}

/// The note for a result cut at `limit`.
/// Said when no run, note or file held every word of a search's query and the hits hold some
/// of them (`seam_memory::Matched::Some`).
pub(super) const SOME_WORDS: &str =
    "nothing holds every word of the query; these hold some of them, the most and rarest first";

pub(super) fn cut_note(what: &str, limit: usize, bound: Limit) -> String {
    if limit < bound.max {
        format!(
            "only the first {limit} {what} are shown; ask with a higher limit (at most {}) or a narrower request for more",
            bound.max
        )
    } else {
        format!(
            "only the first {limit} {what} are shown (the most one call gives); narrow the request for more"
        )
    }
}

/// Puts `notes`, if any, into `out` as one `note` string.
pub(super) fn with_notes(mut out: serde_json::Value, notes: Vec<String>) -> serde_json::Value {
    if !notes.is_empty()
        && let Some(map) = out.as_object_mut()
    {
        map.insert("note".into(), notes.join("; ").into());
    }
    out
}

/// The params of a tool that looks records up by an `op`: `search` by words (`query`), `get`
/// by `id`, and one more that lists; `limit` bounds a list or a search.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LookupParams {
    pub op: String,
    pub query: Option<String>,
    pub id: Option<i64>,
    pub limit: Option<u64>,
}

impl LookupParams {
    /// The call's params, or the refusal that says why they are not a lookup's.
    pub fn of(call: &seam_toolbox::ToolCall) -> Result<LookupParams, ToolFailure> {
        serde_json::from_value(call.params().clone())
            .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))
    }
}

/// What `limit` means for a lookup tool, for the model: `most {what}: {op} {default}/{max},
/// {op} {default}/{max} (default/maximum)` for the two `op`s that take a limit.
pub(super) fn limit_words(what: &str, [(a, la), (b, lb)]: [(&str, Limit); 2]) -> String {
    format!(
        "most {what}: {a} {}/{}, {b} {}/{} (default/maximum)",
        la.default, la.max, lb.default, lb.max
    )
}

/// The words of a lookup tool's schema, for the model: its `op`s and what each param means.
pub(super) struct LookupWords<'a> {
    /// The `op`s, in the order the model sees them (`search` and `get` among them).
    pub ops: [&'a str; 3],
    pub op: &'a str,
    pub query: &'a str,
    pub id: &'a str,
    pub limit: String,
}

/// The declaration of a lookup tool (see [`LookupParams`]): a read of the memory whose answer
/// taints the turn (the records quote the owner's words, code or programs' output), with no
/// path and no egress. `search` requires `query` and `get` requires `id`.
pub(super) fn lookup_decl(
    name: &'static str,
    description: &'static str,
    words: LookupWords<'_>,
) -> ToolDecl {
    ToolDecl {
        name,
        version: "1",
        description,
        schema: json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["op"],
            "properties": {
                "op": {"type": "string", "enum": words.ops, "description": words.op},
                "query": {"type": "string", "minLength": 1, "description": words.query},
                "id": {"type": "integer", "minimum": 1, "description": words.id},
                "limit": {"type": "integer", "minimum": 1, "description": words.limit}
            },
            "allOf": [
                {"if": {"properties": {"op": {"const": "search"}}}, "then": {"required": ["query"]}},
                {"if": {"properties": {"op": {"const": "get"}}}, "then": {"required": ["id"]}}
            ]
        }),
        capability: Capability::Memory,
        reads: true,
        paths: vec![],
        taints: true,
        egress: false,
        destinations: Vec::new(),
        none_named: crate::NoneNamed::Unknown,
    }
}
