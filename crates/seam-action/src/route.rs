//! The design's action-level corrections that need no I/O: what the agent's
//! dispatcher does with a parsed action before it calls anything.

use seam_protocol::Action;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::catalog::ToolCatalog;
use crate::correction::{Correction, Corrections};

/// What to do next, and the corrections routing made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Routed {
    pub next: Next,
    pub corrections: Vec<Correction>,
}

/// Either calls to run in order, or the final answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Next {
    /// Run these one after the other (each sees the previous one's result only
    /// through the model's next turn; the dispatcher stops at the first refusal
    /// if it chooses).
    Calls(Vec<RoutedCall>),
    /// The model's final answer.
    Respond { text: String },
}

/// One call for the dispatcher.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoutedCall {
    /// The tool's name: a catalog name, or the name as the model wrote it (or
    /// empty) when it is none of them — the dispatcher refuses it then, with
    /// the list of real names.
    pub tool: String,
    pub params: Map<String, Value>,
    /// Runs as a step of a plan (a local plan actor, in a plan of two steps or
    /// more); false for a direct action.
    pub via_plan: bool,
    /// The tool is in the catalog.
    pub known: bool,
}

/// Applies the design's dispatch corrections to a parsed action:
/// - a plan of one step runs as that step's action (`one-step-plan-as-call`);
/// - a plan step whose actor may not run in a plan (a governed tool, or the
///   builder: `plan_actor == false`) is dispatched as a direct action
///   (`plan-step-as-call`, in a plan of one step too); steps of local plan
///   actors stay plan steps. The action schema lets a plan step name any
///   tool (the grammar keeps the model's choice of tool); this is where the
///   path is decided;
/// - a `tool` key inside params is stripped (`tool-key-stripped`);
/// - a name that is no tool is kept as written (`known == false`).
pub fn route(action: Action, catalog: &ToolCatalog) -> Routed {
    let mut fixes = Corrections::default();
    let next = match action {
        Action::Respond { text } => Next::Respond { text },
        Action::Call { tool, params } => {
            Next::Calls(vec![call(tool, params, false, catalog, &mut fixes)])
        }
        Action::Plan { steps } => {
            let single = steps.len() == 1;
            if single {
                fixes.add(Correction::OneStepPlanAsCall);
            }
            let calls = steps
                .into_iter()
                .map(|s| {
                    let actor_ok = catalog.get(&s.actor).is_none_or(|e| e.plan_actor);
                    if !actor_ok {
                        fixes.add(Correction::PlanStepAsCall);
                    }
                    call(s.actor, s.params, !single && actor_ok, catalog, &mut fixes)
                })
                .collect();
            Next::Calls(calls)
        }
    };
    Routed {
        next,
        corrections: fixes.into_vec(),
    }
}

