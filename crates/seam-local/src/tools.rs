//! The four small tools: `scribe` (stages a note), `context` (the turn's
//! task, steps and attached files), `graph` (read-only queries of the
//! knowledge graph) and `seer` (the queue and this turn's governed calls).

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};
use seam_protocol::RefusalCode;
use serde_json::{Map, Value, json};

use crate::queue::ReturnQueue;
use crate::{LocalRefusal, LocalTools, MAX_NOTE_BYTES, TurnInfo, refusal, required, str_param};

/// The most of one attached file `context` shows.
pub const ATTACHED_FILE_BYTES: usize = 16 * 1024;
/// The most of all attached files `context` shows.
pub const ATTACHED_TOTAL_BYTES: usize = 64 * 1024;
/// How many nodes a graph answer lists at most.
pub const GRAPH_LIMIT: usize = 25;
/// The longest path `graph path` looks for.
pub const GRAPH_MAX_DEPTH: usize = 6;

pub(crate) fn context(turn: &TurnInfo, what: Option<&str>) -> Value {
    let task = || json!(turn.task);
    let history = || {
        json!(
            turn.history
                .iter()
                .map(|s| json!({"tool": s.tool, "params": s.params, "outcome": s.outcome}))
                .collect::<Vec<_>>()
        )
    };
    match what {
        Some("task") => json!({"task": task()}),
        Some("history") => json!({"steps": history()}),
        Some("files") => json!({"files": attached(&turn.attachments)}),
        _ => json!({
            "task": task(),
            "steps": history(),
            "files": turn.attachments.iter().map(|a| a.path.as_str()).collect::<Vec<_>>(),
        }),
    }
}

/// The attached files' text, up to each file's share of the budget.
fn attached(files: &[crate::turn::Attachment]) -> Vec<Value> {
    let mut left = ATTACHED_TOTAL_BYTES;
    files
        .iter()
        .map(|a| {
            let text = seam_term::head_bytes(&a.text, ATTACHED_FILE_BYTES.min(left));
            left -= text.len();
            let cut = a.cut || text.len() < a.text.len();
            json!({"path": a.path, "bytes": a.bytes, "text": text, "cut": cut})
        })
        .collect()
}

/// Does an answer of this local call carry the owner's data, or text a model wrote in an
/// earlier turn? Such an answer taints the turn at the gate (DESIGN.md, taint), so that
/// nothing it carries can leave through a tool that reaches the network: the attached
/// files (`context` what=files), the queue's summaries (`seer` what=queue, the default),
/// the knowledge graph's notes (`graph`), and a pending queue item's branch (`aesthesis`
/// naming a branch). The task, this turn's steps and this turn's own branch do not.
pub fn taints_turn(tool: &str, params: &serde_json::Map<String, Value>) -> bool {
    let what = params.get("what").and_then(Value::as_str);
    match tool {
        "context" => what == Some("files"),
        "seer" => what != Some("ledger"),
        "graph" => true,
        "aesthesis" => params.contains_key("branch"),
        _ => false,
    }
}

pub(crate) fn seer_queue(seam_home: &Path) -> Result<Value, LocalRefusal> {
    let queue = ReturnQueue::existing(seam_home)
        .map_err(|e| LocalRefusal::new(RefusalCode::Failed, e.to_string()))?;
    let items = match queue {
        Some(q) => q
            .list(20)
            .map_err(|e| LocalRefusal::new(RefusalCode::Failed, e.to_string()))?,
        None => Vec::new(),
    };
    Ok(json!({"items": items.iter().map(|i| json!({
        "id": i.id, "kind": i.kind, "status": i.status, "verdict": i.verdict, "summary": i.summary,
    })).collect::<Vec<_>>()}))
}

pub(crate) fn seer_ledger(turn: &TurnInfo) -> Value {
    json!({"calls": turn.gate_calls.iter().rev().take(20).rev().map(|c| json!({
        "invocation_id": c.invocation_id, "tool": c.tool, "outcome": c.outcome,
    })).collect::<Vec<_>>()})
}

fn sql_failed(e: rusqlite::Error) -> LocalRefusal {
    LocalRefusal::new(RefusalCode::Failed, format!("the graph: {e}"))
}

fn node_id(conn: &Connection, name: &str) -> Result<Option<i64>, LocalRefusal> {
    conn.query_row("SELECT id FROM nodes WHERE name = ?1", [name], |r| r.get(0))
        .optional()
        .map_err(sql_failed)
}

fn no_node(name: &str) -> LocalRefusal {
    LocalRefusal::new(
        RefusalCode::NotFound,
        format!("the graph has no node named {name:?} (graph search finds names)"),
    )
}

pub(crate) fn graph_neighbors(
    conn: Option<&Connection>,
    node: &str,
) -> Result<Value, LocalRefusal> {
    let Some(conn) = conn else {
        return Err(no_node(node));
    };
    let id = node_id(conn, node)?.ok_or_else(|| no_node(node))?;
    let mut st = conn
        .prepare(
            "SELECT e.kind, 'out', n.name, n.kind FROM edges e JOIN nodes n ON n.id = e.dst WHERE e.src = ?1
             UNION ALL
             SELECT e.kind, 'in', n.name, n.kind FROM edges e JOIN nodes n ON n.id = e.src WHERE e.dst = ?1
             LIMIT ?2",
        )
        .map_err(sql_failed)?;
    let edges: Vec<Value> = st
        .query_map(rusqlite::params![id, GRAPH_LIMIT as i64 + 1], |r| {
            Ok(
                json!({"edge": r.get::<_, String>(0)?, "direction": r.get::<_, String>(1)?,
                      "node": r.get::<_, String>(2)?, "kind": r.get::<_, String>(3)?}),
            )
        })
        .and_then(|rows| rows.collect())
        .map_err(sql_failed)?;
    let truncated = edges.len() > GRAPH_LIMIT;
    Ok(
        json!({"node": node, "edges": edges.into_iter().take(GRAPH_LIMIT).collect::<Vec<_>>(), "truncated": truncated}),
    )
}

