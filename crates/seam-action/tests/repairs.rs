//! One test per named repair: the reply, the action it must become, and the
//! correction that must be counted. Plus what must never happen.

mod support;

use seam_action::{Correction, FailureReason, MAX_REPLY_BYTES, Next, ToolCatalog, parse, route};
use seam_protocol::Action;
use serde_json::{Value, json};
use support::catalog_fixture;

fn names() -> ToolCatalog {
    ToolCatalog::from_names([
        "files.read",
        "web.search",
        "get_weather",
        "Bash",
        "QuickJS_execute_javascript",
        "llm_time",
    ])
}

/// Parses `raw`, checks the canonical action and that `c` was counted.
fn check(catalog: &ToolCatalog, raw: &str, want: Value, c: Correction) {
    let p = parse(raw, catalog).unwrap_or_else(|e| panic!("{raw:?}: {e}"));
    assert_eq!(serde_json::to_value(&p.action).unwrap(), want, "{raw:?}");
    assert!(
        p.corrections.contains(&c),
        "{raw:?}: {c} not in {:?}",
        p.corrections
    );
    // canonical: the strict type reads it back
    let back: Action = serde_json::from_value(serde_json::to_value(&p.action).unwrap()).unwrap();
    assert_eq!(back, p.action);
}

fn call(tool: &str, params: Value) -> Value {
    json!({"mode": "action", "tool": tool, "params": params})
}

const WEATHER: &str = r#"{"name": "get_weather", "arguments": {"city": "Tokyo"}}"#;

#[test]
fn valid_actions_need_no_correction() {
    let c = names();
    for raw in [
        r#"{"mode":"action","tool":"files.read","params":{"path":"a"}}"#,
        r#"{"mode":"respond","text":"done"}"#,
        r#"{"mode":"plan","steps":[{"actor":"files.read","params":{"path":"a"}},{"actor":"web.search","params":{"query":"q"}}]}"#,
    ] {
        let p = parse(raw, &c).unwrap();
        assert_eq!(
            serde_json::to_value(&p.action).unwrap(),
            serde_json::from_str::<Value>(raw).unwrap()
        );
        assert!(p.corrections.is_empty(), "{raw}: {:?}", p.corrections);
    }
}

#[test]
fn text_around_the_action() {
    let c = names();
    let w = call("get_weather", json!({"city": "Tokyo"}));
    check(
        &c,
        &format!("<think>the user wants weather</think>\n{WEATHER}"),
        w.clone(),
        Correction::ThinkBlock,
    );
    check(
        &c,
        &format!("reasoning here</think>{WEATHER}"),
        w.clone(),
        Correction::ThinkBlock,
    );
    check(
        &c,
        &format!("<think>I will call {WEATHER}"),
        w.clone(),
        Correction::UnclosedThink,
    );
    check(
        &c,
        &format!("<think>I will call {WEATHER}</think>Calling it now."),
        w.clone(),
        Correction::CallInThink,
    );
    check(
        &c,
        &format!("```json\n{WEATHER}\n```"),
        w.clone(),
        Correction::MarkdownFence,
    );
    check(
        &c,
        &format!("Here:\n```json\n{WEATHER}\n```\nDone."),
        w.clone(),
        Correction::MarkdownFence,
    );
    check(
        &c,
        &format!("<tool_call>\n{WEATHER}\n</tool_call>"),
        w.clone(),
        Correction::ToolCallTags,
    );
    check(
        &c,
        &format!("Sure! Let me check. {WEATHER} Hope that helps."),
        w.clone(),
        Correction::ProseAroundJson,
    );
    check(
        &c,
        "get_weather({\"city\": \"Tokyo\"})",
        w.clone(),
        Correction::CallSyntax,
    );
    check(
        &c,
        "[FUNCTION] get_weather\n[ARGS] {\"city\": \"Tokyo\"}",
        w.clone(),
        Correction::LabelledCall,
    );
    check(
        &c,
        r#""{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}""#,
        w,
        Correction::JsonInString,
    );
    check(
        &c,
        "bash",
        call("Bash", json!({})),
        Correction::BareToolName,
    );
}

#[test]
fn qwen_xml_dialect_with_and_without_its_opener() {
    let c = names();
    let want = call(
        "Bash",
        json!({"command": "ls -la", "timeout": 10, "dry": true}),
    );
    let xml = "<function=Bash>\n<parameter=command>\nls -la\n</parameter>\n<parameter=timeout>10</parameter>\n<parameter=dry>True</parameter>\n</function>";
    check(
        &c,
        &format!("<tool_call>\n{xml}\n</tool_call>"),
        want.clone(),
        Correction::XmlFunctionCall,
    );
    check(
        &c,
        &format!("I'll list files.\n\n{xml}\n</tool_call>"),
        want.clone(),
        Correction::XmlFunctionCall,
    );
    // two functions: a plan, in order
    let two = "<function=Bash><parameter=command>a</parameter></function><function=files.read><parameter=path>b</parameter></function>";
    check(
        &c,
        two,
        json!({"mode": "plan", "steps": [{"actor": "Bash", "params": {"command": "a"}}, {"actor": "files.read", "params": {"path": "b"}}]}),
        Correction::XmlFunctionCall,
    );
    // with a schema, a string param stays the text written
    let cat = catalog_fixture();
    check(
        &cat,
        "<function=web.search><parameter=query>2024</parameter></function>",
        call("web.search", json!({"query": "2024"})),
        Correction::XmlFunctionCall,
    );
}