fn call(
    tool: String,
    mut params: Map<String, Value>,
    via_plan: bool,
    catalog: &ToolCatalog,
    fixes: &mut Corrections,
) -> RoutedCall {
    if params.remove("tool").is_some() {
        fixes.add(Correction::ToolKeyStripped);
    }
    let known = catalog.get(&tool).is_some();
    RoutedCall {
        tool,
        params,
        via_plan,
        known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CatalogEntry;
    use seam_protocol::{PlanStep, ToolSpec};
    use serde_json::json;

    fn catalog() -> ToolCatalog {
        let e = |name: &str, plan_actor| CatalogEntry {
            spec: ToolSpec {
                name: name.into(),
                version: "1".into(),
                description: String::new(),
                input_schema: Value::Null,
            },
            plan_actor,
        };
        ToolCatalog::new(vec![
            e("files.read", false),
            e("builder", false),
            e("scribe", true),
            e("graph", true),
        ])
    }

    fn step(actor: &str, params: Value) -> PlanStep {
        PlanStep {
            actor: actor.into(),
            params: params.as_object().unwrap().clone(),
        }
    }

    fn calls(r: &Routed) -> Vec<(String, bool, bool)> {
        match &r.next {
            Next::Calls(c) => c
                .iter()
                .map(|c| (c.tool.clone(), c.via_plan, c.known))
                .collect(),
            Next::Respond { .. } => vec![],
        }
    }

    #[test]
    fn governed_and_builder_steps_become_direct_calls_local_ones_stay_in_the_plan() {
        let r = route(
            Action::Plan {
                steps: vec![
                    step("scribe", json!({"note": "x"})),
                    step("files.read", json!({"path": "a"})),
                    step("builder", json!({"op": "check"})),
                    step("graph", json!({"op": "search"})),
                ],
            },
            &catalog(),
        );
        assert_eq!(
            calls(&r),
            vec![
                ("scribe".into(), true, true),
                ("files.read".into(), false, true),
                ("builder".into(), false, true),
                ("graph".into(), true, true)
            ]
        );
        assert_eq!(r.corrections, vec![Correction::PlanStepAsCall]);
    }

    #[test]
    fn a_one_step_plan_of_a_governed_tool_or_the_builder_is_a_direct_call_counted_twice() {
        for actor in ["files.read", "builder"] {
            let r = route(
                Action::Plan {
                    steps: vec![step(actor, json!({"path": "notes.md"}))],
                },
                &catalog(),
            );
            assert_eq!(calls(&r), vec![(actor.into(), false, true)], "{actor}");
            assert_eq!(
                r.corrections,
                vec![Correction::OneStepPlanAsCall, Correction::PlanStepAsCall],
                "{actor}"
            );
        }
    }

    #[test]
    fn every_tool_that_is_no_plan_actor_leaves_the_plan() {
        // The registry's 14 tools: 7 governed and the builder are no plan actors.
        let governed = [
            "files.read",
            "python.run",
            "memory.codebase",
            "memory.operator",
            "memory.build",
            "facts.get",
            "web.search",
        ];
        let local = ["context", "scribe", "seer", "graph", "aesthesis", "image"];
        let e = |name: &str, plan_actor| CatalogEntry {
            spec: ToolSpec {
                name: name.into(),
                version: "1".into(),
                description: String::new(),
                input_schema: Value::Null,
            },
            plan_actor,
        };
        let cat = ToolCatalog::new(
            governed
                .iter()
                .chain(&["builder"])
                .map(|n| e(n, false))
                .chain(local.iter().map(|n| e(n, true)))
                .collect(),
        );
        for actor in governed.iter().chain(&["builder"]) {
            let r = route(
                Action::Plan {
                    steps: vec![step("scribe", json!({})), step(actor, json!({}))],
                },
                &cat,
            );
            assert_eq!(
                calls(&r),
                vec![
                    ("scribe".into(), true, true),
                    ((*actor).into(), false, true)
                ],
                "{actor}"
            );
            assert_eq!(r.corrections, vec![Correction::PlanStepAsCall], "{actor}");
        }
        for actor in local {
            let r = route(
                Action::Plan {
                    steps: vec![step("scribe", json!({})), step(actor, json!({}))],
                },
                &cat,
            );
            assert_eq!(calls(&r)[1], (actor.into(), true, true), "{actor}");
            assert!(r.corrections.is_empty(), "{actor}");
        }
    }

    #[test]
    fn a_one_step_plan_runs_as_its_action() {
        let r = route(
            Action::Plan {
                steps: vec![step("scribe", json!({"note": "x"}))],
            },
            &catalog(),
        );
        assert_eq!(calls(&r), vec![("scribe".into(), false, true)]);
        assert_eq!(r.corrections, vec![Correction::OneStepPlanAsCall]);
    }

    #[test]
    fn a_tool_key_in_params_is_stripped_and_unknown_names_kept() {
        let r = route(
            Action::Call {
                tool: "seam".into(),
                params: json!({"tool": "files.read", "path": "a"})
                    .as_object()
                    .unwrap()
                    .clone(),
            },
            &catalog(),
        );
        let Next::Calls(c) = &r.next else {
            panic!("{r:?}")
        };
        assert_eq!(c[0].tool, "seam");
        assert!(!c[0].known);
        assert_eq!(Value::Object(c[0].params.clone()), json!({"path": "a"}));
        assert_eq!(r.corrections, vec![Correction::ToolKeyStripped]);
    }

    #[test]
    fn respond_passes_through() {
        let r = route(
            Action::Respond {
                text: "done".into(),
            },
            &catalog(),
        );
        assert_eq!(
            r.next,
            Next::Respond {
                text: "done".into()
            }
        );
        assert!(r.corrections.is_empty());
    }
}
