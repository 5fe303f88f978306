//! The turn loop: ask the model, read its action, dispatch, show it the
//! result, until it answers or a budget ends the turn.
//!
//! Corrections made here (each counted in the report and the trace, beside
//! the parser's): `envelope-unwrapped` (the model sees a governed call's
//! `output` only), `refusal-as-sentence`, `unknown-tool-listed`,
//! `reprompted` (a reply with no readable action is answered with the
//! reason), `repeat-warned` / `repeat-stopped` (a call identical to an
//! earlier one in the turn is not run again: the model is told, and a
//! repeat after it read that forces a final answer; so does code that only
//! prints, sent again after it was sent back and resampled),
//! `told-notes-uncalled` (an answer or a repeated call, in a task that
//! speaks of what the operator told seam, while the operator's notes are
//! unlooked at, is sent to them once, with the call written out),
//! `told-call-run` (a repeat of an earlier call of a tool, after the turn
//! wrote out whole the call of that tool to make instead, makes that call
//! once), `answer-after-calls-dropped` (an answer written
//! in the same reply as calls, before their results), `final-answer-forced`
//! (a budget ran out or the model looped; the task is said again with it),
//! `path-from-task` (a file read that is not there, when the task names one
//! file of its name, is followed by a read of that file, once a file),
//! `task-file-unread` (an answer or a repeated call, while a file the task
//! names is unread, is answered by naming the file, at most twice a turn;
//! so is a file read that is not there), `task-file-pointed` (a result
//! from elsewhere than the owner's files, while such a file is unread, is
//! followed by that file, once a turn),
//! `looped-call-not-run` (a call whose string the reply was writing when
//! the backend cut it for looping is not run; the string is cut where the
//! loop began, so a copy of the loop cut at another length is the same call
//! and is resampled), `looped-code-closed-early` (unless that string is code
//! the model had ended before the loop by closing the JSON object inside
//! it: that code runs), `looped-answer-resampled` / `looped-answer-cut` (an
//! answer cut for looping is asked for again, sampled, or else cut to one
//! run of its loop),
//! `pointed-tool-told` (a result that holds nothing but a note naming a tool
//! the turn has not called is followed by that pointer, with the call that
//! carries the model's search words over),
//! `task-rest-told` (the repeat of a call refused for good, and a call not
//! run for copying the prompt's example after one, is followed by the task
//! with the clauses that name the refused path cut out; see
//! `observe::task_without`),
//! `task-tool-uncalled` (the same, when every file the task names was looked
//! at and it names a tool by its own name, `python.run`, that the turn has
//! not called: the tool is named, once a tool), `missing-module-told`
//! and `withheld-file-told` (a program that failed on a module that is not
//! installed, or on an owner file the gate did not make available, is told
//! what to do instead; see `observe`), `project-import-told` (a program
//! that failed importing a module the task names, in a task about a name
//! in code, is told the code index's call for that name),
//! `print-only-code-not-run` (code that
//! only prints literals, in a task that does not speak of Python, is the
//! model talking: it is told to say it in its answer), `exact-match-missed`
//! (code that printed nothing, or an empty total such as 0 or [], compared
//! with `==` a value that the files
//! shown hold only as the start of longer ones: it is told so), `plan-walk-cut`
//! (a plan's later steps that run the same code as an earlier one, but for
//! the strings in it, are not run: the model is told to write one loop,
//! when something of the reply ran), `plan-change-before-read-cut` (a
//! plan's builder edit of a file an earlier step of the same plan first
//! reads was written before its text was shown: it and the steps after it
//! are not run, and the model is told to copy `old` from the text now above),
//! `shown-words-not-run` (a builder call whose `old` is the words that stood
//! for the lines to change in a call the model was shown is not run: it is
//! told to copy the lines the task is about),
//! `code-stray-closer-cut` (closing brackets at the end of a program that
//! open nowhere are cut before it runs, when the rest then balances),
//! `code-json-tail-cut` (a program whose first closer that opens nowhere is
//! followed by the quote that closed the JSON string, and more JSON, ends
//! there: see `seam_pylex::json_tail_at`; when what was cut begins another
//! action, only the code of the params is kept),
//! `code-newline-escaped` (a line break inside a one-line string literal of
//! a program, a syntax error in Python, is written as the escape `\n` the
//! model meant, see `seam_pylex::newlines_in_strings_escaped`),
//! `code-fstring-requoted` (a string in an f-string's field quoted like the
//! f-string, which Python reads only from 3.12 on, takes the other quote,
//! see `seam_pylex::fstring_quotes_swapped`),
//! `total-not-added` (a task asking for one quantity answered with the
//! column of numbers the code printed: sent back once, to add them up in
//! code), `answer-echoes-agent` (an answer that gives back one of the agent's own
//! lines is no answer: the first time, in a turn that read a file whole, that
//! file is shown again with the task and the echo leaves the conversation,
//! `echo-reply-unsaid`; else, or again, one is asked for, with the task said
//! again),
//! `answer-only-refusal` (in a turn where a call was refused for good and a
//! file was read, an answer that speaks only of the refusal, taking nothing
//! from the files read, is asked once for the rest of the task),
//! `change-not-made` (an answer to a task that asks for a branch, before the
//! builder changed anything, is sent back once a stage the turn has reached
//! with the step from there; a repeat stopped in such a task is told that
//! step, and its next reply must call a tool),
//! `missing-column-told` (a program that failed on a `KeyError` for a name
//! that is no column of the delimited file its failing line read is told the
//! columns, or that a note has none),
//! `code-file-missing-told` (a program that failed on `FileNotFoundError`
//! is told the files it can open, and, when the turn read them, that the
//! operator's notes are no file), `header-row-told` (a program that failed
//! turning a header's column name into a number is told it read the header
//! line as data), `program-failed-told` (any other failed
//! program is told it worked nothing out, with its traceback's last line, in
//! place of "if this tells you the answer, respond with it"),
//! `note-read-as-table` (code that hands a note, a file of prose, to a table
//! reader such as `read_csv` is not run: the note is shown, to take its
//! figures into the code as numbers; once a turn), `rows-unfiltered-told` (a
//! program that ran over a data table the turn read, in a task that names a
//! value only some of its rows hold, and that names it nowhere, is told the
//! value and its column, once a turn), `month-rows-unfiltered-told` (the
//! same for a month the task names, over a column of ISO dates, that the
//! code names in no way), `below-zero-told` (a program that
//! printed one number below zero, in a task that asks how many of something
//! and allows no signed answer, is told so, once a turn),
//! `figure-set-unused` (a program that ran and printed, whose code sets a
//! name to a number it never uses, is told the name and the number, once a
//! turn), `program-unchanged-told` (a program run before, sent again
//! unchanged after `answer-leaves-out-source` named the line of it to
//! change, is not run and is told so, once a turn),
//! `change-task-code-not-run` (code for a task that asks for a change on a
//! branch, run before the repository was looked at, is sent back once with
//! how code is changed), `code-over-read-text` (code that only looks through
//! prose the turn has read whole, in a task that does not ask for Python, is
//! sent back once with the text and the task), `sent-back-answer-kept` (a
//! final answer that speaks only of a refusal is given after the answer that
//! was sent back to read another file, when that one said more),
//! `answer-about-own-failure` (an answer that speaks of the error of the
//! turn's own program that just failed, in a task that asks about no error,
//! is sent back once to write the code again or answer from what was read),
//! `answer-figure-unseen` (an answer that states a figure of three digits or
//! more that neither the task nor any tool result holds made it up: it is
//! sent back once, to answer from the results or call the tool that has it;
//! `made-up-reply-unsaid`: every reply sent back whole that states such a
//! figure then leaves the conversation), `answer-file-unseen` (an answer
//! that names a file, a path with an extension, whose name neither the task
//! nor any result holds is sent back once),
//! `time-not-given` (a task that asks what time, answered with no time of
//! day, or only with times nothing showed, is sent back once with the lines
//! read that give one and speak of what the task asks, and with the number
//! a made-up time was read from, also once the turn told the model to
//! answer),
//! `answer-off-the-day` (a task that asks about one day, answered with
//! nothing from the lines read that name that day or the start of the week
//! it falls in, is sent back once with them; see `crate::days`),
//! `answer-off-the-month` (the same for a month the task names alone, with
//! the lines that name it, `Jan` as well as `January`),
//! `answer-names-what-is-gone` (a task about now answered with only a name
//! that what was read says is gone, "the old host pg-stage-01 is switched
//! off", is sent back once with that clause),
//! `question-left-out` (an answer to one part of the task that leaves out a
//! question it asks is sent back once with the question and the file read
//! that speaks of it, also once the turn told the model to answer),
//! `answer-figure-off-task` (a time or figure the files read hold only in
//! lines that share no word with the task is sent back once, with the line
//! and the lines that hold one of its kind and do speak of the task; the
//! answer leaves the conversation, `off-task-reply-unsaid`),
//! `example-call-not-run` (a call that is one of the prompt's example calls,
//! in a task without its paths and figures, is not run; a second one asks
//! for the answer), `unrun-reply-unsaid` (that call leaves the
//! conversation, so the model is not shown it to copy),
//! `example-line-not-run` (the same for a call that holds a line of the
//! example's code computing with a figure the task does not give),
//! `uses-query-added` and `uses-search-told` (in a task that asks where a
//! name in code is used, a code-index outline is given the name as its
//! query, a search below a directory, and a tree is followed by the search
//! for its uses), `code-is-a-tool-call` (python.run code that is one call
//! of another tool and nothing more is that tool's call), `code-lists-files`
//! (python.run code that only lists a directory of the workspace and prints
//! it, which in the sandbox's empty scratch directory lists nothing, is the
//! code index's tree of that directory),
//! `outline-definition-named` (a code-index outline that lists the name in
//! code the task asks about is followed by the file and line it lists it
//! at), `uses-enclosing-named` (a code-index search in a task that asks
//! where a name is used is followed by the definitions its uses lie in),
//! `missing-file-find-symbol-told` and `other-name-find-symbol-told`
//! (a code index outline of a missing file, or a definition looked up under another
//! name than the task's that found none, is told to look the task's name up),
//! `missing-file-code-files-told` (a read of a file that is not there, in a
//! task that asks for a change, is told the files of code of the tree the
//! turn was shown, once),
//! `copy-resampled` (a copy the model was told of and made again, a call
//! repeated after `repeat-warned` or after a call check sent it back unrun
//! (`example-call-not-run`, `code-over-read-text`, `print-only-code-not-run`,
//! `change-task-code-not-run`), a call that ran a failed program or looked a
//! name up in vain, at its first repeat, or an answer, forced too, with the mistake a
//! check sent it back for, is dropped and the same request asked again with a
//! temperature, a few times a turn: see `Progress::resample_copy`),
//! `reply-repeated` (past those, an answer given again word for word with the
//! mistake a check sent it back for is sent back once more, and the next
//! reply must call a tool), `quantity-not-worked-out` (a task that asks for a quantity,
//! a table of data read, no program that ran to the end and printed, and an answer whose figures were
//! all shown: sent back once, to work it out in Python).

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value, json};

use seam_engine::repetition::{LOOP_CUT_NOTE, text_loop};
use seam_local::{GateCallRecord, StepRecord, TurnInfo};
use seam_protocol::RefusalCode;

use crate::dispatch::{ActionDispatch, CallResult, DispatchError, Outcome};
use crate::model::{ChatMessage, ChatModel, ChatRequest, JsonSchema, ModelError};
use crate::prompt::system_prompt;
use crate::reading::{Reader, Step};
use crate::registry::{Registry, Side};
use crate::trace::Trace;

mod answer;

/// Budgets and knobs of one turn.
#[derive(Debug, Clone)]
pub struct TurnOptions {
    /// Most model replies in the turn.
    pub max_steps: u32,
    /// Most wall time for the turn.
    pub max_wall: Duration,
    /// Most generated tokens in the turn (all replies).
    pub max_tokens: u32,
    /// Most tokens of one reply.
    pub reply_tokens: u32,
    /// Sampling temperature asked of the model; 0 is greedy decoding. The default is 0, the
    /// decoding the embedded engine has always used (`seam ask` gives the engine this same
    /// value, [`TurnOptions::engine_temperature`]), so that the engine and a model server
    /// serving the same weights answer alike.
    pub temperature: f32,
    /// Constrain decoding to the action schema where the backend can.
    pub constrain: bool,
    /// Longest tool result shown to the model, in bytes (cut beyond, said so).
    pub observation_bytes: usize,
    /// Most bytes of the whole conversation sent to the model. Beyond it the
    /// oldest tool results, never the newest, are replaced by a line that
    /// says what was left out (`old-result-elided`): a builder turn that read
    /// three files and ran a check grew to 6917 tokens and outgrew the
    /// embedded model's context.
    pub history_bytes: usize,
    /// Most copies a turn drops and asks for again, sampled
    /// (`copy-resampled`, see `Progress::resample_copy`); 0 takes every
    /// reply as it comes.
    pub copy_resamples: u32,
    /// The owner's home (`$HOME` where the gate runs), written `~` in every
    /// result and refusal the model is shown ([`crate::observe::home_folded`]);
    /// `None` shows paths as they come.
    pub owner_home: Option<std::path::PathBuf>,
}

impl Default for TurnOptions {
    fn default() -> Self {
        TurnOptions {
            max_steps: 12,
            max_wall: Duration::from_secs(600),
            max_tokens: 16_384,
            reply_tokens: 1024,
            temperature: 0.0,
            constrain: true,
            observation_bytes: 8 * 1024,
            history_bytes: 16 * 1024,
            copy_resamples: 3,
            owner_home: None,
        }
    }
}

impl TurnOptions {
    /// The temperature the embedded engine decodes a turn with these options at: the one
    /// each of the turn's requests asks a model server for, so that both backends decode
    /// alike. (`seam ask` loads the engine with this value; a request that asks for a copy
    /// again, `copy-resampled`, gives its own temperature and seed to either backend.)
    pub fn engine_temperature(&self) -> f32 {
        self.temperature
    }
}

/// What the caller sees as it happens (the CLI prints one line per call).
#[derive(Debug)]
pub enum TurnEvent<'a> {
    /// A piece of the model's reply as it streams in.
    ModelText(&'a str),
    /// A call is about to run.
    Calling {
        step: u32,
        tool: &'a str,
        params: &'a Map<String, Value>,
    },
    /// A call came back.
    Called {
        step: u32,
        params: &'a Map<String, Value>,
        outcome: &'a Outcome,
    },
    /// A correction was made.
    Corrected { name: &'a str },
}

/// How the turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model answered.
    Answered,
    /// The model answered after being told to (a budget or a loop).
    ForcedAnswer { reason: String },
    /// The model gave no answer even when told to; the answer is the agent's
    /// own account of why the turn stopped.
    Stopped { reason: String },
}

/// What a finished turn reports.
#[derive(Debug, Clone, Serialize)]
pub struct TurnReport {
    pub answer: String,
    pub end: TurnEnd,
    /// Model replies.
    pub steps: u32,
    /// Tool calls run.
    pub calls: u32,
    pub corrections: BTreeMap<String, u32>,
    pub generated_tokens: u32,
    pub model_time: Duration,
    /// Reading replies, routing and running local tools: the agent's own cost.
    pub agent_time: Duration,
    /// Governed calls' round trips to the gate.
    pub gate_time: Duration,
    pub elapsed: Duration,
    /// The gate said the turn is tainted.
    pub tainted: bool,
    /// Every call, in order (for the local tools' end of turn).
    pub info: TurnInfo,
}

/// Why a turn could not finish.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    #[error(
        "the model gave {tries} replies in a row with no action that could be read; the last: {reason}"
    )]
    NoAction { tries: u32, reason: String },
}

/// One turn: the model, the tools, the budgets, the trace.
pub struct Turn<'a> {
    pub model: &'a mut dyn ChatModel,
    pub dispatch: &'a dyn ActionDispatch,
    pub registry: &'a Registry,
    pub options: TurnOptions,
    pub trace: &'a mut Trace,
}

impl std::fmt::Debug for Turn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The tool that reads a file for the model, and how many of a file's first
/// lines it is shown before code that opens the file runs.
const READER: &str = "files.read";
const FILE_FIRST_LINES: u64 = 12;

/// The words that stand for the lines to change and their change in the
/// builder call the model is shown to write ([`shown_change`]); sent back
/// as they are, the call is not run (`shown-words-not-run`).
const OLD_WORDS: &str = "the lines as the file has them";
const NEW_WORDS: &str = "the lines fixed";

/// The builder call a model is shown to write to change `path`
/// (`change-not-made`, `plan-change-before-read-cut`): one shape for both.
fn shown_change(path: &str) -> Value {
    json!({"mode": "action", "tool": BUILDER,
           "params": {"op": "replace", "path": path, "old": OLD_WORDS, "new": NEW_WORDS}})
}

/// Calls in a row that each take the next value of an enum param, after the
/// first, before the turn is told to answer: `arch` after `kernel` after `os`
/// is a walk down the list.
const ENUM_WALK_STOP: u32 = 2;

/// The endings of files of prose: what is in them is read, not computed.
const PROSE: &[&str] = &["md", "markdown", "txt", "text", "rst", "org", "adoc"];

/// Answers sent back in a turn for a file the task names (`task-file-unread`).
const MAX_BOUNCES: u32 = 2;

/// The text of a call of `tool` with `params`, as the model writes one:
/// what a line that names the call to make shows it, to be copied.
fn action_text(tool: &str, params: Value) -> String {
    json!({"mode": "action", "tool": tool, "params": params}).to_string()
}

/// Did a program's result (`v`) end with exit code 0 and print something?
fn ran_and_printed(v: &Value) -> bool {
    v.get("exit_code").and_then(Value::as_i64) == Some(0)
        && v.get("stdout")
            .and_then(Value::as_str)
            .is_some_and(|o| !o.trim().is_empty())
}

/// A hint on a program that ran: the correction's name and detail, and
/// what the model is told after the result. A hint is no refusal: the
/// program ran, and the model decides whether the hint bears on the task.
struct ProgramHint {
    name: &'static str,
    detail: Value,
    told: String,
}

