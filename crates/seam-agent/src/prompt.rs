//! The system prompt, generated from the registry.
//!
//! One line per tool: name, flattened params, one-line description. A param
//! list is written the way a signature reads (`path, max_bytes?:int`), which
//! costs a fraction of the tokens of the same schema as OpenAI `tools` JSON.
//! The tools come in the registry's one chosen order
//! ([`crate::registry::TOOL_ORDER`], the action schema's too) and nothing
//! says where one runs. The
//! assistant is given no name: small models given one were seen to call
//! their own name as a tool.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::registry::Registry;

/// The system prompt for a registry.
pub fn system_prompt(registry: &Registry) -> String {
    let mut p = String::with_capacity(2048);
    p.push_str(
        "You carry out the operator's task with tools. Reply with exactly one JSON object and \
         nothing else, in one of three forms:\n\
         {\"mode\":\"action\",\"tool\":\"TOOL\",\"params\":{...}} calls one tool; its result comes back to you.\n\
         {\"mode\":\"plan\",\"steps\":[{\"actor\":\"TOOL\",\"params\":{...}},...]} runs several steps in order.\n\
         {\"mode\":\"respond\",\"text\":\"...\"} gives the operator your final answer.\n\
         \n\
         Tools (NAME params: description; ? marks an optional param, a bare param is a string):\n",
    );
    for t in registry.tools() {
        let _ = writeln!(
            p,
            "{} {}: {}",
            t.spec.name,
            flatten_params(&t.spec.input_schema),
            one_line(&t.spec.description)
        );
    }
    let examples: Vec<&(&str, &str, &str)> = EXAMPLES
        .iter()
        .filter(|(tool, _, _)| registry.tools().any(|t| t.spec.name == *tool))
        .collect();
    if !examples.is_empty() {
        p.push_str("\nExamples (a task, then the reply to it):\n");
        for (_, task, reply) in examples {
            let _ = writeln!(p, "{task} -> {reply}");
        }
    }
    p.push_str(
        "\nUse tools to learn what you do not know; never invent a file's content or a tool's \
         result. Call one tool at a time when the next step depends on its result. ",
    );
    if registry.get("python.run").is_some() {
        // qwen2.5-coder-1.5b, shown a note it had read, ran Python over it
        // to find a line, and its code broke where the answer was in view.
        p.push_str(
            "A file's text, once read, is yours to answer from: use Python to calculate, not \
             to look things up in it. ",
        );
    }
    p.push_str("When you have the answer, respond.");
    p
}

/// Replies for made-up tasks, shown when the tool they call is in the
/// registry. Small models copy the shape of an example far more reliably
/// than they follow a description: without these, qwen2.5-coder-1.5b read
/// files through python.run, wrapped single calls in plans, and put compound
/// Python statements on one line. They also copy too much: shown an example
/// answer, it answered a question about a trip with the example's words, and
/// shown a file read followed by Python, it ran Python over a markdown file
/// it had just read; shown a task about a proxy's port, it answered other
/// questions with a port. So there is one call for each tool, no answer, and
/// no fact to repeat. The tasks and files are invented: none is a benchmark's.
const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "files.read",
        "What does docs/setup.md say to do first?",
        r#"{"mode":"action","tool":"files.read","params":{"path":"docs/setup.md"}}"#,
    ),
    (
        "python.run",
        "Work out the compound interest on 1,000 at 2% a year over 5 years with Python.",
        r#"{"mode":"action","tool":"python.run","params":{"code":"p = 1000\nfor year in range(5):\n    p *= 1.02\nprint(round(p - 1000, 2))"}}"#,
    ),
    // Asked to change code on a branch, qwen2.5-coder-1.5b appended a made-up
    // line to a new file, or edited the file with Python (which the sandbox
    // cannot reach), in every run before this example.
    (
        "builder",
        "Make the client give up after 5 retries instead of 3, on a branch for review.",
        r#"{"mode":"action","tool":"builder","params":{"op":"replace","path":"src/client.py","old":"MAX_RETRIES = 3","new":"MAX_RETRIES = 5"}}"#,
    ),
];

