//! What the agent's tests share: a model that replies from a script.

use seam_agent::model::{ChatModel, ChatRequest, Completion, ModelError, ModelFuture};

/// Stands in for a 9B model: replies with the next line of its script, in
/// order, and keeps every request it was sent.
pub struct Scripted {
    pub replies: Vec<String>,
    pub seen: Vec<ChatRequest>,
}

impl Scripted {
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
            on_text(&text);
            Ok(Completion {
                text,
                completion_tokens: Some(10),
                ..Completion::default()
            })
        })
    }
}