#[test]
fn other_xml_dialects() {
    let c = names();
    let w = call("get_weather", json!({"city": "Paris", "days": 3}));
    check(
        &c,
        "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n</minimax:tool_call>",
        w.clone(),
        Correction::XmlFunctionCall,
    );
    check(
        &c,
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        w,
        Correction::XmlFunctionCall,
    );
    // a name alone in the wrapper tags
    check(
        &c,
        "<tool_call>get_weather</tool_call>",
        call("get_weather", json!({})),
        Correction::BareToolName,
    );
    // arguments encoded twice, arguments under a key that ends like one
    check(
        &c,
        r#"{"name": "get_weather", "arguments": "\"{\\\"city\\\": \\\"Paris\\\"}\""}"#,
        call("get_weather", json!({"city": "Paris"})),
        Correction::ArgumentsAsString,
    );
    check(
        &c,
        r#"{"tool_name": "get_weather", "tool_arguments": {"city": "Paris"}}"#,
        call("get_weather", json!({"city": "Paris"})),
        Correction::OpenAiCallShape,
    );
}

#[test]
fn json_syntax() {
    let c = names();
    let cases = [
        (
            r#"{"name": "get_weather", "arguments": {"city": "Tokyo",},}"#,
            Correction::TrailingComma,
        ),
        (
            r#"{"name": "get_weather" "arguments": {"city": "Tokyo"}}"#,
            Correction::MissingComma,
        ),
        (
            r#"{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}"#,
            Correction::SingleQuotes,
        ),
        (
            "{\u{201c}name\u{201d}: \u{201c}get_weather\u{201d}, \u{201c}arguments\u{201d}: {\u{201c}city\u{201d}: \u{201c}Tokyo\u{201d}}}",
            Correction::FullWidthPunctuation,
        ),
        (
            r#"{name: "get_weather", arguments: {city: "Tokyo"}}"#,
            Correction::UnquotedKeys,
        ),
        (
            "{\"name\": \"get_weather\", // the tool\n \"arguments\": {\"city\": \"Tokyo\"}}",
            Correction::JsonComments,
        ),
        (
            r#"{"name": "get_weather", "arguments": {"city": "Tokyo"}"#,
            Correction::TruncatedJson,
        ),
        (
            r#"{"name": "get_weather", "arguments": {"city": "Tokyo"]}"#,
            Correction::MismatchedBrackets,
        ),
        (
            r#"{"name": "get_weather", "arguments": {"city": "Tokyo"}}}}"#,
            Correction::ExtraClosingBracket,
        ),
        (
            r#"{{"name": "get_weather", "arguments": {"city": "Tokyo"}}}"#,
            Correction::DoubledBraces,
        ),
        (
            r#"{""name"": ""get_weather"", ""arguments"": {""city"": ""Tokyo""}}"#,
            Correction::DoubledQuotes,
        ),
    ];
    for (raw, c_) in cases {
        check(&c, raw, call("get_weather", json!({"city": "Tokyo"})), c_);
    }
    check(
        &c,
        r#"{"name": "Bash", "arguments": {"dry": True, "limit": None}}"#,
        call("Bash", json!({"dry": true, "limit": null})),
        Correction::PythonLiterals,
    );
    check(
        &c,
        "{\"name\": \"Bash\", \"arguments\": {\"command\": \"echo a\necho b\"}}",
        call("Bash", json!({"command": "echo a\necho b"})),
        Correction::ControlCharInString,
    );
    check(
        &c,
        r#"{"name": "files.read", "arguments": {"path": "C:\Users\me"}}"#,
        call("files.read", json!({"path": "C:\\Users\\me"})),
        Correction::InvalidEscape,
    );
    check(
        &c,
        r#"{"name": "Bash", "arguments": {"command": "echo "hi" > a"}}"#,
        call("Bash", json!({"command": "echo \"hi\" > a"})),
        Correction::UnescapedQuotes,
    );
}

#[test]
fn call_shapes() {
    let c = names();
    let w = call("get_weather", json!({"city": "Tokyo"}));
    for raw in [
        r#"{"name": "get_weather", "arguments": {"city": "Tokyo"}}"#,
        r#"{"name": "get_weather", "parameters": {"city": "Tokyo"}}"#,
        r#"{"function": "get_weather", "inputs": {"city": "Tokyo"}}"#,
        r#"{"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}"#,
        r#"{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Tokyo\"}"}}"#,
        r#"{"tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}]}"#,
        r#"{"recipient_name": "functions.get_weather", "parameters": {"city": "Tokyo"}}"#,
    ] {
        check(&c, raw, w.clone(), Correction::OpenAiCallShape);
    }
    check(
        &c,
        r#"{"name": "get_weather", "arguments": "{\"city\": \"Tokyo\"}"}"#,
        w.clone(),
        Correction::ArgumentsAsString,
    );
    check(
        &c,
        r#"{"tool": "get_weather", "params": {"city": "Tokyo"}}"#,
        w.clone(),
        Correction::MissingMode,
    );
    check(
        &c,
        r#"{"mode": "call", "tool": "get_weather", "params": {"city": "Tokyo"}}"#,
        w.clone(),
        Correction::UnknownMode,
    );
    check(
        &c,
        r#"{"mode": "get_weather", "city": "Tokyo"}"#,
        w.clone(),
        Correction::ToolNameAsMode,
    );
    check(
        &c,
        r#"{"mode": "action", "tool": "get_weather", "city": "Tokyo"}"#,
        w.clone(),
        Correction::FlattenedParams,
    );
    check(
        &c,
        r#"{"mode": "answer", "text": "It is sunny."}"#,
        json!({"mode": "respond", "text": "It is sunny."}),
        Correction::UnknownMode,
    );
    check(
        &c,
        &format!("{WEATHER}\n{WEATHER}"),
        w.clone(),
        Correction::DuplicateCallDropped,
    );
    let two = json!({"mode": "plan", "steps": [{"actor": "get_weather", "params": {"city": "Tokyo"}}, {"actor": "files.read", "params": {"path": "a"}}]});
    let second = r#"{"mode":"action","tool":"files.read","params":{"path":"a"}}"#;
    check(
        &c,
        &format!("{WEATHER} {second}"),
        two.clone(),
        Correction::SeveralCallsAsPlan,
    );
    check(
        &c,
        &format!("[{WEATHER}, {second}]"),
        two.clone(),
        Correction::SeveralCallsAsPlan,
    );
    check(
        &c,
        &format!("{{\"mode\":\"respond\",\"text\":\"on it\"}}\n{WEATHER}"),
        w,
        Correction::RespondDropped,
    );
    let cat = catalog_fixture();
    check(
        &cat,
        r#"{"mode":"action","tool":"seer","params":"queue"}"#,
        call("seer", json!({"what": "queue"})),
        Correction::ParamsNotObject,
    );
}