/// The example task of the system prompt (see [`EXAMPLES`]) that `answer`
/// repeats, six words running or more, where the operator's `task` does not
/// have those words: an answer about the example, not about the task.
/// Asked to make a page size 25, qwen2.5-coder-1.5b answered "The task is to
/// make the client give up after 5 retries instead of 3, on a branch for
/// review", the builder example's task.
pub fn example_echoed(registry: &Registry, answer: &str, task: &str) -> Option<&'static str> {
    const RUN: usize = 6;
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (answer, task) = (words(answer), words(task));
    let has = |hay: &[String], run: &[String]| hay.windows(run.len()).any(|w| w == run);
    EXAMPLES
        .iter()
        .filter(|(tool, _, _)| registry.get(tool).is_some())
        .map(|(_, example, _)| *example)
        .find(|example| {
            words(example)
                .windows(RUN)
                .any(|run| has(&answer, run) && !has(&task, run))
        })
}

/// The example task of the system prompt (see [`EXAMPLES`]) whose reply is
/// the call of `tool` with `params`, param for param, when the operator's
/// `task` has none of that call's own paths and figures: the model copied
/// the example, it did not make the call for the task. Asked to quote a
/// runbook, qwen2.5-coder-0.5b's first reply was the builder example's
/// `replace` in `src/client.py`, twice; smollm2-135m read the files.read
/// example's `docs/setup.md` in two of four tasks. Run, such a call reads or
/// changes a file of the owner's that nobody asked about (`src/client.py`
/// could be there). A task that names the example's path or numbers (the
/// operator's own `docs/setup.md`) gets its call run.
pub fn example_call_copied(
    registry: &Registry,
    tool: &str,
    params: &Map<String, Value>,
    task: &str,
) -> Option<&'static str> {
    let in_task = in_task(task);
    examples_of(registry, tool)
        .find(|(_, example)| example == params && !own_words(example).iter().any(|w| in_task(w)))
        .map(|(task, _)| task)
}

/// The examples (see [`EXAMPLES`]) of `tool`, when the registry has it:
/// each example's task and its call's params.
fn examples_of<'a>(
    registry: &'a Registry,
    tool: &'a str,
) -> impl Iterator<Item = (&'static str, Map<String, Value>)> + 'a {
    EXAMPLES
        .iter()
        .filter(move |(t, _, _)| *t == tool && registry.get(t).is_some())
        .filter_map(|(_, task, reply)| {
            let reply: Value = serde_json::from_str(reply).ok()?;
            Some((*task, reply.get("params")?.as_object()?.clone()))
        })
}

/// Whether the operator's `task` has a word of an example's own (a path,
/// a figure), as written or with its thousands separators dropped (`1,000`).
fn in_task(task: &str) -> impl Fn(&str) -> bool + '_ {
    let plain = task.replace(',', "");
    move |w| task.contains(w) || plain.contains(w)
}

/// A line of the example call of `tool` (see [`EXAMPLES`]) that the call's
/// same param holds as a line of its own, where that line computes with a
/// figure of three digits or more that the operator's `task` does not give:
/// the example's work written into the task's code. Returned with the
/// example's task. Not a whole copy (that is [`example_call_copied`]'s):
/// asked to print 7**23 with python.run, qwen2.5-coder-0.5b wrote
/// `p = 7**23` and then the example's `print(round(p - 1000, 2))`, and
/// answered with what that printed, 7**23 less 1000. Only lines with such a
/// figure count: a line of the example that holds none (`p *= 1.02`, a
/// path) may be anybody's.
pub fn example_line_copied(
    registry: &Registry,
    tool: &str,
    params: &Map<String, Value>,
    task: &str,
) -> Option<(&'static str, String)> {
    let in_task = in_task(task);
    examples_of(registry, tool).find_map(|(example, example_params)| {
        example_params.iter().find_map(|(name, value)| {
            let theirs: Vec<&str> = params.get(name)?.as_str()?.lines().map(str::trim).collect();
            value.as_str()?.lines().map(str::trim).find_map(|line| {
                let one = Map::from_iter([(name.clone(), Value::String(line.to_owned()))]);
                let figures: Vec<String> = own_words(&one)
                    .into_iter()
                    .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
                    .collect();
                (!figures.is_empty()
                    && !figures.iter().any(|f| in_task(f))
                    && theirs.contains(&line))
                .then(|| (example, line.to_owned()))
            })
        })
    })
}

