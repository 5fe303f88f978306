//! Shared by tests/corpus.rs and examples/repair_eval.rs: the 14-tool catalog
//! fixture and the two corpora's scoring, as their READMEs define it.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use seam_action::{CatalogEntry, Next, ToolCatalog, parse, route};
use seam_protocol::Action;
use serde_json::{Map, Value};

/// The 14 tools of DESIGN.md: the governed ones with the gate's schemas, the
/// local ones as the corpus's system prompt lists them.
pub fn catalog_fixture() -> ToolCatalog {
    let entries: Vec<CatalogEntry> =
        serde_json::from_str(include_str!("../fixtures/catalog.json")).expect("catalog fixture");
    ToolCatalog::new(entries)
}

/// The directory of the shared bench data, relative to the workspace root.
pub fn bench_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench-data")
}

fn rows(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("corpus line"))
        .collect()
}

/// Hits over cases, per key.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub by: BTreeMap<String, (usize, usize)>,
}

impl Tally {
    pub fn add(&mut self, key: &str, hit: bool) {
        let e = self.by.entry(key.to_owned()).or_default();
        e.0 += usize::from(hit);
        e.1 += 1;
    }
    pub fn total(&self) -> (usize, usize) {
        self.by.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }
    pub fn rate(&self, key: &str) -> f64 {
        let (h, n) = self.by.get(key).copied().unwrap_or((0, 0));
        if n == 0 { 0.0 } else { h as f64 / n as f64 }
    }
}

pub fn rate((h, n): (usize, usize)) -> f64 {
    if n == 0 { 0.0 } else { h as f64 / n as f64 }
}

// ------------------------------------------------------------ toolcalls

/// How the default catalog is chosen for cases whose intended tool is null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullToolCatalog {
    /// `--tools ""`: no names.
    Empty,
    /// No `--tools`: the registry's 14 names.
    Default14,
}

pub struct ToolcallsReport {
    pub by_category: Tally,
    /// Hits if a null intended `arguments` had to equal the params literally
    /// (which no object can): a reading the README does not take.
    pub literal_null_arguments: (usize, usize),
    /// Hits if a null intended `arguments` meant "no arguments" (`{}`).
    pub empty_null_arguments: (usize, usize),
    /// Cases missed: (id, category, what came out).
    pub misses: Vec<(String, String, String)>,
}

/// Recovery of the intended call, per the toolcalls README: the catalog is
/// the intended tool names; recovered when tool (or the plan's steps, in
/// order) and params equal the intended ones. A null intended tool compares
/// params only; null intended arguments compare the tool only. (The README's
/// `intended` is null where "nothing can be determined"; a null inside it is
/// the part that cannot be, as `tool: null` is. Read literally, a null
/// `arguments` could never equal an action's params, an object.)
pub fn toolcalls_eval(path: &Path, null_tools: NullToolCatalog) -> ToolcallsReport {
    let mut by_category = Tally::default();
    let mut misses = Vec::new();
    let mut literal = (0, 0);
    let mut empty = (0, 0);
    for row in rows(path) {
        let intended = &row["intended"];
        if intended.is_null() {
            continue;
        }
        let id = row["id"].as_str().unwrap_or("?").to_owned();
        let category = row["category"].as_str().unwrap_or("?").to_owned();
        let raw = row["raw"].as_str().unwrap_or("");
        let wanted: Vec<&Value> = match intended {
            Value::Array(a) => a.iter().collect(),
            one => vec![one],
        };
        let names: Vec<String> = wanted
            .iter()
            .filter_map(|w| w["tool"].as_str().map(str::to_owned))
            .collect();
        let catalog = if names.is_empty() && null_tools == NullToolCatalog::Default14 {
            catalog_fixture_names()
        } else {
            ToolCatalog::from_names(names)
        };
        let got: Vec<(String, Map<String, Value>)> = match parse(raw, &catalog) {
            Ok(p) => match p.action {
                Action::Call { tool, params } => vec![(tool, params)],
                Action::Plan { steps } => steps.into_iter().map(|s| (s.actor, s.params)).collect(),
                Action::Respond { .. } => vec![],
            },
            Err(_) => vec![],
        };
        let hit = got.len() == wanted.len()
            && got.iter().zip(&wanted).all(|((tool, params), w)| {
                let tool_ok = w["tool"].as_str().is_none_or(|t| t == tool);
                let args_ok =
                    w["arguments"].is_null() || w["arguments"] == Value::Object(params.clone());
                tool_ok && args_ok
            });
        let null_arguments = wanted.iter().any(|w| w["arguments"].is_null());
        literal.0 += usize::from(hit && !null_arguments);
        literal.1 += 1;
        let no_arguments_ok = got
            .iter()
            .zip(&wanted)
            .all(|((_, params), w)| !w["arguments"].is_null() || params.is_empty());
        empty.0 += usize::from(hit && no_arguments_ok);
        empty.1 += 1;
        if !hit {
            misses.push((id, category.clone(), format!("{got:?}")));
        }
        by_category.add(&category, hit);
    }
    ToolcallsReport {
        by_category,
        literal_null_arguments: literal,
        empty_null_arguments: empty,
        misses,
    }
}

/// The 14 names only (what `seam action parse` resolves against by default).
pub fn catalog_fixture_names() -> ToolCatalog {
    ToolCatalog::from_names(
        catalog_fixture()
            .names()
            .map(str::to_owned)
            .collect::<Vec<_>>(),
    )
}

// ------------------------------------------------------------ seam-actions