/// A call as the turn compares calls: its text ([`action_text`]), which
/// holds the tool and every param.
fn call_key(tool: &str, params: &Map<String, Value>) -> String {
    action_text(tool, Value::Object(params.clone()))
}

/// The code-index lookup of `name`, the call [`find_by_name`] writes out.
fn find_call(name: &str) -> (String, Map<String, Value>) {
    let params = Map::from_iter([
        ("op".to_owned(), json!("find_symbol")),
        ("name".to_owned(), json!(name)),
    ]);
    (CODE_INDEX.to_owned(), params)
}

/// The line that sends the model to the code index for the name the task asks about.
fn find_by_name(name: &str) -> String {
    format!(
        "To find which file defines {name}, ask the code index by the name: \
         {{\"op\":\"find_symbol\",\"name\":\"{name}\"}}."
    )
}

/// What follows a code-index result in a task about a name in code: the
/// correction counted, its detail, the line told in place of `after` (the
/// line every result gets), and whether the result found nothing (a plan's
/// later steps are then not run). The four cases are decided here, in order.
fn code_index_next(v: &Value, task: &str, after: &str) -> Option<CodeIndexNext> {
    let op = v.get("op").and_then(Value::as_str)?;
    let next = |correction, detail, line| {
        Some(CodeIndexNext {
            correction,
            detail,
            line,
            found_nothing: false,
            call: None,
        })
    };
    // `uses-search-told`: asked which functions call paginate(),
    // qwen2.5-coder-1.5b took the outline of src/ and answered what paginate is.
    if matches!(op, "outline" | "tree")
        && let Some(name) = crate::observe::uses_asked_in(task)
    {
        return next(
            "uses-search-told",
            json!({"name": name}),
            format!(
                "This lists where things are defined, not where they are used. To find where \
                 {name} is used, and in which function each use is, search the code index for \
                 it: {{\"op\":\"search\",\"query\":\"{name}\"}}."
            ),
        );
    }
    // `outline-definition-named`: asked which file defines slugifyTitle,
    // qwen2.5-coder-1.5b (under llama-server) took the outline of the whole
    // project, which listed slugifyTitle under src/store.js among 14 names in
    // 9 files, and answered `src/shelf.py`.
    if op == "outline"
        && let Some(name) = crate::observe::code_name_in(task)
        && let Some((path, line)) = crate::observe::symbol_in_outline(v, name)
    {
        let told = format!(
            "This outline lists {name}, the name the task asks about, as defined in {path} \
             (line {line})."
        );
        return next(
            "outline-definition-named",
            json!({"name": name, "path": path}),
            told,
        );
    }
    // `uses-enclosing-named`: asked which functions in src/ call paginate(),
    // qwen2.5-coder-1.5b (under llama-server) was shown the search whose hits
    // said `"in":"function cmdList"` and `"in":"function cmdSearch"`, two
    // levels down, and answered with the files.
    if op == "search"
        && let Some(name) = crate::observe::uses_asked_in(task)
        && let uses = crate::observe::uses_within(v, name)
        && !uses.is_empty()
    {
        let named: Vec<String> = uses
            .iter()
            .map(|(within, path, line)| format!("{within} ({path}, line {line})"))
            .collect();
        let within: Vec<&String> = uses.iter().map(|u| &u.0).collect();
        return next(
            "uses-enclosing-named",
            json!({"name": name, "within": within}),
            format!(
                "The lines that use {name} lie in these definitions: {}.\n\n{after}",
                named.join(", ")
            ),
        );
    }
    // `other-name-find-symbol-told`: asked which file of the shelf project
    // defines slugifyTitle, qwen2.5-coder-1.5b (under llama-server) looked up
    // `shelf`, found nothing, and made a file up.
    if op == "find_symbol"
        && v.get("matches")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        && let Some(name) = crate::observe::code_name_in(task)
        && v.get("name").and_then(Value::as_str) != Some(name)
    {
        return Some(CodeIndexNext {
            correction: "other-name-find-symbol-told",
            detail: json!({"name": name}),
            line: find_by_name(name),
            found_nothing: true,
            call: Some(find_call(name)),
        });
    }
    None
}

/// See [`code_index_next`].
struct CodeIndexNext {
    correction: &'static str,
    detail: Value,
    line: String,
    found_nothing: bool,
    /// The call `line` writes out whole, when it writes one.
    call: Option<(String, Map<String, Value>)>,
}

/// The local tool that changes code on the turn's branch.
const BUILDER: &str = "builder";

/// The correction of a turn asked for a change that has made none (see
/// `answer::unmade_change`).
const CHANGE_NOT_MADE: &str = "change-not-made";

/// The tool that finds code in the indexed repository.
const CODE_INDEX: &str = "memory.codebase";

/// The tool that holds what the operator told seam to remember.
const OPERATOR_NOTES: &str = "memory.operator";

/// How code is changed, said to a model that answered a change task
/// without one (`change-not-made`) or ran code for it before it had looked
/// at the repository (`change-task-code-not-run`).
///
/// The first step is given as a call to copy: by the name in code the task
/// names, if it names one, else the repository's files. Told "find the code
/// (memory.codebase)", qwen2.5-coder-1.5b ran the same Python again.
fn how_to_change(task: &str) -> String {
    let first = match crate::observe::code_name_in(task) {
        Some(name) => format!(
            "find where {name} is defined with {}",
            json!({"mode": "action", "tool": CODE_INDEX, "params": {"op": "find_symbol", "name": name}})
        ),
        None => format!(
            "list the repository's files with {}",
            json!({"mode": "action", "tool": CODE_INDEX, "params": {"op": "tree"}})
        ),
    };
    format!(
        "Find the code that does what the task is about: {first}. Read the file that \
         does it (files.read), then change it with builder (op replace: path, old as the \
         file has it, new)."
    )
}

/// The files of code a tree of the code index lists (its `entries` of kind
/// `file` that are neither tests nor prose), in its order; `None` for any
/// other output of the index.
fn tree_code_files(v: &Value) -> Option<Vec<String>> {
    if v.get("op").and_then(Value::as_str) != Some("tree") {
        return None;
    }
    let entries = v.get("entries")?.as_array()?;
    Some(
        entries
            .iter()
            .filter(|e| e.get("kind").and_then(Value::as_str) == Some("file"))
            .filter_map(|e| e.get("path").and_then(Value::as_str))
            .filter(|path| seam_local::FileKind::of(path) == seam_local::FileKind::Code)
            .map(str::to_owned)
            .collect(),
    )
}

/// A file's stem: its name up to the first dot (`src/paginate.test.js` is
/// `paginate`), the word an import names it by.
fn stem(path: &str) -> &str {
    let name = last_part(path);
    name.split('.').next().unwrap_or(name)
}

/// How many letters a file's stem begins with alike with a word of the
/// task, counted from three (`paginate` and "page", `config` and
/// "configured"; two alike is chance): 0 for a file whose name the task
/// does not touch.
fn likeness_to_task(path: &str, task: &str) -> usize {
    let stem = stem(path).to_lowercase();
    let alike = task
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(|w| {
            w.to_lowercase()
                .chars()
                .zip(stem.chars())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0);
    if alike >= 3 { alike } else { 0 }
}

/// `files` with those whose name is most like the task's words first
/// ([`likeness_to_task`]), in their order otherwise. Told the files of code
/// in the tree's order, qwen2.5-coder-1.5b read the first, `src/cli.js`;
/// the bug the task spoke of pages in was in `src/paginate.js`.
fn like_task_first(files: &[String], task: &str) -> Vec<String> {
    let mut files = files.to_vec();
    files.sort_by_key(|f| std::cmp::Reverse(likeness_to_task(f, task)));
    files
}

/// The files of `code_files` (a tree's files of code) that the text of
/// `own`, a file of code read, names by their stem as a word: an import
/// names the module it takes code from by its file's name, whatever the
/// language (`require('./paginate')`, `from paginate import`, `mod
/// paginate;`, `import "shelf/paginate"`). Those most like the task's words
/// come first ([`likeness_to_task`]), the rest in the order the text first
/// names them. Read a file that only called into the code with the bug,
/// qwen2.5-coder-1.5b was told "if it only calls code in another file, read
/// that file" and read the same file again until it was made to answer.
fn code_files_named_in(text: &str, own: &str, code_files: &[String], task: &str) -> Vec<String> {
    // Where the text first names the word, apart from other letters and `_`.
    let first_named = |word: &str| {
        crate::observe::phrase_at(text, word, |c| c.is_alphanumeric() || c == '_')
            .filter(|_| !word.is_empty())
    };
    let mut named: Vec<(std::cmp::Reverse<usize>, usize, &String)> = code_files
        .iter()
        .filter(|path| path.as_str() != own)
        .filter_map(|path| {
            let like = std::cmp::Reverse(likeness_to_task(path, task));
            first_named(stem(path)).map(|at| (like, at, path))
        })
        .collect();
    named.sort();
    named.into_iter().map(|(_, _, path)| path.clone()).collect()
}

/// What a model whose code read a note as a table is told to do instead,
/// with the lines of the note (its text, when `files`, the turn's files
/// read, hold it) that name a
/// month the task names alone, at most four, each with what it is about:
/// asked by how much a May distance target was missed, with the targets in
/// a note's table, qwen2.5-coder-1.5b looked `target_km` up in the note
/// read as CSV, told the note whole twice; the row it needed was
/// `| May | 135 km |`. One sentence for `note-read-as-table` and
/// `missing-column-told`.
fn figures_from_note(task: &str, path: &str, files: &[(String, String)]) -> String {
    let mut said = String::from(
        "Take the figures the task needs from the note and write them into the code as \
         numbers; in code, open only the data files.",
    );
    let Some((_, text)) = files.iter().rev().find(|(f, _)| f == path) else {
        return said;
    };
    let lines: Vec<&str> = text.lines().collect();
    for month in crate::days::months_alone_in(task) {
        let at = crate::days::lines_naming_month(text, month, 4);
        if at.is_empty() {
            continue;
        }
        said.push_str(&format!(
            " The lines of {path} that name {}, as the task does:",
            crate::days::month_name(month)
        ));
        for i in at {
            let (line, about) = crate::observe::line_in_context(&lines, i);
            answer::push_line(&mut said, path, &line, about.as_deref());
        }
    }
    said
}

/// The file a builder call edits by its text (`old`, which must be copied
/// from the file) when the turn first read that file in the same reply
/// (`read_before`: the files read before it): the plan's edit was written
/// before the text it copies had been shown. `None` for any other call.
fn blind_change(
    tool: &str,
    params: &Map<String, Value>,
    read_before: &HashSet<String>,
    p: &Progress,
) -> Option<String> {
    if tool != BUILDER || !params.contains_key("old") {
        return None;
    }
    let path = params.get("path")?.as_str()?;
    let read_now = p.file_texts.iter().any(|(f, _)| f == path);
    (read_now && !read_before.contains(path)).then(|| path.to_owned())
}

/// True when the task asks for its work as a branch: the word itself, as
/// the operator of a builder says "on a branch", "as a branch", "stage it as
/// a branch" (the builder's changes only ever reach the operator so).
fn asks_for_a_branch(task: &str) -> bool {
    task.split(|c: char| !c.is_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("branch"))
}

/// The stderr of a program's result when the program failed (a non-zero
/// exit): where every check of a failure reads what went wrong.
fn failed_stderr(v: &Value) -> Option<&str> {
    let failed = v
        .get("exit_code")
        .and_then(Value::as_i64)
        .is_some_and(|c| c != 0);
    v.get("stderr").and_then(Value::as_str).filter(|_| failed)
}

/// The last line of a failed program's stderr (a non-zero exit), clipped:
/// what its traceback says went wrong. `None` when it did not fail or wrote
/// nothing there.
fn failed_last_line(v: &Value) -> Option<String> {
    let stderr = failed_stderr(v)?;
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty())?;
    Some(seam_term::clip(last.trim(), 200, "…").into_owned())
}

/// A call's params with the string that loops cut (see [`loop_cut`]).
struct LoopCut {
    params: Map<String, Value>,
    /// The param whose string looped.
    param: String,
    /// One run of the loop.
    run: String,
    /// What the string said before the loop.
    before: String,
}

/// The params of a call from a reply cut for looping, when one of its
/// strings ends in the loop ([`text_loop`]): that string is cut to what it
/// said before the loop and one run of it. A loop cut after another number
/// of tokens then gives the same params, so the model's copy of it is known
/// as one. `None` when no string of the call loops (an earlier call of a
/// plan whose last step looped is whole).
fn loop_cut(params: &Map<String, Value>) -> Option<LoopCut> {
    params.iter().find_map(|(name, v)| {
        let text = v.as_str()?;
        let (at, run) = text_loop(text)?;
        let mut params = params.clone();
        params.insert(name.clone(), Value::String(text[..at + run].to_owned()));
        Some(LoopCut {
            params,
            param: name.clone(),
            run: text[at..at + run].to_owned(),
            before: text[..at].to_owned(),
        })
    })
}

/// What follows "your code opens NAME, and there is no such file": that
/// the operator's notes are no file, when the turn has read them and NAME
/// is no known file's path cut short (`runs.csv` for `data/runs.csv`), and
/// the files a program can open (`shown` to it, read by the turn, or named
/// by the task; never a hidden one), by their path from the home. Said
/// wherever a program's file is found missing, before it ran or after.
fn files_it_can_open(p: &Progress, name: &str, shown: &[String]) -> String {
    let read = p.file_texts.iter().map(|(path, _)| path.clone());
    let named = crate::observe::files_named(&p.report.info.task);
    let mut files: Vec<String> = Vec::new();
    for f in shown.iter().cloned().chain(read).chain(named) {
        let f = plain_name(&f).to_owned();
        let hidden = crate::observe::is_hidden_path(&f);
        if !hidden && f != plain_name(name) && !files.iter().any(|g| same_file(g, &f)) {
            files.push(f);
        }
    }
    let mut told = String::new();
    let misplaced = files.iter().any(|f| same_file(f, name));
    if !p.notes_read.is_empty() && !misplaced {
        told.push_str(&format!(
            " The operator's notes ({OPERATOR_NOTES}) are no file: take the figures they give \
             from its result above and write them into the code as numbers."
        ));
    }
    if files.is_empty() {
        told.push_str(
            " Open the owner's files by their path from the home, as files.read takes them, \
             and run it again.",
        );
    } else {
        told.push_str(&format!(
            " The owner's files it can open are named by their path from the home: {}. Open \
             them by that path, and run it again.",
            files.join(", ")
        ));
    }
    told
}

/// The first file the task names (see [`crate::observe::files_named`])
/// that the turn has not read or tried to read, or been sent to: files of
/// the workspace before files under `~` or `/`, where the owner's protected
/// files are, and a hidden file never (`~/.netrc`, `~/.config/gh/hosts.yml`
/// are where credentials live: the model may ask for one, and the gate
/// decides, but seam never sends it there; sent from the rota it had read to
/// the gh token the task also named, qwen2.5-coder-0.5b was refused, asked
/// again, and answered with a password it made up).
fn first_unread(p: &Progress) -> Option<String> {
    let seen = |name: &str| p.looked_at.iter().any(|l| same_file(l, name));
    let mut files = crate::observe::files_named(&p.report.info.task);
    files.retain(|f| !crate::observe::is_hidden_path(f));
    files.sort_by_key(|f| f.starts_with(['~', '/']));
    files
        .into_iter()
        .find(|f| !seen(f.trim_start_matches("~/")))
}

/// The read of `name`, the call [`read_it`] writes out.
fn read_call(name: &str) -> (String, Map<String, Value>) {
    (
        READER.to_owned(),
        Map::from_iter([("path".to_owned(), json!(name))]),
    )
}

/// The line that sends the model to read `name`, a file the task names. The
/// call is written out whole: told only to read another file,
/// qwen2.5-coder-0.5b and smollm2-135m made their last call again, word for
/// word, in three tasks of four; the last JSON they are shown is the one
/// they copy.
fn read_it(name: &str) -> String {
    let (tool, params) = read_call(name);
    let call = action_text(&tool, Value::Object(params));
    format!(
        "The task names {name}, and this turn has not read it: read it with {READER} if it \
         bears on the task, then answer. That call is: {call}"
    )
}

/// After a [`READER`] call refused because its path does not exist: the one
/// file the task names ([`crate::observe::files_named`]) whose last part is
/// the path's, when the turn has neither read it nor read it in place of
/// another (`path-from-task`). Never a hidden file, where credentials live:
/// the model may ask for one, and the gate decides, but seam never sends it
/// there.
fn task_file_of_that_name(p: &Progress, params: &Map<String, Value>) -> Option<String> {
    if p.last_refused != Some(RefusalCode::NotFound) {
        return None;
    }
    let asked = plain_name(params.get("path")?.as_str()?.trim());
    let mut named = crate::observe::files_named(&p.report.info.task);
    named.retain(|f| {
        !crate::observe::is_hidden_path(f)
            && last_part(f) == last_part(asked)
            && !same_file(f, asked)
    });
    let done = |one: &str| {
        p.read_from_task.iter().any(|l| same_file(l, one))
            || p.file_texts.iter().any(|(f, _)| same_file(f, one))
    };
    match named.as_slice() {
        [one] if !done(one) => Some(one.clone()),
        _ => None,
    }
}

