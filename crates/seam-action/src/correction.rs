//! The named repairs. Every change the parser or the router makes to what the
//! model wrote is one of these, so a turn's trace can count them.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! corrections {
    ($( $(#[$doc:meta])* $variant:ident => $id:literal, )*) => {
        /// One named repair. [`Correction::as_str`] is its stable kebab-case id
        /// (what `Display` prints and serde reads and writes).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Correction {
            $( $(#[$doc])* $variant, )*
        }

        impl Correction {
            /// Every correction, in declaration order.
            pub const ALL: &'static [Correction] = &[$(Correction::$variant,)*];

            /// The stable id, e.g. `markdown-fence`.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $( Correction::$variant => $id, )*
                }
            }

            /// The correction with this id, if any.
            pub fn from_id(id: &str) -> Option<Correction> {
                match id {
                    $( $id => Some(Correction::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

corrections! {
    // ---- text around the action ----
    /// A `<think>…</think>` block was set aside (also one without its opener).
    ThinkBlock => "think-block",
    /// A `<think>` block was never closed: everything after it was reasoning.
    UnclosedThink => "unclosed-think",
    /// The reply held no action outside its think block; the call was taken from inside it.
    CallInThink => "call-in-think",
    /// Markdown code fences (```json … ```) around or after the JSON.
    MarkdownFence => "markdown-fence",
    /// `<tool_call>`, `<function_call>` or a similar wrapper tag around the call.
    ToolCallTags => "tool-call-tags",
    /// An XML dialect: Qwen's `<function=NAME><parameter=KEY>…</parameter></function>`,
    /// MiniMax's `<invoke name="NAME"><parameter name="KEY">…`, GLM's
    /// `NAME<arg_key>KEY</arg_key><arg_value>…</arg_value>`.
    XmlFunctionCall => "xml-function-call",
    /// Qwen's XML with `<parameter=NAME>` where `<function=NAME>` belongs: a
    /// `<parameter=…>` naming a tool and holding nothing but the params after it.
    XmlParameterAsFunction => "xml-parameter-as-function",
    /// A list of chat messages (JSON, or a Python repr of one:
    /// `[{'role': 'assistant', 'content': '…'}]`): the calls are read from the
    /// assistant's messages, their `content` and `tool_calls`.
    ChatMessages => "chat-messages",
    /// A `[FUNCTION] NAME` / `[ARGS] {…}` (or `✿FUNCTION✿`) labelled call.
    LabelledCall => "labelled-call",
    /// The tool's name written before a bare JSON object of its arguments
    /// (`get_weather\n{…}`, `[TOOL_CALLS]get_weather[ARGS]{…}`,
    /// `to=functions.get_weather <|message|>{…}`, `Action: …\nAction Input: {…}`).
    NameBeforeArguments => "name-before-arguments",
    /// The first line the tool's name and the next its whole command, with
    /// nothing else (`bash` / `ls -la`): the command is the tool's one string
    /// param (`command` for a tool whose schema is not known).
    NameThenCommand => "name-then-command",
    /// `NAME({…})`: a call written as a function call.
    CallSyntax => "call-syntax",
    /// `NAME(key=value, …)`: a call in Python syntax (as Llama's "pythonic"
    /// tool calls are written), its values read as Python literals.
    PythonCall => "python-call",
    /// Several fenced blocks, each read on its own: damage in one (a cut-off
    /// object) does not run on into the next.
    SeveralFencedBlocks => "several-fenced-blocks",
    /// Prose before or after the JSON was left out.
    ProseAroundJson => "prose-around-json",
    /// The whole reply was one tool's name.
    BareToolName => "bare-tool-name",
    /// The whole reply was a JSON string holding the JSON.
    JsonInString => "json-in-string",
    // ---- JSON syntax ----
    /// A comma before `}` or `]` (or a doubled one).
    TrailingComma => "trailing-comma",
    /// Two members or elements without a comma between them.
    MissingComma => "missing-comma",
    /// Strings in single quotes.
    SingleQuotes => "single-quotes",
    /// Full-width or curly quotes, colons or commas as JSON punctuation.
    FullWidthPunctuation => "full-width-punctuation",
    /// Python's `True`, `False`, `None`.
    PythonLiterals => "python-literals",
    /// Object keys without quotes.
    UnquotedKeys => "unquoted-keys",
    /// `//` or `/* */` comments.
    JsonComments => "json-comments",
    /// Raw newlines or other control characters inside a string.
    ControlCharInString => "control-char-in-string",
    /// A backslash escape JSON does not have (`\d`, `\U`): kept as written.
    InvalidEscape => "invalid-escape",
    /// `\n`, `\t` or `\r` written as an escape between tokens, outside any
    /// string (`{\n  "name": "x"\n}` as two characters each): read as the whitespace.
    EscapedWhitespace => "escaped-whitespace",
    /// Quotes inside a string that were not escaped.
    UnescapedQuotes => "unescaped-quotes",
    /// The JSON stopped early (a cut-off reply): open strings, arrays and objects were closed.
    TruncatedJson => "truncated-json",
    /// A `]` where a `}` belonged, or the other way round.
    MismatchedBrackets => "mismatched-brackets",
    /// Closing brackets left over after the JSON.
    ExtraClosingBracket => "extra-closing-bracket",
    /// `{{ … }}`: the braces doubled, as a template escapes them.
    DoubledBraces => "doubled-braces",
    /// `""key""`: every quote doubled, as CSV escapes them.
    DoubledQuotes => "doubled-quotes",
    // ---- the shape of the call ----
    /// OpenAI-style `{"name":…,"arguments":…}` (or `parameters`, `function`, `inputs`, …).
    OpenAiCallShape => "openai-call-shape",
    /// The call's arguments were a JSON string holding an object.
    ArgumentsAsString => "arguments-as-string",
    /// No `mode`, but the object's keys say which action it is.
    MissingMode => "missing-mode",
    /// A `mode` the grammar does not have, read by the object's other keys.
    UnknownMode => "unknown-mode",
    /// The tool's name given as the `mode`.
    ToolNameAsMode => "tool-name-as-mode",
    /// The params written beside `tool` instead of inside `params`.
    FlattenedParams => "flattened-params",
    /// The call's own keys in another case or style (`Tool`, `toolName`, `Params`).
    CallKeyCase => "call-key-case",
    /// The params wrapped once more in a params key (`{"params":{"params":{…}}}`),
    /// a key the tool's schema does not have: unwrapped.
    ParamsNested => "params-nested",
    /// The params given as a list of `{"name":…,"value":…}` pairs (or of
    /// one-key objects): made one object.
    ParamsAsList => "params-as-list",
    /// `params` was not an object; its one value was given to the tool's one parameter.
    ParamsNotObject => "params-not-object",
    /// Several calls in one reply became a plan, in order.
    SeveralCallsAsPlan => "several-calls-as-plan",
    /// A call repeated word for word in the same reply was dropped.
    DuplicateCallDropped => "duplicate-call-dropped",
    /// A `respond` beside calls was dropped: the calls run first.
    RespondDropped => "respond-dropped",
    /// A plan step with no tool and no params, or the prompt's own placeholder
    /// (`NAME`, `{...}`), beside real steps was left out.
    EmptyStepDropped => "empty-step-dropped",
    /// A plan whose only steps were a final answer (`{"actor":"respond",…}`): read as `respond`.
    AnswerInPlan => "answer-in-plan",
    /// A reply whose answer text was, whole, one call or plan written as JSON
    /// (`{"mode":"respond","text":"{"mode":"action","tool":"files.read",…}"}`):
    /// the call it names, not that text as the answer.
    ActionInAnswer => "action-in-answer",
    /// A call to no tool whose params are only text under keys no tool has
    /// (`{"actor":"seam","params":{"msg":"The build failed."}}`): nothing can
    /// run it, so its text is read as the answer (dropped beside real calls).
    MessageAsRespond => "message-as-respond",
    // ---- the tool's name ----
    /// Spaces, quotes or backticks around the tool's name.
    ToolNamePadded => "tool-name-padded",
    /// The tool's name in the wrong case.
    ToolNameCase => "tool-name-case",
    /// A namespace before the tool's name (`functions.`, `tools.`, a server's name).
    ToolNamePrefix => "tool-name-prefix",
    /// `_`, `-` or spaces for the name's `.` (or the other way round).
    ToolNameSeparators => "tool-name-separators",
    /// The name in camelCase (`filesRead`, `webSearch`) for a name whose words are separated.
    ToolNameCamelCase => "tool-name-camel-case",
    /// The tail of one tool's name (at least two of its parts) stood for the whole name.
    ToolNameSuffix => "tool-name-suffix",
    /// The name's words were one tool's in another order or number
    /// (`read_file` for `files.read`, `search_web` for `web.search`).
    ToolNameWordOrder => "tool-name-word-order",
    /// The name was one tool's but for a slip of spelling: that tool is the
    /// only one within a small edit distance (one edit in a name of 5 to 9
    /// characters, two from 10), `web.serach` for `web.search`.
    ToolNameNearMatch => "tool-name-near-match",
    /// The name was none of the tools (often the assistant's own), but a value
    /// in the params (or a second name key beside it) named one: that tool,
    /// without that key.
    ToolInParams => "tool-in-params",
    /// The name split between the tool's name and a param's value
    /// (`{"tool":"files","params":{"op":"read"}}`): joined, that key dropped.
    ToolNameSplit => "tool-name-split",
    /// The name was none of the tools, but a key of the params was a tool's name.
    ToolNameAsKey => "tool-name-as-key",
    /// The name was none of the tools but a value of exactly one tool's enum
    /// param (`os` for `facts.get`'s `fact`): that tool, with that value.
    ToolNameIsEnumValue => "tool-name-is-enum-value",
    /// No tool named, but a param held, under its own key, a value that only
    /// one tool's enum has (`{"op":"all_summaries"}` → `memory.build`).
    ToolInferredFromEnumValue => "tool-inferred-from-enum-value",
    /// No tool named, and the params fit exactly one tool's schema.
    ToolInferredFromParams => "tool-inferred-from-params",
    /// No tool named and none could be inferred: the call keeps an empty name,
    /// which the dispatcher refuses with the list of real names.
    UnnamedCall => "unnamed-call",
    // ---- params ----
    /// `key?` (the prompt's mark for optional) used as the key.
    OptionalMarkerInKey => "optional-marker-in-key",
    /// A key in another case or style than the schema's (`Path`, `timeoutS`): renamed.
    ParamKeyCase => "param-key-case",
    /// A key the schema does not have that is one missing param's but for a
    /// slip of spelling or number (`querry`, `paths`), or its leading words
    /// (`timeout` for `timeout_s`), and no other's: renamed.
    ParamKeyNearMatch => "param-key-near-match",
    /// A key the schema does not have that is a word of exactly one missing
    /// param's own description (`file` for `path`: "file to read"): renamed.
    ParamKeySynonym => "param-key-synonym",
    /// An enum value in another case or style (`Tree`, `find-symbol`): the schema's value.
    EnumValueCase => "enum-value-case",
    /// An enum value that is one of the schema's but for a slip of spelling
    /// or number (`find_symbols`, `queues`), and near no other: the schema's value.
    EnumValueNearMatch => "enum-value-near-match",
    /// An optional param given as `""` or `null` was left out.
    EmptyOptionalDropped => "empty-optional-dropped",
    /// A key the schema does not have, whose value is an enum value of exactly
    /// one missing required param, was renamed to that param.
    ParamRenamedByEnum => "param-renamed-by-enum",
    /// A missing required enum param was filled in from the reply (a word of
    /// the name the model used, or the one value whose required params are present).
    ParamInferred => "param-inferred",
    /// Exactly one required param was missing (counting those the chosen `op`
    /// requires) and exactly one key the schema does not have held a value it
    /// accepts (`file` for `path`, `q` for `query`): renamed.
    ParamRenamedToRequired => "param-renamed-to-required",
    /// A param the tool's schema does not have was left out.
    ExtraParamDropped => "extra-param-dropped",
    /// A value of the wrong JSON type (`"20"` for an integer) converted to the schema's.
    ParamTypeCoerced => "param-type-coerced",
    /// A number out of the range of an optional bounded param (a knob such as
    /// `timeout_s` or `limit`: `minimum`/`maximum`, and for integers
    /// `exclusiveMinimum`/`exclusiveMaximum`) set to the nearest bound
    /// (`timeout_s: 60` with maximum 20 → 20). Required params, and those an
    /// `op` requires (an `id`), are not clamped: the number is what the call
    /// is about, and the nearest bound would address something else.
    ParamClamped => "param-clamped",
    /// Python source (a param its schema marks `contentMediaType:
    /// text/x-python`) with escapes outside its string literals, meant for
    /// the JSON string around it (`import os\\nprint(1)`): read once more.
    PythonEscapesUnescaped => "python-escapes-unescaped",
    /// Python source with a compound statement after a `;` or a header's `:`
    /// on one line (`f = open(p); for l in f: print(l)`), which Python
    /// refuses: each statement on its own line, a header's block indented.
    PythonOneLineRelaid => "python-one-line-relaid",
    // ---- dispatch (route) ----
    /// A plan of one step runs as that step's action.
    OneStepPlanAsCall => "one-step-plan-as-call",
    /// A plan step whose actor may not run in a plan (a governed tool, or the
    /// builder) is dispatched as a direct action (also in a plan of one step,
    /// beside `one-step-plan-as-call`: it counts how often the model meant a
    /// governed tool or the builder in a plan).
    PlanStepAsCall => "plan-step-as-call",
    /// A `tool` key inside params was stripped before schema validation.
    ToolKeyStripped => "tool-key-stripped",
}

impl fmt::Display for Correction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Correction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Correction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Correction::from_id(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown correction {s:?}")))
    }
}

/// Corrections in the order first made, each once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Corrections(Vec<Correction>);

impl Corrections {
    pub(crate) fn add(&mut self, c: Correction) {
        if !self.0.contains(&c) {
            self.0.push(c);
        }
    }

    pub(crate) fn extend(&mut self, other: &Corrections) {
        for c in &other.0 {
            self.add(*c);
        }
    }

    pub(crate) fn into_vec(self) -> Vec<Correction> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for c in Correction::ALL {
            let id = c.as_str();
            assert!(seen.insert(id), "duplicate id {id}");
            assert!(
                id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{id}"
            );
            assert_eq!(Correction::from_id(id), Some(*c));
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(json, format!("\"{id}\""));
            assert_eq!(serde_json::from_str::<Correction>(&json).unwrap(), *c);
            assert_eq!(c.to_string(), id);
        }
        assert!(serde_json::from_str::<Correction>("\"no-such\"").is_err());
    }
}
