//! From raw model text to one action: the text-level steps (think blocks,
//! fences, tags, JSON objects in prose: [`text`]) and the dialects a call is written in
//! besides JSON (Qwen's XML, Python calls, labelled calls: [`dialects`]), then the shape of
//! each object found ([`shape`]), then one action of them ([`assemble`]), each call's name
//! and params resolved against the catalog ([`resolve`]).
//!
//! One reply has one work budget ([`Fuel`]): every loose read of it, in any step, spends
//! from the budget [`parse`] makes for the whole reply.

mod assemble;
mod dialects;
mod resolve;
mod shape;
mod text;

use seam_protocol::Action;
use serde::{Deserialize, Serialize};

use serde_json::{Map, Value};

use crate::catalog::ToolCatalog;
use crate::correction::{Correction, Corrections};
use crate::json::{self, Fuel};
use assemble::assemble;
use text::{extract, split_think};

/// Largest reply parsed, in bytes. A reply this long is a runaway, not an action.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// What [`parse`] recovered: the canonical action and every repair made to reach it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parsed {
    pub action: Action,
    pub corrections: Vec<Correction>,
}

/// Why no action could be recovered from a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ParseFailure {
    pub reason: FailureReason,
}

/// The kinds of [`ParseFailure`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FailureReason {
    #[error("the reply is {len} bytes; at most {max} are parsed")]
    TooLong { len: usize, max: usize },
    #[error("the reply is empty")]
    Empty,
    #[error("no JSON object or tool call found in {len} bytes of prose")]
    NoAction { len: usize },
    #[error("the reply echoes a tool result envelope ({tool}) instead of acting")]
    EchoedEnvelope { tool: String },
    #[error("JSON found, but not an action: {what}")]
    NotAnAction { what: String },
    #[error(
        "the reply's JSON is too damaged or too deeply nested to read (at most {max_depth} levels)"
    )]
    Unreadable { max_depth: usize },
}

impl From<FailureReason> for ParseFailure {
    fn from(reason: FailureReason) -> Self {
        ParseFailure { reason }
    }
}

/// A call as written, before its name is resolved.
#[derive(Debug, Clone, PartialEq)]
struct RawCall {
    /// The name as written; `None` when the reply named no tool.
    name: Option<String>,
    /// The name came from `mode` (`{"mode":"queue",…}`): never a basis for inference.
    name_from_mode: bool,
    params: RawParams,
    /// For Qwen's XML dialect: each param's text as written, used when the
    /// schema says the param is a string.
    xml_text: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
enum RawParams {
    Object(Map<String, Value>),
    /// A string that is not JSON: fits a tool with exactly one param.
    Text(String),
}

#[derive(Debug)]
enum Item {
    Call(RawCall),
    Plan(Vec<RawCall>),
    Respond(String),
    Echo(String),
    NotAction(String),
}

/// Turns raw model text into one canonical [`Action`], naming every repair.
/// Never panics; input over [`MAX_REPLY_BYTES`] is refused.
pub fn parse(raw: &str, catalog: &ToolCatalog) -> Result<Parsed, ParseFailure> {
    if raw.len() > MAX_REPLY_BYTES {
        return Err(FailureReason::TooLong {
            len: raw.len(),
            max: MAX_REPLY_BYTES,
        }
        .into());
    }
    if raw.trim().is_empty() {
        return Err(FailureReason::Empty.into());
    }
    let mut fixes = Corrections::default();
    let mut fuel = Fuel::for_len(raw.len());
    let mut damaged = false;
    // A reply that is strict JSON throughout has no think block: a `</think>`
    // inside its strings is text.
    let strict = raw.trim_start().starts_with(['{', '['])
        && serde_json::from_str::<serde::de::IgnoredAny>(raw).is_ok();
    let (main, think) = if strict {
        (raw.to_owned(), None)
    } else {
        split_think(raw, &mut fixes)
    };
    let mut items = extract(&main, catalog, &mut fuel, &mut fixes, &mut damaged, 0);
    if !items
        .iter()
        .any(|i| matches!(i, Item::Call(_) | Item::Plan(_) | Item::Respond(_)))
        && let Some(think) = think
    {
        let mut inner = Corrections::default();
        let found = extract(&think, catalog, &mut fuel, &mut inner, &mut damaged, 0);
        if found
            .iter()
            .any(|i| matches!(i, Item::Call(_) | Item::Plan(_)))
        {
            fixes.add(Correction::CallInThink);
            fixes.extend(&inner);
            items = found;
        }
    }
    let action = assemble(items, catalog, &mut fixes).map_err(|reason| {
        if let FailureReason::NoAction { .. } = reason {
            if damaged {
                return FailureReason::Unreadable {
                    max_depth: json::MAX_DEPTH,
                };
            }
            return FailureReason::NoAction { len: raw.len() };
        }
        reason
    })?;
    Ok(Parsed {
        action,
        corrections: fixes.into_vec(),
    })
}