pub(crate) fn graph_path(
    conn: Option<&Connection>,
    from: &str,
    to: &str,
) -> Result<Value, LocalRefusal> {
    let Some(conn) = conn else {
        return Err(no_node(from));
    };
    let a = node_id(conn, from)?.ok_or_else(|| no_node(from))?;
    let b = node_id(conn, to)?.ok_or_else(|| no_node(to))?;
    let mut st = conn
        .prepare("SELECT dst FROM edges WHERE src = ?1 UNION SELECT src FROM edges WHERE dst = ?1")
        .map_err(sql_failed)?;
    let mut prev: HashMap<i64, i64> = HashMap::new();
    let mut seen: HashSet<i64> = HashSet::from([a]);
    let mut queue = VecDeque::from([(a, 0usize)]);
    let mut found = a == b;
    while let Some((n, depth)) = queue.pop_front() {
        if found || depth >= GRAPH_MAX_DEPTH || seen.len() > 10_000 {
            break;
        }
        let next: Vec<i64> = st
            .query_map([n], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(sql_failed)?;
        for m in next {
            if seen.insert(m) {
                prev.insert(m, n);
                if m == b {
                    found = true;
                    break;
                }
                queue.push_back((m, depth + 1));
            }
        }
    }
    if !found {
        return Ok(json!({"found": false, "path": [], "max_depth": GRAPH_MAX_DEPTH}));
    }
    let mut ids = vec![b];
    while let Some(p) = prev.get(ids.last().expect("non-empty")) {
        ids.push(*p);
    }
    ids.reverse();
    let mut names = Vec::new();
    for id in ids {
        let name: String = conn
            .query_row("SELECT name FROM nodes WHERE id = ?1", [id], |r| r.get(0))
            .map_err(sql_failed)?;
        names.push(name);
    }
    Ok(json!({"found": true, "path": names}))
}

pub(crate) fn graph_search(conn: Option<&Connection>, query: &str) -> Result<Value, LocalRefusal> {
    let words: Vec<String> = query
        .split_whitespace()
        .take(8)
        .map(|w| w.to_lowercase())
        .collect();
    if words.is_empty() {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidParams,
            "query has no words",
        ));
    }
    let Some(conn) = conn else {
        return Ok(json!({"nodes": [], "truncated": false}));
    };
    let mut st = conn
        .prepare("SELECT name, kind, text FROM nodes ORDER BY id")
        .map_err(sql_failed)?;
    let mut rows = st.query([]).map_err(sql_failed)?;
    let mut hits = Vec::new();
    let mut truncated = false;
    while let Some(r) = rows.next().map_err(sql_failed)? {
        let name: String = r.get(0).map_err(sql_failed)?;
        let kind: String = r.get(1).map_err(sql_failed)?;
        let text: String = r.get(2).map_err(sql_failed)?;
        let hay = format!("{name}\n{text}").to_lowercase();
        if words.iter().all(|w| hay.contains(w.as_str())) {
            if hits.len() == GRAPH_LIMIT {
                truncated = true;
                break;
            }
            let snippet = seam_term::head(&text, 200).0;
            hits.push(json!({"name": name, "kind": kind, "text": snippet}));
        }
    }
    Ok(json!({"nodes": hits, "truncated": truncated}))
}

impl LocalTools {
    /// The scribe tool's call: holds a note for the turn.
    pub(crate) fn scribe(
        &self,
        turn: &TurnInfo,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal> {
        let text = required(params, "text", "")?;
        if text.trim().is_empty() {
            return Err(refusal(RefusalCode::InvalidParams, "params.text is empty"));
        }
        if text.len() > MAX_NOTE_BYTES {
            return Err(refusal(
                RefusalCode::InvalidParams,
                format!(
                    "params.text is {} bytes, over the limit of {MAX_NOTE_BYTES}",
                    text.len()
                ),
            ));
        }
        let title = str_param(params, "title").unwrap_or("").trim();
        let title = seam_term::head(title, 200).0.to_owned();
        let state = self.turn_state(&turn.turn);
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        state
            .notes
            .push((title.clone(), text.trim_end().to_owned()));
        Ok(serde_json::json!({
            "staged": true,
            "note": state.notes.len(),
            "title": title,
            "kept": "once the operator approves it",
        }))
    }

    /// The graph tool's call.
    pub(crate) fn graph(&self, params: &Map<String, Value>) -> Result<Value, LocalRefusal> {
        let conn = ReturnQueue::read_only(&self.config.seam_home)
            .map_err(|e| refusal(RefusalCode::Failed, e.to_string()))?;
        match required(params, "op", "")? {
            "neighbors" => {
                graph_neighbors(conn.as_ref(), required(params, "node", "for neighbors")?)
            }
            "path" => graph_path(
                conn.as_ref(),
                required(params, "node", "for path")?,
                required(params, "to", "for path")?,
            ),
            _ => graph_search(conn.as_ref(), required(params, "query", "for search")?),
        }
    }
}
