//! Each call resolved: its name to a tool (or a tool inferred from its params, within
//! limits), its params repaired against the tool's schema.

use seam_protocol::PlanStep;
use serde_json::{Map, Value};

use crate::catalog::{Schema, ToolCatalog};
use crate::correction::{Correction, Corrections};

use super::shape::{PARAM_KEYS, looks_like_envelope};
use super::{RawCall, RawParams};

/// The name resolved (or inferred, or kept as written) and the params repaired.
pub(super) fn resolve_call(
    c: RawCall,
    catalog: &ToolCatalog,
    fixes: &mut Corrections,
) -> Result<PlanStep, String> {
    let written = c.name.clone().unwrap_or_default();
    let mut params = match &c.params {
        RawParams::Object(m) => m.clone(),
        RawParams::Text(_) => Map::new(),
    };
    strip_optional_marks(&mut params, fixes);
    let mut tool: Option<usize> = None;
    if let Some((i, f)) = catalog.resolve(&written) {
        for x in f {
            fixes.add(x);
        }
        tool = Some(i);
        unnest_params(&mut params, Schema::of(&catalog.entries()[i]), fixes);
    } else if !c.name_from_mode {
        if let Some((i, fix)) = catalog.resolve_near(&written) {
            // `read_file`, `web.serach`: the tool the model named, in other words.
            fixes.add(fix);
            tool = Some(i);
            unnest_params(&mut params, Schema::of(&catalog.entries()[i]), fixes);
        } else if let Some((i, key, value)) = catalog.enum_value_named(&written) {
            // `{"tool":"os"}`: the name is one tool's enum value.
            let entry = &catalog.entries()[i];
            let fits = match &c.params {
                RawParams::Object(_) => catalog.fitting(&params).contains(&i),
                RawParams::Text(_) => {
                    Schema::of(entry).and_then(|s| s.single_property()) == Some(key.as_str())
                }
            };
            if fits
                && params
                    .get(&key)
                    .is_none_or(|v| v.as_str() == Some(value.as_str()))
            {
                params.insert(key, Value::String(value));
                fixes.add(Correction::ToolNameIsEnumValue);
                tool = Some(i);
            }
        }
        if tool.is_none() && !written.trim().is_empty() {
            unnest_params(&mut params, None, fixes);
        }
        if tool.is_none() {
            tool = hidden_tool(&written, &mut params, catalog, fixes);
            if let Some(i) = tool {
                unnest_params(&mut params, Schema::of(&catalog.entries()[i]), fixes);
            }
        }
    }
    // `params` given as one string: the tool's one param.
    if let RawParams::Text(s) = &c.params {
        let target = tool
            .and_then(|i| Schema::of(&catalog.entries()[i]))
            .and_then(|sc| sc.single_property().map(str::to_owned));
        match target {
            // Already given by the name (`{"tool":"os","params":"linux"}`).
            Some(p) if params.contains_key(&p) => {
                fixes.add(Correction::ExtraParamDropped);
            }
            Some(p) => {
                params.insert(p, Value::String(s.clone()));
                fixes.add(Correction::ParamsNotObject);
            }
            None => {
                return Err(format!(
                    "the params of {:?} are {:?}, not an object",
                    if written.is_empty() {
                        "the call"
                    } else {
                        written.as_str()
                    },
                    seam_term::head(s, 60).0
                ));
            }
        }
    }
    let Some(i) = tool else {
        if written.trim().is_empty() {
            fixes.add(Correction::UnnamedCall);
        }
        return Ok(PlanStep {
            actor: written,
            params,
        });
    };
    let entry = &catalog.entries()[i];
    if let Some(schema) = Schema::of(entry) {
        for (k, text) in &c.xml_text {
            if schema.takes_string(k) && params.get(k).is_some_and(|v| !v.is_string()) {
                params.insert(k.clone(), Value::String(text.clone()));
            }
        }
        let hint = if written == entry.spec.name {
            ""
        } else {
            written.as_str()
        };
        schema.repair(&mut params, hint, fixes);
    }
    Ok(PlanStep {
        actor: entry.spec.name.clone(),
        params,
    })
}

/// `{"params": {…}}` inside the params: unwrapped, unless the tool's schema
/// has that key (without a schema, only a key the call shapes use).
fn unnest_params(
    params: &mut Map<String, Value>,
    schema: Option<Schema<'_>>,
    fixes: &mut Corrections,
) {
    for _ in 0..3 {
        if params.len() != 1 {
            return;
        }
        let Some((k, Value::Object(_))) = params.iter().next() else {
            return;
        };
        let wraps = match &schema {
            Some(s) => PARAM_KEYS.contains(&k.as_str()) && !s.has(k),
            None => matches!(
                k.as_str(),
                "params" | "arguments" | "parameters" | "args" | "kwargs"
            ),
        };
        if !wraps {
            return;
        }
        let k = k.clone();
        if let Some(Value::Object(inner)) = params.remove(&k) {
            *params = inner;
            fixes.add(Correction::ParamsNested);
        }
    }
}

