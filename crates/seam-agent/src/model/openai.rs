//! The client for OpenAI-compatible chat servers.
//!
//! `POST {base}/chat/completions`, streamed (server-sent events) by default.
//! Retries with exponential backoff on 429 and 5xx and on a connection that
//! failed before the first byte of an answer; never after part of a reply
//! arrived (that reply is reported, with what came, as interrupted). Where the
//! server takes it, decoding is constrained to the action schema with
//! `response_format: {type: json_schema}`; a server that refuses that field
//! is asked again without it, once, and the reply says so.
//!
//! A llama.cpp server (its `/v1/models` says `owned_by: llamacpp`) is sent
//! the schema as a grammar instead, when the caller can write one
//! ([`OpenAiOptions::grammar`]): its chat endpoint, given
//! `response_format`, builds a grammar of its own that also lets the reply
//! open with a markdown fence (```` ```json ````), and a small model takes
//! it: qwen2.5-coder-1.5b's likeliest first token is the fence, inside which
//! it writes indented JSON and, from there on, chattier replies than the
//! same model held to the bare object. The grammar sent is the one seam's
//! embedded engine decodes under, so both backends constrain alike.
//!
//! A streamed reply that starts to loop is cut by the engine's rule
//! (`seam_engine::repetition`), applied to the streamed pieces: the stream is
//! closed and the reply ends as `length`, with the engine's note.

use std::time::{Duration, Instant};

use seam_engine::repetition::{LOOP_CUT_NOTE, looping_tail};
use serde::Serialize;
use serde_json::{Value, json};

use super::sse::SseParser;
use super::{ChatModel, ChatRequest, Completion, ModelError, ModelFuture};

/// Where the model server is: the base URL ending in `/v1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEndpoint {
    base: String,
    /// The host's address, resolved once ([`ModelEndpoint::pin`]): every connection goes
    /// there, and no name is looked up again (behind the agent's walls DNS cannot work:
    /// they allow no UDP socket).
    pinned: Option<(String, std::net::SocketAddr)>,
}

impl ModelEndpoint {
    /// Accepts `http://HOST:PORT`, `…/v1`, `…/v1/` or `…/v1/chat/completions`
    /// (http or https).
    pub fn parse(url: &str) -> Result<ModelEndpoint, ModelError> {
        let bad = |reason: &str| ModelError::BadUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("it must start with http:// or https://"));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(bad("it names no host"));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(bad(
                "give the server's base URL, without ?query or #fragment",
            ));
        }
        let mut base = url.trim_end_matches('/').to_owned();
        for suffix in ["/chat/completions", "/completions"] {
            if let Some(b) = base.strip_suffix(suffix) {
                base = b.to_owned();
            }
        }
        if !base.ends_with("/v1") {
            base.push_str("/v1");
        }
        Ok(ModelEndpoint { base, pinned: None })
    }

    /// Resolves the host now (before the agent's walls go up) and pins the connection to
    /// the first address; an IP literal needs nothing. Fails, naming the host, when the
    /// name does not resolve.
    pub fn pin(mut self) -> Result<ModelEndpoint, ModelError> {
        use std::net::ToSocketAddrs as _;
        let parsed = reqwest::Url::parse(&self.base).map_err(|e| ModelError::BadUrl {
            url: self.base.clone(),
            reason: e.to_string(),
        })?;
        let Some(host) = parsed.host_str() else {
            return Ok(self);
        };
        if host.starts_with('[') || host.parse::<std::net::IpAddr>().is_ok() {
            return Ok(self);
        }
        let host = host.to_owned();
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addr = (host.as_str(), port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| ModelError::BadUrl {
                url: self.base.clone(),
                reason: format!("the host {host} does not resolve to an address"),
            })?;
        self.pinned = Some((host, addr));
        Ok(self)
    }

    /// The address the host was pinned to, if it was.
    pub fn pinned(&self) -> Option<std::net::SocketAddr> {
        self.pinned.as_ref().map(|(_, a)| *a)
    }

    /// The base URL, ending in `/v1`.
    pub fn base(&self) -> &str {
        &self.base
    }
}

impl std::fmt::Display for ModelEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.base)
    }
}