#[test]
fn tool_names() {
    let c = names();
    let cases = [
        (" files.read ", "files.read", Correction::ToolNamePadded),
        ("Files.Read", "files.read", Correction::ToolNameCase),
        ("files_read", "files.read", Correction::ToolNameSeparators),
        (
            "functions.files_read",
            "files.read",
            Correction::ToolNamePrefix,
        ),
        ("functions.llm_time", "llm_time", Correction::ToolNamePrefix),
        (
            "execute_javascript",
            "QuickJS_execute_javascript",
            Correction::ToolNameSuffix,
        ),
    ];
    for (written, tool, c_) in cases {
        let raw = json!({"mode": "action", "tool": written, "params": {"path": "a"}}).to_string();
        check(&c, &raw, call(tool, json!({"path": "a"})), c_);
    }
}

#[test]
fn the_assistants_own_name_with_the_tool_in_the_params() {
    let cat = catalog_fixture();
    let plan = |params: Value| {
        json!({"mode": "plan", "steps": [{"actor": "seam", "params": params}]}).to_string()
    };
    let one = |tool: &str, params: Value| json!({"mode": "plan", "steps": [{"actor": tool, "params": params}]});
    check(
        &cat,
        &plan(json!({"task": "memory.build", "op": "all_summaries"})),
        one("memory.build", json!({"op": "all_summaries"})),
        Correction::ToolInParams,
    );
    check(
        &cat,
        &plan(json!({"aesthesis": "ui/index.html"})),
        one("aesthesis", json!({"path": "ui/index.html"})),
        Correction::ToolNameAsKey,
    );
    // only scribe takes a note, and scribe is a plan actor: inferred
    check(
        &cat,
        &plan(json!({"note": "rotate keys"})),
        one("scribe", json!({"note": "rotate keys"})),
        Correction::ToolInferredFromParams,
    );
    // an invented name whose word is an op of the one tool the params fit
    check(
        &cat,
        r#"{"mode":"action","tool":"files.write","params":{"path":"a.txt","content":"hi"}}"#,
        call(
            "builder",
            json!({"op": "write", "path": "a.txt", "content": "hi"}),
        ),
        Correction::ToolInferredFromParams,
    );
    // a bare payload with no name and nothing to infer
    check(
        &cat,
        r#"{"queries": ["x"]}"#,
        call("", json!({"queries": ["x"]})),
        Correction::UnnamedCall,
    );
}

#[test]
fn params_repairs_with_a_schema() {
    let cat = catalog_fixture();
    let a = |params: Value| {
        json!({"mode": "action", "tool": "memory.operator", "params": params}).to_string()
    };
    let m = |params: Value| call("memory.operator", params);
    check(
        &cat,
        &a(json!({"op": "search", "query": "x", "limit?": 3})),
        m(json!({"op": "search", "query": "x", "limit": 3})),
        Correction::OptionalMarkerInKey,
    );
    check(
        &cat,
        &a(json!({"op": "search", "query": "x", "limit": ""})),
        m(json!({"op": "search", "query": "x"})),
        Correction::EmptyOptionalDropped,
    );
    check(
        &cat,
        &a(json!({"kind": "search", "query": "x"})),
        m(json!({"op": "search", "query": "x"})),
        Correction::ParamRenamedByEnum,
    );
    check(
        &cat,
        &a(json!({"query": "x"})),
        m(json!({"op": "search", "query": "x"})),
        Correction::ParamInferred,
    );
    check(
        &cat,
        &a(json!({"op": "search", "query": "x", "why": "asked"})),
        m(json!({"op": "search", "query": "x"})),
        Correction::ExtraParamDropped,
    );
    check(
        &cat,
        &a(json!({"op": "get", "id": "7"})),
        m(json!({"op": "get", "id": 7})),
        Correction::ParamTypeCoerced,
    );
    // a bounded optional number: clamped to its bound
    check(
        &cat,
        &a(json!({"op": "list", "limit": 0})),
        m(json!({"op": "list", "limit": 1})),
        Correction::ParamClamped,
    );
    check(
        &cat,
        &json!({"mode": "action", "tool": "files.read", "params": {"path": "a", "offset": "0"}})
            .to_string(),
        call("files.read", json!({"path": "a", "offset": 1})),
        Correction::ParamClamped,
    );
    // the id `get` requires is what the call is about: not clamped
    let p = parse(&a(json!({"op": "get", "id": 0})), &cat).unwrap();
    assert_eq!(
        serde_json::to_value(&p.action).unwrap(),
        m(json!({"op": "get", "id": 0}))
    );
    assert!(!p.corrections.contains(&Correction::ParamClamped));
}

#[test]
fn python_call_syntax() {
    let c = names();
    check(
        &c,
        r#"[get_weather(city="Tokyo")]"#,
        call("get_weather", json!({"city": "Tokyo"})),
        Correction::PythonCall,
    );
    check(
        &c,
        "<|python_tag|>files.read(path='notes/todo.md', limit=3, follow=True, skip=None)",
        call(
            "files.read",
            json!({"path": "notes/todo.md", "limit": 3, "follow": true, "skip": null}),
        ),
        Correction::PythonCall,
    );
    check(
        &c,
        r#"I will call get_weather(city="Paris") and then web_search(query="it's \"sunny\"", tags=["a", 'b'])."#,
        json!({"mode": "plan", "steps": [
            {"actor": "get_weather", "params": {"city": "Paris"}},
            {"actor": "web.search", "params": {"query": "it's \"sunny\"", "tags": ["a", "b"]}}
        ]}),
        Correction::PythonCall,
    );
    check(
        &catalog_fixture(),
        r#"web.search("rust 1.87 release")"#,
        call("web.search", json!({"query": "rust 1.87 release"})),
        Correction::PythonCall,
    );
    // a function of the reply's own code is no tool
    assert!(parse("print(open('a').read())", &c).is_err());
}