/// `key?` → `key` (the prompt's optional mark copied into the key).
fn strip_optional_marks(params: &mut Map<String, Value>, fixes: &mut Corrections) {
    let marked: Vec<String> = params
        .keys()
        .filter(|k| k.trim_end().ends_with('?'))
        .cloned()
        .collect();
    for k in marked {
        let bare = k.trim_end().trim_end_matches('?').trim().to_owned();
        if bare.is_empty() || params.contains_key(&bare) {
            continue;
        }
        if let Some(v) = params.remove(&k) {
            params.insert(bare, v);
            fixes.add(Correction::OptionalMarkerInKey);
        }
    }
}

/// A name that is none of the tools (often the assistant's own): the tool may
/// still be in the params — a value naming one, a key naming one — or the
/// params may fit exactly one tool's schema. A tool found only by the fit is
/// taken when it is the catalog's only tool, or a plan actor (local and
/// reversible: its effects are reviewed), or when a word of the name the
/// model wrote is one of the tool's enum values or name parts
/// (`files.write` + `{path, content}` → `builder`, op `write`). A governed
/// tool is never dispatched on a guess from params alone: its call cannot be
/// undone. Nothing else is guessed.
fn hidden_tool(
    written: &str,
    params: &mut Map<String, Value>,
    catalog: &ToolCatalog,
    fixes: &mut Corrections,
) -> Option<usize> {
    // Params that carry a copied tool result name the tool that produced it,
    // not one to call.
    if looks_like_envelope(params) {
        return None;
    }
    // The name split between the tool and a param: {"tool":"files","op":"read"}.
    if !written.trim().is_empty() && written.len() <= 100 {
        let joined: Vec<(String, usize)> = params
            .iter()
            .filter_map(|(k, v)| {
                let s = v.as_str()?.trim();
                (!s.is_empty() && s.len() <= 40 && !s.contains(char::is_whitespace))
                    .then_some(())?;
                // a value that is a whole name is the next rule's
                catalog.resolve(s).is_none().then_some(())?;
                let (i, _) = catalog.resolve(&format!("{}.{s}", written.trim()))?;
                Some((k.clone(), i))
            })
            .collect();
        if let [(k, i)] = joined.as_slice() {
            let keep = Schema::of(&catalog.entries()[*i])
                .is_some_and(|sc| params.get(k).is_some_and(|v| sc.accepts(k, v)));
            if !keep {
                params.remove(k);
            }
            fixes.add(Correction::ToolNameSplit);
            return Some(*i);
        }
    }
    // A value naming a tool: {"task": "memory.build", …}
    let named: Vec<(String, usize)> = params
        .iter()
        .filter_map(|(k, v)| {
            let s = v.as_str()?;
            (s.len() <= 100).then_some(())?;
            catalog.resolve(s).map(|(i, _)| (k.clone(), i))
        })
        .collect();
    if let [(k, i)] = named.as_slice() {
        params.remove(k);
        fixes.add(Correction::ToolInParams);
        return Some(*i);
    }
    if named.len() > 1 {
        return None;
    }
    // A key naming a tool: {"aesthesis": "ui/index.html"}
    let keyed: Vec<(String, usize)> = params
        .keys()
        .filter_map(|k| catalog.resolve(k).map(|(i, _)| (k.clone(), i)))
        .collect();
    if let [(k, i)] = keyed.as_slice() {
        let entry = &catalog.entries()[*i];
        let v = params.get(k).cloned().unwrap_or(Value::Null);
        match v {
            Value::Object(inner) => {
                params.remove(k);
                for (ik, iv) in inner {
                    params.insert(ik, iv);
                }
                fixes.add(Correction::ToolNameAsKey);
                return Some(*i);
            }
            Value::String(s) => {
                let prop = Schema::of(entry).and_then(|sc| sc.single_property().map(str::to_owned));
                if let Some(p) = prop
                    && !params.contains_key(&p)
                {
                    params.remove(k);
                    params.insert(p, Value::String(s));
                    fixes.add(Correction::ToolNameAsKey);
                    return Some(*i);
                }
            }
            _ => {}
        }
    }
    // A value only one tool's enum has, under its own key: {"op": "all_summaries"}.
    let owners: Vec<usize> = params
        .iter()
        .filter_map(|(k, v)| catalog.enum_value_owner(k, v.as_str()?))
        .collect();
    if let Some(&i) = owners.first()
        && owners.iter().all(|&o| o == i)
    {
        // every other key is the tool's, or no tool's at all
        let schema = Schema::of(&catalog.entries()[i]);
        let consistent = params.iter().all(|(k, v)| {
            schema.as_ref().is_some_and(|s| s.accepts(k, v)) || !catalog.declares_anywhere(k)
        });
        if consistent {
            fixes.add(Correction::ToolInferredFromEnumValue);
            return Some(i);
        }
    }
    // Params that fit exactly one tool's schema.
    let mut probe = params.clone();
    probe.retain(|_, v| !(v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty())));
    if let [only] = catalog.fitting(&probe).as_slice() {
        let entry = &catalog.entries()[*only];
        let allowed = catalog.entries().len() == 1
            || entry.plan_actor
            || Schema::of(entry).is_some_and(|s| s.corroborated_by(written, &entry.spec.name));
        if allowed {
            fixes.add(Correction::ToolInferredFromParams);
            return Some(*only);
        }
    }
    None
}