/// How to talk to the server.
#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    /// The model's name as the server knows it. `None`: the first model the
    /// server lists under `/v1/models` (llama.cpp's server serves one).
    pub model: Option<String>,
    /// Stream the reply (server-sent events). On by default.
    pub stream: bool,
    /// Ask the server to constrain decoding to the request's schema.
    pub constrain: bool,
    /// To open the connection.
    pub connect_timeout: Duration,
    /// For the whole of one reply.
    pub request_timeout: Duration,
    /// Between two chunks of a streamed reply.
    pub idle_timeout: Duration,
    /// Extra attempts after a 429, a 5xx or a failed connection.
    pub retries: u32,
    /// The first backoff; each retry doubles it.
    pub backoff: Duration,
    /// Sent as `Authorization: Bearer …` when set (some servers want one).
    pub api_key: Option<String>,
    /// Writes a schema's text as a llama.cpp grammar (GBNF), to send a
    /// llama.cpp server in place of `response_format` (see the module's
    /// docs). `None`: every server gets `response_format`.
    pub grammar: Option<SchemaGrammar>,
}

/// Writes a JSON schema's text as a llama.cpp grammar (GBNF), or says why not.
pub type SchemaGrammar = fn(&str) -> Result<String, String>;

impl Default for OpenAiOptions {
    fn default() -> Self {
        OpenAiOptions {
            model: None,
            stream: true,
            constrain: true,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(120),
            retries: 3,
            backoff: Duration::from_millis(500),
            api_key: None,
            grammar: None,
        }
    }
}

/// A client of one OpenAI-compatible server.
#[derive(Debug)]
pub struct OpenAiClient {
    endpoint: ModelEndpoint,
    options: OpenAiOptions,
    http: reqwest::Client,
    /// The model's name once known (given, or the server's first).
    model: Option<String>,
    /// The server refused `response_format` once: do not send it again.
    constraint_refused: bool,
    /// Whether the server is llama.cpp's, once asked (see [`OpenAiOptions::grammar`]).
    llama_cpp: Option<bool>,
}

/// One attempt's failure: whether trying again could help.
enum Attempt {
    Retry(ModelError, Option<Duration>),
    Fail(ModelError),
}

