//! What the agent's tests share: a model that replies from a script, stand-in tools that
//! keep what they were called with, the specs of a test registry, and one turn run over
//! tools that all answer in-process.

use std::sync::{Arc, Mutex};

use seam_agent::dispatch::{ActionDispatch, LocalDispatch, LocalToolbox, Router};
use seam_agent::model::{ChatModel, ChatRequest, Completion, ModelError, ModelFuture};
use seam_agent::registry::Registry;
use seam_agent::trace::Trace;
use seam_agent::turn::{Turn, TurnError, TurnOptions, TurnReport};
use seam_local::{LocalRefusal, TurnInfo};
use seam_protocol::{RefusalCode, ToolSpec};
use serde_json::{Map, Value};

/// A script line that begins with this is given back without it, as a reply
/// the backend cut where it began repeating itself (the note both backends
/// give such a reply).
#[allow(dead_code)] // not every test binary asks
pub const CUT_FOR_LOOPING: &str = "\u{1}cut for looping\u{1}";

/// Stands in for a 9B model: replies with the next line of its script, in
/// order, and keeps every request it was sent.
pub struct Scripted {
    pub replies: Vec<String>,
    pub seen: Vec<ChatRequest>,
}

impl Scripted {
    /// The last message the model was shown in its `n`th request (from 0).
    #[allow(dead_code)] // not every test binary asks
    pub fn told(&self, n: usize) -> &str {
        &self.seen[n]
            .messages
            .last()
            .expect("a request has messages")
            .content
    }

    pub fn new<S: Into<String>>(replies: impl IntoIterator<Item = S>) -> Scripted {
        Scripted {
            replies: replies.into_iter().map(Into::into).collect(),
            seen: Vec::new(),
        }
    }
}

impl ChatModel for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }
    fn complete<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_text: &'a mut (dyn FnMut(&str) + Send),
    ) -> ModelFuture<'a> {
        self.seen.push(request.clone());
        let next = (!self.replies.is_empty()).then(|| self.replies.remove(0));
        Box::pin(async move {
            let text = next.ok_or_else(|| ModelError::Engine("script exhausted".into()))?;
            // A line marked as cut for looping comes back as a backend gives
            // such a reply: its text, and the note that says so.
            let (text, notes) = match text.strip_prefix(CUT_FOR_LOOPING) {
                Some(rest) => (
                    rest.to_owned(),
                    vec![seam_engine::repetition::LOOP_CUT_NOTE.to_owned()],
                ),
                None => (text, Vec::new()),
            };
            on_text(&text);
            Ok(Completion {
                text,
                completion_tokens: Some(10),
                notes,
                ..Completion::default()
            })
        })
    }
}

/// Stand-in local tools: each call is kept, in order, and answered by `answer(tool, params)`.
pub struct Tools<F> {
    answer: F,
    calls: Mutex<Vec<(String, Value)>>,
}

impl<F> Tools<F> {
    pub fn new(answer: F) -> Arc<Tools<F>> {
        Arc::new(Tools {
            answer,
            calls: Mutex::new(Vec::new()),
        })
    }

    /// Every call so far: the tool's name and its params.
    pub fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

impl<F> LocalToolbox for Tools<F>
where
    F: Fn(&str, &Map<String, Value>) -> Result<Value, LocalRefusal> + Send + Sync + 'static,
{
    fn call(
        &self,
        _t: &TurnInfo,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal> {
        self.calls
            .lock()
            .unwrap()
            .push((tool.to_owned(), Value::Object(params.clone())));
        (self.answer)(tool, params)
    }
}

/// A tool of a test registry: version 1, with `input_schema` as given.
pub fn spec(name: &str, description: &str, input_schema: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        version: "1".into(),
        description: description.into(),
        input_schema,
    }
}

/// What a test toolbox answers for a tool it does not have.
pub fn no_such_tool() -> LocalRefusal {
    LocalRefusal::new(RefusalCode::UnknownTool, "no such tool")
}

/// Runs one turn on `task` over `registry`, the model replying with `replies` in order. Every
/// tool of the registry is answered by `tools` in-process, on the local side and the governed
/// side alike. Returns the turn's end and the model, with every request it was sent.
pub fn run_turn<T: LocalToolbox, S: Into<String>>(
    registry: Registry,
    tools: Arc<T>,
    replies: impl IntoIterator<Item = S>,
    task: &str,
    options: TurnOptions,
    trace: &mut Trace,
) -> (Result<TurnReport, TurnError>, Scripted) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut model = Scripted::new(replies);
    let registry = Arc::new(registry);
    let dispatch: Box<dyn ActionDispatch> = Box::new(Router::new(
        registry.clone(),
        Box::new(LocalDispatch::new(tools.clone())),
        Box::new(LocalDispatch::new(tools)),
    ));
    let report = rt.block_on(async {
        let turn = Turn {
            model: &mut model,
            dispatch: dispatch.as_ref(),
            registry: &registry,
            options,
            trace,
        };
        let info = TurnInfo {
            turn: "t1".into(),
            task: task.into(),
            ..TurnInfo::default()
        };
        turn.run(info, &mut |_| {}).await
    });
    (report, model)
}

/// The tools called, in order (`Tools::calls`'s names).
#[allow(dead_code)] // not every test binary asks
pub fn tool_names(calls: &[(String, Value)]) -> Vec<&str> {
    calls.iter().map(|(t, _)| t.as_str()).collect()
}