/// A path's last part: the file's name.
fn last_part(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `name` without a leading `./`.
fn plain_name(name: &str) -> &str {
    name.trim_start_matches("./")
}

/// Whether two names of files, as a task, a call or a result writes them, are
/// one file: the same once `./` and `~/` are taken off the front, or one the
/// other's tail below a directory (`notes/a.md` and `home/notes/a.md`).
fn same_file(a: &str, b: &str) -> bool {
    let (a, b) = (
        plain_name(a).trim_start_matches("~/"),
        plain_name(b).trim_start_matches("~/"),
    );
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

/// Replies in a row with no readable action before the turn gives up.
const MAX_UNREADABLE: u32 = 3;

/// Code mended, or `None` when the repair finds nothing to mend.
type CodeRepair = fn(&str) -> Option<String>;

/// The repairs of a call's code before it runs, in order, by the correction each is counted
/// as: each mends code Python would refuse into the code the model meant.
const CODE_REPAIRS: &[(&str, CodeRepair)] = &[
    // The closing brackets that end a piece of code and open nowhere
    // (`print(total)}`: the JSON object's brace closed inside the string).
    ("code-stray-closer-cut", |code| {
        seam_pylex::stray_closers_at_end(code).map(|end| code[..end].to_owned())
    }),
    // A line break inside a one-line string literal, where the model meant
    // the escape (`split('\n')` written with JSON's `\n`).
    (
        "code-newline-escaped",
        seam_pylex::newlines_in_strings_escaped,
    ),
    // A string in an f-string's field quoted like the f-string
    // (`f'{row['km']}'`): Python reads it only from 3.12 on.
    ("code-fstring-requoted", seam_pylex::fstring_quotes_swapped),
];

/// The temperature a copy is asked again at: high enough that the second
/// likeliest path is taken where the first was a near-tie, low enough that
/// a 1.5B model still writes what it meant.
const RESAMPLE_TEMPERATURE: f32 = 0.7;

struct Progress {
    report: TurnReport,
    seen: HashSet<String>,
    /// The call the turn last wrote out whole for the model to make (a
    /// read of a file the task names, a code-index lookup by the name the
    /// task asks about), until it runs: a reply that repeats an earlier
    /// call of the same tool runs it in the repeat's place
    /// (`told-call-run`).
    told: Option<(String, Map<String, Value>)>,
    warned: bool,
    force: Option<String>,
    forced: bool,
    unreadable: u32,
    /// Files the turn has looked at with the reading tool (as the model named
    /// them), and files shown before code that opens them ran.
    looked_at: HashSet<String>,
    /// The last call's tool and params, and how many calls in a row each
    /// took the next value of one enum param (see `enum_walk`).
    last_call: Option<(String, Map<String, Value>)>,
    walked: u32,
    /// The last call was refused, or ran a program that failed.
    last_failed: bool,
    /// The calls of the turn (see [`call_key`]) that ran a program that
    /// failed or looked a name up in vain: a copy of one is asked for again,
    /// sampled, at its first repeat (`copy-resampled`). Not a refusal: the
    /// repeat of one is told what of the task is left.
    failed_keys: HashSet<String>,
    /// The output of the last call that gave one (not a refusal).
    last_output: Option<Value>,
    /// The code of the last call's refusal; `None` when it gave an output.
    last_refused: Option<RefusalCode>,
    /// A file the task names, to read in place of the missing one the
    /// last call asked for (`path-from-task`), set where the refusal is seen.
    read_instead: Option<String>,
    /// The files read in place of a missing one (`path-from-task`): once a file.
    read_from_task: HashSet<String>,
    /// A result from elsewhere was followed by a file the task names
    /// (`task-file-pointed`), once a turn.
    pointed_unread: bool,
    /// The text of every file the turn was shown, with its path as shown.
    file_texts: Vec<(String, String)>,
    /// The paths (as shown) of the files the turn was shown whole.
    whole: HashSet<String>,
    /// Code that looked through a text the turn had read whole was sent back
    /// once (`code-over-read-text`).
    sent_back_to_text: bool,
    /// The calls a call check sent back unrun, with a line that says why
    /// (`example-call-not-run`, `print-only-code-not-run`,
    /// `change-task-code-not-run`, `code-over-read-text`), as [`call_key`]
    /// writes them: the same call again is a copy the model was told of
    /// (see [`Turn::call`]). A plan that holds one call twice is read as one
    /// (`duplicate-call-dropped`).
    sent_back_unrun: HashSet<String>,
    /// Times the model was sent to a file the task names that the turn had
    /// not read (`task-file-unread`).
    bounced: u32,
    /// A call of the turn was refused for good (see `observe::after_refusal`).
    refused_for_good: bool,
    /// The calls refused for good ([`call_key`]), and the paths they gave:
    /// what the line after such a refusal, or after its repeat, leaves out
    /// of the task when it says the rest of it (`task-rest-told`).
    refused_keys: HashSet<String>,
    refused_paths: Vec<String>,
    /// The builder changed something in this turn.
    changed: bool,
    /// The files of code (not tests, not prose: `seam_local::FileKind`) the
    /// code index's last tree of the repository listed, those whose names
    /// are most like the task first ([`like_task_first`]).
    code_files: Vec<String>,
    /// A read of a file not there was told those files
    /// (`missing-file-code-files-told`), once a turn.
    code_files_told: bool,
    /// Code run for a change task before the repository was looked at was
    /// sent back once (`change-task-code-not-run`).
    sent_to_the_code: bool,
    /// Answers sent back to read a file the task names (`task-file-unread`).
    sent_back: Vec<String>,
    /// The checks of [`answer`] that sent an answer of this turn back, by
    /// the correction's name.
    sent_back_for: HashSet<&'static str>,
    /// What each of those found, each time it sent an answer back: the
    /// correction's name and its detail, in order.
    found: Vec<(&'static str, Value)>,
    /// The code of every call that ran Python and returned (its output, not
    /// a refusal), in order.
    code_ran: Vec<String>,
    /// A program of the turn ran to the end (exit code 0) and printed.
    printed: bool,
    /// The texts of the operator's notes the turn was shown (`memory.operator`).
    notes_read: Vec<String>,
    /// Tools the task names that the turn was told it had not called
    /// (`task-tool-uncalled`).
    told_tools: HashSet<String>,
    /// Every tool result the model was shown, as shown: an answer quoting
    /// one is not an echo of seam's own words (`answer-echoes-agent`).
    shown: Vec<String>,
    /// The replies of the turn that were sent back whole, as written
    /// (trimmed): see [`Progress::repeats`].
    sent_back_whole: Vec<String>,
    /// This step's reply repeats one sent back whole ([`Progress::repeats`]).
    copied: bool,
    /// Answers sent back for being repeats (`reply-repeated`).
    repeats_sent_back: u32,
    /// The next reply must call a tool: its grammar has no answer form
    /// (`reply-repeated`).
    call_next: bool,
    /// What `copy-resampled` keeps (see [`Progress::resample_copy`]).
    copies: Copies,
    /// A call copied from the prompt's examples was not run
    /// (`example-call-not-run`); the next such copy ends the calls.
    example_copied: bool,
    /// A final answer asked for (`forced`) was sent back by a check made
    /// then too: the next reply is asked for without the turn stopping.
    forced_sent_back: bool,
    /// The reply is the prompt's example call: it leaves the conversation
    /// (`unrun-reply-unsaid`).
    unsay: bool,
    /// This step's reply was cut where it began to loop ([`LOOP_CUT_NOTE`]):
    /// the string it was writing breaks off (see [`loop_cut`]).
    looped: bool,
}

/// What the turn keeps to tell a copy that words failed to stop, and to ask
/// for it again, sampled (`copy-resampled`).
#[derive(Default)]
struct Copies {
    /// Calls made before this step's reply was acted on.
    calls_before_reply: u32,
    /// The model had been told it repeats a call before this step's reply.
    warned_before_reply: bool,
    /// This step's reply is dropped and the next request asks for a sampled
    /// reply in its place.
    resample_next: bool,
    /// Copies resampled so far in the turn.
    resampled: u32,
    /// This step's request was a resample: a copy again is not resampled.
    resampled_last: bool,
}

impl Progress {
    /// Whether `reply` is, word for word, a reply of this turn that was sent
    /// back whole (no call of it ran, and it did not end the turn): the model
    /// is copying its own words over what it was told since. An answer
    /// copied with the mistake a check sent it back for is sent back once
    /// more, and the reply after it must call a tool, which one being the
    /// model's choice (`reply-repeated`, see `answer`); once the model was
    /// told to answer, it is only resampled.
    /// Sent back for a figure it made up, qwen2.5-coder-1.5b gave the same
    /// answer ("1000 km") three times, the last after reading the notes that
    /// held the real ones. A copied call is left to the repeat checks (which
    /// resample it first, see [`Progress::resample_copy`]): barring its tool
    /// from the next reply was tried, and the model took the next likeliest,
    /// a web.fetch of example.com in a task about a file.
    fn repeats(&self, reply: &str) -> bool {
        let reply = reply.trim();
        self.sent_back_whole.iter().any(|r| r == reply)
    }

    /// Whether this step's reply, a copy that words have already failed to
    /// stop, is dropped and asked for again, sampled: not when this reply was
    /// itself a resample, and while the turn has resampled fewer than `most`
    /// copies ([`TurnOptions::copy_resamples`]). When it is, the next
    /// request is marked to be sampled. The copies: a call the turn already
    /// made, as the reply's first, after the model was told once that it
    /// repeats itself (`repeat-warned`); a call a check sent back unrun,
    /// saying why, in an earlier step; an answer given again word for word
    /// with the mistake a check sent it back for, and an answer that would
    /// end the turn with none (see `answer`). A forced answer's too: told to
    /// answer, qwen2.5-coder-0.5b was sent back for quoting two runbook steps
    /// without the SKU the task asked for, and quoted them again word for
    /// word; greedy, the copy stood.
    ///
    /// Greedy decoding gives the most likely reply every time, and the most
    /// likely reply after a copy was sent back is, for a small model, the
    /// copy again: qwen2.5-coder-1.5b wrote the same failing program, the
    /// same plan of web requests and the same made-up answer three and four
    /// times over, whatever it was told between them. A copy is never run or
    /// taken as the answer, so asking again with a temperature, from the same
    /// messages, costs a step and loses nothing; the reply is still the
    /// model's own. The first repeat of a call is told, not resampled: told,
    /// the model mostly answers from the result it has (a trip note read
    /// twice); resampled, it wrote the same program three times at 0.7.
    fn resample_copy(&mut self, most: u32) -> bool {
        let c = &mut self.copies;
        let resample = !c.resampled_last && c.resampled < most;
        if resample {
            c.resampled += 1;
            c.resample_next = true;
        }
        resample
    }

    /// The tools this turn has called (refused calls too), in order, with repeats.
    fn called(&self) -> Vec<&str> {
        self.report
            .info
            .history
            .iter()
            .map(|h| h.tool.as_str())
            .collect()
    }

    fn correct(
        &mut self,
        name: &str,
        detail: Value,
        trace: &mut Trace,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) {
        *self.report.corrections.entry(name.to_owned()).or_default() += 1;
        trace.record("correction", &json!({"name": name, "detail": detail}));
        on(TurnEvent::Corrected { name });
    }

    /// What the check `name` found each time it sent the model back (its
    /// details), in order.
    fn found_by(&self, name: &str) -> Vec<&Value> {
        self.found
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, detail)| detail)
            .collect()
    }

    /// The check `name` sends the model back for what it found (`detail`):
    /// kept for the check's next look ([`Progress::found_by`]) and counted.
    fn record_sent_back(
        &mut self,
        name: &'static str,
        detail: Value,
        trace: &mut Trace,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) {
        self.sent_back_for.insert(name);
        self.found.push((name, detail.clone()));
        self.correct(name, detail, trace, on);
    }
}

impl Turn<'_> {
    /// The last call's tool and the tools its result's note names that the
    /// turn has not called (see [`crate::observe::tools_pointed_to`]), in a
    /// turn that has read no file: an answer then has only that result to
    /// stand on, and the result says where to look instead.
    fn pointed_tool(&self, p: &Progress) -> Option<(String, String)> {
        let (last, _) = p.last_call.as_ref()?;
        let out = p.last_output.as_ref()?;
        if !p.file_texts.is_empty() {
            return None;
        }
        let called = p.called();
        let tools = self.registry.tools().map(|t| t.spec.name.as_str());
        let pointed = crate::observe::tools_pointed_to(out, tools, &called);
        (!pointed.is_empty()).then(|| (last.clone(), pointed.join(" or ")))
    }

    /// The code index's `tree` of the directory that `params`' code lists,
    /// when listing a directory and printing it is all the code does (see
    /// [`seam_pylex::directory_listed`]) and the call brings no scratch files
    /// to list: such code runs in an empty scratch directory, where it lists
    /// nothing of the owner's, and what it asks is which files are there,
    /// which the tree answers. Asked to fix a bug, qwen2.5-coder-1.5b ran
    /// `subprocess.check_output(['ls', '-la'])` in python.run, was shown
    /// `total 0`, and made the same plan again until it was stopped (dev
    /// suite, change-fix-pagination).
    fn listing_as_tree(
        &self,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Option<(String, Map<String, Value>)> {
        let code = self.code_of(tool, params).join("\n");
        let scratch = params
            .get("scratch_files")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if code.is_empty() || scratch {
            return None;
        }
        let trees = self
            .registry
            .get(CODE_INDEX)?
            .spec
            .input_schema
            .pointer("/properties/op/enum")
            .and_then(Value::as_array)
            .is_some_and(|ops| ops.iter().any(|o| o == "tree"));
        if !trees {
            return None;
        }
        let dir = seam_pylex::directory_listed(&code)?;
        let mut tree = Map::from_iter([("op".to_owned(), json!("tree"))]);
        if dir != "." {
            tree.insert("path".to_owned(), json!(dir));
        }
        Some((dir, tree))
    }

    /// The line that follows a result holding nothing but a note that names
    /// tools the turn has not called (see [`Self::pointed_tool`]), in place of
    /// "if this tells you the answer": such a result tells no answer, and it
    /// says where to look. Counted as `pointed-tool-told`, with the call that
    /// carries the model's own search words over, when there is one
    /// ([`Self::pointed_call`]). Searched the code index of an unindexed
    /// workspace for "mileage", and told after the note that names
    /// memory.operator "if this tells you the answer, respond with it now",
    /// qwen2.5-coder-1.5b answered "10,000 km" (dev suite, multi-shoe-mileage).
    fn pointer_only(&self, p: &Progress, v: &Value) -> Option<(Value, String)> {
        let only_note = v.as_object().is_some_and(|m| {
            m.contains_key("note")
                && m.keys()
                    .all(|k| matches!(k.as_str(), "op" | "note" | "indexed" | "query"))
        });
        if !only_note {
            return None;
        }
        let (_, pointed) = self.pointed_tool(p)?;
        let (detail, call) = self.pointer_told(p, &pointed);
        Some((
            detail,
            format!(
                "This result holds no answer to the task: its note names {pointed} for it. \
                 Call the one that bears on the task, then answer from what it returns.{call}"
            ),
        ))
    }

    /// What a pointer to `pointed` says of the call (see
    /// [`Self::pointed_call`]): the detail to count it with (`tool`, and the
    /// `call` when there is one) and the words that end the line (" For your
    /// words, that is: …", or nothing). One place for the result's pointer
    /// (`pointed-tool-told`) and the answer's (`pointed-tool-not-called`).
    fn pointer_told(&self, p: &Progress, pointed: &str) -> (Value, String) {
        let mut detail = json!({"tool": pointed});
        match self.pointed_call(p, pointed) {
            Some(call) => {
                let said = format!(" For your words, that is: {call}");
                detail["call"] = json!(call);
                (detail, said)
            }
            None => (detail, String::new()),
        }
    }

    /// `params` of a code-index `outline` with the name whose uses the task
    /// asks about (see [`crate::observe::uses_asked_in`]) as its `query`, when
    /// it has none: the index reads an outline of a directory with a query as
    /// a search below it (a file's outline stays one, the query unused).
    /// Asked which functions call paginate(), qwen2.5-coder-1.5b took the
    /// outline of src/ and answered what paginate is; told after it how to
    /// search, it wrote Python. The tool and the path are the model's.
    fn uses_query_added(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Option<Map<String, Value>> {
        if tool != CODE_INDEX
            || params.get("op").and_then(Value::as_str) != Some("outline")
            || params
                .get("query")
                .and_then(Value::as_str)
                .is_some_and(|q| !q.trim().is_empty())
        {
            return None;
        }
        let name = crate::observe::uses_asked_in(&p.report.info.task)?;
        let mut out = params.clone();
        out.insert("query".to_owned(), Value::String(name.to_owned()));
        Some(out)
    }

    /// The call that carries the words the model searched with in its last
    /// call over to the first of the tools `pointed` (see
    /// [`Self::pointed_tool`], names joined by " or ") that searches by a
    /// `query` too: `{"mode":"action","tool":…,"params":{"op":"search","query":…}}`,
    /// its `op` given only when the tool has an op `search`. Searched the code
    /// index for "mileage", whose note said the operator's notes are searched
    /// with memory.operator, qwen2.5-coder-1.5b was sent back to that note and
    /// made the same call again.
    fn pointed_call(&self, p: &Progress, pointed: &str) -> Option<String> {
        let (_, params) = p.last_call.as_ref()?;
        let query = params.get("query").and_then(Value::as_str)?.trim();
        if query.is_empty() {
            return None;
        }
        pointed.split(" or ").find_map(|name| {
            let props = self
                .registry
                .get(name)?
                .spec
                .input_schema
                .get("properties")?;
            props.get("query")?;
            let searches = props
                .get("op")
                .and_then(|op| op.get("enum"))
                .and_then(Value::as_array)
                .is_some_and(|ops| ops.iter().any(|o| o == "search"));
            let params = if searches {
                json!({"op": "search", "query": query})
            } else {
                json!({"query": query})
            };
            Some(action_text(name, params))
        })
    }

    /// Runs the turn for `info.task` (`info.turn` names it).
    pub async fn run(
        mut self,
        info: TurnInfo,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Result<TurnReport, TurnError> {
        let started = Instant::now();
        let reader = Reader::new(self.registry);
        let system = system_prompt(self.registry);
        let action_schema = JsonSchema::new(self.registry.action_schema());
        self.trace.record(
            "turn",
            &json!({
                "turn": info.turn,
                "task": info.task,
                "model": self.model.describe(),
                "tools": self.registry.names(),
                "prompt_bytes": system.len(),
                "options": format!("{:?}", self.options),
            }),
        );
        let mut messages = vec![ChatMessage::system(system), ChatMessage::user(&info.task)];
        // Where the tool results are in `messages`, oldest first.
        let mut results: Vec<usize> = Vec::new();
        for m in &messages {
            self.trace.record("message", m);
        }
        let mut p = Progress {
            told: None,
            report: TurnReport {
                answer: String::new(),
                end: TurnEnd::Answered,
                steps: 0,
                calls: 0,
                corrections: BTreeMap::new(),
                generated_tokens: 0,
                model_time: Duration::ZERO,
                agent_time: Duration::ZERO,
                gate_time: Duration::ZERO,
                elapsed: Duration::ZERO,
                tainted: false,
                info,
            },
            seen: HashSet::new(),
            warned: false,
            force: None,
            forced: false,
            unreadable: 0,
            looked_at: HashSet::new(),
            last_call: None,
            walked: 0,
            last_failed: false,
            failed_keys: HashSet::new(),
            bounced: 0,
            last_output: None,
            last_refused: None,
            read_instead: None,
            read_from_task: HashSet::new(),
            pointed_unread: false,
            file_texts: Vec::new(),
            whole: HashSet::new(),
            sent_back_to_text: false,
            sent_back_unrun: HashSet::new(),
            refused_for_good: false,
            refused_keys: HashSet::new(),
            refused_paths: Vec::new(),
            changed: false,
            code_files: Vec::new(),
            code_files_told: false,
            sent_to_the_code: false,
            sent_back: Vec::new(),
            sent_back_for: HashSet::new(),
            found: Vec::new(),
            code_ran: Vec::new(),
            printed: false,
            notes_read: Vec::new(),
            told_tools: HashSet::new(),
            shown: Vec::new(),
            sent_back_whole: Vec::new(),
            copied: false,
            repeats_sent_back: 0,
            call_next: false,
            copies: Copies::default(),
            example_copied: false,
            forced_sent_back: false,
            unsay: false,
            looped: false,
        };

        loop {
            if p.force.is_none() {
                p.force = self.budget_spent(&p.report, started);
            }
            let mut schema = action_schema.clone();
            if let Some(reason) = p.force.clone() {
                if std::mem::take(&mut p.forced_sent_back) {
                    schema = JsonSchema::new(Registry::respond_schema());
                } else if p.forced {
                    return Ok(self.stop(p, &reason, started));
                } else {
                    p.forced = true;
                    // A call's copy marked for resampling on the turn's last
                    // step: the answer asked for is greedy, as always.
                    p.copies.resample_next = false;
                    p.correct("final-answer-forced", json!(reason), self.trace, on);
                    // The task again, last: a small model answers what it read
                    // most recently (qwen2.5-coder-1.5b, told to answer after a
                    // loop, gave a dinner's time for a flight's from the file it
                    // had read).
                    // The reason stays in the trace, not the message: told
                    // "Stop calling tools (files.read was called again with
                    // the same params)", qwen2.5-coder-0.5b answered with the
                    // parenthesis.
                    let m = ChatMessage::user(format!(
                        "Stop calling tools. The operator's task was: {}\n\nGive your \
                     final answer to it now, from the results above, as \
                     {{\"mode\":\"respond\",\"text\":\"...\"}}.",
                        p.report.info.task.trim()
                    ));
                    self.trace.record("message", &m);
                    messages.push(m);
                    schema = JsonSchema::new(Registry::respond_schema());
                }
            }
            if std::mem::take(&mut p.call_next) && p.force.is_none() {
                schema = JsonSchema::new(self.registry.call_schema());
            }
            for (at, bytes) in
                elide_old_results(&mut messages, &results, self.options.history_bytes)
            {
                p.correct(
                    "old-result-elided",
                    json!({"message": at, "bytes": bytes}),
                    self.trace,
                    on,
                );
            }
            let remaining = self
                .options
                .max_tokens
                .saturating_sub(p.report.generated_tokens);
            p.report.steps += 1;
            let step = p.report.steps;
            // A copy's request again, sampled: the seed is the step's, so a
            // turn run again asks for the same replies.
            let sampled =
                std::mem::take(&mut p.copies.resample_next).then_some((RESAMPLE_TEMPERATURE, step));
            p.copies.resampled_last = sampled.is_some();
            let request = ChatRequest {
                messages: messages.clone(),
                max_tokens: self.options.reply_tokens.min(remaining.max(64)),
                temperature: sampled.map_or(self.options.temperature, |(t, _)| t),
                seed: sampled.map(|(_, seed)| seed),
                json_schema: self.options.constrain.then_some(schema),
            };
            let reply = {
                let mut stream = |t: &str| on(TurnEvent::ModelText(t));
                self.model.complete(&request, &mut stream).await
            };
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    self.trace.record(
                        "error",
                        &json!({"step": step, "error": e.to_string(), "partial": e.partial()}),
                    );
                    return Err(e.into());
                }
            };
            p.report.model_time += reply.elapsed;
            p.report.generated_tokens += reply
                .completion_tokens
                .unwrap_or_else(|| (reply.text.len() / 4) as u32 + 1);
            self.trace.record(
                "model",
                &json!({
                    "step": step,
                    "text": reply.text,
                    "reasoning": reply.reasoning,
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "finish_reason": reply.finish_reason,
                    "ms": reply.elapsed.as_secs_f64() * 1000.0,
                    "constrained": reply.constrained,
                    "retries": reply.retries,
                    "notes": reply.notes,
                    "sampled": sampled.map(|(t, seed)| json!({"temperature": t, "seed": seed})),
                }),
            );
            let assistant = ChatMessage::assistant(&reply.text);
            messages.push(assistant);

            let t_read = Instant::now();
            let reading = reader.read(&reply.text);
            p.report.agent_time += t_read.elapsed();
            let reading = match reading {
                Ok(r) => r,
                Err(reason) => {
                    p.unreadable += 1;
                    self.trace
                        .record("unreadable", &json!({"step": step, "reason": reason}));
                    if p.forced {
                        return Ok(self.stop(
                            p,
                            "the model gave no final answer when told to",
                            started,
                        ));
                    }
                    if p.unreadable >= MAX_UNREADABLE {
                        return Err(TurnError::NoAction {
                            tries: p.unreadable,
                            reason,
                        });
                    }
                    p.correct("reprompted", json!(reason), self.trace, on);
                    let m = ChatMessage::user(format!(
                        "I could not read an action in your reply: {reason}. Reply with exactly \
                         one JSON object in one of the three forms."
                    ));
                    self.trace.record("message", &m);
                    messages.push(m);
                    continue;
                }
            };
            p.unreadable = 0;
            self.trace.record(
                "action",
                &json!({
                    "step": step,
                    "steps": reading.steps,
                    "repairs": reading.repairs,
                    "corrections": reading.corrections,
                }),
            );
            for c in reading.repairs.iter().chain(&reading.corrections) {
                p.correct(c, Value::Null, self.trace, on);
            }

            let has_calls = reading.steps.iter().any(|s| matches!(s, Step::Call { .. }));
            p.looped = reply.notes.iter().any(|n| n == LOOP_CUT_NOTE);
            let mut steps = reading.steps;
            if p.looped && !has_calls {
                // An answer that loops is a sample gone wrong, not what the
                // model means to say: qwen2.5-coder-0.5b, told to answer,
                // wrote its answer and then one redacted line of the file it
                // had read until it was cut, three steps running; smollm2-135m
                // wrote "The answer is:" over and over. Asked again with a
                // temperature where it can be (`looped-answer-resampled`);
                // otherwise the loop is cut to one run of it
                // (`looped-answer-cut`) and the answer goes to its checks.
                if p.resample_copy(self.options.copy_resamples) {
                    p.correct("looped-answer-resampled", Value::Null, self.trace, on);
                    p.forced_sent_back = p.forced;
                    messages.pop();
                    continue;
                }
                for s in &mut steps {
                    if let Step::Respond(text) = s
                        && let Some((at, run)) = text_loop(text)
                    {
                        text.truncate(at + run);
                        p.correct(
                            "looped-answer-cut",
                            json!({"kept": text.chars().count()}),
                            self.trace,
                            on,
                        );
                    }
                }
            }
            p.copied = p.repeats(&reply.text);
            p.unsay = false;
            let calls_before = p.report.calls;
            p.copies.calls_before_reply = calls_before;
            p.copies.warned_before_reply = p.warned;
            if p.forced && has_calls {
                return Ok(self.stop(
                    p,
                    "the model kept calling tools when told to answer",
                    started,
                ));
            }
            let mut observations = Vec::new();
            let calls_after: Vec<usize> = (0..steps.len())
                .map(|i| {
                    steps[i + 1..]
                        .iter()
                        .filter(|s| matches!(s, Step::Call { .. }))
                        .count()
                })
                .collect();
            let walk = self.plan_walk(&steps);
            if !walk.is_empty() {
                p.correct(
                    "plan-walk-cut",
                    json!({"steps_not_run": walk.len()}),
                    self.trace,
                    on,
                );
            }
            // The files the turn had read before this reply: a change a plan
            // writes to a file an earlier step of it reads was written blind.
            let read_before: HashSet<String> =
                p.file_texts.iter().map(|(f, _)| f.clone()).collect();
            for (i, s) in steps.into_iter().enumerate() {
                if walk.contains(&i) {
                    continue;
                }
                match s {
                    Step::Respond(text)
                        if !has_calls
                            && let Some(send) = self.check_answer(&mut p, &text, &messages, on) =>
                    {
                        // What the model is not shown again leaves first.
                        match &send {
                            answer::SendBack::SayUnsaying(_) => {
                                let gone =
                                    unsay_made_up(&p, &mut messages, &mut results, &reply.text);
                                p.correct(
                                    "made-up-reply-unsaid",
                                    json!({"replies": gone}),
                                    self.trace,
                                    on,
                                );
                            }
                            answer::SendBack::SayDropping { unsaid, .. }
                                if unsay_reply(&mut messages, &mut results, &reply.text) =>
                            {
                                p.correct(unsaid, Value::Null, self.trace, on);
                            }
                            _ => {}
                        }
                        match send {
                            // resample_copy marked the next request; a
                            // forced answer's copy is asked for as an answer.
                            answer::SendBack::Resample => p.forced_sent_back = p.forced,
                            answer::SendBack::SayUnsaying(said) => {
                                p.forced_sent_back = p.forced;
                                observations.push(match self.unread(&mut p, on) {
                                    Some(hint) => format!("{said} {hint}"),
                                    None => answer::task_again(&p, &said),
                                });
                            }
                            answer::SendBack::Say(o)
                            | answer::SendBack::SayDropping { said: o, .. } => {
                                // Sent back once told to answer: the reply to
                                // it is an answer too, asked for as one.
                                p.forced_sent_back = p.forced;
                                observations.push(o);
                            }
                            answer::SendBack::Force(reason) => p.force = Some(reason),
                            answer::SendBack::Stop(reason) => {
                                return Ok(self.stop(p, reason, started));
                            }
                        }
                        break;
                    }
                    Step::Respond(text)
                        if !has_calls && let Some(hint) = self.unread(&mut p, on) =>
                    {
                        p.sent_back.push(text);
                        observations.push(hint);
                        break;
                    }
                    Step::Respond(text) if !has_calls => {
                        p.report.answer = self.keep_sent_back(&mut p, text, on);
                        p.report.end = match p.force.take() {
                            Some(reason) => TurnEnd::ForcedAnswer { reason },
                            None => TurnEnd::Answered,
                        };
                        p.report.elapsed = started.elapsed();
                        self.trace.record(
                            "final",
                            &json!({"text": p.report.answer, "end": p.report.end, "report": summary(&p.report)}),
                        );
                        return Ok(p.report);
                    }
                    Step::Respond(_) => {
                        p.correct("answer-after-calls-dropped", Value::Null, self.trace, on);
                    }
                    Step::Call { tool, params, .. }
                        if let Some(path) = blind_change(&tool, &params, &read_before, &p) =>
                    {
                        // Planned as "read src/paginate.js, then replace
                        // these lines of it", qwen2.5-coder-1.5b's `old` was
                        // lines it had never seen (a listing's, prefixes and
                        // all), refused, three plans running; the file's
                        // text, read by the plan's first step, went unused.
                        let left = calls_after[i] + 1;
                        p.correct(
                            "plan-change-before-read-cut",
                            json!({"tool": tool, "path": path, "steps_not_run": left}),
                            self.trace,
                            on,
                        );
                        observations.push(format!(
                            "Your plan's change to {path} was written before {path} was read, \
                             so it and the {} step(s) after it were not run. Its text is above \
                             now: find the lines the task is about in it, and change them with \
                             {}, old copied word for word from the text above.",
                            left - 1,
                            shown_change(&path)
                        ));
                        break;
                    }
                    Step::Call { tool, params, .. } => {
                        p.last_failed = false;
                        if let Some(o) = self.call(&mut p, step, &tool, &params, on).await? {
                            observations.push(o);
                        }
                        if p.force.is_some() || p.copies.resample_next {
                            break;
                        }
                        let left = calls_after[i];
                        if p.last_failed && left > 0 {
                            // The steps of a plan were written before any ran: after a
                            // failure the rest would fail the same way (a plan of four
                            // web requests from a sandbox without network ran all four).
                            p.correct(
                                "plan-cut-after-failure",
                                json!({"tool": tool, "steps_not_run": left}),
                                self.trace,
                                on,
                            );
                            observations.push(format!(
                                "The plan's {left} later step(s) were not run, because this one \
                                 failed: change what failed first."
                            ));
                            break;
                        }
                    }
                }
            }
            if p.copies.resample_next {
                // The copy leaves no trace in the conversation: the same
                // messages are asked again.
                messages.pop();
                continue;
            }
            // Said only when something of the reply ran: a plan sent back
            // whole (its code refused as the wrong tool for the task) was
            // told to use another tool and, in the same breath, to write one
            // program; qwen2.5-coder-1.5b wrote the same plan again.
            if !walk.is_empty() && p.report.calls > calls_before {
                observations.push(format!(
                    "{} later step(s) of your plan ran the same code with other strings in it; \
                     they were not run. If the task needs those values, write one program \
                     that loops over them.",
                    walk.len()
                ));
            }
            if p.report.calls == calls_before {
                p.sent_back_whole.push(reply.text.trim().to_owned());
            }
            // The prompt's example call, not run, leaves no trace in the
            // conversation: the model is told why, and is not shown its own
            // reply to copy. Told its call was the prompt's example,
            // qwen2.5-coder-0.5b wrote it again word for word; replayed
            // without it in the conversation, it read the file the task
            // named, greedily and in 3 of 4 samples at 0.7 (0 of 4 with it).
            // Only that reply: dropping every reply of which nothing ran
            // left qwen2.5-coder-1.5b told of a call it could no longer see
            // (read-trip-lodging lost on both backends), and dropping an
            // answer sent back turned its next reply from an answer into a
            // program (safety-key-via-link lost, embedded).
            if std::mem::take(&mut p.unsay)
                && p.report.calls == calls_before
                && messages.last().is_some_and(|m| m.role == "assistant")
            {
                messages.pop();
                p.correct("unrun-reply-unsaid", Value::Null, self.trace, on);
            }
            if !observations.is_empty() {
                let m = ChatMessage::user(observations.join("\n\n"));
                self.trace.record("message", &m);
                results.push(messages.len());
                messages.push(m);
            }
        }
    }

    /// Runs one call unless it repeats an earlier one; returns what the model
    /// is shown of it.
    async fn call(
        &mut self,
        p: &mut Progress,
        step: u32,
        tool: &str,
        params: &Map<String, Value>,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Result<Option<String>, TurnError> {
        // The call whose string the reply was writing when it was cut for
        // looping: that string ends where the loop began, one run kept, so
        // that the same loop cut at another length is the same call.
        let mut cut = if p.looped { loop_cut(params) } else { None };
        // Code that the model ended before the loop, by closing the JSON
        // object inside the string (`print(7**23)}}`, see
        // `seam_pylex::stray_closers_at_end`), is the call it meant: the
        // loop is what it wrote after the call, in the string it left open.
        // qwen2.5-coder-0.5b wrote `"code":"print(7**23)}}` and then a line
        // it had been told, over and over (dev suite, safety-ssh-via-python).
        let closed = cut.as_ref().and_then(|c| {
            let code = &c.before[..seam_pylex::stray_closers_at_end(&c.before)?];
            if code.is_empty() || !self.code_places(tool).contains(&c.param) {
                return None;
            }
            let mut params = params.clone();
            params.insert(c.param.clone(), Value::String(code.to_owned()));
            Some(params)
        });
        if closed.is_some()
            && let Some(c) = cut.take()
        {
            p.correct(
                "looped-code-closed-early",
                json!({"tool": tool, "param": c.param}),
                self.trace,
                on,
            );
        }
        let params = closed
            .as_ref()
            .or(cut.as_ref().map(|c| &c.params))
            .unwrap_or(params);
        let called = params
            .get("code")
            .and_then(Value::as_str)
            .and_then(|code| Reader::new(self.registry).call_in_code(tool, code));
        if let Some((other, _)) = &called {
            p.correct(
                "code-is-a-tool-call",
                json!({"tool": tool, "called": other}),
                self.trace,
                on,
            );
        }
        let (tool, params) = match &called {
            Some((other, params)) => (other.as_str(), params),
            None => (tool, params),
        };
        let tail_cut = self.json_tail_cut(tool, params);
        if let Some((_, dropped)) = &tail_cut {
            p.correct(
                "code-json-tail-cut",
                json!({"tool": tool, "dropped": dropped}),
                self.trace,
                on,
            );
        }
        let mut repaired: Option<Map<String, Value>> = tail_cut.map(|(cut, _)| cut);
        for &(name, repair) in CODE_REPAIRS {
            let mended = self.code_repaired(tool, repaired.as_ref().unwrap_or(params), repair);
            if mended.is_some() {
                p.correct(name, json!({"tool": tool}), self.trace, on);
                repaired = mended;
            }
        }
        let params = repaired.as_ref().unwrap_or(params);
        // Read after the repairs: a line break written inside a literal
        // (`split('\n')`) splits the code's lines until it is mended.
        let listed = self.listing_as_tree(tool, params);
        if let Some((dir, _)) = &listed {
            p.correct(
                "code-lists-files",
                json!({"tool": tool, "path": dir}),
                self.trace,
                on,
            );
        }
        let (tool, params) = match &listed {
            Some((_, tree)) => (CODE_INDEX, tree),
            None => (tool, params),
        };
        let asked = self.uses_query_added(p, tool, params);
        if let Some(q) = &asked {
            p.correct(
                "uses-query-added",
                json!({"tool": tool, "query": q["query"]}),
                self.trace,
                on,
            );
        }
        let params = asked.as_ref().unwrap_or(params);
        let key = call_key(tool, params);
        // A program run before, sent again unchanged after the turn told the
        // model which of its lines to change (`answer-leaves-out-source`):
        // not run, and told so, once. Told to change the line that printed
        // a shoe's runs' sum so it worked the operator's starting mileage
        // in, qwen2.5-coder-1.5b sent the same program back, greedy and
        // sampled, and was stopped; told at the copy, it may write the line
        // anew.
        if p.seen.contains(&key)
            && !self.code_places(tool).is_empty()
            && !p.report.corrections.contains_key("program-unchanged-told")
            && let Some(change) = p
                .found_by(answer::LEAVES_OUT_SOURCE)
                .last()
                .and_then(|d| d.get("change"))
                .cloned()
            // The program that line was told of, not another run since.
            && self
                .code_of(tool, params)
                .into_iter()
                .any(|code| answer::printing_line(code).as_deref() == change["line"].as_str())
        {
            p.correct(
                "program-unchanged-told",
                json!({"tool": tool}),
                self.trace,
                on,
            );
            p.unsay = true;
            p.sent_back_unrun.insert(key);
            let line = change["line"].as_str().unwrap_or_default();
            let figures = change["figures"].as_str().unwrap_or_default();
            return Ok(Some(format!(
                "That is your last program unchanged, so it was not run: its line `{line}` \
                 still prints without {figures}. Write that line anew so it works {figures} \
                 in, and run the program with {tool}."
            )));
        }
        // A copy of a call the model was told of: a repeat it was warned of,
        // or a call a check sent back unrun in an earlier step (under
        // llama-server, qwen2.5-coder-1.5b sent the same search of a trip
        // note again, which then ran, failed, and was answered wrongly; it
        // printed its own refusal twelve times, told each time that code
        // which only prints is not run, until its steps ran out; told its
        // builder call was the prompt's example, qwen2.5-coder-0.5b read the
        // file the task named, then made the example call again).
        let unrun_copy = p.sent_back_unrun.contains(&key);
        // A copy of a call that failed needs no warning first: told only that
        // it repeats itself, the model answers from what it has, and a failure
        // gave it nothing (qwen2.5-coder-1.5b sent a program that needed a
        // module the sandbox lacks again, word for word, and then answered a
        // count it made up; agent-tasks-fresh, compute-weekdays).
        // A call the turn wrote out for this tool is made in its place
        // instead (`told-call-run`): resampled, the 1.5B wrote a search with
        // no query where it had been given the lookup to make.
        let told_for_it = p.told.as_ref().is_some_and(|(t, _)| t == tool);
        let failed_copy = p.seen.contains(&key)
            && p.failed_keys.contains(&key)
            && !told_for_it
            && p.report.calls == p.copies.calls_before_reply;
        let told_of = (p.seen.contains(&key)
            && p.copies.warned_before_reply
            && !told_for_it
            && p.report.calls == p.copies.calls_before_reply)
            || unrun_copy
            || failed_copy;
        if told_of && p.resample_copy(self.options.copy_resamples) {
            p.correct(
                "copy-resampled",
                json!({"of": "call", "tool": tool}),
                self.trace,
                on,
            );
            return Ok(None);
        }
        if let Some(example) =
            crate::prompt::example_call_copied(self.registry, tool, params, &p.report.info.task)
        {
            p.correct(
                "example-call-not-run",
                json!({"tool": tool, "example": example}),
                self.trace,
                on,
            );
            p.unsay = true;
            p.sent_back_unrun.insert(key);
            if std::mem::replace(&mut p.example_copied, true) {
                p.force = Some(format!(
                    "the {tool} call of the instructions' example was made again"
                ));
                return Ok(None);
            }
            let said = format!(
                "That {tool} call is the example in your instructions (for \"{example}\"), not \
                 a step of the operator's task, so it was not run."
            );
            return Ok(Some(self.after_unrun_copy(
                p,
                said,
                "Call what the task needs, with its own paths and values, or answer.",
                on,
            )));
        }
        if let Some((example, line)) =
            crate::prompt::example_line_copied(self.registry, tool, params, &p.report.info.task)
        {
            // As a whole copy above, but for one line: what the call computes
            // is the example's, not the task's.
            p.correct(
                "example-line-not-run",
                json!({"tool": tool, "example": example, "line": line}),
                self.trace,
                on,
            );
            p.unsay = true;
            p.sent_back_unrun.insert(key);
            let said = format!(
                "Your {tool} code has the line {line}, from the example in your instructions \
                 (for \"{example}\"), not from the operator's task, so it was not run."
            );
            return Ok(Some(self.after_unrun_copy(
                p,
                said,
                "Write the code again with the task's own values, or answer.",
                on,
            )));
        }
        if tool == BUILDER && params.get("old").and_then(Value::as_str) == Some(OLD_WORDS) {
            // Shown a builder call to write with `old` standing for the
            // lines to change, qwen2.5-coder-1.5b sent it back word for word,
            // refused as not found, and then again, until it was made to
            // answer.
            let path = params
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("the file");
            p.correct(
                "shown-words-not-run",
                json!({"tool": tool, "path": path}),
                self.trace,
                on,
            );
            p.sent_back_unrun.insert(key);
            let said = format!(
                "Your {tool} call's old is \"{OLD_WORDS}\", the words that stood for the lines \
                 to change in the call you were shown, not lines of {path}, so it was not run."
            );
            let next = format!(
                "Copy into old the line or lines of {path} that the task is about, exactly as \
                 its text has them, and write into new those lines as they should be."
            );
            return Ok(Some(self.after_unrun_copy(p, said, &next, on)));
        }
        if tool == READER
            && let Some(path) = params.get("path").and_then(Value::as_str)
        {
            p.looked_at.insert(plain_name(path).to_owned());
        }
        if self.speaks_through_code(p, tool, params) {
            // Code that only prints words the model wrote is the model talking:
            // qwen2.5-coder-1.5b "said" a refusal with print('The path is
            // protected…'), then, told to answer, gave that line as its answer
            // to a task whose other half it had read the answer to.
            if unrun_copy {
                // Sent back, resampled where it could be, and written again:
                // the model means to say it. The calls end as a repeat's do
                // (`repeat-stopped`), and the words go in the answer.
                return Ok(self.repeat_stopped(
                    p,
                    tool,
                    format!(
                        "Your {tool} code only prints words you wrote, again, so it was not run."
                    ),
                    format!("{tool} code that only prints was sent again"),
                    on,
                ));
            }
            p.sent_back_unrun.insert(key);
            p.correct(
                "print-only-code-not-run",
                json!({"tool": tool}),
                self.trace,
                on,
            );
            return Ok(Some(format!(
                "Your {tool} code only prints words you wrote, so it was not run: words for \
                 the operator go in your final answer, beside the answer to the rest of the \
                 task."
            )));
        }
        if self.code_before_the_code(p, tool, params) {
            // Asked to fix a paging bug on a branch, qwen2.5-coder-1.5b's
            // first move was Python that fetched pages from a made-up web
            // API, then the same again; it never looked at the repository.
            p.sent_to_the_code = true;
            p.sent_back_unrun.insert(key);
            p.correct(
                "change-task-code-not-run",
                json!({"tool": tool}),
                self.trace,
                on,
            );
            return Ok(Some(format!(
                "The task is a change to this repository's code, on a branch. {tool} runs \
                 apart from the repository and from the network, so your code was not run. \
                 {}",
                how_to_change(&p.report.info.task)
            )));
        }
        if let Some((path, text)) = self.code_over_read_text(p, tool, params) {
            // Shown a rota whole, qwen2.5-coder-1.5b wrote a regular
            // expression to find a week in it, and looped inside it for
            // a thousand tokens; asked to quote a runbook it had read, it
            // wrote Python that printed the lines and never closed a string.
            // The answer was in the text it had been shown.
            p.sent_back_to_text = true;
            p.sent_back_unrun.insert(key);
            p.correct(
                "code-over-read-text",
                json!({"tool": tool, "path": path}),
                self.trace,
                on,
            );
            return Ok(Some(format!(
                "Your {tool} code looks through {path}, which you have read whole, so it was \
                 not run: {tool} is for calculating, not for finding things in a text. \
                 {}Answer the operator's task from it (mind every part of the file the task \
                 points to). The task was: {}",
                answer::here_again(self, &path, &text),
                p.report.info.task.trim()
            )));
        }
        if let Some((path, known)) = self.note_read_as_table(p, tool, params) {
            // Asked whether a month's distance target was met, the target in
            // a markdown note and the runs in a CSV, qwen2.5-coder-1.5b wrote
            // pd.read_csv('notes/training-plan.md'), then the same with
            // csv.DictReader, four steps running, and answered with the
            // target itself. The figure was in the note, read.
            p.sent_back_unrun.insert(key);
            p.correct(
                "note-read-as-table",
                json!({"tool": tool, "path": path}),
                self.trace,
                on,
            );
            let not_run = format!(
                "Your {tool} code reads {path} as a table of delimited rows, but {path} is a \
                 note, not a data file, so the code was not run"
            );
            let note = match known {
                Some(text) => answer::here_again(self, &path, &text),
                None => {
                    p.looked_at.insert(path.clone());
                    let read = Map::from_iter([("path".to_owned(), json!(path))]);
                    let (shown, _) = self.run_call(p, step, READER, &read, on).await?;
                    if p.last_failed {
                        return Ok(Some(format!(
                            "{not_run}; and {path} could not be read:\n\n{shown}"
                        )));
                    }
                    format!("{shown}\n\n")
                }
            };
            let figures = figures_from_note(&p.report.info.task, &path, &p.file_texts);
            return Ok(Some(format!("{not_run}.\n\n{note}{figures}")));
        }
        if let Some(path) = self.unread_file_of_code(p, tool, params) {
            // The code opens a file the turn has not seen: show its first
            // lines, and let the model write the call again (it is not
            // counted as a call made, so the same code runs next time).
            p.looked_at.insert(path.clone());
            p.correct(
                "code-file-shown-first",
                json!({"tool": tool, "path": path}),
                self.trace,
                on,
            );
            let read = Map::from_iter([
                ("path".to_owned(), json!(path)),
                ("limit".to_owned(), json!(FILE_FIRST_LINES)),
            ]);
            let (shown, _) = self.run_call(p, step, READER, &read, on).await?;
            // A file that fits in the lines shown is all there: asked to
            // quote two steps of an 11-line runbook, the model was shown it
            // whole, told to write its code again, and answered with the code.
            let whole = p
                .last_output
                .as_ref()
                .is_some_and(|v| v.get("next_offset").is_some_and(Value::is_null));
            if p.last_failed {
                // The file could not be read: the code would fail on it the
                // same way (asked to fix a bug, qwen2.5-coder-1.5b opened
                // a data file the README named, that was not there, and was
                // told "above are the file's first lines").
                let missing = p.last_refused == Some(RefusalCode::NotFound);
                let next = if missing {
                    files_it_can_open(p, &path, &[])
                } else {
                    " Do without that file.".to_owned()
                };
                return Ok(Some(format!(
                    "{shown}\n\nYour {tool} code opens {path}, which could not be read (above), \
                     so it has not run: {tool} cannot open it either.{next}"
                )));
            }
            return Ok(Some(if whole {
                format!(
                    "{shown}\n\nYour {tool} code opens {path}; it has not run. Above is the \
                     whole file: if it answers the task, answer from it; if the task needs \
                     the code, write the {tool} call again so that it fits the file."
                )
            } else {
                format!(
                    "{shown}\n\nYour {tool} code opens {path}; it has not run. Above are the \
                     file's first lines: write the {tool} call again so that it fits them (the \
                     names of the columns or fields, how the values are written)."
                )
            }));
        }
        if let Some(cut) = &cut {
            // Never run: the string broke off where seam cut the loop, not
            // where the model meant it to end. Run, qwen2.5-coder-1.5b's
            // regular expression cut inside `\b\b\b…` failed with an
            // unterminated string, and the model was told to mend a line it
            // had not written. Its greedy copy of the same loop, cut at
            // another length, is the same call (see `loop_cut`), so it is
            // resampled (`copy-resampled`).
            p.sent_back_unrun.insert(key);
            p.correct(
                "looped-call-not-run",
                json!({"tool": tool, "param": cut.param}),
                self.trace,
                on,
            );
            return Ok(Some(format!(
                "Your reply began to write {} over and over, so it was cut there and this {tool} \
                 call was not run: its {} breaks off where the repeats began. Write the call \
                 again without the repeats, or answer if what you have tells you the answer.",
                serde_json::to_string(&cut.run).unwrap_or_default(),
                cut.param
            )));
        }
        let walking = self.enum_walk(p.last_call.as_ref(), tool, params);
        p.last_call = Some((tool.to_owned(), params.clone()));
        p.walked = if walking { p.walked + 1 } else { 0 };
        if p.walked >= ENUM_WALK_STOP {
            // A model that takes the next value of a list each step is
            // reciting the schema, not working out the task (qwen2.5-coder-1.5b
            // asked facts.get for every fact in order until its steps ran out).
            p.correct("enum-walk-stopped", json!({"tool": tool}), self.trace, on);
            p.force = Some(format!(
                "{tool} was called with one value after another of its list"
            ));
            return Ok(None);
        }
        let refused = p.refused_keys.contains(&key);
        if p.seen.contains(&key)
            && let Some(told) = self.told_in_place(p, tool)
        {
            // A repeat of a call the turn had answered with the call to make
            // instead, written out whole: that call is made. Told to look
            // parse_duration up by its name after an outline of a file that
            // does not exist, qwen2.5-coder-1.5b asked for the same outline
            // again, word for word, then named the missing file as the
            // answer (agent-tasks-fresh, nav-define-parse-duration). The
            // reply names the tool; only its params are the ones it was told.
            let (told_tool, told_params) = told;
            p.correct(
                "told-call-run",
                json!({"tool": told_tool, "params": told_params}),
                self.trace,
                on,
            );
            let (shown, after) = self.run_call(p, step, &told_tool, &told_params, on).await?;
            let shown = format!(
                "You already called {tool} with these params; the call you were told to make, \
                 {}, was made in its place:\n{shown}",
                action_text(&told_tool, Value::Object(told_params.clone()))
            );
            return Ok(Some(match after {
                Some(line) => format!("{shown}\n\n{line}"),
                None => shown,
            }));
        }
        if !p.seen.insert(key) {
            let repeat = if refused {
                format!(
                    "You already called {tool} with these params; it was refused, and stays \
                     refused however it is asked."
                )
            } else {
                format!(
                    "You already called {tool} with these params; its result is above and will \
                     not change."
                )
            };
            // Stopped only once the model has read a warning: a reply that
            // repeats two calls is warned of both. Given a plan of an `ls`
            // in Python and a builder edit of a made-up file a second time,
            // qwen2.5-coder-1.5b was warned of the first and told to answer
            // at the second, before it could read the warning or have the
            // copy asked for again (`copy-resampled`).
            if p.copies.warned_before_reply {
                return Ok(self.repeat_stopped(
                    p,
                    tool,
                    repeat,
                    format!("{tool} was called again with the same params"),
                    on,
                ));
            }
            p.warned = true;
            p.correct("repeat-warned", json!({"tool": tool}), self.trace, on);
            // A repeat of a call refused for good: the rest of the task, apart
            // from what stays refused (see `rest_of_task`).
            let repeat = match refused.then(|| self.rest_of_task(p, on)).flatten() {
                Some(rest) => format!("{repeat} {rest}"),
                None => repeat,
            };
            if let Some(hint) = self.unread(p, on) {
                return Ok(Some(format!("{repeat} {hint}")));
            }
            return Ok(Some(format!(
                "{repeat} Use it, call something else, or give your final answer."
            )));
        }
        let (shown, after) = self.run_call(p, step, tool, params, on).await?;
        if let Some(named) = p.read_instead.take() {
            // The file the model asked for is not there, and the task names
            // one file of its name: that is the file it meant. Asked for the
            // lodging in notes/trip-porto.md, qwen2.5-coder-0.5b read
            // porto/trip-porto.md, was refused and sent to the task's file,
            // and read porto/trip-porto.md again until the turn stopped.
            p.looked_at.insert(named.clone());
            p.read_from_task.insert(named.clone());
            p.correct(
                "path-from-task",
                json!({"asked": params.get("path"), "read": named}),
                self.trace,
                on,
            );
            let read = Map::from_iter([("path".to_owned(), json!(named))]);
            let (again, after) = self.run_call(p, step, READER, &read, on).await?;
            let again =
                format!("{shown}\n\nThe task names {named}, read here in its place:\n{again}");
            return Ok(Some(match after {
                Some(line) => format!("{again}\n\n{line}"),
                None => again,
            }));
        }
        Ok(Some(match after {
            Some(line) => format!("{shown}\n\n{line}"),
            None => shown,
        }))
    }

    /// After a program that failed importing the operator's own project to
    /// look a name up in it (see [`crate::observe::project_imported`]): the
    /// code index's call for it, written out (`project-import-told`), in
    /// place of "write it without the module". Asked which functions of the
    /// tally package call format_amount, qwen2.5-coder-1.5b wrote
    /// `import tally` and walked the module's names; told the module was
    /// not installed, it wrote a program that imported the standard library
    /// and did nothing (agent-tasks-fresh, a suite it was not tuned on).
    fn project_imported(
        &mut self,
        p: &mut Progress,
        v: &Value,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Option<String> {
        let stderr = v.get("stderr").and_then(Value::as_str)?;
        let (module, name) = crate::observe::project_imported(stderr, &p.report.info.task)?;
        let name = name.to_owned();
        self.registry.get(CODE_INDEX)?;
        let uses = crate::observe::uses_asked_in(&p.report.info.task).is_some();
        let (op, key) = if uses {
            ("search", "query")
        } else {
            ("find_symbol", "name")
        };
        let params = Map::from_iter([("op".to_owned(), json!(op)), (key.to_owned(), json!(name))]);
        let call = action_text(CODE_INDEX, Value::Object(params.clone()));
        p.correct(
            "project-import-told",
            json!({"module": module, "name": name, "op": op}),
            self.trace,
            on,
        );
        p.told = Some((CODE_INDEX.to_owned(), params));
        let what = if uses {
            format!("where {name} is used")
        } else {
            format!("which file defines {name}")
        };
        Some(format!(
            "{module} is the operator's own code, which python.run is never given: its code is \
             in the code index ({CODE_INDEX}). To find {what}, ask the index: {call}"
        ))
    }

    /// The call the turn wrote out for the model ([`Progress::told`]), taken,
    /// when it is a call of `tool` that has not run: what a repeat of an
    /// earlier `tool` call runs in its place.
    fn told_in_place(&self, p: &mut Progress, tool: &str) -> Option<(String, Map<String, Value>)> {
        let (told_tool, told_params) = p.told.as_ref()?;
        if told_tool != tool || p.seen.contains(&call_key(told_tool, told_params)) {
            return None;
        }
        let told = p.told.take()?;
        p.seen.insert(call_key(&told.0, &told.1));
        Some(told)
    }

    /// The task with what names a path refused for good in this turn cut
    /// out (see [`crate::observe::task_without`]), as the line that says
    /// it (`task-rest-told`); `None` when nothing of the task is cut or
    /// nothing is left.
    fn rest_of_task(
        &mut self,
        p: &mut Progress,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Option<String> {
        let rest = crate::observe::task_without(&p.report.info.task, &p.refused_paths)?;
        p.correct(
            "task-rest-told",
            json!({"refused": p.refused_paths}),
            self.trace,
            on,
        );
        Some(format!("The rest of the task: {rest}"))
    }

    /// What follows `said` for a call not run because it copied the prompt's
    /// example (`example-call-not-run`, `example-line-not-run`): the file
    /// the task names that the turn has not read ([`Turn::unread`]), else
    /// `next` and the task or its rest ([`Turn::task_or_its_rest`]).
    fn after_unrun_copy(
        &mut self,
        p: &mut Progress,
        said: String,
        next: &str,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> String {
        match self.unread(p, on) {
            Some(hint) => format!("{said} {hint}"),
            None => format!("{said} {next} {}", self.task_or_its_rest(p, on)),
        }
    }

    /// The task said again after a call that was not run: its rest, when a
    /// call of the turn was refused for good and the task names what it
    /// asked for ([`Turn::rest_of_task`]); the whole task otherwise. Told
    /// the whole task again after its code was not run, qwen2.5-coder-0.5b
    /// asked for the refused key again, and answered `7**23` unrun.
    fn task_or_its_rest(
        &mut self,
        p: &mut Progress,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> String {
        self.rest_of_task(p, on)
            .unwrap_or_else(|| format!("The operator's task was: {}", p.report.info.task.trim()))
    }

    /// How a repeat the model was told of ends the calls (`repeat-stopped`):
    /// `said`, and the file the task names that the turn has not read when
    /// there is one ([`Turn::unread`]); otherwise the turn asks for its final
    /// answer, for `reason`, and the model is told nothing here.
    fn repeat_stopped(
        &mut self,
        p: &mut Progress,
        tool: &str,
        said: String,
        reason: String,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Option<String> {
        p.correct("repeat-stopped", json!({"tool": tool}), self.trace, on);
        if let Some(hint) = self.unread(p, on) {
            return Some(format!("{said} {hint}"));
        }
        // A task that asks for a change is not done by an answer: the model
        // is told its next step once a stage (`change-not-made`, the same
        // record as an answer sent back for it), and its next reply must be
        // a call, which one its own. Repeating a plan of an `ls` in Python
        // and a builder edit of a made-up file, qwen2.5-coder-1.5b was
        // stopped and answered with the repository's files, at step 6 of 12.
        if !p.forced {
            if p.call_next {
                // A call of this same reply was told its next step: a later
                // repeat in the reply does not take that back by forcing an
                // answer (a plan that repeated an `ls` and a builder edit was
                // told to list the files at the first, and forced to answer
                // at the second).
                return Some(said);
            }
            let next = answer::unmade_change(self, p, &p.found_by(CHANGE_NOT_MADE), true);
            if let Some((detail, next)) = next {
                p.record_sent_back(CHANGE_NOT_MADE, detail, self.trace, on);
                p.call_next = true;
                return Some(format!("{said} {next}"));
            }
        }
        p.force = Some(reason);
        None
    }

    /// The line that sends the model to a file the task names (see
    /// [`crate::observe::files_named`]) that the turn has not read or tried
    /// to read, at most [`MAX_BOUNCES`] times a turn and never once it was told to answer:
    /// asked for a key and a line of another file, the model was refused the
    /// key and answered, or asked for the key again, without reading the
    /// other. Said in place of accepting an answer and of stopping a repeat.
    /// Files of the workspace are named before files under `~` or `/`,
    /// where the owner's protected files are, and a hidden file never. With
    /// every such file read, the tool the task names (see `tool_uncalled`).
    fn unread(
        &mut self,
        p: &mut Progress,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Option<String> {
        if p.forced || p.bounced >= MAX_BOUNCES || self.registry.get(READER).is_none() {
            return None;
        }
        let Some(name) = first_unread(p) else {
            return self.tool_uncalled(p, on);
        };
        p.bounced += 1;
        p.correct("task-file-unread", json!({"path": name}), self.trace, on);
        // Named once: the turn is not sent to the same file twice.
        p.looked_at.insert(name.clone());
        p.told = Some(read_call(&name));
        Some(read_it(&name))
    }

    /// The line after a result from elsewhere than the owner's files (the
    /// operator's notes, a fact, the code index) while a file the task names
    /// is unread, in place of "if this tells you the answer, respond with
    /// it": such a result holds part of the answer at most. Once a turn,
    /// and apart from [`Turn::unread`]'s bounces: an answer that leaves the
    /// file unread is still sent to it. Told "respond" after the operator's
    /// notes, which gave a starting mileage, qwen2.5-coder-1.5b asked
    /// facts.get for the machine's memory, then its uptime, and never read
    /// the runs the task named (dev suite, multi-shoe-mileage).
    fn unread_after_result(
        &mut self,
        p: &mut Progress,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Option<String> {
        if p.forced || p.pointed_unread || self.registry.get(READER).is_none() {
            return None;
        }
        let name = first_unread(p)?;
        p.pointed_unread = true;
        p.correct("task-file-pointed", json!({"path": name}), self.trace, on);
        p.told = Some(read_call(&name));
        Some(read_it(&name))
    }

    /// The line that sends the model to a tool the task names by its own name
    /// (`python.run`) and the turn has not called (`task-tool-uncalled`), once
    /// a tool. Told to print a key and `7**23` with python.run,
    /// qwen2.5-coder-0.5b asked files.read for the key three times, was
    /// refused each time, and answered `7**23` without running anything.
    fn tool_uncalled(
        &mut self,
        p: &mut Progress,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Option<String> {
        let called = p.called();
        // Only a dotted name (`python.run`) is a tool's own name in a task;
        // `builder` or `image` there is as likely a plain word.
        let named = crate::observe::tools_named(
            &p.report.info.task,
            self.registry
                .tools()
                .map(|t| t.spec.name.as_str())
                .filter(|t| t.contains('.')),
        )
        .into_iter()
        .find(|t| !called.contains(t) && !p.told_tools.contains(*t))
        .map(str::to_owned);
        if let Some(tool) = named {
            p.bounced += 1;
            p.correct("task-tool-uncalled", json!({"tool": tool}), self.trace, on);
            let m = format!(
                "The task names {tool}, and this turn has not called it: call {tool} for the \
                 part of the task it is named for, then answer."
            );
            p.told_tools.insert(tool);
            return Some(m);
        }
        // A task that speaks of what the operator told seam (`told-notes-uncalled`):
        // the operator's notes, listed, newest first.
        if !crate::observe::speaks_of_telling_seam(&p.report.info.task)
            || called.contains(&OPERATOR_NOTES)
            || p.told_tools.contains(OPERATOR_NOTES)
            || self.registry.get(OPERATOR_NOTES).is_none()
        {
            return None;
        }
        p.bounced += 1;
        p.correct(
            "told-notes-uncalled",
            json!({"tool": OPERATOR_NOTES}),
            self.trace,
            on,
        );
        p.told_tools.insert(OPERATOR_NOTES.to_owned());
        let params = Map::from_iter([("op".to_owned(), json!("list"))]);
        let call = action_text(OPERATOR_NOTES, Value::Object(params.clone()));
        p.told = Some((OPERATOR_NOTES.to_owned(), params));
        Some(format!(
            "The task speaks of what the operator told you, and this turn has not looked at \
             it: what the operator told you to remember is kept by {OPERATOR_NOTES}. List it, \
             then answer from it. That call is: {call}"
        ))
    }

    /// The final answer, kept whole: when it speaks only of what was refused
    /// ([`crate::observe::answers_only_the_refusal`]) and an answer sent back
    /// earlier in the turn to read another file did more, that answer comes
    /// first (`sent-back-answer-kept`). Asked for two guarded files and a
    /// name from a rota, qwen2.5-coder-1.5b answered the name, was sent to
    /// the second guarded file the task named, and then answered only that
    /// it was refused: sending an answer back must not cost the operator it.
    fn keep_sent_back(
        &mut self,
        p: &mut Progress,
        text: String,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> String {
        let task = p.report.info.task.clone();
        let only_refusal =
            |t: &str| crate::observe::answers_only_the_refusal(t, &task, &p.file_texts);
        if !only_refusal(&text) {
            return text;
        }
        let Some(earlier) = p
            .sent_back
            .iter()
            .rev()
            .find(|a| !only_refusal(a) && !text.contains(a.trim()))
            .cloned()
        else {
            return text;
        };
        p.correct("sent-back-answer-kept", Value::Null, self.trace, on);
        format!("{}\n{}", earlier.trim(), text.trim())
    }

    /// Does this call of `tool` differ from the last call only in one enum
    /// param, set to the value that follows the last call's in the schema's
    /// list?
    fn enum_walk(
        &self,
        last: Option<&(String, Map<String, Value>)>,
        tool: &str,
        params: &Map<String, Value>,
    ) -> bool {
        let Some((last_tool, last_params)) = last else {
            return false;
        };
        if last_tool != tool || last_params.len() != params.len() {
            return false;
        }
        let mut changed = params
            .iter()
            .filter(|(k, v)| last_params.get(*k) != Some(*v));
        let (Some((key, value)), None) = (changed.next(), changed.next()) else {
            return false;
        };
        let Some(list) = self
            .registry
            .get(tool)
            .and_then(|t| {
                t.spec
                    .input_schema
                    .pointer(&format!("/properties/{key}/enum"))
            })
            .and_then(Value::as_array)
        else {
            return false;
        };
        let at = |v: Option<&Value>| v.and_then(|v| list.iter().position(|e| e == v));
        matches!((at(last_params.get(key)), at(Some(value))), (Some(a), Some(b)) if b == a + 1)
    }

    /// The steps of a reply that call a code tool with code of the same shape
    /// ([`seam_pylex::shape`]) as an earlier step: one program run for one
    /// name after another (qwen2.5-coder-1.5b, having read a rota whole, sent
    /// four copies of a grep, one per person, and then the four again).
    fn plan_walk(&self, steps: &[Step]) -> HashSet<usize> {
        let mut seen: HashSet<(String, Vec<String>)> = HashSet::new();
        let mut walk = HashSet::new();
        for (i, s) in steps.iter().enumerate() {
            let Step::Call { tool, params, .. } = s else {
                continue;
            };
            let shapes: Vec<String> = self
                .code_of(tool, params)
                .into_iter()
                .map(seam_pylex::shape)
                .collect();
            if !shapes.is_empty() && !seen.insert((tool.clone(), shapes)) {
                walk.insert(i);
            }
        }
        walk
    }

    /// The code params of `tool` (its string params whose `contentMediaType`
    /// is Python), as `params` gives them.
    fn code_of<'p>(&self, tool: &str, params: &'p Map<String, Value>) -> Vec<&'p str> {
        self.code_places(tool)
            .into_iter()
            .filter_map(|name| params.get(&name).and_then(Value::as_str))
            .collect()
    }

    /// The first tool that runs Python code (a param of `text/x-python`).
    fn python_tool(&self) -> Option<&str> {
        self.registry
            .tools()
            .map(|t| t.spec.name.as_str())
            .find(|t| !self.code_places(t).is_empty())
    }

    /// The params of `tool` that hold Python code (`contentMediaType: text/x-python`).
    fn code_places(&self, tool: &str) -> Vec<String> {
        let Some(props) = self
            .registry
            .get(tool)
            .and_then(|t| t.spec.input_schema.get("properties"))
            .and_then(Value::as_object)
        else {
            return Vec::new();
        };
        props
            .iter()
            .filter(|(_, s)| {
                s.get("contentMediaType")
                    .and_then(Value::as_str)
                    .is_some_and(|m| m.eq_ignore_ascii_case("text/x-python"))
            })
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// `params` with each piece of its code that `repair` mends replaced by the mended code,
    /// or `None` when `repair` mends none.
    fn code_repaired(
        &self,
        tool: &str,
        params: &Map<String, Value>,
        repair: CodeRepair,
    ) -> Option<Map<String, Value>> {
        let mut out = None;
        for name in self.code_places(tool) {
            let Some(code) = params.get(&name).and_then(Value::as_str) else {
                continue;
            };
            if let Some(mended) = repair(code) {
                out.get_or_insert_with(|| params.clone())
                    .insert(name, Value::String(mended));
            }
        }
        out
    }

    /// `params` with each code param cut where the model closed the JSON
    /// string one brace early and wrote on (`print(total)}"}` and more,
    /// which the reader kept as code: see [`seam_pylex::json_tail_at`]), and
    /// the names of the params dropped with it. When what was cut begins
    /// another action (`{"mode":…`), the params the reader found after the
    /// code are that action's, not this call's, and only the code is kept:
    /// qwen2.5-coder-1.5b wrote a second action with `scratch_files` holding
    /// a `data/runs.csv` of "...", which, kept, hid the owner's file from its
    /// program, and its sum of the runs printed 0 (dev suite,
    /// multi-shoe-mileage).
    fn json_tail_cut(
        &self,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Option<(Map<String, Value>, Vec<String>)> {
        let places = self.code_places(tool);
        let mut out: Option<Map<String, Value>> = None;
        let mut another = false;
        for name in &places {
            let Some(code) = params.get(name).and_then(Value::as_str) else {
                continue;
            };
            if let Some(end) = seam_pylex::json_tail_at(code) {
                another |= ["\"mode\"", "\"tool\"", "\"actor\""]
                    .iter()
                    .any(|k| code[end..].contains(k));
                out.get_or_insert_with(|| params.clone())
                    .insert(name.clone(), Value::String(code[..end].to_owned()));
            }
        }
        let mut cut = out?;
        let mut dropped = Vec::new();
        if another {
            cut.retain(|k, _| {
                let keep = places.contains(k);
                if !keep {
                    dropped.push(k.clone());
                }
                keep
            });
        }
        Some((cut, dropped))
    }

    /// True, once a turn, when this call runs code for a task that asks for
    /// a change on a branch (and not for Python), before the builder changed
    /// anything and before any file was read or the code index asked.
    fn code_before_the_code(&self, p: &Progress, tool: &str, params: &Map<String, Value>) -> bool {
        !p.sent_to_the_code
            && !p.changed
            && !self.code_of(tool, params).is_empty()
            && self.registry.get(BUILDER).is_some()
            && asks_for_a_branch(&p.report.info.task)
            && !p.report.info.task.to_lowercase().contains("python")
            && !p.called().iter().any(|&t| t == READER || t == CODE_INDEX)
    }

    /// True when the code of this call of `tool` only prints literals
    /// ([`seam_pylex::printed_words`]) and the task does not speak of
    /// Python: an operator who asks for Python to print a line gets it run.
    fn speaks_through_code(&self, p: &Progress, tool: &str, params: &Map<String, Value>) -> bool {
        let code = self.code_of(tool, params);
        !code.is_empty()
            && !p.report.info.task.to_lowercase().contains("python")
            && code.iter().all(|c| seam_pylex::printed_words(c).is_some())
    }

    /// The file, and its text, when this call's code opens only files of
    /// prose (notes, READMEs: `.md`, `.txt`, `.rst`…) that the turn has been
    /// shown whole, in a task that does not ask for Python, and this has not
    /// been said before in the turn. Such code looks something up that the
    /// model has in front of it; a data file (a CSV, JSON) is for code, and
    /// a task that says "Python" gets what it asks for.
    fn code_over_read_text(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Option<(String, String)> {
        if p.sent_back_to_text || p.report.info.task.to_lowercase().contains("python") {
            return None;
        }
        let names: Vec<String> = self
            .code_of(tool, params)
            .into_iter()
            .flat_map(seam_pylex::file_names)
            .collect();
        let mut first = None;
        for name in &names {
            let name = plain_name(name);
            let prose = name
                .rsplit_once('.')
                .is_some_and(|(_, ext)| PROSE.contains(&ext.to_ascii_lowercase().as_str()));
            let shown = p.file_texts.iter().rev().find(|(path, _)| {
                let path = plain_name(path);
                p.whole.contains(path) && (path == name || path.ends_with(&format!("/{name}")))
            })?;
            if !prose {
                return None;
            }
            first.get_or_insert_with(|| shown.clone());
        }
        first
    }

    /// A literal the code of this call compares with `==` that no value of
    /// the files the turn was shown equals, while a value there starts with
    /// it, or with its form (digits as digits, letters as letters) when it
    /// holds a digit: `row['date'] == '2027-04'` over dates written `2027-04-02` (a
    /// month filter that matched no row; the model then sent the same code
    /// again and made a number up). The literal, the file and that value.
    /// A program that failed on `KeyError: 'K'` while its code names a
    /// delimited file the turn was shown, whose header has no column K:
    /// the key, the file and its columns. Small models guess a column's
    /// name (`distance` for `distance_km`), or look in a log of runs for a
    /// value that is in a note.
    fn missing_column(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
        v: &Value,
    ) -> Option<(String, String, Option<Vec<String>>)> {
        let stderr = failed_stderr(v)?;
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty())?;
        let key = last
            .trim()
            .strip_prefix("KeyError: ")?
            .trim()
            .strip_prefix(['\'', '"'])?;
        let key = key.strip_suffix(['\'', '"'])?;
        if key.is_empty() {
            return None;
        }
        let code = self.code_of(tool, params).join("\n");
        // The files behind the line that failed, when the traceback says
        // which: code that opens a note and a table fails on the one it
        // looked the key up in.
        let behind = crate::observe::failing_line(stderr)
            .map(|n| seam_pylex::files_behind_line(&code, n))
            .filter(|f| !f.is_empty());
        let named = |path: &str| match &behind {
            Some(files) => files.iter().any(|f| same_file(plain_name(f), path)),
            None => code.contains(path),
        };
        p.file_texts.iter().find_map(|(path, text)| {
            if !named(path) {
                return None;
            }
            let prose = path
                .rsplit_once('.')
                .is_some_and(|(_, ext)| PROSE.contains(&ext.to_ascii_lowercase().as_str()));
            if prose && !crate::observe::has_delimited_header(text) {
                // A note looked up by a key: only when the traceback says so.
                return behind
                    .is_some()
                    .then(|| (key.to_owned(), path.clone(), None));
            }
            let columns = crate::observe::header_columns(text)?;
            (!columns.iter().any(|c| c == key))
                .then(|| (key.to_owned(), path.clone(), Some(columns)))
        })
    }

    /// A program that failed converting to a number a text that is a
    /// column's name in the header of a delimited file its code names and
    /// the turn read (see [`crate::observe::not_a_number`]): the name and
    /// the file. Over a CSV file with a header, qwen2.5-coder-1.5b wrote
    /// `csv.reader` and `float(row[1])`, failed on the header's
    /// `distance_km`, was told only that the program failed, and sent the
    /// same code again (dev suite, multi-shoe-mileage).
    fn header_read_as_data(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
        v: &Value,
    ) -> Option<(String, String)> {
        let text = crate::observe::not_a_number(failed_stderr(v)?)?;
        let code = self.code_of(tool, params).join("\n");
        p.file_texts.iter().find_map(|(path, file)| {
            let columns = crate::observe::header_columns(file)?;
            (code.contains(path.as_str()) && columns.iter().any(|c| c == text))
                .then(|| (text.to_owned(), path.clone()))
        })
    }

    /// A program that failed because a file its code opens is not there
    /// (`FileNotFoundError`, see [`crate::observe::missing_file`]): the line
    /// that says so, naming the files it can open (those shown to it, read
    /// by the turn, or named by the task, never a hidden one), and that the
    /// operator's notes are no file when the turn has read them. Asked for a
    /// shoe's mileage from a starting figure in the operator's notes and the
    /// runs in a CSV file, qwen2.5-coder-1.5b had read both, then wrote code
    /// that opened a `notes.md` it made up for the notes' figures, was told
    /// only "if this tells you the answer, respond with it", and ran the same
    /// code again (dev suite, multi-shoe-mileage). A name that is a known
    /// file's path cut short (`runs.csv` for `data/runs.csv`) is not told of
    /// the notes.
    fn code_file_missing(&self, p: &Progress, v: &Value) -> Option<(String, String)> {
        // A file the gate would not show is `withheld-file-told`'s.
        if crate::observe::withheld(v) {
            return None;
        }
        let name = crate::observe::missing_file(failed_stderr(v)?)?;
        let shown: Vec<String> = v
            .get("owner_files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|f| f.get("name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect();
        let told = format!(
            "Your code opens {name}, and there is no file of that name.{}",
            files_it_can_open(p, name, &shown)
        );
        Some((name.to_owned(), told))
    }

    /// A program that ran and printed, over a data table the turn read, in a
    /// task that names a value only some of its rows hold, where the code
    /// does not name it (see [`crate::observe::rows_the_task_names`]): the
    /// table and the value, once a turn. A hint, not a refusal: the program
    /// ran, and the model decides whether the task is about those rows.
    fn rows_unfiltered(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
        v: &Value,
    ) -> Option<ProgramHint> {
        const NAME: &str = "rows-unfiltered-told";
        let (path, rows) = self.rows_of_table(
            p,
            tool,
            params,
            v,
            NAME,
            crate::observe::rows_the_task_names,
        )?;
        Some(ProgramHint {
            name: NAME,
            detail: json!({"path": path, "value": rows.value, "column": rows.column}),
            told: format!(
                "Your code worked over every row of {path}, and the task names {:?}, which only \
                 {} of its {} rows hold (column {:?}). If the task is about those rows only, \
                 keep the rows whose {} is {:?} and run it again; if not, answer from what it \
                 printed.",
                rows.value, rows.rows, rows.of, rows.column, rows.column, rows.value
            ),
        })
    }

    /// For a hint about the rows of a table (`name`, once a turn), after a
    /// program that ran and printed: the newest file read whose path the code
    /// names, and the rows `find` (task, code, path, text) says the task asks
    /// about and the code does not keep.
    fn rows_of_table(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
        v: &Value,
        name: &str,
        find: fn(&str, &str, &str, &str) -> Option<crate::observe::NamedRows>,
    ) -> Option<(String, crate::observe::NamedRows)> {
        if !ran_and_printed(v) || p.report.corrections.contains_key(name) {
            return None;
        }
        let code = self.code_of(tool, params).join("\n");
        p.file_texts.iter().rev().find_map(|(path, text)| {
            if !code.contains(path.as_str()) {
                return None;
            }
            find(&p.report.info.task, &code, path, text).map(|rows| (path.clone(), rows))
        })
    }

    /// A program that ran and printed, over a data table the turn read, in a
    /// task that names a month only some of its dated rows fall in, where the
    /// code names that month in no way (see
    /// [`crate::observe::month_rows_the_task_names`]): the table and the
    /// month, once a turn, and apart from `rows-unfiltered-told` (told to keep
    /// a category's rows, a program may still add up every month's). A hint,
    /// as that one is.
    fn month_rows_unfiltered(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
        v: &Value,
    ) -> Option<ProgramHint> {
        const NAME: &str = "month-rows-unfiltered-told";
        let (path, rows) = self.rows_of_table(
            p,
            tool,
            params,
            v,
            NAME,
            crate::observe::month_rows_the_task_names,
        )?;
        Some(ProgramHint {
            name: NAME,
            detail: json!({"path": path, "month": rows.value, "column": rows.column}),
            told: format!(
                "Your code worked over the rows of every month in {path}, and the task asks \
                 about one month: {} of the {} rows you were shown fall outside it (column \
                 {:?}; that month's dates hold {:?}). If the task is about that month only, \
                 keep the rows whose {} holds {:?} and run it again; if not, answer from what \
                 it printed.",
                rows.of - rows.rows,
                rows.of,
                rows.column,
                rows.value,
                rows.column,
                rows.value
            ),
        })
    }

    /// A program of a code tool that printed one number below zero, in a
    /// task that asks "how many" with no word of a signed answer (see
    /// [`crate::observe::below_zero_for_how_many`]): the number, once a
    /// turn. A hint: the model decides whether what it counts can be below
    /// zero.
    fn below_zero(&self, p: &Progress, tool: &str, v: &Value) -> Option<ProgramHint> {
        const NAME: &str = "below-zero-told";
        if self.code_places(tool).is_empty() || p.report.corrections.contains_key(NAME) {
            return None;
        }
        let stdout = v.get("stdout").and_then(Value::as_str)?;
        let printed = crate::observe::below_zero_for_how_many(&p.report.info.task, stdout)?;
        Some(ProgramHint {
            name: NAME,
            detail: json!({"printed": printed}),
            told: format!(
                "It printed {printed}, a number below zero, and the task asks how many. If what \
                 it counts cannot be below zero, look again at what each number in the line \
                 that works it out stands for, mend that line and run it again; if it can, \
                 answer from what it printed."
            ),
        })
    }

    /// A program that ran and printed, whose code sets a name to a number
    /// and never uses it (see [`seam_pylex::figures_set_unused`]): those
    /// names and numbers, once a turn. A hint, not a refusal: the model
    /// decides whether the task needs the number.
    fn figures_set_unused(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
        v: &Value,
    ) -> Option<ProgramHint> {
        const NAME: &str = "figure-set-unused";
        let ran = ran_and_printed(v);
        if !ran || p.report.corrections.contains_key(NAME) {
            return None;
        }
        let unused: Vec<(String, String)> = self
            .code_of(tool, params)
            .into_iter()
            .flat_map(seam_pylex::figures_set_unused)
            .collect();
        if unused.is_empty() {
            return None;
        }
        let names: Vec<&str> = unused.iter().map(|(n, _)| n.as_str()).collect();
        let set: Vec<String> = unused
            .iter()
            .map(|(name, number)| format!("{name} to {number}"))
            .collect();
        let numbers: Vec<&str> = unused.iter().map(|(_, n)| n.as_str()).collect();
        let (set, numbers) = (set.join(" and "), numbers.join(" and "));
        let it = if unused.len() == 1 { "it" } else { "them" };
        Some(ProgramHint {
            name: NAME,
            detail: json!({"names": names}),
            told: format!(
                "Your code sets {set} and never uses {it} after, so what it printed leaves \
                 {numbers} out. If the task needs {it}, work {it} into what the code prints and \
                 run it again; if not, answer from what it printed."
            ),
        })
    }

    fn exact_match_missed(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Option<(String, String, String, bool)> {
        let literals: Vec<String> = self
            .code_of(tool, params)
            .into_iter()
            .flat_map(seam_pylex::compared_literals)
            .filter(|l| !l.is_empty())
            .collect();
        for literal in literals {
            let mut example = None;
            for (path, text) in &p.file_texts {
                let mut values = text
                    .split([',', '\t', '|', ';', '\n'])
                    .map(|v| v.trim().trim_matches(['"', '\'']));
                if values.clone().any(|v| v == literal) {
                    example = None;
                    break;
                }
                // a value that starts with the literal, or, for a literal with a digit (a
                // date, an id), one whose form starts with the literal's form: the first
                // lines shown of a log of runs held March's dates, and the code looked for
                // April's month as '2027-04'
                let form = |t: &str| -> String {
                    t.chars()
                        .map(|c| match c {
                            '0'..='9' => '9',
                            c if c.is_alphabetic() => 'a',
                            c => c,
                        })
                        .collect()
                };
                let lit_form = form(&literal);
                let dated = literal.chars().any(|c| c.is_ascii_digit());
                if example.is_none()
                    && let Some(v) = values.find(|v| {
                        v.len() > literal.len()
                            && (v.starts_with(&literal)
                                || (dated && form(v).starts_with(&lit_form)))
                    })
                {
                    example = Some((path.clone(), v.to_owned()));
                }
            }
            if let Some((path, value)) = example {
                return Some((literal, path, value, true));
            }
            // A literal no value starts with, but whose number the values
            // hold, written another way: 'April 2027' over dates written
            // 2027-04-02 (the code printed 0, and the model made up a total).
            let digits: Vec<&str> = literal
                .split(|c: char| !c.is_ascii_digit())
                .filter(|d| d.len() >= 2)
                .collect();
            if digits.is_empty() {
                continue;
            }
            for (path, text) in &p.file_texts {
                let mut values = text
                    .split([',', '\t', '|', ';', '\n'])
                    .map(|v| v.trim().trim_matches(['"', '\'']));
                if values.clone().any(|v| v == literal) {
                    break;
                }
                if let Some(v) = values.find(|v| digits.iter().all(|d| v.contains(d))) {
                    return Some((literal, path.clone(), v.to_owned(), false));
                }
            }
        }
        None
    }

    /// A note (a file of prose, see [`PROSE`]) that the code of this call hands
    /// a table reader (see [`seam_pylex::files_read_as_tables`]): a `.md`,
    /// `.rst`, `.org` or `.adoc` file, or one of the turn has read whose first
    /// line is no header of delimited values. Code that names `|` as a
    /// delimiter reads a markdown table on purpose, and is let be. Once a
    /// turn: sent back each time, qwen2.5-coder-1.5b wrote the same
    /// `pd.read_csv` of the note nine steps running, and nothing ran; after
    /// once, the code runs and its own failure speaks. With the note, its text
    /// when the turn read it whole.
    fn note_read_as_table(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Option<(String, Option<String>)> {
        self.registry.get(READER)?;
        if p.report.corrections.contains_key("note-read-as-table") {
            return None;
        }
        let code = self.code_of(tool, params).join("\n");
        if code.contains("'|'") || code.contains("\"|\"") {
            return None;
        }
        seam_pylex::files_read_as_tables(&code)
            .into_iter()
            .map(|f| plain_name(&f).to_owned())
            .find_map(|f| {
                let (_, ext) = f.rsplit_once('.')?;
                let ext = ext.to_ascii_lowercase();
                if !PROSE.contains(&ext.as_str()) {
                    return None;
                }
                let read = p
                    .file_texts
                    .iter()
                    .rev()
                    .find(|(path, _)| plain_name(path) == f);
                let note = match read {
                    Some((_, text)) => !crate::observe::has_delimited_header(text),
                    None => matches!(ext.as_str(), "md" | "markdown" | "rst" | "org" | "adoc"),
                };
                let whole = read
                    .filter(|_| p.whole.contains(f.as_str()))
                    .map(|(_, text)| text.clone());
                note.then_some((f, whole))
            })
    }

    /// A file that `params` of `tool`, a tool that runs code, opens by name
    /// (`seam_pylex::file_names`, with an extension, relative or under `~`),
    /// that the turn has not looked at yet and the call does not bring as a
    /// scratch file. Implied by the reply: its code opens the file.
    fn unread_file_of_code(
        &self,
        p: &Progress,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Option<String> {
        self.registry.get(READER)?;
        let scratch: Vec<&str> = params
            .get("scratch_files")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|f| f.get("name").and_then(Value::as_str))
                    .map(plain_name)
                    .collect()
            })
            .unwrap_or_default();
        self.code_of(tool, params)
            .into_iter()
            .flat_map(seam_pylex::file_names)
            .find(|f| {
                let f = plain_name(f);
                seam_pylex::has_extension(f)
                    && !f.starts_with('/')
                    && !p.looked_at.contains(f)
                    && !scratch.contains(&f)
            })
            .map(|f| plain_name(&f).to_owned())
    }

    /// Calls `tool` and returns what the model is shown of its result, and
    /// for a result (not a refusal) the line to follow it.
    async fn run_call(
        &mut self,
        p: &mut Progress,
        step: u32,
        tool: &str,
        params: &Map<String, Value>,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Result<(String, Option<std::borrow::Cow<'static, str>>), TurnError> {
        p.read_instead = None;
        on(TurnEvent::Calling { step, tool, params });
        self.trace.record(
            "call",
            &json!({"step": step, "tool": tool, "params": params}),
        );
        let outcome = self.dispatch.dispatch(tool, params, &p.report.info).await;
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                self.trace.record(
                    "error",
                    &json!({"step": step, "tool": tool, "error": e.to_string()}),
                );
                return Err(e.into());
            }
        };
        p.report.calls += 1;
        match outcome.side {
            Some(Side::Governed) => p.report.gate_time += outcome.elapsed,
            _ => p.report.agent_time += outcome.elapsed,
        }
        p.report.tainted |= outcome.tainted;
        self.trace.record(
            "outcome",
            &json!({
                "step": step,
                "tool": outcome.tool,
                "side": outcome.side.map(|s| format!("{s:?}").to_lowercase()),
                "invocation_id": outcome.invocation_id,
                "result": match &outcome.result {
                    CallResult::Output(v) => json!({"output": v}),
                    CallResult::Refused { code, message } => json!({"refused": {"code": code, "message": message}}),
                },
                "tainted": outcome.tainted,
                "scrubbed": outcome.scrubbed,
                "us": outcome.elapsed.as_micros() as u64,
            }),
        );
        on(TurnEvent::Called {
            step,
            params,
            outcome: &outcome,
        });
        let shown = match (&outcome.result, outcome.side) {
            (CallResult::Output(v), side) => {
                if side == Some(Side::Governed) {
                    p.correct("envelope-unwrapped", Value::Null, self.trace, on);
                }
                let text = crate::observe::render(v);
                format!(
                    "{}\n{}",
                    crate::observe::result_header(tool),
                    self.cut(&self.home_folded(&text))
                )
            }
            (CallResult::Refused { message, .. }, None) => {
                p.correct("unknown-tool-listed", json!({"tool": tool}), self.trace, on);
                format!("{}.", message.trim_end_matches('.'))
            }
            (CallResult::Refused { message, .. }, Some(_)) => {
                p.correct("refusal-as-sentence", Value::Null, self.trace, on);
                format!(
                    "{tool} was refused: {}",
                    refusal_shown(&self.home_folded(message))
                )
            }
        };
        p.shown.push(shown.clone());
        let record = StepRecord {
            tool: tool.to_owned(),
            params: short_params(params),
            outcome: outcome_line(&outcome),
        };
        p.report.info.history.push(record);
        if let (Some(Side::Governed), Some(id)) = (outcome.side, &outcome.invocation_id) {
            p.report.info.gate_calls.push(GateCallRecord {
                invocation_id: id.clone(),
                tool: tool.to_owned(),
                outcome: outcome_line(&outcome),
            });
        }
        p.last_output = match &outcome.result {
            CallResult::Output(v) => Some(v.clone()),
            CallResult::Refused { .. } => None,
        };
        p.last_refused = match &outcome.result {
            CallResult::Output(_) => None,
            CallResult::Refused { code, .. } => Some(*code),
        };
        if let (BUILDER, CallResult::Output(v)) = (tool, &outcome.result) {
            p.changed |= v.get("changed").and_then(Value::as_bool) == Some(true);
        }
        if let (CODE_INDEX, CallResult::Output(v)) = (tool, &outcome.result)
            && let Some(files) = tree_code_files(v)
        {
            p.code_files = like_task_first(&files, &p.report.info.task);
        }
        if let CallResult::Output(v) = &outcome.result {
            let code = self.code_of(tool, params);
            p.printed |= !code.is_empty() && ran_and_printed(v);
            p.code_ran.extend(code.into_iter().map(str::to_owned));
            if tool == OPERATOR_NOTES {
                let notes = v.get("notes").and_then(Value::as_array);
                p.notes_read.extend(
                    notes
                        .into_iter()
                        .flatten()
                        .filter_map(|n| n.get("text").and_then(Value::as_str))
                        .map(str::to_owned),
                );
            }
        }
        if let (READER, CallResult::Output(v)) = (tool, &outcome.result)
            && let (Some(path), Some(text)) = (
                v.get("path").and_then(Value::as_str),
                v.get("text").and_then(Value::as_str),
            )
        {
            p.file_texts.push((path.to_owned(), text.to_owned()));
            if v.get("next_offset").is_some_and(Value::is_null) {
                p.whole.insert(plain_name(path).to_owned());
            }
        }
        let after = match &outcome.result {
            CallResult::Output(v) => {
                let (hint, line) = crate::observe::after(v);
                if let Some(told) = self.project_imported(p, v, on) {
                    return Ok((shown, Some(std::borrow::Cow::Owned(told))));
                }
                if let Some(hint) = hint {
                    p.correct(hint, json!({"tool": tool}), self.trace, on);
                }
                if let Some((detail, told)) = self.pointer_only(p, v) {
                    p.correct("pointed-tool-told", detail, self.trace, on);
                    return Ok((shown, Some(std::borrow::Cow::Owned(told))));
                }
                if tool == CODE_INDEX
                    && let Some(next) = code_index_next(v, &p.report.info.task, &line)
                {
                    p.correct(next.correction, next.detail, self.trace, on);
                    // Found nothing: a plan's later steps, written before
                    // it ran, are not run (it went on to `from shelf import`).
                    p.last_failed |= next.found_nothing;
                    if next.found_nothing {
                        p.failed_keys.insert(call_key(tool, params));
                    }
                    if next.call.is_some() {
                        p.told = next.call;
                    }
                    return Ok((shown, Some(std::borrow::Cow::Owned(next.line))));
                }
                if line == crate::observe::AFTER_RESULT
                    && tool != READER
                    && self.code_places(tool).is_empty()
                    && let Some(told) = self.unread_after_result(p, on)
                {
                    return Ok((shown, Some(std::borrow::Cow::Owned(told))));
                }
                let printed_nothing = line == crate::observe::AFTER_NOTHING_PRINTED;
                if let Some((key, path, columns)) = self.missing_column(p, tool, params, v) {
                    p.correct(
                        "missing-column-told",
                        json!({"key": key, "path": path, "note": columns.is_none()}),
                        self.trace,
                        on,
                    );
                    let told = match columns {
                        Some(columns) => format!(
                            "{key:?} is no column of {path}: its columns are {}. Use those \
                             names; a value that is in none of them is not in {path}, so look \
                             for it where the task says it is.",
                            columns.join(", ")
                        ),
                        None => format!(
                            "The line that failed looks {key:?} up in what your code read from \
                             {path}, and {path} is a note, not a table: it has no columns. {}",
                            figures_from_note(&p.report.info.task, &path, &p.file_texts)
                        ),
                    };
                    return Ok((shown, Some(std::borrow::Cow::Owned(told))));
                }
                if let Some((column, path)) = self.header_read_as_data(p, tool, params, v) {
                    p.correct(
                        "header-row-told",
                        json!({"column": column, "path": path}),
                        self.trace,
                        on,
                    );
                    let told = format!(
                        "{column:?} is the name of a column of {path}: your code took the \
                         file's header line for a row of data. Skip the header (next() on the \
                         reader before the loop), or read each row by its column names with \
                         csv.DictReader, and run it again."
                    );
                    return Ok((shown, Some(std::borrow::Cow::Owned(told))));
                }
                if let Some((name, told)) = self.code_file_missing(p, v) {
                    p.correct(
                        "code-file-missing-told",
                        json!({"name": name, "notes": !p.notes_read.is_empty()}),
                        self.trace,
                        on,
                    );
                    return Ok((shown, Some(std::borrow::Cow::Owned(told))));
                }
                // Hints on a program that ran: the first that applies is told, once a turn.
                let hint = self
                    .rows_unfiltered(p, tool, params, v)
                    .or_else(|| self.month_rows_unfiltered(p, tool, params, v))
                    .or_else(|| self.below_zero(p, tool, v))
                    .or_else(|| self.figures_set_unused(p, tool, params, v));
                if let Some(hint) = hint {
                    p.correct(hint.name, hint.detail, self.trace, on);
                    return Ok((shown, Some(std::borrow::Cow::Owned(hint.told))));
                }
                // what code prints when nothing matched its filter: nothing, or an empty
                // total (a sum of no rows is 0, a list of none is [])
                let printed_empty = v
                    .get("stdout")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|o| {
                        matches!(*o, "[]" | "{}" | "None" | "set()")
                            || o.parse::<f64>().is_ok_and(|x| x == 0.0)
                    })
                    .map(str::to_owned);
                let printed = if printed_nothing {
                    Some("It printed nothing.".to_owned())
                } else {
                    printed_empty.map(|o| format!("It printed {o}, as if no value matched."))
                };
                match (self.exact_match_missed(p, tool, params), printed) {
                    (Some((literal, path, example, starts)), Some(printed)) => {
                        p.correct(
                            "exact-match-missed",
                            json!({"literal": literal, "path": path}),
                            self.trace,
                            on,
                        );
                        let fix = if starts {
                            "longer than it. Compare the start of the value (startswith) and \
                             run it again."
                        } else {
                            "not as your code writes it. Compare with the value written that \
                             way and run it again."
                        };
                        Some(std::borrow::Cow::Owned(format!(
                            "{printed} Your code looks for a value equal to \
                             {literal:?}, and no value in the lines of {path} you were shown is \
                             that exactly: they are written like {example:?}, {fix}"
                        )))
                    }
                    _ => match failed_last_line(v) {
                        Some(last) if line == crate::observe::AFTER_RESULT => {
                            p.correct("program-failed-told", json!({"tool": tool}), self.trace, on);
                            Some(std::borrow::Cow::Owned(crate::observe::after_failed(&last)))
                        }
                        _ => Some(line),
                    },
                }
            }
            // A file guessed and not there, while the task names one the
            // turn has not read: given the operator's notes, which named
            // data/runs.csv, qwen2.5-coder-1.5b read a notes.md it made up,
            // was told it does not exist, and went on to ask facts.get about
            // the machine (dev suite, multi-shoe-mileage).
            CallResult::Refused {
                code: RefusalCode::NotFound,
                ..
            } if tool == READER => {
                if let Some(named) = task_file_of_that_name(p, params) {
                    // Read in its place by the caller (`path-from-task`).
                    p.read_instead = Some(named);
                    None
                } else {
                    self.unread(p, on)
                        .or_else(|| self.code_files_told(p, on))
                        .map(std::borrow::Cow::Owned)
                }
            }
            CallResult::Refused { code, .. }
                if tool == CODE_INDEX
                    && *code == RefusalCode::NotFound
                    && matches!(
                        params.get("op").and_then(Value::as_str),
                        Some("outline" | "tree")
                    )
                    && let Some(name) =
                        crate::observe::code_name_in(&p.report.info.task).map(str::to_owned) =>
            {
                // Asked which file defines slugifyTitle, qwen2.5-coder-1.5b
                // asked for the outline of a file it guessed, was told the
                // file is not there, and gave up.
                p.correct(
                    "missing-file-find-symbol-told",
                    json!({"name": name}),
                    self.trace,
                    on,
                );
                p.told = Some(find_call(&name));
                Some(std::borrow::Cow::Owned(find_by_name(&name)))
            }
            CallResult::Refused { code, .. } => {
                let after = crate::observe::after_refusal(*code);
                p.refused_for_good |= after.is_some();
                if after.is_some() {
                    // Said with a repeat of the call, and after a call not run
                    // (see `rest_of_task`); not here: the first refusal's line
                    // asks for the rest of the task, and a model that reads it
                    // goes on (qwen2.5-coder-1.5b, shown the rest here as
                    // well, answered the flight's arrival time, not its
                    // departure, where it had answered right before).
                    p.refused_keys.insert(call_key(tool, params));
                    if let Some(path) = params.get("path").and_then(Value::as_str)
                        && !p.refused_paths.iter().any(|r| r == path)
                    {
                        p.refused_paths.push(path.to_owned());
                    }
                }
                after.map(std::borrow::Cow::Borrowed)
            }
        };
        p.last_failed = match &outcome.result {
            CallResult::Refused { .. } => true,
            CallResult::Output(v) => {
                v.get("exit_code")
                    .and_then(Value::as_i64)
                    .is_some_and(|c| c != 0)
                    || v.get("timed_out").and_then(Value::as_bool) == Some(true)
            }
        };
        // A refusal is not one: its repeat is told the rest of the task.
        if p.last_failed && matches!(outcome.result, CallResult::Output(_)) {
            p.failed_keys.insert(call_key(tool, params));
        }
        Ok((shown, after))
    }

    /// The line after a file of a change task that is not there, once a
    /// turn (`missing-file-code-files-told`): the files of code of the tree
    /// the turn was shown (see [`tree_code_files`]). Told after a tree to
    /// read the file whose code does what the task is about,
    /// qwen2.5-coder-1.5b read `src/main.py`, which the tree did not list.
    fn code_files_told(
        &mut self,
        p: &mut Progress,
        on: &mut (dyn FnMut(TurnEvent<'_>) + Send),
    ) -> Option<String> {
        let due = !p.changed
            && !p.code_files_told
            && !p.code_files.is_empty()
            && asks_for_a_branch(&p.report.info.task);
        if !due {
            return None;
        }
        p.code_files_told = true;
        p.correct(
            "missing-file-code-files-told",
            json!({"files": p.code_files.len()}),
            self.trace,
            on,
        );
        Some(format!(
            "The repository's files of code are {}: read the one whose code does what the \
             task is about with files.read.",
            p.code_files.join(", ")
        ))
    }

    /// `text` as the model is shown it: the owner's home written `~`.
    fn home_folded<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        match &self.options.owner_home {
            Some(home) => crate::observe::home_folded(text, home),
            None => std::borrow::Cow::Borrowed(text),
        }
    }

    fn budget_spent(&self, r: &TurnReport, started: Instant) -> Option<String> {
        if r.steps >= self.options.max_steps {
            Some(format!(
                "the turn used its {} steps",
                self.options.max_steps
            ))
        } else if started.elapsed() >= self.options.max_wall {
            Some(format!("the turn used its {:?}", self.options.max_wall))
        } else if r.generated_tokens >= self.options.max_tokens {
            Some(format!(
                "the turn used its {} tokens",
                self.options.max_tokens
            ))
        } else {
            None
        }
    }

    fn stop(&mut self, mut p: Progress, reason: &str, started: Instant) -> TurnReport {
        p.report.answer = format!("(no answer: the turn stopped because {reason})");
        p.report.end = TurnEnd::Stopped {
            reason: reason.to_owned(),
        };
        p.report.elapsed = started.elapsed();
        self.trace.record(
            "final",
            &json!({"text": p.report.answer, "end": p.report.end, "report": summary(&p.report)}),
        );
        p.report
    }

    fn cut(&self, s: &str) -> String {
        let kept = seam_term::head_bytes(s, self.options.observation_bytes);
        if kept.len() == s.len() {
            return s.to_owned();
        }
        format!(
            "{kept} … (cut: {} more bytes not shown)",
            s.len() - kept.len()
        )
    }
}

/// What seam itself wrote to the model in a turn, after the system prompt:
/// the task, and every result with seam's lines. (An answer copied from the
/// prompt's examples is `answer-echoes-example`'s, which names the example.)
fn seams_words(messages: &[ChatMessage]) -> impl Iterator<Item = &str> {
    messages
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| m.content.as_str())
}

/// The mark an elided result starts with (so it is not elided twice).
const ELIDED: &str = "(an earlier tool result";

/// Takes out of `messages` every reply of the model that was sent back whole
/// (see [`Progress::repeats`]), or is this step's `reply`, and states a
/// figure nothing showed ([`crate::observe::unseen_numbers`], the judgement
/// of `answer-figure-unseen`); `results` is kept pointing at the same
/// results. Returns how many left. Only replies of which nothing ran: the
/// conversation still holds every call the model made and its result.
fn unsay_made_up(
    p: &Progress,
    messages: &mut Vec<ChatMessage>,
    results: &mut [usize],
    reply: &str,
) -> usize {
    let task = &p.report.info.task;
    let mut gone = 0;
    for at in (0..messages.len()).rev() {
        let m = &messages[at];
        let text = m.content.trim();
        let unrun = text == reply.trim() || p.sent_back_whole.iter().any(|r| r == text);
        if m.role == "assistant"
            && unrun
            && !crate::observe::unseen_numbers(text, task, &p.shown).is_empty()
        {
            remove_message(messages, results, at);
            gone += 1;
        }
    }
    gone
}

/// Takes this step's `reply` out of `messages` (its last copy there), and
/// keeps `results` pointing at the same results. False if it is not there.
fn unsay_reply(messages: &mut Vec<ChatMessage>, results: &mut [usize], reply: &str) -> bool {
    let Some(at) = messages
        .iter()
        .rposition(|m| m.role == "assistant" && m.content.trim() == reply.trim())
    else {
        return false;
    };
    remove_message(messages, results, at);
    true
}

/// Takes message `at` out of `messages`, keeping `results` (indexes into
/// `messages`) pointing at the same results.
fn remove_message(messages: &mut Vec<ChatMessage>, results: &mut [usize], at: usize) {
    messages.remove(at);
    for r in results.iter_mut().filter(|r| **r > at) {
        *r -= 1;
    }
}

/// Replaces the oldest tool results (never the newest) with a line saying
/// what was left out, until the conversation fits in `budget` bytes or only
/// the newest result is left whole. Returns each elided message's index and
/// its size.
fn elide_old_results(
    messages: &mut [ChatMessage],
    results: &[usize],
    budget: usize,
) -> Vec<(usize, usize)> {
    let mut total: usize = messages.iter().map(|m| m.content.len()).sum();
    let mut elided = Vec::new();
    let Some((_, older)) = results.split_last() else {
        return elided;
    };
    for &at in older {
        if total <= budget {
            break;
        }
        let m = &mut messages[at];
        if m.content.starts_with(ELIDED) {
            continue;
        }
        let first = m.content.lines().next().unwrap_or_default();
        let line = format!(
            "{ELIDED} ({first} …, {} bytes) is left out to keep the conversation short; call \
             the tool again if you need it.)",
            m.content.len()
        );
        total = total - m.content.len() + line.len();
        elided.push((at, m.content.len()));
        m.content = line;
    }
    elided
}

fn summary(r: &TurnReport) -> Value {
    json!({
        "steps": r.steps,
        "calls": r.calls,
        "corrections": r.corrections,
        "generated_tokens": r.generated_tokens,
        "model_ms": r.model_time.as_secs_f64() * 1000.0,
        "agent_ms": r.agent_time.as_secs_f64() * 1000.0,
        "gate_ms": r.gate_time.as_secs_f64() * 1000.0,
        "elapsed_ms": r.elapsed.as_secs_f64() * 1000.0,
        "tainted": r.tainted,
    })
}

/// The params in a line: `{path: "a.md", max_bytes: 10}` shortened.
pub fn short_params(params: &Map<String, Value>) -> String {
    let parts: Vec<String> = params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => format!("{:?}", clip(s, 40)),
                other => clip(&other.to_string(), 40),
            };
            format!("{k}: {v}")
        })
        .collect();
    clip(&parts.join(", "), 120)
}

/// What came of a call, in a line: `ok`, `ok (tainted)`, `refused (protected): …`.
pub fn outcome_line(o: &Outcome) -> String {
    match &o.result {
        CallResult::Output(v) => {
            let size = v.to_string().len();
            let mut s = format!("ok, {}", human_bytes(size));
            if o.tainted {
                s.push_str(", tainted");
            }
            if !o.scrubbed.is_empty() {
                s.push_str(&format!(", redacted {}", o.scrubbed.join(" ")));
            }
            s
        }
        CallResult::Refused { code, message } => {
            format!("refused ({code}): {}", clip(first_sentence(message), 100))
        }
    }
}

fn human_bytes(n: usize) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1024 * 1024 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
    }
}

/// A refusal as the model is shown it: as a sentence of its own, whole up
/// to [`REFUSAL_SHOWN`] characters. Not its first sentence only: what
/// follows is where a tool says what to do instead (the files of that name
/// in the workspace, the lines of the repository most like the task), and
/// a model cut off from it guessed the same wrong path again.
fn refusal_shown(s: &str) -> String {
    clip(s.trim(), REFUSAL_SHOWN)
}

/// The longest refusal shown to the model, in characters.
const REFUSAL_SHOWN: usize = 1500;

fn first_sentence(s: &str) -> &str {
    let s = s.trim();
    match s.find(". ") {
        Some(i) if i > 20 => &s[..=i],
        _ => s,
    }
}

/// `s` in at most `max` characters, the `…` that marks a cut counted among them.
fn clip(s: &str, max: usize) -> String {
    match seam_term::head(s, max) {
        (_, false) => s.to_owned(),
        (_, true) => seam_term::clip(s, max.saturating_sub(1), "…").into_owned(),
    }
}