impl OpenAiClient {
    pub fn new(
        endpoint: ModelEndpoint,
        options: OpenAiOptions,
    ) -> Result<OpenAiClient, ModelError> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .pool_idle_timeout(Duration::from_secs(30));
        if let Some((host, addr)) = &endpoint.pinned {
            builder = builder.resolve(host, *addr);
        }
        let http = builder.build().map_err(|e| ModelError::BadUrl {
            url: endpoint.base.clone(),
            reason: format!("the HTTP client could not start: {e}"),
        })?;
        Ok(OpenAiClient {
            model: options.model.clone(),
            endpoint,
            options,
            http,
            constraint_refused: false,
            llama_cpp: None,
        })
    }

    pub fn endpoint(&self) -> &ModelEndpoint {
        &self.endpoint
    }

    /// The models the server lists under `/v1/models`.
    pub async fn list_models(&self) -> Result<Vec<String>, ModelError> {
        let listed = self.models_listed().await?;
        Ok(listed
            .iter()
            .filter_map(|m| m.get("id").or_else(|| m.get("name")))
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect())
    }

    /// True when `/v1/models` says llama.cpp serves them (`owned_by:
    /// llamacpp`, as llama.cpp's server writes it).
    async fn is_llama_cpp(&self) -> bool {
        self.models_listed().await.is_ok_and(|listed| {
            listed
                .iter()
                .any(|m| m.get("owned_by").and_then(Value::as_str) == Some("llamacpp"))
        })
    }

    /// The entries of `GET /v1/models` (its `data`, or `models`).
    async fn models_listed(&self) -> Result<Vec<Value>, ModelError> {
        let url = format!("{}/models", self.endpoint.base);
        let mut req = self
            .http
            .get(&url)
            .timeout(self.options.connect_timeout * 2);
        if let Some(key) = &self.options.api_key {
            req = req.bearer_auth(key);
        }
        let resp = req.send().await.map_err(|e| self.send_error(&e))?;
        let status = resp.status().as_u16();
        let body = resp.bytes().await.map_err(|e| self.send_error(&e))?;
        if status != 200 {
            return Err(ModelError::Status {
                url,
                status,
                message: error_message(&body),
            });
        }
        let v: Value = serde_json::from_slice(&body).map_err(|e| ModelError::Protocol {
            url: url.clone(),
            reason: format!("GET /v1/models: {e}"),
        })?;
        Ok(v.get("data")
            .or_else(|| v.get("models"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default())
    }

    async fn model_name(&mut self) -> Result<String, ModelError> {
        if let Some(m) = &self.model {
            return Ok(m.clone());
        }
        let models = self.list_models().await?;
        let first = models
            .into_iter()
            .next()
            .ok_or_else(|| ModelError::UnknownModel {
                url: self.endpoint.base.clone(),
                model: String::new(),
                available: " (it lists none; give one with --model)".into(),
            })?;
        self.model = Some(first.clone());
        Ok(first)
    }

    fn send_error(&self, e: &reqwest::Error) -> ModelError {
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            reason = format!("{reason}: {s}");
            source = s.source();
        }
        if e.is_timeout() {
            return ModelError::Timeout {
                limit: self.options.connect_timeout,
                what: "connecting to the model server",
            };
        }
        ModelError::Unreachable {
            url: self.endpoint.base.clone(),
            reason,
        }
    }

    fn body<'r>(
        &self,
        model: &'r str,
        request: &'r ChatRequest,
        constrain: bool,
        grammar: Option<String>,
    ) -> Body<'r> {
        let constrain = constrain && grammar.is_none();
        Body {
            grammar,
            model,
            messages: &request.messages,
            max_tokens: request.max_tokens,
            temperature: request.temperature,
            seed: request.seed,
            stream: self.options.stream,
            stream_options: self.options.stream.then(|| json!({"include_usage": true})),
            response_format: request
                .json_schema
                .as_ref()
                .filter(|_| constrain)
                .map(|schema| ResponseFormat {
                    kind: "json_schema",
                    json_schema: NamedSchema {
                        name: "action",
                        strict: true,
                        // As text: the server's grammar follows the order
                        // of its properties (see `JsonSchema`).
                        schema: schema.raw(),
                    },
                }),
        }
    }

    async fn run(
        &mut self,
        request: &ChatRequest,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, ModelError> {
        let started = Instant::now();
        let model = self.model_name().await?;
        let mut notes = Vec::new();
        let mut retries = 0u32;
        let mut backoff = self.options.backoff;
        loop {
            let constrain =
                self.options.constrain && !self.constraint_refused && request.json_schema.is_some();
            let grammar = match (constrain, self.options.grammar) {
                (true, Some(write)) => self.grammar_for(request, write, &mut notes).await,
                _ => None,
            };
            let body = self.body(&model, request, constrain, grammar);
            match self.attempt(&model, &body, on_text).await {
                Ok(mut c) => {
                    c.constrained = constrain;
                    c.retries = retries;
                    c.elapsed = started.elapsed();
                    // How the request went first, then what the reply itself says.
                    notes.append(&mut c.notes);
                    c.notes = notes;
                    return Ok(c);
                }
                Err(Attempt::Fail(ModelError::Status {
                    status: 400,
                    message,
                    ..
                })) if constrain && mentions_constraint(&message) => {
                    self.constraint_refused = true;
                    notes.push(format!(
                        "the server refused the schema constraint ({}); asked again without it",
                        short(&message)
                    ));
                }
                Err(Attempt::Fail(e)) => return Err(e),
                Err(Attempt::Retry(e, after)) => {
                    if retries >= self.options.retries {
                        return Err(e);
                    }
                    retries += 1;
                    let wait = after.unwrap_or(backoff).min(Duration::from_secs(30));
                    notes.push(format!("retry {retries} after {wait:?}: {e}"));
                    tokio::time::sleep(wait).await;
                    backoff *= 2;
                }
            }
            if started.elapsed() > self.options.request_timeout {
                return Err(ModelError::Timeout {
                    limit: self.options.request_timeout,
                    what: "the whole reply, retries included",
                });
            }
        }
    }

    /// The request's schema as a grammar, for a llama.cpp server (asked
    /// once whether it is one); `None` for another server, or when the
    /// schema could not be written as one (said in `notes`: the schema then
    /// goes as `response_format`).
    async fn grammar_for(
        &mut self,
        request: &ChatRequest,
        write: SchemaGrammar,
        notes: &mut Vec<String>,
    ) -> Option<String> {
        if self.llama_cpp.is_none() {
            self.llama_cpp = Some(self.is_llama_cpp().await);
        }
        if self.llama_cpp != Some(true) {
            return None;
        }
        let schema = request.json_schema.as_ref()?;
        match write(schema.text()) {
            Ok(gbnf) => Some(gbnf),
            Err(e) => {
                notes.push(format!(
                    "the schema could not be written as a llama.cpp grammar ({}); sent as response_format",
                    short(&e)
                ));
                None
            }
        }
    }

    async fn attempt(
        &self,
        model: &str,
        body: &Body<'_>,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, Attempt> {
        let url = format!("{}/chat/completions", self.endpoint.base);
        let mut req = self
            .http
            .post(&url)
            .json(body)
            .timeout(self.options.request_timeout);
        if let Some(key) = &self.options.api_key {
            req = req.bearer_auth(key);
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() && !e.is_connect() => {
                return Err(Attempt::Fail(ModelError::Timeout {
                    limit: self.options.request_timeout,
                    what: "waiting for the model server's answer",
                }));
            }
            Err(e) => return Err(Attempt::Retry(self.send_error(&e), None)),
        };
        let status = resp.status().as_u16();
        if status != 200 {
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let bytes = resp.bytes().await.unwrap_or_default();
            let message = error_message(&bytes);
            if status == 404 && message.to_ascii_lowercase().contains("model") {
                let available = match self.list_models().await {
                    Ok(m) if !m.is_empty() => format!(" (it serves: {})", m.join(", ")),
                    _ => String::new(),
                };
                return Err(Attempt::Fail(ModelError::UnknownModel {
                    url: self.endpoint.base.clone(),
                    model: model.to_owned(),
                    available,
                }));
            }
            let err = ModelError::Status {
                url,
                status,
                message,
            };
            return Err(if status == 429 || status >= 500 {
                Attempt::Retry(err, retry_after)
            } else {
                Attempt::Fail(err)
            });
        }
        if self.options.stream {
            self.read_stream(resp, &url, on_text).await
        } else {
            let bytes = resp.bytes().await.map_err(|e| {
                Attempt::Fail(ModelError::Interrupted {
                    url: url.clone(),
                    reason: e.to_string(),
                    received: 0,
                    partial: String::new(),
                })
            })?;
            let c = parse_whole(&bytes).map_err(|reason| {
                Attempt::Fail(ModelError::Protocol {
                    url: url.clone(),
                    reason,
                })
            })?;
            on_text(&c.text);
            Ok(c)
        }
    }

    async fn read_stream(
        &self,
        mut resp: reqwest::Response,
        url: &str,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, Attempt> {
        let mut parser = SseParser::new();
        let mut c = Completion::default();
        let mut done = false;
        // The content pieces as streamed, for the loop rule.
        let mut pieces: Vec<String> = Vec::new();
        let interrupted = |c: &Completion, received: usize, reason: String| {
            Attempt::Fail(ModelError::Interrupted {
                url: url.to_owned(),
                reason,
                received,
                partial: c.text.clone(),
            })
        };
        while !done {
            let chunk = match tokio::time::timeout(self.options.idle_timeout, resp.chunk()).await {
                Err(_) => {
                    return Err(interrupted(
                        &c,
                        parser.received(),
                        format!("no data for {:?}", self.options.idle_timeout),
                    ));
                }
                Ok(Err(e)) => return Err(interrupted(&c, parser.received(), e.to_string())),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            let events = parser
                .feed(&chunk)
                .map_err(|reason| interrupted(&c, parser.received(), reason))?;
            for ev in events {
                let before = c.text.len();
                if apply_event(&mut c, &ev.data, on_text).map_err(|reason| {
                    Attempt::Fail(ModelError::Protocol {
                        url: url.to_owned(),
                        reason,
                    })
                })? {
                    done = true;
                }
                if c.text.len() > before {
                    pieces.push(c.text[before..].to_owned());
                    if looping_tail(&pieces) {
                        // The engine's rule, on the pieces the server streams
                        // (one token each from llama.cpp's server): a reply that
                        // loops is cut here, as the engine cuts it, instead of
                        // running to its token budget. Dropping the response
                        // closes the stream, and the server stops generating.
                        c.finish_reason = Some("length".into());
                        c.notes.push(LOOP_CUT_NOTE.to_owned());
                        return Ok(c);
                    }
                }
            }
        }
        if !done {
            if let Some(ev) = parser.finish() {
                done = apply_event(&mut c, &ev.data, on_text).map_err(|reason| {
                    Attempt::Fail(ModelError::Protocol {
                        url: url.to_owned(),
                        reason,
                    })
                })?;
            }
            // A stream may end without [DONE] after a finish_reason: that reply is whole.
            if !done && c.finish_reason.is_none() {
                return Err(interrupted(
                    &c,
                    parser.received(),
                    "the connection closed before the reply finished".into(),
                ));
            }
        }
        Ok(c)
    }
}

/// Applies one event's data to the reply; true at `[DONE]`.
fn apply_event(
    c: &mut Completion,
    data: &str,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<bool, String> {
    let data = data.trim();
    if data == "[DONE]" {
        return Ok(true);
    }
    if data.is_empty() {
        return Ok(false);
    }
    let v: Value = serde_json::from_str(data).map_err(|e| format!("a streamed chunk: {e}"))?;
    if let Some(err) = v.get("error") {
        return Err(format!(
            "the server reported an error mid-stream: {}",
            error_text(err)
        ));
    }
    if let Some(choice) = v.get("choices").and_then(|c| c.get(0)) {
        let delta = choice.get("delta").or_else(|| choice.get("message"));
        if let Some(d) = delta {
            if let Some(t) = d.get("content").and_then(Value::as_str) {
                c.text.push_str(t);
                on_text(t);
            }
            if let Some(r) = d
                .get("reasoning_content")
                .or_else(|| d.get("reasoning"))
                .and_then(Value::as_str)
            {
                c.reasoning.push_str(r);
            }
        }
        if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
            c.finish_reason = Some(f.to_owned());
        }
    }
    read_usage(c, &v);
    Ok(false)
}

fn read_usage(c: &mut Completion, v: &Value) {
    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).map(|n| n as u32);
        c.prompt_tokens = n("prompt_tokens").or(c.prompt_tokens);
        c.completion_tokens = n("completion_tokens").or(c.completion_tokens);
    }
}