#[test]
fn a_name_written_before_its_arguments() {
    let c = names();
    let w = call("get_weather", json!({"city": "Paris"}));
    for raw in [
        "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>",
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>",
        "<\u{ff5c}tool\u{2581}call\u{2581}begin\u{ff5c}>function<\u{ff5c}tool\u{2581}sep\u{ff5c}>get_weather\n```json\n{\"city\": \"Paris\"}\n```",
        "get_weather\n{\"city\": \"Paris\"}",
        "Action: get_weather\nAction Input: {\"city\": \"Paris\"}",
    ] {
        check(&c, raw, w.clone(), Correction::NameBeforeArguments);
    }
    // Llama 3.1's `<function=NAME>{…}</function>`
    check(
        &c,
        "<function=get_weather>{\"city\": \"Paris\"}</function>",
        w,
        Correction::XmlFunctionCall,
    );
    // a tool's name inside a sentence names nothing
    let p = parse(
        "The current session context is:\n{\"sessionId\": \"1\"}",
        &catalog_fixture(),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&p.action).unwrap(),
        call("", json!({"sessionId": "1"}))
    );
}

#[test]
fn call_keys_and_params_in_other_shapes() {
    let c = names();
    let w = call("get_weather", json!({"city": "Tokyo"}));
    for raw in [
        r#"{"Tool": "get_weather", "Params": {"city": "Tokyo"}}"#,
        r#"{"toolName": "get_weather", "arguments": {"city": "Tokyo"}}"#,
        r#"{"MODE": "action", "TOOL": "get_weather", "PARAMS": {"city": "Tokyo"}}"#,
    ] {
        check(&c, raw, w.clone(), Correction::CallKeyCase);
    }
    // a bare payload's own keys are data, not the call's
    check(
        &c,
        r#"{"Name": "John", "Age": 30}"#,
        call("", json!({"Name": "John", "Age": 30})),
        Correction::UnnamedCall,
    );
    for raw in [
        r#"{"function_call": {"name": "get_weather", "arguments": "{\"city\": \"Tokyo\"}"}}"#,
        r#"{"action": {"tool": "get_weather", "params": {"city": "Tokyo"}}}"#,
    ] {
        check(&c, raw, w.clone(), Correction::OpenAiCallShape);
    }
    for raw in [
        r#"{"name": "get_weather", "arguments": {"arguments": {"city": "Tokyo"}}}"#,
        r#"{"mode": "action", "tool": "get_weather", "params": {"params": {"city": "Tokyo"}}}"#,
    ] {
        check(&c, raw, w.clone(), Correction::ParamsNested);
    }
    let cat = catalog_fixture();
    check(
        &cat,
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"tool":"files.read","params":{"path":"a"}}}]}"#,
        json!({"mode": "plan", "steps": [{"actor": "files.read", "params": {"path": "a"}}]}),
        Correction::ParamsNested,
    );
    for raw in [
        r#"{"name": "get_weather", "arguments": [{"name": "city", "value": "Tokyo"}]}"#,
        r#"{"name": "get_weather", "parameters": [{"city": "Tokyo"}]}"#,
    ] {
        check(&c, raw, w.clone(), Correction::ParamsAsList);
    }
}

#[test]
fn plan_steps_that_are_no_calls() {
    let c = names();
    let one =
        json!({"mode": "plan", "steps": [{"actor": "get_weather", "params": {"city": "Tokyo"}}]});
    check(
        &c,
        r#"{"mode":"plan","steps":[{"actor":"get_weather","params":{"city":"Tokyo"}},{"actor":"NAME","params":{"...":"..."}},{}]}"#,
        one.clone(),
        Correction::EmptyStepDropped,
    );
    check(
        &c,
        r#"{"mode":"plan","steps":[{"actor":"get_weather","params":{"city":"Tokyo"}},{"actor":"respond","params":{"text":"It is sunny."}}]}"#,
        one.clone(),
        Correction::RespondDropped,
    );
    check(
        &c,
        r#"{"mode":"plan","steps":[{"mode":"respond","text":"It is sunny."}]}"#,
        json!({"mode": "respond", "text": "It is sunny."}),
        Correction::AnswerInPlan,
    );
}

