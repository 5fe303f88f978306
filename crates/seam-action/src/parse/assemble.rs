//! Assembly: the items found made into one action (a call, a plan or a reply), placeholders
//! and repeated calls dropped, a message to no tool read as the reply.

use seam_protocol::{Action, PlanStep};

use crate::catalog::ToolCatalog;
use crate::correction::{Correction, Corrections};

use super::FailureReason;
use super::resolve::resolve_call;
use super::shape::{is_placeholder_step, looks_like_envelope};
use super::{Item, RawCall, RawParams};

/// The items found in a reply, made into one action; every repair made is added to `fixes`.
pub(super) fn assemble(
    items: Vec<Item>,
    catalog: &ToolCatalog,
    fixes: &mut Corrections,
) -> Result<Action, FailureReason> {
    let mut calls: Vec<RawCall> = Vec::new();
    let mut plans = 0usize;
    let mut loose_calls = 0usize;
    let mut responds = Vec::new();
    let mut echo = None;
    let mut not_action = None;
    for item in items {
        match item {
            Item::Call(c) => {
                loose_calls += 1;
                calls.push(c);
            }
            Item::Plan(steps) => {
                plans += 1;
                calls.extend(steps);
            }
            Item::Respond(t) => responds.push(t),
            Item::Echo(t) => echo = echo.or(Some(t)),
            Item::NotAction(w) => not_action = not_action.or(Some(w)),
        }
    }
    // Calls with no tool and no params beside real ones (as in a plan).
    if calls.iter().any(|c| !is_placeholder_step(c)) {
        let before = calls.len();
        calls.retain(|c| !is_placeholder_step(c));
        if calls.len() < before {
            fixes.add(Correction::EmptyStepDropped);
        }
    }
    // Calls to no tool that only carry a message: the answer, unless real calls run.
    let mut messages = Vec::new();
    calls.retain(|c| match message_of(c, catalog) {
        Some(text) => {
            messages.push(text);
            false
        }
        None => true,
    });
    if !messages.is_empty() {
        fixes.add(Correction::MessageAsRespond);
        responds.extend(messages);
    }
    if calls.is_empty() {
        if let Some(text) = responds.into_iter().next() {
            return Ok(Action::Respond { text });
        }
        if let Some(tool) = echo {
            return Err(FailureReason::EchoedEnvelope { tool });
        }
        if let Some(what) = not_action {
            return Err(FailureReason::NotAnAction { what });
        }
        return Err(FailureReason::NoAction { len: 0 });
    }
    if !responds.is_empty() {
        fixes.add(Correction::RespondDropped);
    }
    let mut resolved = Vec::with_capacity(calls.len());
    let mut errors = Vec::new();
    for c in calls {
        match resolve_call(c, catalog, fixes) {
            Ok(step) => resolved.push(step),
            Err(e) => errors.push(e),
        }
    }
    // A call repeated word for word (compared once resolved and repaired).
    let before = resolved.len();
    resolved.dedup();
    if resolved.len() < before {
        fixes.add(Correction::DuplicateCallDropped);
    }
    if resolved.is_empty() {
        return Err(FailureReason::NotAnAction {
            what: errors.join("; "),
        });
    }
    if plans == 1 && loose_calls == 0 {
        return Ok(Action::Plan { steps: resolved });
    }
    if resolved.len() == 1 && plans == 0 {
        let PlanStep { actor, params } = resolved.remove(0);
        return Ok(Action::Call {
            tool: actor,
            params,
        });
    }
    if loose_calls > 1 || plans > 0 {
        fixes.add(Correction::SeveralCallsAsPlan);
    }
    Ok(Action::Plan { steps: resolved })
}

/// The text of a call that names no tool and whose params are only text under
/// keys no tool has (and name no tool), some of it prose (three words or
/// more): a message, not a call. Only with a
/// catalog that knows params (with names only, any key could be a param).
fn message_of(c: &RawCall, catalog: &ToolCatalog) -> Option<String> {
    let name = c.name.as_deref()?.trim();
    if name.is_empty() || c.name_from_mode || !catalog.knows_params() {
        return None;
    }
    let RawParams::Object(params) = &c.params else {
        return None;
    };
    if params.is_empty() || params.len() > 8 || looks_like_envelope(params) {
        return None;
    }
    if catalog.resolve(name).is_some() || catalog.enum_value_named(name).is_some() {
        return None;
    }
    let mut parts = Vec::new();
    for (k, v) in params {
        let text = v.as_str()?;
        let bare = k.trim().trim_end_matches('?');
        if catalog.declares_anywhere(bare)
            || catalog.declares_anywhere(&bare.to_ascii_lowercase())
            || catalog.resolve(bare).is_some()
            || (text.len() <= 100 && catalog.resolve(text).is_some())
        {
            return None;
        }
        if !text.trim().is_empty() {
            parts.push(text.trim());
        }
    }
    // A message is words, not a value: a path or a name alone is a param.
    let prose = parts.iter().any(|p| p.split_whitespace().count() >= 3);
    prose.then(|| parts.join("\n"))
}