fn parse_whole(bytes: &[u8]) -> Result<Completion, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or("no choices[0] in the answer")?;
    let message = choice.get("message").ok_or("no choices[0].message")?;
    let mut c = Completion {
        text: message
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        reasoning: message
            .get("reasoning_content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..Completion::default()
    };
    read_usage(&mut c, &v);
    Ok(c)
}

/// The `error.message` of an error body, else the body itself (shortened).
fn error_message(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) => v
            .get("error")
            .map(error_text)
            .unwrap_or_else(|| short(&v.to_string())),
        Err(_) => short(&String::from_utf8_lossy(body)),
    }
}

fn error_text(err: &Value) -> String {
    match err {
        Value::String(s) => short(s),
        other => other
            .get("message")
            .and_then(Value::as_str)
            .map(short)
            .unwrap_or_else(|| short(&other.to_string())),
    }
}

/// An error body as the message shows it: trimmed, at most 300 characters and `…`.
fn short(s: &str) -> String {
    seam_term::clip(s.trim(), 300, "…").into_owned()
}

fn mentions_constraint(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["response_format", "json_schema", "grammar", "schema"]
        .iter()
        .any(|k| m.contains(k))
}

impl ChatModel for OpenAiClient {
    fn describe(&self) -> String {
        match &self.model {
            Some(m) => format!("{} {m}", self.endpoint),
            None => self.endpoint.to_string(),
        }
    }