#[test]
fn an_answer_that_is_one_call_written_whole_is_that_call() {
    let c = names();
    let read = call("files.read", json!({"path": "notes/trip.md", "offset": 10}));
    // Escaped, as strict JSON holds it; bare, as the quote-tolerant grammar
    // lets a small model write it (its keys unquoted); with no mode, its tool
    // under `tool`.
    check(
        &c,
        r#"{"mode":"respond","text":"{\"mode\":\"action\",\"tool\":\"files.read\",\"params\":{\"path\":\"notes/trip.md\",\"offset\":10}}"}"#,
        read.clone(),
        Correction::ActionInAnswer,
    );
    check(
        &c,
        r#"{"mode":"respond","text":"{"mode":"action",tool:"files.read",params:{path:"notes/trip.md",offset:10}}"}"#,
        read.clone(),
        Correction::ActionInAnswer,
    );
    check(
        &c,
        r#"{"mode":"respond","text":"{\"tool\":\"files.read\",\"params\":{\"path\":\"notes/trip.md\",\"offset\":10}}"}"#,
        read,
        Correction::ActionInAnswer,
    );
    // JSON that is data, a call shown inside prose, and a call to no tool of
    // the catalog stay the answer.
    for text in [
        r#"{\"os\":\"Debian\",\"arch\":\"x86_64\"}"#,
        r#"Run this: {\"mode\":\"action\",\"tool\":\"files.read\",\"params\":{}}"#,
        r#"{\"tool\":\"rm_rf\",\"params\":{\"path\":\"/\"}}"#,
    ] {
        let raw = format!(r#"{{"mode":"respond","text":"{text}"}}"#);
        let p = parse(&raw, &c).unwrap();
        assert!(
            matches!(p.action, Action::Respond { .. }),
            "{raw}: {:?}",
            p.action
        );
        assert!(
            !p.corrections.contains(&Correction::ActionInAnswer),
            "{raw}"
        );
    }
}

#[test]
fn a_call_to_no_tool_that_only_carries_a_message() {
    let cat = catalog_fixture();
    check(
        &cat,
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"msg":"The most recent build failed."}}]}"#,
        json!({"mode": "respond", "text": "The most recent build failed."}),
        Correction::MessageAsRespond,
    );
    // beside a real call, the message is dropped
    check(
        &cat,
        r#"{"mode":"plan","steps":[{"actor":"seer","params":{"what":"queue"}},{"actor":"seam","params":{"note_to_user":"I will look at the queue."}}]}"#,
        json!({"mode": "plan", "steps": [{"actor": "seer", "params": {"what": "queue"}}]}),
        Correction::MessageAsRespond,
    );
    // keys a tool has, a value that is a path, a name only: still calls (refused by name)
    for raw in [
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"query":"where is the parser"}}]}"#,
        r#"{"mode":"plan","steps":[{"actor":"src/lib.rs","params":{"file_name":"src/lib.rs"}}]}"#,
        r#"{"mode":"action","tool":"seam","params":{"goal":"compute","n":3}}"#,
    ] {
        let p = parse(raw, &cat).unwrap();
        assert!(!matches!(p.action, Action::Respond { .. }), "{raw}");
    }
    // with a catalog of names only nothing says which keys are params
    let p = parse(
        r#"{"name":"seam","arguments":{"msg":"The most recent build failed."}}"#,
        &names(),
    )
    .unwrap();
    assert!(matches!(p.action, Action::Call { .. }));
}

#[test]
fn names_in_other_styles_and_enum_values_as_names() {
    let c = names();
    for (written, tool, fix) in [
        ("filesRead", "files.read", Correction::ToolNameCamelCase),
        (
            "functions.getWeather",
            "get_weather",
            Correction::ToolNameCamelCase,
        ),
        (
            "default_api.files_read",
            "files.read",
            Correction::ToolNamePrefix,
        ),
        ("tools.web_search", "web.search", Correction::ToolNamePrefix),
        ("Files Read", "files.read", Correction::ToolNameSeparators),
        ("files.read:", "files.read", Correction::ToolNamePadded),
    ] {
        let raw = json!({"mode": "action", "tool": written, "params": {"path": "a"}}).to_string();
        check(&c, &raw, call(tool, json!({"path": "a"})), fix);
    }
    let cat = catalog_fixture();
    check(
        &cat,
        r#"{"mode":"action","tool":"files","params":{"op":"read","path":"a"}}"#,
        call("files.read", json!({"path": "a"})),
        Correction::ToolNameSplit,
    );
    check(
        &cat,
        r#"{"mode":"action","tool":"web","params":{"action":"search","query":"rust"}}"#,
        call("web.search", json!({"query": "rust"})),
        Correction::ToolNameSplit,
    );
    check(
        &cat,
        r#"{"mode":"plan","steps":[{"actor":"seam","action":"files.read","params":{"path":"a"}}]}"#,
        json!({"mode": "plan", "steps": [{"actor": "files.read", "params": {"path": "a"}}]}),
        Correction::ToolInParams,
    );
    check(
        &cat,
        r#"{"mode":"action","tool":"os","params":"linux"}"#,
        call("facts.get", json!({"fact": "os"})),
        Correction::ToolNameIsEnumValue,
    );
    check(
        &cat,
        r#"{"mode":"action","tool":"hostname","params":{}}"#,
        call("facts.get", json!({"fact": "hostname"})),
        Correction::ToolNameIsEnumValue,
    );
    check(
        &cat,
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"op":"all_summaries"}}]}"#,
        json!({"mode": "plan", "steps": [{"actor": "memory.build", "params": {"op": "all_summaries"}}]}),
        Correction::ToolInferredFromEnumValue,
    );
}

#[test]
fn params_keys_and_values_in_other_styles() {
    let cat = catalog_fixture();
    let a = |tool: &str, params: Value| {
        json!({"mode": "action", "tool": tool, "params": params}).to_string()
    };
    check(
        &cat,
        &a("files.read", json!({"Path": "a", "LIMIT": 3})),
        call("files.read", json!({"path": "a", "limit": 3})),
        Correction::ParamKeyCase,
    );
    check(
        &cat,
        &a("python.run", json!({"code": "print(1)", "timeoutS": 5})),
        call("python.run", json!({"code": "print(1)", "timeout_s": 5})),
        Correction::ParamKeyCase,
    );
    check(
        &cat,
        &a("memory.codebase", json!({"op": "Tree", "path": "src"})),
        call("memory.codebase", json!({"op": "tree", "path": "src"})),
        Correction::EnumValueCase,
    );
    check(
        &cat,
        &a("memory.codebase", json!({"op": "find-symbol", "name": "x"})),
        call("memory.codebase", json!({"op": "find_symbol", "name": "x"})),
        Correction::EnumValueCase,
    );
    for (tool, params, want) in [
        (
            "files.read",
            json!({"file": "Cargo.toml", "limit": 20}),
            json!({"path": "Cargo.toml", "limit": 20}),
        ),
        ("web.search", json!({"q": "rust"}), json!({"query": "rust"})),
        (
            "builder",
            json!({"op": "delete", "file": "old.rs"}),
            json!({"op": "delete", "path": "old.rs"}),
        ),
        (
            "memory.codebase",
            json!({"op": "find_symbol", "symbol": "parse_config"}),
            json!({"op": "find_symbol", "name": "parse_config"}),
        ),
    ] {
        check(
            &cat,
            &a(tool, params),
            call(tool, want),
            Correction::ParamRenamedToRequired,
        );
    }
    // two keys it could be: neither is renamed
    let p = parse(&a("files.read", json!({"file": "a", "why": "b"})), &cat).unwrap();
    assert_eq!(
        serde_json::to_value(&p.action).unwrap(),
        call("files.read", json!({}))
    );
}

