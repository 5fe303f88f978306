//! Model text to one canonical [`seam_protocol::Action`], with every repair named.
//!
//! This crate owns the agent's boundary with the model's words: [`parse`]
//! turns a raw reply into one of the three actions of DESIGN.md
//! (`action`, `plan`, `respond`), and [`route`] applies the dispatch
//! corrections that need no I/O. Both are pure functions of their input and
//! the [`ToolCatalog`], and every change they make to what the model wrote is
//! a [`Correction`] with a stable kebab-case id, so a turn's trace can count
//! them.
//!
//! # How parsing works
//! 1. Guards: more than [`MAX_REPLY_BYTES`] or an empty reply is refused.
//! 2. Think blocks (`<think>…</think>`, unclosed, or a bare `</think>`) are
//!    set aside; they are searched only when the rest holds no action.
//! 3. Text level: XML dialects (Qwen's `<function=…><parameter=…>`, also
//!    with a `<parameter=TOOL>` for its opener,
//!    MiniMax's `<invoke name=…>`, GLM's `<arg_key>`), labelled calls
//!    (`[FUNCTION]`/`[ARGS]`), a reply that is one JSON string, outer code
//!    fences, then every JSON object in the text (strict `serde_json` first,
//!    then the tolerant reader of `json.rs`, which also reads `\n` written
//!    as an escape between tokens; several fenced blocks are read block by
//!    block when an object ran on across a fence), a `NAME({…})` call, a bare
//!    payload right after a tool's name (`[TOOL_CALLS]NAME[ARGS]{…}`,
//!    `to=functions.NAME … {…}`); with no JSON, Python call syntax
//!    (`NAME(key=value)`), a tool's name on one line and its command on the
//!    next, or a reply that is only a tool's name. A list of chat messages
//!    (JSON or a Python repr) is read by its assistant messages' content and
//!    `tool_calls`.
//! 4. Shape: each object is read as the seam grammar (`mode`), an
//!    OpenAI-style call (`name`/`arguments`, `function`, `tool_calls`, a
//!    wrapper key, keys in another case), a plan without its mode, or a bare
//!    payload (params with no name). Params nested twice or given as a list
//!    of pairs are made one object. Several calls become a plan, in order; a
//!    call repeated word for word counts once; placeholder steps (`NAME`)
//!    beside real ones are dropped, and so are answers beside calls.
//! 5. Names: a written name resolves to a catalog tool through padding,
//!    case, separators, a namespace prefix or a unique multi-part suffix;
//!    as a call's name, also through its words in another order or number
//!    (`read_file`) or a slip of spelling (the only tool within one edit in
//!    5-9 characters, two from 10; never under 5: `seam` is not `seer`). A
//!    name that is no tool (the assistant's own name, an invented one) may be
//!    resolved by the params: a value or key naming exactly one tool, or
//!    params that fit exactly one tool's schema (with a catalog of names
//!    only, every tool "fits", so this only picks a catalog's single tool).
//!    Otherwise the name is kept as written (empty for a bare payload) and
//!    the dispatcher refuses it with the list of real names. A name that is
//!    one tool's enum value (`os`), or a name split between tool and op
//!    (`files` + `read`), resolves too; so does a param value only one
//!    tool's enum has, under its own key (`{"op":"all_summaries"}`). A call
//!    to no tool whose params are only prose under keys no tool has is a
//!    message, read as the answer (`message-as-respond`).
//! 6. Params, when the tool's schema is known: `key?` marks, keys and enum
//!    values in another case or style, keys a slip of spelling or number
//!    away from one missing param (or its leading words, `timeout` for
//!    `timeout_s`), a key that is a word of exactly one missing param's own
//!    description (`file` for `path`: "file to read"), enum values a slip
//!    away from one value, types, empty optionals, a stray key
//!    holding an enum value of a missing required param, a missing required
//!    enum value named by the model's own tool name or implied by the
//!    schema's conditional requirements, the one missing required param
//!    under the one key the schema does not have, a number out of the range
//!    of a bounded optional param (clamped to the bound; a required one is
//!    left for the tool to refuse), keys the schema does not have.
//!    Python source (a param whose schema says `contentMediaType:
//!    text/x-python`) that Python cannot compile because a small model put
//!    compound statements on one line or escaped its newlines twice is laid
//!    out again (see `python_layout`).
//!    [`schema_for_grammar`] leaves the clamped bounds out of what
//!    constrained decoding sees, so the model writes the number it means.
//!
//! # Routing
//! [`route`] turns an [`Action`](seam_protocol::Action) into [`Routed`]:
//! `Next::Calls` (run in order, each marked `via_plan` or direct, and
//! `known`) or `Next::Respond`. A one-step plan runs as its action; a plan
//! step whose actor is not a plan actor (governed tools, the builder) is
//! dispatched as a direct action; a `tool` key inside params is stripped.
//! The action schema lets a plan step name any tool: constrained decoding
//! keeps which tool the model meant, and routing decides the path.
//!
//! # What it must never do
//! Dispatch a tool the reply does not name or imply unambiguously: it never
//! picks between two candidate tools, never infers from a `mode` that is no
//! mode, and never replaces a real tool the model named with another.
//! It never panics (fuzzed), does no I/O, and bounds its work: input size,
//! nesting depth, and a fuel counter that keeps retries linear in the input.

mod catalog;
mod catalog_file;
mod correction;
mod json;
mod parse;
mod python_layout;
mod route;

pub use catalog::{CatalogEntry, ToolCatalog, schema_for_grammar};
pub use catalog_file::CatalogError;
pub use correction::Correction;
pub use parse::{FailureReason, MAX_REPLY_BYTES, ParseFailure, Parsed, parse};
pub use route::{Next, Routed, RoutedCall, route};
