//! The agent's first prompt as the benches send it: a system prompt with the
//! 14 tools, and the action schema (`oneOf` action/respond).

pub const TOOLS: &[(&str, &str, &str)] = &[
    (
        "web.search",
        "Search the web through the configured backend.",
        r#"{"query": string, "limit"?: integer 1-10}"#,
    ),
    (
        "files.read",
        "Read a text file the policy admits; returns its text, paged.",
        r#"{"path": string, "offset"?: integer, "limit"?: integer}"#,
    ),
    (
        "python.run",
        "Run a short Python program in the sandbox: no network, no writes outside its temp dir.",
        r#"{"code": string, "timeout_secs"?: integer 1-60}"#,
    ),
    (
        "memory.codebase",
        "Structure of an indexed repository: files, languages, symbols, full-text search.",
        r#"{"root": string, "query"?: string, "kind"?: "files"|"symbols"|"text"}"#,
    ),
    (
        "memory.build",
        "Summaries of past builds and critic runs.",
        r#"{"query"?: string, "limit"?: integer}"#,
    ),
    (
        "memory.operator",
        "The operator's own notes, searched by words.",
        r#"{"query": string, "limit"?: integer}"#,
    ),
    (
        "facts.get",
        "Facts about the machine, by enumerated name.",
        r#"{"name": "os"|"cpu"|"memory"|"disk"|"time"|"user"}"#,
    ),
    (
        "builder",
        "Write code to a git branch in its own worktree; the operator approves or rejects it.",
        r#"{"repo": string, "branch": string, "files": [{"path": string, "content": string}], "message": string}"#,
    ),
    (
        "scribe",
        "Write a note to the agent's memory (staged for review).",
        r#"{"title": string, "text": string}"#,
    ),
    (
        "context",
        "Read the task's context: the task, earlier steps, attachments.",
        r#"{"part"?: "task"|"steps"|"attachments"}"#,
    ),
    (
        "graph",
        "Read the knowledge graph; never changes it.",
        r#"{"node"?: string, "relation"?: string, "depth"?: integer 1-3}"#,
    ),
    (
        "seer",
        "Observe seam's own state: the queue, recent ledger lines.",
        r#"{"what": "queue"|"ledger", "limit"?: integer}"#,
    ),
    (
        "aesthesis",
        "Critique a staged artefact: formatters, linters, size.",
        r#"{"item": integer}"#,
    ),
    (
        "image",
        "Render a diagram (Graphviz DOT) to a staged file.",
        r#"{"dot": string, "title"?: string}"#,
    ),
];

pub fn system_prompt() -> String {
    let mut s = String::from(
        "You are seam's agent. You work on the operator's task by calling tools, one per reply, \
         until you can answer. Reply with exactly one JSON object and nothing else:\n\
         - {\"mode\":\"action\",\"tool\":NAME,\"params\":{...}} to call a tool;\n\
         - {\"mode\":\"respond\",\"text\":ANSWER} when you are done.\n\
         Rules: use only the tools below, with only their parameters. Read before you answer. \
         Paths are relative to the workspace unless absolute. Never invent a tool result: wait \
         for it. When a call is refused, read the reason and choose another way. Keep answers \
         short and cite the files you read.\n\nTools:\n",
    );
    for (name, desc, params) in TOOLS {
        s.push_str(&format!("* {name}: {desc}\n  params: {params}\n"));
    }
    s.push_str(
        "\nExamples:\n\
         {\"mode\":\"action\",\"tool\":\"files.read\",\"params\":{\"path\":\"README.md\"}}\n\
         {\"mode\":\"action\",\"tool\":\"memory.codebase\",\"params\":{\"root\":\".\",\"query\":\"parse\"}}\n\
         {\"mode\":\"respond\",\"text\":\"The build fails because ...\"}\n",
    );
    s
}

/// The action schema as JSON text whose objects list their properties in the
/// order of `required` (what seam-engine hands llama.cpp; a model server
/// gets the same text, so both are constrained to the same order).
pub fn action_schema_text() -> String {
    let names: Vec<String> = TOOLS
        .iter()
        .map(|t| serde_json::Value::from(t.0).to_string())
        .collect();
    format!(
        concat!(
            r#"{{"oneOf":[{{"type":"object","properties":{{"mode":{{"const":"action"}},"tool":{{"enum":[{}]}},"#,
            r#""params":{{"type":"object"}}}},"required":["mode","tool","params"],"additionalProperties":false}},"#,
            r#"{{"type":"object","properties":{{"mode":{{"const":"respond"}},"text":{{"type":"string"}}}},"#,
            r#""required":["mode","text"],"additionalProperties":false}}]}}"#
        ),
        names.join(",")
    )
}