#[test]
fn route_corrections() {
    let cat = catalog_fixture();
    let p = parse(
        r#"{"mode":"plan","steps":[{"actor":"web.search","params":{"query":"rust"}}]}"#,
        &cat,
    )
    .unwrap();
    let r = route(p.action, &cat);
    assert!(r.corrections.contains(&Correction::OneStepPlanAsCall));
    let Next::Calls(c) = &r.next else {
        panic!("{r:?}")
    };
    assert_eq!((c[0].tool.as_str(), c[0].via_plan), ("web.search", false));

    let p = parse(r#"{"mode":"plan","steps":[{"actor":"scribe","params":{"note":"n"}},{"actor":"files.read","params":{"path":"a"}}]}"#, &cat).unwrap();
    let r = route(p.action, &cat);
    assert_eq!(r.corrections, vec![Correction::PlanStepAsCall]);
    let Next::Calls(c) = &r.next else {
        panic!("{r:?}")
    };
    assert_eq!(
        c.iter().map(|c| c.via_plan).collect::<Vec<_>>(),
        vec![true, false]
    );

    let r = route(
        Action::Call {
            tool: "files.read".into(),
            params: json!({"tool": "files.read", "path": "a"})
                .as_object()
                .unwrap()
                .clone(),
        },
        &cat,
    );
    assert_eq!(r.corrections, vec![Correction::ToolKeyStripped]);
}

#[test]
fn never_a_tool_the_reply_does_not_name_or_imply() {
    let cat = catalog_fixture();
    for raw in [
        // params that fit only a governed tool, under the assistant's own name: no guess
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"code":"TODO: retry"}}]}"#,
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"query":"payment","depth":1}}]}"#,
        // params that fit several tools
        r#"{"mode":"action","tool":"seam","params":{"query":"x"}}"#,
        // a mode that is no mode: never a basis for inference
        r#"{"mode":"queue","note":"the queue is empty"}"#,
        // an enum value several tools have, under the assistant's own name
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"op":"search","query":"x"}}]}"#,
        // a name that is one tool's enum value, but params that tool does not take
        r#"{"mode":"action","tool":"list","params":{"path":"src"}}"#,
        // a name that is an enum value and also a param's name
        r#"{"mode":"action","tool":"path","params":{"query":"a"}}"#,
        // a message under the assistant's name is an answer, not a call
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"goal":"Compute 2**64 with Python"}}]}"#,
        // a copied tool result names the tool that produced it
        r#"{"mode":"plan","steps":[{"actor":"seam","params":{"tool":"files.read","output":{"a":1},"version":"1"}}]}"#,
    ] {
        if let Ok(p) = parse(raw, &cat) {
            let r = route(p.action, &cat);
            if let Next::Calls(calls) = r.next {
                assert!(calls.iter().all(|c| !c.known), "{raw}: {calls:?}");
            }
        }
    }
}

