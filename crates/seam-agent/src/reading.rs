//! From a reply's text to the steps to run: `seam-action` parses and repairs
//! the text into one canonical action, then routes it (the design's
//! action-level corrections); this module turns the result into the loop's
//! [`Step`]s and names every correction made on the way.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::registry::Registry;

/// One thing to do, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Run a tool.
    Call {
        tool: String,
        params: Map<String, Value>,
        /// It came from a plan step (run in order with the others).
        via_plan: bool,
    },
    /// The final answer.
    Respond(String),
}

/// A reply, read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reading {
    pub steps: Vec<Step>,
    /// Repairs of the reply's text and shape (`seam_action::parse`), by name, in order:
    /// none when decoding was constrained and the grammar held.
    pub repairs: Vec<String>,
    /// The design's corrections of the action (`seam_action::route`), by name, in order.
    pub corrections: Vec<String>,
}

/// Reads replies against one registry.
#[derive(Debug)]
pub struct Reader {
    catalog: seam_action::ToolCatalog,
}

impl Reader {
    pub fn new(registry: &Registry) -> Reader {
        let entries = registry
            .tools()
            .map(|t| seam_action::CatalogEntry {
                spec: t.spec.clone(),
                plan_actor: t.plan_actor(),
            })
            .collect();
        Reader {
            catalog: seam_action::ToolCatalog::new(entries),
        }
    }

    /// The steps of one reply, or why none could be read.
    pub fn read(&self, text: &str) -> Result<Reading, String> {
        let parsed = seam_action::parse(text, &self.catalog).map_err(|e| e.to_string())?;
        let routed = seam_action::route(parsed.action, &self.catalog);
        let names = |cs: &[seam_action::Correction]| -> Vec<String> {
            cs.iter().map(|c| c.as_str().to_owned()).collect()
        };
        let repairs = names(&parsed.corrections);
        let corrections = names(&routed.corrections);
        let steps = match routed.next {
            seam_action::Next::Respond { text } => vec![Step::Respond(text)],
            seam_action::Next::Calls(calls) => calls
                .into_iter()
                .map(|c| Step::Call {
                    tool: c.tool,
                    params: c.params,
                    via_plan: c.via_plan,
                })
                .collect(),
        };
        Ok(Reading {
            steps,
            repairs,
            corrections,
        })
    }

    /// The call of another tool that `code`, given to the tool `runner` to
    /// run, is and nothing more: one line `NAME(…)`, or `print(NAME(…))`,
    /// where NAME is a tool of the catalog other than `runner`, read by the
    /// same parser as a reply (its Python-call dialect). Asked to fix a bug,
    /// qwen2.5-coder-1.5b gave python.run the code `files.read('src/cli.js')`
    /// twice, and Python said `files` is not defined.
    pub fn call_in_code(&self, runner: &str, code: &str) -> Option<(String, Map<String, Value>)> {
        let line = code.trim();
        let line = line
            .strip_prefix("print(")
            .and_then(|l| l.strip_suffix(')'))
            .unwrap_or(line)
            .trim();
        if line.contains('\n') || !line.ends_with(')') {
            return None;
        }
        let (name, _) = line.split_once('(')?;
        let name = name.trim();
        let reading = self.read(line).ok()?;
        match reading.steps.as_slice() {
            // The line is the call: its name is the tool's (`files.read`, or
            // `files_read`), not a function around it (`len(files.read(…))`).
            [Step::Call { tool, params, .. }]
                if tool != runner && (name == tool || name == tool.replace('.', "_")) =>
            {
                Some((tool.clone(), params.clone()))
            }
            _ => None,
        }
    }
}