    fn complete<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_text: &'a mut (dyn FnMut(&str) + Send),
    ) -> ModelFuture<'a> {
        Box::pin(self.run(request, on_text))
    }
}

/// A chat completion request's body. The schema is put in as raw JSON text,
/// so the order of its properties reaches the server as `JsonSchema` wrote it.
#[derive(Serialize)]
struct Body<'r> {
    model: &'r str,
    messages: &'r [super::ChatMessage],
    max_tokens: u32,
    temperature: f32,
    /// llama.cpp's server and OpenAI's API both take it.
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u32>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat>,
    /// llama.cpp's own field: a GBNF grammar, in place of `response_format`.
    #[serde(skip_serializing_if = "Option::is_none")]
    grammar: Option<String>,
}

#[derive(Serialize)]
struct ResponseFormat {
    #[serde(rename = "type")]
    kind: &'static str,
    json_schema: NamedSchema,
}

#[derive(Serialize)]
struct NamedSchema {
    name: &'static str,
    strict: bool,
    schema: Box<serde_json::value::RawValue>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_normalise_to_v1() {
        for (given, want) in [
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"),
            ("http://localhost:11434/v1", "http://localhost:11434/v1"),
            ("http://h:1/v1/chat/completions", "http://h:1/v1"),
            ("https://models.lan/v1/", "https://models.lan/v1"),
        ] {
            assert_eq!(ModelEndpoint::parse(given).unwrap().base(), want, "{given}");
        }
        for bad in ["ftp://h/", "127.0.0.1:8080", "http://h:1/v1?x=1", ""] {
            assert!(ModelEndpoint::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_sampled_request_sends_its_temperature_and_seed() {
        let client = OpenAiClient::new(
            ModelEndpoint::parse("http://127.0.0.1:9/v1").unwrap(),
            OpenAiOptions::default(),
        )
        .unwrap();
        let mut request = ChatRequest {
            messages: vec![super::super::ChatMessage::user("hi")],
            max_tokens: 8,
            temperature: 0.0,
            seed: None,
            json_schema: None,
        };
        let greedy = serde_json::to_value(client.body("m", &request, false, None)).unwrap();
        assert_eq!(greedy["temperature"], 0.0);
        assert!(greedy.get("seed").is_none(), "{greedy}");
        request.temperature = 0.7;
        request.seed = Some(3);
        let sampled = serde_json::to_value(client.body("m", &request, false, None)).unwrap();
        assert!((sampled["temperature"].as_f64().unwrap() - 0.7).abs() < 1e-6);
        assert_eq!(sampled["seed"], 3);
    }

    #[test]
    fn stream_events_build_the_reply() {
        let mut c = Completion::default();
        let mut seen = String::new();
        let mut sink = |t: &str| seen.push_str(t);
        let d1 = r#"{"choices":[{"delta":{"role":"assistant","content":"{\"mode\""}}]}"#;
        let d2 = r#"{"choices":[{"delta":{"content":":1}","reasoning_content":"hm"},"finish_reason":"stop"}]}"#;
        let d3 = r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}"#;
        assert!(!apply_event(&mut c, d1, &mut sink).unwrap());
        assert!(!apply_event(&mut c, d2, &mut sink).unwrap());
        assert!(!apply_event(&mut c, d3, &mut sink).unwrap());
        assert!(apply_event(&mut c, "[DONE]", &mut sink).unwrap());
        let err = apply_event(&mut c, r#"{"error":{"message":"boom"}}"#, &mut sink).unwrap_err();
        assert!(err.contains("boom"), "{err}");
        assert_eq!(c.text, "{\"mode\":1}");
        assert_eq!(seen, c.text);
        assert_eq!(c.reasoning, "hm");
        assert_eq!(c.finish_reason.as_deref(), Some("stop"));
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(7), Some(3)));
    }

    #[test]
    fn error_bodies_give_their_message() {
        assert_eq!(
            error_message(br#"{"error":{"message":"no such model"}}"#),
            "no such model"
        );
        assert_eq!(error_message(br#"{"error":"plain"}"#), "plain");
        assert_eq!(error_message(b"Bad Gateway"), "Bad Gateway");
        assert!(mentions_constraint("Unrecognized field: response_format"));
        assert!(!mentions_constraint("context length exceeded"));
    }
}