#[test]
fn failures_say_why() {
    let cat = catalog_fixture();
    let reason = |raw: &str| parse(raw, &cat).unwrap_err().reason;
    assert_eq!(reason("   \n"), FailureReason::Empty);
    assert_eq!(
        reason("The file lists three tasks."),
        FailureReason::NoAction { len: 27 }
    );
    assert!(
        reason("The file lists three tasks.")
            .to_string()
            .contains("27 bytes of prose")
    );
    assert!(matches!(
        reason(
            r#"{"invocation_id":"i-1","tool":"files.read","version":"1","output":{"text":"x"}}"#
        ),
        FailureReason::EchoedEnvelope { .. }
    ));
    assert!(matches!(
        reason(r#"{"mode":"queue","note":"x"}"#),
        FailureReason::NotAnAction { .. }
    ));
    let big = "x".repeat(MAX_REPLY_BYTES + 1);
    assert!(matches!(reason(&big), FailureReason::TooLong { .. }));
    let deep = format!("{}{}", "{\"a\":".repeat(200), "1");
    assert!(matches!(reason(&deep), FailureReason::Unreadable { .. }));
}

#[test]
fn every_correction_has_a_test_here_or_in_the_crate() {
    // Each id appears in this file (as its variant) or is made only by route
    // or the catalog's own unit tests.
    let me = include_str!("repairs.rs");
    for c in Correction::ALL {
        let variant = format!("{c:?}");
        assert!(
            me.contains(&format!("Correction::{variant}")),
            "no test names {variant}"
        );
    }
}

#[test]
fn python_source_python_cannot_compile_is_laid_out() {
    // More of these, against python3 itself, in tests/python_layout.rs.
    let c = catalog_fixture();
    check(
        &c,
        r#"{"mode":"action","tool":"python.run","params":{"code":"t = 0; for v in [1, 2]: t += v"}}"#,
        call(
            "python.run",
            json!({"code": "t = 0\nfor v in [1, 2]:\n    t += v"}),
        ),
        Correction::PythonOneLineRelaid,
    );
    check(
        &c,
        r#"{"mode":"action","tool":"python.run","params":{"code":"import os\\nprint(1)"}}"#,
        call("python.run", json!({"code": "import os\nprint(1)"})),
        Correction::PythonEscapesUnescaped,
    );
}

// ---- formats the dev half did not show (issue 19); each input is written
// from the format's definition, not copied from a corpus.

#[test]
fn escaped_whitespace_between_json_tokens() {
    // A JSON encoder's output printed once more: every newline and indent
    // between tokens is the two characters `\n` and `\t`, the strings intact.
    let c = names();
    let raw = r#"{\n\t"name": "get_weather",\n\t"arguments": {\n\t\t"city": "Oslo",\r\n\t\t"days": 3\n\t}\n}\n"#;
    check(
        &c,
        raw,
        call("get_weather", json!({"city": "Oslo", "days": 3})),
        Correction::EscapedWhitespace,
    );
    // the reply's own text after the JSON is no prose
    let p = parse(raw, &c).unwrap();
    assert!(!p.corrections.contains(&Correction::ProseAroundJson));
    // the seam grammar, an escape inside a string kept as JSON reads it
    check(
        &c,
        r#"{\n  "mode": "action",\n  "tool": "files.read",\n  "params": {"path": "a\nb.txt"}\n}"#,
        call("files.read", json!({"path": "a\nb.txt"})),
        Correction::EscapedWhitespace,
    );
}

#[test]
fn a_python_repr_of_chat_messages() {
    let c = names();
    // `print(messages)` in Python: single quotes, `None`, the assistant's
    // content a JSON call.
    check(
        &c,
        r#"[{'role': 'user', 'content': 'Weather in Oslo?'}, {'role': 'assistant', 'content': '{"name": "get_weather", "arguments": {"city": "Oslo"}}', 'tool_calls': None}]"#,
        call("get_weather", json!({"city": "Oslo"})),
        Correction::ChatMessages,
    );
    // OpenAI's message shape: `tool_calls` with arguments as a string
    check(
        &c,
        r#"[{'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'call_0', 'type': 'function', 'function': {'name': 'web_search', 'arguments': '{"query": "rust"}'}}]}]"#,
        call("web.search", json!({"query": "rust"})),
        Correction::ChatMessages,
    );
    // content as a list of parts, the call in a tag
    check(
        &c,
        "[{\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"<tool_call>\\n{\\\"name\\\": \\\"Bash\\\", \\\"arguments\\\": {\\\"command\\\": \\\"ls\\\"}}\\n</tool_call>\"}]}]",
        call("Bash", json!({"command": "ls"})),
        Correction::ChatMessages,
    );
    // the user's words are never the call: a list with no assistant message has none
    let r = parse(
        r#"[{'role': 'user', 'content': '{"name": "get_weather", "arguments": {"city": "Oslo"}}'}]"#,
        &c,
    );
    assert!(r.is_err(), "{r:?}");
    // an object with a `role` among other keys is a payload, not a message
    let p = parse(r#"{"role": "admin", "content": "x", "user": "ann"}"#, &c).unwrap();
    assert!(!p.corrections.contains(&Correction::ChatMessages));
}

#[test]
fn a_tool_name_then_its_command() {
    let c = names();
    check(
        &c,
        "Bash\nls -la /tmp\n",
        call("Bash", json!({"command": "ls -la /tmp"})),
        Correction::NameThenCommand,
    );
    check(
        &c,
        "bash\n```sh\ngrep -rn 'TODO' src\n```",
        call("Bash", json!({"command": "grep -rn 'TODO' src"})),
        Correction::NameThenCommand,
    );
    // with a schema, the tool's one required free string param
    let f = catalog_fixture();
    check(
        &f,
        "files.read\nnotes/todo.md",
        call("files.read", json!({"path": "notes/todo.md"})),
        Correction::NameThenCommand,
    );
    check(
        &f,
        "python.run\nprint(2 ** 10)",
        call("python.run", json!({"code": "print(2 ** 10)"})),
        Correction::NameThenCommand,
    );
    // not a command: two commands, prose on the first line, a name no tool
    // has, a tool with no free string param
    for raw in [
        "Bash\nls\nrm -rf build",
        "I will run\nls -la",
        "shell\nls -la",
    ] {
        assert!(parse(raw, &c).is_err(), "{raw:?}");
    }
    assert!(parse("context\nshow it", &f).is_err());
    assert!(parse("facts.get\nos", &f).is_err());
}

#[test]
fn qwen_xml_with_a_parameter_tag_for_the_function_tag() {
    let c = names();
    check(
        &c,
        "<tool_call>\n<parameter=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        call("get_weather", json!({"city": "Oslo", "days": 3})),
        Correction::XmlParameterAsFunction,
    );
    // its arguments as JSON, as `<function=NAME>{…}` has them
    check(
        &c,
        "<parameter=web.search>\n{\"query\": \"rust\"}\n</parameter>",
        call("web.search", json!({"query": "rust"})),
        Correction::XmlParameterAsFunction,
    );
    // a parameter whose value is a tool's name is a param, not a call
    let p = parse(
        "<tool_call>\n<function=Bash>\n<parameter=command>\nget_weather\n</parameter>\n</function>\n</tool_call>",
        &c,
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&p.action).unwrap(),
        call("Bash", json!({"command": "get_weather"}))
    );
    assert!(!p.corrections.contains(&Correction::XmlParameterAsFunction));
    // a `<parameter=…>` that names no tool opens nothing
    assert!(parse("<parameter=city>\nOslo\n</parameter>", &c).is_err());
}

#[test]
fn several_fenced_json_objects() {
    let c = ToolCatalog::from_names(["get_weather", "get_time"]);
    let plan = json!({"mode": "plan", "steps": [
        {"actor": "get_weather", "params": {"city": "Oslo"}},
        {"actor": "get_time", "params": {"tz": "CET"}}]});
    // the first object cut off inside a string: it must not swallow the
    // fence and the next one
    check(
        &c,
        "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\n```\n\n```json\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}}\n```",
        plan.clone(),
        Correction::SeveralFencedBlocks,
    );
    // fences opened and closed on the JSON's own line
    check(
        &c,
        "```json {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}} ```\n```json {\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}} ```",
        plan,
        Correction::SeveralCallsAsPlan,
    );
    // a fence inside a string the object means to hold stays in it
    let raw = "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"note\": \"see\n```\ncode\n```\"}}\n```";
    let p = parse(raw, &c).unwrap();
    assert_eq!(
        serde_json::to_value(&p.action).unwrap(),
        call(
            "get_weather",
            json!({"city": "Oslo", "note": "see\n```\ncode\n```"})
        )
    );
    assert!(!p.corrections.contains(&Correction::SeveralFencedBlocks));
}

// ---- the model's words for a tool, a key or a value, against the schema's

#[test]
fn a_tool_named_in_other_words_or_with_a_slip() {
    let c = names();
    let city = json!({"city": "Oslo"});
    for (written, want, fix) in [
        ("search_web", "web.search", Correction::ToolNameWordOrder),
        ("read_files", "files.read", Correction::ToolNameWordOrder),
        ("weatherGet", "get_weather", Correction::ToolNameWordOrder),
        ("get_wheather", "get_weather", Correction::ToolNameNearMatch),
        ("web.serach", "web.search", Correction::ToolNameNearMatch),
        ("file.read", "files.read", Correction::ToolNameWordOrder),
        ("files.raed", "files.read", Correction::ToolNameNearMatch),
    ] {
        check(
            &c,
            &format!(r#"{{"name": "{written}", "arguments": {city}}}"#),
            call(want, city.clone()),
            fix,
        );
    }
    // never a short name (`seam` is no misspelt `seer`), never one of two
    let f = catalog_fixture();
    let p = parse(
        r#"{"mode":"action","tool":"seam","params":{"what":"queue"}}"#,
        &f,
    )
    .unwrap();
    assert!(
        !p.corrections.contains(&Correction::ToolNameNearMatch),
        "{:?}",
        p.corrections
    );
    let two = ToolCatalog::from_names(["get_weather", "set_weather"]);
    let p = parse(r#"{"name": "bet_weather", "arguments": {}}"#, &two).unwrap();
    assert_eq!(
        serde_json::to_value(&p.action).unwrap(),
        call("bet_weather", json!({}))
    );
}

fn described() -> ToolCatalog {
    let entries: Vec<seam_action::CatalogEntry> = serde_json::from_value(json!([{
        "spec": {"name": "files.read", "version": "1", "description": "read a file",
            "input_schema": {"type": "object", "additionalProperties": false, "required": ["path"],
                "properties": {
                    "path": {"type": "string", "description": "file to read; relative to the workspace"},
                    "offset": {"type": "integer", "description": "line to start at (1-based)"},
                    "limit": {"type": "integer", "description": "most lines to return"}}}}
    }]))
    .unwrap();
    ToolCatalog::new(entries)
}

#[test]
fn a_key_in_other_words_or_with_a_slip() {
    let f = catalog_fixture();
    check(
        &f,
        r#"{"mode":"action","tool":"web.search","params":{"querry":"rust"}}"#,
        call("web.search", json!({"query": "rust"})),
        Correction::ParamKeyNearMatch,
    );
    check(
        &f,
        r#"{"mode":"action","tool":"files.read","params":{"paths":"a.txt","limits":3}}"#,
        call("files.read", json!({"path": "a.txt", "limit": 3})),
        Correction::ParamKeyNearMatch,
    );
    // a key that is a param's leading words
    check(
        &f,
        r#"{"mode":"action","tool":"python.run","params":{"code":"print(1)","timeout":5}}"#,
        call("python.run", json!({"code": "print(1)", "timeout_s": 5})),
        Correction::ParamKeyNearMatch,
    );
    // a word of the param's own description: `file` for `path`, `start` for `offset`
    check(
        &described(),
        r#"{"mode":"action","tool":"files.read","params":{"file":"a.txt","start":"2"}}"#,
        call("files.read", json!({"path": "a.txt", "offset": 2})),
        Correction::ParamKeySynonym,
    );
    // a word two descriptions have (`line`) says nothing
    let p = parse(
        r#"{"mode":"action","tool":"files.read","params":{"path":"a.txt","line":2}}"#,
        &described(),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&p.action).unwrap(),
        call("files.read", json!({"path": "a.txt"}))
    );
    // a param already given is no target: its twin is an extra
    let p = parse(
        r#"{"mode":"action","tool":"web.search","params":{"query":"a","querry":"b"}}"#,
        &f,
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&p.action).unwrap(),
        call("web.search", json!({"query": "a"}))
    );
    assert!(!p.corrections.contains(&Correction::ParamKeyNearMatch));
    // a value the param cannot take is not moved to it
    let p = parse(
        r#"{"mode":"action","tool":"web.search","params":{"query":"a","limt":{"n":1}}}"#,
        &f,
    )
    .unwrap();
    assert!(!p.corrections.contains(&Correction::ParamKeyNearMatch));
}

#[test]
fn an_enum_value_with_a_slip() {
    let f = catalog_fixture();
    check(
        &f,
        r#"{"mode":"action","tool":"memory.codebase","params":{"op":"find_symbols","name":"parse"}}"#,
        call(
            "memory.codebase",
            json!({"op": "find_symbol", "name": "parse"}),
        ),
        Correction::EnumValueNearMatch,
    );
    check(
        &f,
        r#"{"mode":"action","tool":"seer","params":{"what":"queues"}}"#,
        call("seer", json!({"what": "queue"})),
        Correction::EnumValueNearMatch,
    );
    // a short value is a word of its own (`read` is not `tree`), a template no value
    for raw in [
        r#"{"mode":"action","tool":"memory.codebase","params":{"op":"read","path":"a"}}"#,
        r#"{"mode":"action","tool":"seer","params":{"what":"queue|ledger"}}"#,
    ] {
        let p = parse(raw, &f).unwrap();
        assert!(
            !p.corrections.contains(&Correction::EnumValueNearMatch),
            "{raw}"
        );
    }
}