pub struct ActionsReport {
    pub by_model: Tally,
    pub by_category: Tally,
    /// Replies of each model that were exactly right as written (the corpus's grade).
    pub exact_as_written: Tally,
    /// A dispatched tool that is not the intended one and that the reply does not name.
    pub wrong_unnamed: Vec<(String, String)>,
    /// Every dispatched tool that is not the intended one (named by the reply or not).
    pub wrong_named: usize,
    pub misses: Vec<(String, String)>,
    /// Every reply: id, hit, parse corrections + route corrections, outcome.
    pub details: Vec<(String, bool, String)>,
}

fn norm_path(s: &str) -> &str {
    let s = s.strip_prefix("./").unwrap_or(s);
    s.strip_suffix('/').unwrap_or(s)
}

fn param_matches(want: &Value, got: Option<&Value>) -> bool {
    match (want, got) {
        (Value::Null, Some(Value::String(s))) => !s.trim().is_empty(),
        (Value::Null, _) => false,
        (Value::String(w), Some(Value::String(g))) => norm_path(w) == norm_path(g),
        (w, Some(g)) => w == g || (w.as_f64().is_some() && w.as_f64() == g.as_f64()),
        (_, None) => false,
    }
}

fn call_matches(
    catalog: &ToolCatalog,
    tool: &str,
    params: &Map<String, Value>,
    want_tool: &str,
    want_params: &Value,
) -> bool {
    if tool != want_tool {
        return false;
    }
    let Some(entry) = catalog.get(tool) else {
        return false;
    };
    let props = entry
        .spec
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    if params
        .keys()
        .any(|k| props.is_none_or(|p| !p.contains_key(k)))
    {
        return false;
    }
    match want_params.as_object() {
        Some(w) => w.iter().all(|(k, v)| param_matches(v, params.get(k))),
        None => true,
    }
}

/// Share of replies that dispatch correctly after parse + route, per the
/// seam-actions README, and every dispatch of a tool the reply does not name.
pub fn actions_eval(path: &Path) -> ActionsReport {
    let catalog = catalog_fixture();
    let mut rep = ActionsReport {
        by_model: Tally::default(),
        by_category: Tally::default(),
        exact_as_written: Tally::default(),
        wrong_unnamed: vec![],
        wrong_named: 0,
        misses: vec![],
        details: vec![],
    };
    for row in rows(path) {
        let id = row["id"].as_str().unwrap_or("?").to_owned();
        let model = row["model"].as_str().unwrap_or("?").to_owned();
        let raw = row["raw"].as_str().unwrap_or("");
        let intended = &row["intended"];
        let mode = intended["mode"].as_str().unwrap_or("");
        let parsed = parse(raw, &catalog);
        let parse_fixes: Vec<String> = parsed
            .as_ref()
            .map(|p| p.corrections.iter().map(|c| c.to_string()).collect())
            .unwrap_or_default();
        let failure = parsed.as_ref().err().map(|e| e.to_string());
        let routed = parsed.ok().map(|p| route(p.action, &catalog));
        let calls = match routed.as_ref().map(|r| &r.next) {
            Some(Next::Calls(c)) => c.clone(),
            _ => vec![],
        };
        let hit = match (mode, routed.as_ref().map(|r| &r.next)) {
            ("respond", Some(Next::Respond { text })) => !text.trim().is_empty(),
            ("action", Some(Next::Calls(c))) => {
                c.len() == 1
                    && call_matches(
                        &catalog,
                        &c[0].tool,
                        &c[0].params,
                        intended["tool"].as_str().unwrap_or(""),
                        &intended["params"],
                    )
            }
            ("plan", Some(Next::Calls(c))) => {
                let steps = intended["steps"].as_array().cloned().unwrap_or_default();
                c.len() == steps.len()
                    && c.iter().zip(&steps).all(|(c, s)| {
                        call_matches(
                            &catalog,
                            &c.tool,
                            &c.params,
                            s["actor"].as_str().unwrap_or(""),
                            &s["params"],
                        )
                    })
            }
            _ => false,
        };
        // Tools the reply was meant to call.
        let mut intended_tools: Vec<String> = intended["tool"]
            .as_str()
            .map(str::to_owned)
            .into_iter()
            .collect();
        if let Some(steps) = intended["steps"].as_array() {
            intended_tools.extend(
                steps
                    .iter()
                    .filter_map(|s| s["actor"].as_str().map(str::to_owned)),
            );
        }
        let raw_norm = raw.to_lowercase().replace('_', ".");
        for c in calls.iter().filter(|c| c.known) {
            if intended_tools.contains(&c.tool) {
                continue;
            }
            rep.wrong_named += 1;
            if !raw_norm.contains(&c.tool.to_lowercase()) {
                rep.wrong_unnamed.push((id.clone(), c.tool.clone()));
            }
        }
        let outcome = match &routed {
            Some(r) => format!(
                "{parse_fixes:?} {:?} {}",
                r.corrections.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
                serde_json::to_string(&r.next).unwrap_or_default()
            ),
            None => format!("failure: {}", failure.unwrap_or_default()),
        };
        if !hit {
            rep.misses.push((id.clone(), outcome.clone()));
        }
        rep.details.push((id.clone(), hit, outcome));
        rep.by_model.add(&model, hit);
        rep.exact_as_written
            .add(&model, row["grade"]["exact"].as_bool() == Some(true));
        let cats = row["categories"].as_array().cloned().unwrap_or_default();
        if cats.is_empty() {
            rep.by_category.add("(none)", hit);
        }
        for c in cats {
            rep.by_category.add(c.as_str().unwrap_or("?"), hit);
        }
    }
    rep
}