/// The words of a call's string params that belong to its task: paths and
/// file names (with a `/` or a `.`) and figures of three digits or more.
fn own_words(params: &Map<String, Value>) -> Vec<String> {
    params
        .values()
        .filter_map(Value::as_str)
        .flat_map(|s| {
            s.split(|c: char| !(c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-')))
        })
        .map(|w| w.trim_matches('.'))
        .filter(|w| {
            let digits = w.chars().filter(char::is_ascii_digit).count();
            w.contains('/')
                || (w.contains('.') && w.chars().any(char::is_alphabetic))
                || (digits >= 3 && digits == w.len())
        })
        .map(str::to_owned)
        .collect()
}

/// `{a, b?:int, op:"x"|"y"}`: a schema's properties, flattened for the prompt.
pub fn flatten_params(schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "{}".into();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let parts: Vec<String> = props
        .iter()
        .map(|(name, s)| {
            let opt = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            match type_hint(s) {
                Some(t) => format!("{name}{opt}:{t}"),
                None => format!("{name}{opt}"),
            }
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// A short type: none for a plain string, `int`, `bool`, `num`, `[str]`,
/// `{…}`, or the enum's values.
fn type_hint(s: &Value) -> Option<String> {
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        let vs: Vec<String> = values.iter().map(Value::to_string).collect();
        return Some(vs.join("|"));
    }
    if let Some(c) = s.get("const") {
        return Some(c.to_string());
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string"),
        _ => {
            return s
                .get("anyOf")
                .or_else(|| s.get("oneOf"))
                .and_then(Value::as_array)
                .map(|alts| {
                    alts.iter()
                        .map(|a| type_hint(a).unwrap_or_else(|| "str".into()))
                        .collect::<Vec<_>>()
                        .join("|")
                });
        }
    };
    match ty {
        "string" => None,
        "integer" => Some("int".into()),
        "number" => Some("num".into()),
        "boolean" => Some("bool".into()),
        "array" => {
            let item = s
                .get("items")
                .map(|i| type_hint(i).unwrap_or_else(|| "str".into()))
                .unwrap_or_else(|| "any".into());
            Some(format!("[{item}]"))
        }
        "object" => Some(match s.get("properties") {
            Some(_) => flatten_params(s),
            None => "{...}".into(),
        }),
        other => Some(other.to_owned()),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The same tools as OpenAI's `tools` array (what a chat API would be sent
/// instead of our prompt's tool lines): the yardstick for the prompt's size.
pub fn openai_tools_json(registry: &Registry) -> Value {
    Value::Array(
        registry
            .tools()
            .map(|t| {
                serde_json::json!({
                    "type": "function",
                    "function": {
                        "name": t.spec.name,
                        "description": t.spec.description,
                        "parameters": t.spec.input_schema,
                    }
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam_protocol::ToolSpec;
    use serde_json::json;

    /// A tool with one string param, `path`.
    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            version: "1".into(),
            description: "d".into(),
            input_schema: json!({"type":"object","properties":{"path":{"type":"string"}}}),
        }
    }

    #[test]
    fn an_answer_about_an_example_task_is_found() {
        let r = Registry::new(vec![spec("files.read")], vec![spec("builder")]).unwrap();
        let echo = "The task is to make the client give up after 5 retries instead of 3.";
        let task = "Make shelf show 25 books per page by default instead of 10.";
        assert_eq!(
            example_echoed(&r, echo, task),
            Some("Make the client give up after 5 retries instead of 3, on a branch for review.")
        );
        // The operator's own words are no echo, nor a few words in common.
        let same = "Make the client give up after 5 retries instead of 3, please.";
        assert_eq!(example_echoed(&r, echo, same), None);
        assert_eq!(
            example_echoed(&r, "Done: the page size is 25 instead of 10.", task),
            None
        );
        // An example the prompt does not show (no python.run here) is no echo.
        let compound = "the compound interest on 1,000 at 2% a year over 5 years is 104.08";
        assert_eq!(example_echoed(&r, compound, task), None);
    }

    #[test]
    fn a_call_copied_from_an_example_is_found_unless_the_task_names_its_words() {
        let r = Registry::new(vec![spec("files.read"), spec("python.run")], vec![]).unwrap();
        let params = |v: Value| v.as_object().unwrap().clone();
        let setup = params(json!({"path": "docs/setup.md"}));
        let task = "Quote step 2 of notes/release-runbook.md.";
        assert_eq!(
            example_call_copied(&r, "files.read", &setup, task),
            Some("What does docs/setup.md say to do first?")
        );
        // The operator's own docs/setup.md is read.
        let own = "What does docs/setup.md say about proxies?";
        assert_eq!(example_call_copied(&r, "files.read", &setup, own), None);
        // Another path, or the same params for another tool, is no copy.
        let other = params(json!({"path": "docs/setup.txt"}));
        assert_eq!(example_call_copied(&r, "files.read", &other, task), None);
        assert_eq!(example_call_copied(&r, "python.run", &setup, task), None);
        // The Python example's code, in a task without its figures, is a
        // copy (qwen2.5-coder-0.5b ran it and answered 104.08 to a task
        // about 7**23); in a task that gives them (1,000), it is the task's.
        let code = params(json!({
            "code": "p = 1000\nfor year in range(5):\n    p *= 1.02\nprint(round(p - 1000, 2))"
        }));
        assert!(example_call_copied(&r, "python.run", &code, "Print 7**23.").is_some());
        let interest = "Compound interest on 1,000 at 2% over 5 years?";
        assert_eq!(example_call_copied(&r, "python.run", &code, interest), None);
        // An example whose tool the registry lacks (no builder here) is none.
        let replace = params(json!({"op": "replace", "path": "src/client.py",
            "old": "MAX_RETRIES = 3", "new": "MAX_RETRIES = 5"}));
        assert_eq!(example_call_copied(&r, "builder", &replace, task), None);
    }

    #[test]
    fn a_line_of_an_example_in_a_call_of_its_own_is_found() {
        let r = Registry::new(vec![spec("python.run")], vec![]).unwrap();
        let code = |c: &str| json!({ "code": c }).as_object().unwrap().clone();
        let task = "Run it with python.run, and have the same script print 7**23.";
        // qwen2.5-coder-0.5b's code: its own first line, the example's last.
        let mixed = code("p = 7**23\nprint(round(p - 1000, 2))");
        assert_eq!(
            example_line_copied(&r, "python.run", &mixed, task),
            Some((
                "Work out the compound interest on 1,000 at 2% a year over 5 years with Python.",
                "print(round(p - 1000, 2))".to_owned()
            ))
        );
        // Indented alike or not, the line is the line.
        let indented = code("for x in [1]:\n    print(round(p - 1000, 2))");
        assert!(example_line_copied(&r, "python.run", &indented, task).is_some());
        // A task that gives the figure, code of its own, a line of the example
        // with no figure, or a line that only holds the figure: none.
        let interest = "What is 1,000 at 2% over 5 years less the 1,000?";
        assert_eq!(
            example_line_copied(&r, "python.run", &mixed, interest),
            None
        );
        assert_eq!(
            example_line_copied(&r, "python.run", &code("print(7**23)"), task),
            None
        );
        let no_figure = code("p = 7\np *= 1.02\nprint(p)");
        assert_eq!(
            example_line_copied(&r, "python.run", &no_figure, task),
            None
        );
        let other = code("print(round(p - 1000, 3))");
        assert_eq!(example_line_copied(&r, "python.run", &other, task), None);
        // Another tool's params: none.
        assert_eq!(example_line_copied(&r, "files.read", &mixed, task), None);
    }

    #[test]
    fn params_flatten_like_a_signature() {
        let s = json!({"type":"object","properties":{
            "path":{"type":"string"},
            "max_bytes":{"type":"integer"},
            "op":{"enum":["write","patch"]},
            "files":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}},
        },"required":["path","op"]});
        // In the order the schema lists them: a tool's spec decides it.
        assert_eq!(
            flatten_params(&s),
            r#"{path, max_bytes?:int, op:"write"|"patch", files?:[{name?}]}"#
        );
    }

    #[test]
    fn the_prompt_lists_every_tool_and_hides_the_side() {
        let spec = |n: &str| ToolSpec {
            name: n.into(),
            version: "1".into(),
            description: format!("Does {n}\n  things."),
            input_schema: json!({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}),
        };
        let r = Registry::new(vec![spec("scribe")], vec![spec("web.search")]).unwrap();
        let p = system_prompt(&r);
        assert!(p.contains("scribe {q}: Does scribe things.\n"), "{p}");
        assert!(
            p.contains("web.search {q}: Does web.search things.\n"),
            "{p}"
        );
        assert!(
            !p.contains("Examples"),
            "no example names a tool this registry lacks"
        );
        for word in ["local", "governed", "gate", "seam"] {
            assert!(!p.to_lowercase().contains(word), "the prompt says {word:?}");
        }
    }

    #[test]
    fn examples_show_only_tools_the_registry_has_and_are_valid_actions() {
        let r = Registry::new(vec![], vec![spec("files.read")]).unwrap();
        let p = system_prompt(&r);
        assert!(
            p.contains(r#"-> {"mode":"action","tool":"files.read""#),
            "{p}"
        );
        assert!(!p.contains("python.run"), "{p}");
        for (_, _, reply) in EXAMPLES {
            let v: Value = serde_json::from_str(reply).unwrap();
            let _: seam_protocol::Action = serde_json::from_value(v).unwrap();
        }
    }
}
