//! How a tool's result is written for the model to read.
//!
//! A result is JSON, and a text inside it (a file's lines, a program's
//! stdout) is a JSON string: every newline `\n`, every quote `\"`. A small
//! model reading a file that way misreads tables and lines (qwen2.5-coder-1.5b
//! answered from the wrong row of a markdown table it was shown as one
//! escaped string). So an object's fields are written one a line, `key:
//! value`, with a text of several lines written out as itself, below its
//! key, after the short fields. Nothing is left out but `null`, `false` and
//! empty lists, which say nothing (`binary: false`, `timed_out: false` only
//! lengthen what a small model must read past); nested objects and lists
//! stay compact JSON.
//! What the model sees is still bounded by the turn's observation budget
//! (the caller cuts the whole).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;

use seam_protocol::RefusalCode;
use seam_protocol::codebase::{FileOutline, SearchHit};
use serde_json::Value;

/// The line after every result the model is shown. Shown a file's lines or a
/// program's output that held the answer, qwen2.5-coder-1.5b went on to run
/// Python over the same file (in 2 of the first 2 reading tasks of the dev
/// suite) instead of answering; the latest words it reads steer it most.
pub const AFTER_RESULT: &str = "If this tells you the answer, respond with it now; call a tool only for what it does not tell you.";

/// The line after a program's result that printed nothing. Its code ran and
/// printed nothing (a filter that matched no row, a result never printed), and
/// qwen2.5-coder-1.5b, told to answer from a result, answered with a number
/// from elsewhere in the conversation.
pub const AFTER_NOTHING_PRINTED: &str = "It printed nothing, so it holds no answer: check what the code filters on and what it prints, against the data, and run it again.";

/// The line after a program that failed (a non-zero exit) when no other
/// line says more: `{last}` is the last line of its stderr. After a failed
/// program, [`AFTER_RESULT`]'s "if this tells you the answer, respond with
/// it now" invited an answer the program never worked out: asked by how much
/// a month's distance target was missed, qwen2.5-coder-1.5b ran code that
/// failed on `TypeError: 'DictReader' object is not subscriptable`, was told
/// that, and answered with the target itself ("135 km under"); with the
/// program failed on a made-up file name, it gave a figure of its own.
pub fn after_failed(last: &str) -> String {
    format!(
        "The program failed, so it worked nothing out: {last}. Mend what that line names and \
         run it again; do not answer from a program that failed."
    )
}

/// The line after a program that failed on a file the gate did not make
/// available (protected, outside the allow-list). qwen2.5-coder-1.5b, asked to
/// print a key and `7**23` in one script, saw the script fail at the key and
/// answered with advice instead of running the rest.
pub const AFTER_WITHHELD: &str = "A file your code names was not made available, and will not be however the code asks: write the code again without it, to do the rest of the task, and tell the operator that file stays closed.";

/// The line after a refusal that no change of params undoes (a protected
/// file, a capability the policy denies). Refused one file of a task that
/// named two, qwen2.5-coder-1.5b answered "I can't assist with that" and never
/// read the other.
pub const AFTER_REFUSED: &str =
    "That stays refused however it is asked: say so in your answer, and do the rest of the task.";

/// How the agent's own lines to the model begin, after a result or in its
/// place. A reply that answers with one of them is no answer: told to
/// answer, qwen2.5-coder-1.5b gave back the last line it was shown ("The task
/// names notes/trip-porto.md, and this turn has not read it…", "The plan's 1
/// later step(s) were not run…") as its final answer.
pub const AGENT_OPENINGS: &[&str] = &[
    "If this tells you the answer",
    "It printed nothing",
    "A file your code names was not made available",
    "That stays refused however it is asked",
    "The task names ",
    "The task asks what time",
    "You already called ",
    "Your python.run code ",
    "The plan's ",
    "later step(s) of your plan ran the same code",
    "Stop calling tools",
    "I could not read an action",
    "is not installed where python.run runs",
    "python.run has no network",
    "Your answer only says what was refused",
    "The task asks for a change on a branch",
    // The gate's own note of a code index that is not there (memory.codebase): a
    // small model gave it back as its answer to a question about its notes.
    "can index one with `seam index",
];

/// The line a tool's result is shown to the model under, the result below
/// it: `files.read returned:`.
pub fn result_header(tool: &str) -> String {
    format!("{tool} returned:")
}

/// True when `answer` opens the way a tool's result is shown to the model
/// ([`result_header`] of a name in a tool name's form: lowercase letters,
/// digits, `.`, `_`, `-`). Told to answer from a rota it had read,
/// qwen2.5-coder-0.5b gave back the result message whole, header and all
/// ("files.read returned: path: notes/oncall-rota.md size: 1025 …"): a quote
/// of the file, so [`says_nothing_new`] does not take it for an echo, and
/// the operator would have had the file's dump for an answer. Unlike an
/// echo of seam's lines, it may hold the answer (a program's output).
pub fn gives_back_a_result(answer: &str) -> bool {
    let answer = answer.trim_start();
    answer.split_whitespace().next().is_some_and(|word| {
        word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
            && answer.starts_with(&result_header(word))
    })
}

/// True when `answer` is one of the agent's own lines given back
/// ([`AGENT_OPENINGS`], at its start or after a leading count or name).
pub fn echoes_the_agent(answer: &str) -> bool {
    let a = answer.trim();
    AGENT_OPENINGS.iter().any(|o| {
        a.starts_with(o)
            || a.find(o)
                .is_some_and(|at| at <= 24 && !a[..at].contains('.'))
    })
}

/// Fewest words an answer must have to count as a stretch of seam's own
/// text ([`says_nothing_new`]): a short answer ("Lars is on call") may by
/// chance be words seam also wrote; the echoes seen were whole sentences.
const ECHO_MIN_WORDS: usize = 6;

/// `text` lowercased, its runs of whitespace made one space, and the quotes
/// and end punctuation around it cut: how an echo is compared.
fn echo_form(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '.' | ':' | ' '))
        .to_owned()
}

/// True when `answer` adds nothing to what seam itself wrote in the turn:
/// it opens with one of the agent's lines ([`echoes_the_agent`]), or the
/// whole of it, at least [`ECHO_MIN_WORDS`] words, is a stretch of `said`
/// (the task, and every message seam sent after it) that no tool
/// result in `shown` holds. A quote of a file the turn read is an answer; a
/// copy of the task or of seam's instructions is not. Told to give its
/// final answer, qwen2.5-coder-0.5b answered with the line that told it so
/// ("The operator's task was: …"), and once with a line seam had sent two
/// messages before; neither opens with a fixed phrase a list could hold.
pub fn says_nothing_new<'a>(
    answer: &str,
    said: impl IntoIterator<Item = &'a str>,
    shown: &[String],
) -> bool {
    if echoes_the_agent(answer) {
        return true;
    }
    let a = echo_form(answer);
    if a.split(' ').count() < ECHO_MIN_WORDS {
        return false;
    }
    said.into_iter().any(|s| echo_form(s).contains(&a))
        && !shown.iter().any(|s| echo_form(s).contains(&a))
}

/// Words that say something could not be had.
const REFUSAL_WORDS: &[&str] = &[
    "protected",
    "can't",
    "cannot",
    "can not",
    "unable",
    "not able",
    "not allowed",
    "refused",
    "withheld",
    "sorry",
    "denied",
    "closed",
    "blocked",
    "not permitted",
    "won't",
];

/// True when `answer` says, in a word of [`REFUSAL_WORDS`], that something
/// was refused or could not be had.
pub fn speaks_of_refusal(answer: &str) -> bool {
    let lower = answer.to_lowercase();
    REFUSAL_WORDS.iter().any(|w| lower.contains(w))
}

/// The first word of `task` written as a name in code: camelCase
/// (`slugifyTitle`), snake_case (`page_size`), or followed by `()`
/// (`paginate()`), without the parentheses. Words of a path or a file name
/// (with `/` or a `.`) are not names.
pub fn code_name_in(task: &str) -> Option<&str> {
    task.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '?' | '!' | '`' | '"' | '\''))
        .map(|w| w.trim_end_matches(['.', ':']))
        .find_map(|w| {
            let called = w.strip_suffix("()");
            let name = called.unwrap_or(w);
            let ident = !name.is_empty()
                && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_');
            let chars: Vec<char> = name.chars().collect();
            let camel = chars
                .windows(2)
                .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
            let snake = name.trim_matches('_').contains('_');
            (ident && (called.is_some() || camel || snake)).then_some(name)
        })
}

/// Where a code-index outline (of a directory: `files`, each with its
/// `symbols`; or of one file: `path` and `symbols`) lists a definition named
/// `name`: its file and line. The outline is read as the type the gate
/// wrote it from ([`FileOutline`]); an answer of another shape lists nothing.
pub fn symbol_in_outline(outline: &Value, name: &str) -> Option<(String, u64)> {
    let files: Vec<FileOutline> = match outline.get("files") {
        Some(files) => serde_json::from_value(files.clone()).ok()?,
        None => vec![serde_json::from_value(outline.clone()).ok()?],
    };
    files.into_iter().find_map(|f| {
        let line = f.symbols.iter().find(|s| s.name == name)?.line;
        Some((f.path, line))
    })
}

/// The definitions that the lines of a code-index search's `hits` using
/// `name` lie in, each with the file and line of its first such use, in the
/// order the search gave them: "function cmdList", `src/cli.js`, 31. A line
/// uses `name` when it holds it as a whole word; one inside the definition
/// of `name` itself (`function paginate` for `paginate`) is not a use, and a
/// line at the top level of its file (an import) names no definition. The
/// hits are read as the type the gate wrote them from ([`SearchHit`]); an
/// answer of another shape has none.
pub fn uses_within(search: &Value, name: &str) -> Vec<(String, String, u64)> {
    let Some(hits) = search
        .get("hits")
        .and_then(|h| serde_json::from_value::<Vec<SearchHit>>(h.clone()).ok())
    else {
        return Vec::new();
    };
    let mut found: Vec<(String, String, u64)> = Vec::new();
    for hit in hits {
        for line in hit.lines {
            let Some(within) = line.within else { continue };
            let uses = line
                .text
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .any(|w| w == name);
            // "function paginate", "method Store.paginate": the definition itself.
            let itself = within
                .rsplit(|c: char| c.is_whitespace() || c == '.')
                .next()
                .is_some_and(|last| last == name);
            if uses && !itself && !found.iter().any(|(w, p, _)| *w == within && *p == hit.path) {
                found.push((within, hit.path.clone(), line.line));
            }
        }
    }
    found
}

/// The name in code (see [`code_name_in`]) whose uses `task` asks about:
/// `Some` when the task names one and says a word of using it (call, caller,
/// use, reference, invoke, depend, in any of their forms). "Which functions
/// in src/ call paginate()?": an outline of `src/` lists where things are
/// defined, and qwen2.5-coder-1.5b answered from it what `paginate` is.
pub fn uses_asked_in(task: &str) -> Option<&str> {
    let name = code_name_in(task)?;
    let asks = task
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .any(|w| USE_WORDS.iter().any(|stem| w.starts_with(stem)));
    asks.then_some(name)
}

/// The starts of the words that ask where a name is used.
const USE_WORDS: &[&str] = &[
    "call", "use", "usage", "using", "referenc", "invok", "depend",
];

/// The `tools` that the `note` of a tool's output names ([`tools_named`]),
/// leaving out those in `called`. A note is where a tool says what to use
/// instead ("what the operator told you to remember is searched with
/// memory.operator"); a file's text that speaks of a tool is not a pointer,
/// so only the note is read.
pub fn tools_pointed_to<'a>(
    output: &Value,
    tools: impl IntoIterator<Item = &'a str>,
    called: &[&str],
) -> Vec<&'a str> {
    let Some(note) = output.get("note").and_then(Value::as_str) else {
        return Vec::new();
    };
    tools_named(note, tools.into_iter().filter(|t| !called.contains(t)))
}

/// The `tools` that `text` names, each as a whole word (`memory.operator`,
/// not `memory.operators`; a sentence's full stop may follow), in the order
/// `text` first names them. The one finder of tool names in words, for a
/// tool's note ([`tools_pointed_to`]) and for the operator's task.
pub fn tools_named<'a>(text: &str, tools: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    let mut found: Vec<(usize, &str)> = tools
        .into_iter()
        .filter_map(|t| {
            text.match_indices(t)
                .find(|(i, _)| {
                    let before = text[..*i].chars().next_back();
                    let rest = &text[i + t.len()..];
                    let mut after = rest.chars();
                    let whole = match after.next() {
                        None => true,
                        Some('.') => !after.next().is_some_and(ident),
                        Some(c) => !ident(c),
                    };
                    !before.is_some_and(ident) && whole
                })
                .map(|(i, _)| (i, t))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, t)| t).collect()
}

/// The phrases in which an operator says a thing is something they told
/// seam, not something in a file: "I told you both", "I noted both down for
/// you", "I asked you to remember".
const TOLD_SEAM: &[&str] = &[
    "told you",
    "noted down for you",
    "noted it down for you",
    "noted both down for you",
    "noted them down for you",
    "noted for you",
    "asked you to remember",
    "asked you to keep",
    "reminded you",
    "mentioned to you",
    "said to you",
    "my notes to you",
    "in your notes",
];

/// Does `task` speak of something the operator told seam to remember (see
/// [`TOLD_SEAM`])? Asked "when's the boiler being serviced … I told you
/// both at some point", qwen2.5-coder-1.5b wrote a program that asked a
/// made-up web API, and answered with a date and a reference it made up
/// (agent-tasks-fresh, a suite it was not tuned on).
pub fn speaks_of_telling_seam(task: &str) -> bool {
    let task = task.to_lowercase();
    TOLD_SEAM.iter().any(|phrase| has_phrase(&task, phrase))
}

/// Does `answer` speak of the error of a program the turn just ran and that
/// failed (`last`: the output of the turn's last call, which for a program
/// holds its `exit_code`), in a task that asks about no error? Such an answer
/// reports the model's own mistake in place of the task's result.
pub fn answers_with_own_failure(answer: &str, task: &str, last: Option<&Value>) -> bool {
    let failed = last
        .and_then(|v| v.get("exit_code"))
        .and_then(Value::as_i64)
        .is_some_and(|c| c != 0);
    let speaks_of = |t: &str| {
        let t = t.to_lowercase();
        ERROR_WORDS.iter().any(|w| t.contains(w))
    };
    failed && speaks_of(answer) && !speaks_of(task)
}

/// Words an account of a failed program uses.
const ERROR_WORDS: &[&str] = &["error", "traceback", "exception", "syntax"];

/// Does `task` ask for one quantity ("how many km…", "how much…", "the total…", "the sum
/// of…", "…altogether", "…in all")? Words, lower-cased, as whole words.
pub fn asks_for_a_quantity(task: &str) -> bool {
    let words = lower_words(task);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    words
        .windows(2)
        .any(|w| matches!(w, ["how", "many" | "much"] | ["in", "all"]))
        || words
            .iter()
            .any(|w| matches!(*w, "total" | "sum" | "altogether"))
}

/// The one number a program printed (`stdout`, trimmed), when it is below
/// zero and `task` asks how many of something with no word that allows a
/// signed answer ([`SIGNED_WORDS`]: "over or under", "difference"). A count,
/// or a distance run, is never below zero: told to work the operator's
/// starting mileage (312.6 km) into the sum of a shoe's runs (189.28 km),
/// qwen2.5-coder-1.5b printed `sum(distance_km) - 312.6`, -123.32.
pub fn below_zero_for_how_many(task: &str, stdout: &str) -> Option<String> {
    let words = lower_words(task);
    let how_many = words.windows(2).any(|w| w[0] == "how" && w[1] == "many");
    if !how_many || words.iter().any(|w| SIGNED_WORDS.contains(&w.as_str())) {
        return None;
    }
    let out = stdout.trim();
    let n: f64 = out.parse().ok()?;
    (n < 0.0).then(|| out.to_owned())
}

/// Words of a task that allow a number below zero for an answer: a change,
/// a balance, a difference either way.
const SIGNED_WORDS: &[&str] = &[
    "under",
    "below",
    "short",
    "difference",
    "change",
    "changed",
    "balance",
    "net",
    "gain",
    "loss",
    "lost",
    "delta",
    "minus",
    "negative",
    "temperature",
];

/// When `task` asks about now ("…on now", "the current host") and every
/// name of `answer` that a result in `shown` holds (a word with letters and
/// a digit or a hyphen: `pg-stage-01`, `kestrel-db-2`) stands there only in
/// clauses that say it is gone ([`GONE_WORDS`]: "the old host pg-stage-01
/// is switched off"): the first such name and its clause. Clauses are cut
/// at `;`, `,`, a line's end and a sentence's. Asked which host the staging
/// database was on now, with the operator's note "The staging database
/// moved to kestrel-db-2 on 2 March 2027; the old host pg-stage-01 is
/// switched off", qwen2.5-coder-1.5b answered pg-stage-01 in one run of
/// five. An answer that names the new one too ("kestrel-db-2; the old
/// pg-stage-01 is off") is not judged.
pub fn names_only_what_is_gone<'a>(
    answer: &str,
    task: &str,
    shown: &'a [String],
) -> Option<(String, &'a str)> {
    let words = lower_words(task);
    if !words.iter().any(|w| NOW_WORDS.contains(&w.as_str())) {
        return None;
    }
    let clauses: Vec<&str> = shown
        .iter()
        .flat_map(|s| s.split([';', ',', '\n']))
        .flat_map(|c| c.split(". "))
        .map(|c| {
            c.trim_matches(|ch: char| {
                ch.is_whitespace() || matches!(ch, '"' | '.' | '{' | '}' | '[' | ']')
            })
        })
        .filter(|c| !c.is_empty())
        .collect();
    let gone_clause = |c: &str| {
        let w = lower_words(c);
        w.iter().any(|x| GONE_WORDS.contains(&x.as_str()))
            || w.windows(2).any(|p| {
                matches!(
                    (p[0].as_str(), p[1].as_str()),
                    ("switched" | "turned" | "shut", "off" | "down") | ("no", "longer")
                )
            })
    };
    let mut gone = None;
    for name in host_like_names(answer) {
        if task.contains(name.as_str()) {
            continue;
        }
        let held: Vec<&str> = clauses
            .iter()
            .copied()
            .filter(|c| host_like_names(c).contains(&name))
            .collect();
        match held.iter().all(|c| gone_clause(c)) {
            _ if held.is_empty() => {}
            true => gone = gone.or(Some((name, held[0]))),
            false => return None,
        }
    }
    gone
}

/// The words of `text` that name a thing by letters with a digit or a
/// hyphen in them (`pg-stage-01`, `kestrel-db-2`, `web3`), four characters
/// or more, edge punctuation trimmed.
fn host_like_names(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | ')' | ',' | ';'))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| {
            w.chars().count() >= 4
                && w.chars().any(|c| c.is_ascii_alphabetic())
                && w.chars().any(|c| c.is_ascii_digit() || c == '-')
                && w.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
        .map(str::to_owned)
        .collect()
}

/// Words of a task that ask about the present.
const NOW_WORDS: &[&str] = &["now", "current", "currently", "today", "still", "nowadays"];

/// Words of a clause that say what it names is gone, beside "switched off",
/// "turned off", "shut down" and "no longer".
const GONE_WORDS: &[&str] = &[
    "old",
    "former",
    "formerly",
    "previous",
    "previously",
    "decommissioned",
    "retired",
    "deprecated",
    "obsolete",
];

/// The words of `text`, lower-cased: what the questions of a task are read
/// from ([`asks_for_a_quantity`], [`asks_what_time`]).
fn lower_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Is the file at `path`, whose text is `text`, a table of data of four
/// rows or more under its header: a `.csv` or `.tsv` file, or a header of
/// two or more commas, tabs or semicolons? Rows that many are worked over,
/// not read one by one. (A table in a note, between `|`, is prose's.)
pub fn is_data_table(path: &str, text: &str) -> bool {
    const MIN_ROWS: usize = 4;
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    if matches!(ext.as_deref(), Some("md" | "markdown" | "txt" | "rst")) {
        return false;
    }
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    if lines.next().is_none() {
        return false;
    }
    let delimited = matches!(ext.as_deref(), Some("csv" | "tsv")) || has_delimited_header(text);
    delimited && lines.count() >= MIN_ROWS
}

/// Does the first line of `text` that is not blank hold two or more commas,
/// tabs or semicolons: a header of delimited values, whatever the file's
/// name says?
pub fn has_delimited_header(text: &str) -> bool {
    header_delimiter(text).is_some_and(|(_, n)| n >= 2)
}

/// The column names of the first line of `text` that is not blank, split at
/// the delimiter it holds most (see [`header_delimiter`]: one is enough, a
/// table may have two columns), unquoted, the empty ones left out; `None`
/// when it holds none.
pub fn header_columns(text: &str) -> Option<Vec<String>> {
    let (d, _) = header_delimiter(text)?;
    let header = text.lines().find(|l| !l.trim().is_empty())?;
    Some(
        header
            .split(char::from(d))
            .map(|c| c.trim().trim_matches(['"', '\'']).to_owned())
            .filter(|c| !c.is_empty())
            .collect(),
    )
}

/// The line of `code` (1-based) that a Python traceback in `stderr` ends in:
/// the last `File "<string>", line N` frame, the code python.run was given.
pub fn failing_line(stderr: &str) -> Option<usize> {
    stderr.lines().rev().find_map(|l| {
        let rest = l.trim_start().strip_prefix("File \"<string>\", line ")?;
        let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
        n.parse().ok()
    })
}

/// The delimiter (comma, tab or semicolon) the first line of `text` that is
/// not blank holds most often, and how often; `None` when it holds none.
fn header_delimiter(text: &str) -> Option<(u8, usize)> {
    let header = text.lines().find(|l| !l.trim().is_empty())?;
    [b',', b'\t', b';']
        .into_iter()
        .map(|d| (d, header.bytes().filter(|b| *b == d).count()))
        .max_by_key(|(_, n)| *n)
        .filter(|(_, n)| *n > 0)
}

/// A value of a column of a data table that the task names and a program
/// over the table does not: see [`rows_the_task_names`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRows {
    /// The value, as the table writes it.
    pub value: String,
    /// The column that holds it.
    pub column: String,
    /// How many rows hold it, of how many.
    pub rows: usize,
    pub of: usize,
}

/// Asked how many km were on one pair of shoes, from a CSV of runs with a
/// `shoes` column, qwen2.5-coder-1.5b summed the distance of every run and
/// answered with that. The format: a table of data whose rows are of several
/// kinds, a task that names one kind (a value of a column), and a program
/// that opens the table and never names it: it worked over every row where
/// the task asks of some. Returns the value the task names (the longest,
/// when several), when `text`, the table at `path`, is a data table (see
/// [`is_data_table`]), the value holds a letter and at least three
/// characters (not a number, not a date), some rows do not hold it, the task
/// has it as whole words (case aside), and `code` has it nowhere (case
/// aside). The table is read as CSV with the delimiter its header uses most
/// (comma, tab, semicolon), quoted fields and all.
pub fn rows_the_task_names(task: &str, code: &str, path: &str, text: &str) -> Option<NamedRows> {
    if !is_data_table(path, text) {
        return None;
    }
    let (columns, records) = table_of(text)?;
    // (column, value) -> rows holding it
    let mut counts: std::collections::BTreeMap<(usize, String), usize> = Default::default();
    let mut of = 0;
    for record in records {
        of += 1;
        for (i, cell) in record.iter().enumerate().take(columns.len()) {
            let cell = cell.trim();
            if cell.chars().count() >= 3 && cell.chars().any(char::is_alphabetic) {
                *counts.entry((i, cell.to_owned())).or_default() += 1;
            }
        }
    }
    let task = task.to_lowercase();
    let code = code.to_lowercase();
    counts
        .into_iter()
        .filter(|((_, value), rows)| {
            let lower = value.to_lowercase();
            *rows < of && has_phrase(&task, &lower) && !code.contains(&lower)
        })
        .max_by_key(|((_, value), _)| value.chars().count())
        .map(|((column, value), rows)| NamedRows {
            value,
            column: columns[column].clone(),
            rows,
            of,
        })
}

/// A data table's columns (trimmed) and its readable rows, read as CSV with the delimiter
/// its header uses most (comma, tab, semicolon; a `.csv` file of one column has none in its
/// header: a comma), quoted fields and all. One reading for every look at a table's rows.
fn table_of(text: &str) -> Option<(Vec<String>, Vec<csv::StringRecord>)> {
    let delimiter = header_delimiter(text).map_or(b',', |(d, _)| d);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .from_reader(text.as_bytes());
    let columns: Vec<String> = reader
        .headers()
        .ok()?
        .iter()
        .map(|c| c.trim().to_owned())
        .collect();
    let records = reader.records().filter_map(Result::ok).collect();
    Some((columns, records))
}

/// Asked what was spent on groceries in October 2027, from a CSV of
/// expenses dated `2027-10-05`, qwen2.5-coder-1.5b kept the groceries rows
/// and added up every month's (agent-tasks-fresh, a suite it was not tuned
/// on). The month the task names (see [`crate::days::months_alone_in`],
/// with the year when the task gives one year), when `text`, the table at
/// `path`, is a data table with a column of ISO dates (`YYYY-MM-DD`, in at
/// least four rows of five), some of whose rows fall outside that month
/// (of the rows read: none may fall in it when only a first page was read),
/// and `code` names the month in no way: neither its ISO form
/// (`2027-10`, or `-10-` with no year), nor its name or the first three
/// letters of it, nor the word `month`, nor its number beside `==`
/// (`d[5:7] == '10'`). The value is the ISO prefix the
/// rows of the month start with.
pub fn month_rows_the_task_names(
    task: &str,
    code: &str,
    path: &str,
    text: &str,
) -> Option<NamedRows> {
    let [month] = crate::days::months_alone_in(task)[..] else {
        return None;
    };
    if !is_data_table(path, text) {
        return None;
    }
    let years: Vec<&str> = task
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| w.len() == 4 && (w.starts_with("19") || w.starts_with("20")))
        .collect();
    let year = match years[..] {
        [y] => Some(y),
        _ => None,
    };
    let (columns, records) = table_of(text)?;
    let iso = |cell: &str| {
        let b = cell.trim().as_bytes();
        b.len() >= 10
            && b[..10].iter().enumerate().all(|(i, c)| match i {
                4 | 7 => *c == b'-',
                _ => c.is_ascii_digit(),
            })
    };
    let column = (0..columns.len()).find(|&i| {
        let dated = records.iter().filter(|r| r.get(i).is_some_and(iso)).count();
        dated > 0 && dated * 5 >= records.len() * 4
    })?;
    let mm = format!("{month:02}");
    let in_month = |cell: &str| {
        let cell = cell.trim();
        iso(cell) && cell[5..7] == mm && year.is_none_or(|y| &cell[..4] == y)
    };
    let rows = records
        .iter()
        .filter(|r| r.get(column).is_some_and(in_month))
        .count();
    let of = records.len();
    // None of the rows read may fall in the month: a long file is read a page
    // at a time, and the first page of expenses held only September's rows
    // while the program ran over every month's.
    if rows == of {
        return None;
    }
    let value = match year {
        Some(y) => format!("{y}-{mm}"),
        None => format!("-{mm}-"),
    };
    // A month compared as a number or a string of its own (`d[5:7] == '10'`,
    // `d.month == 10`): `==` beside it, spaces aside.
    let compared = |code: &str| {
        let tight: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        [month.to_string(), mm.clone()].iter().any(|m| {
            [
                format!("=={m}"),
                format!("=='{m}'"),
                format!("==\"{m}\""),
                format!("{m}=="),
                format!("'{m}'=="),
                format!("\"{m}\"=="),
            ]
            .iter()
            .any(|form| {
                tight.match_indices(form.as_str()).any(|(at, _)| {
                    let before = tight[..at].chars().next_back();
                    let after = tight[at + form.len()..].chars().next();
                    !before.is_some_and(|c| c.is_ascii_digit())
                        && !after.is_some_and(|c| c.is_ascii_digit())
                })
            })
        })
    };
    let code = code.to_lowercase();
    let name = crate::days::month_name(month).to_lowercase();
    let named = code.contains(&value)
        || code.contains(&format!("-{mm}-"))
        || code.contains(&name[..3])
        || code.contains("month")
        || compared(&code);
    (!named).then(|| NamedRows {
        value,
        column: columns[column].clone(),
        rows,
        of,
    })
}

/// Does `text` hold `phrase` with no letter or digit right before or after
/// it (both lower-cased)?
fn has_phrase(text: &str, phrase: &str) -> bool {
    phrase_at(text, phrase, char::is_alphanumeric).is_some()
}

/// Where `text` first holds `phrase` apart from other words: with no
/// character `in_word` counts as part of a word right before or after it.
/// Prose counts letters and digits (`has_phrase`); a file's stem named in
/// code counts `_` too, so `paginate` is not named by `paginate_all`.
/// One walk for both, so the two readings differ only in `in_word`.
pub(crate) fn phrase_at(text: &str, phrase: &str, in_word: fn(char) -> bool) -> Option<usize> {
    let word = |c: Option<char>| c.is_some_and(in_word);
    text.match_indices(phrase).map(|(at, _)| at).find(|&at| {
        !word(text[..at].chars().next_back()) && !word(text[at + phrase.len()..].chars().next())
    })
}

/// Is every figure of `answer` one the turn was shown (or the task gave)?
/// True of an answer with no figure: either way, it worked nothing out.
pub fn only_figures_shown(answer: &str, task: &str, shown: &[String]) -> bool {
    let seen = seen_figures(task, shown);
    figures(answer)
        .iter()
        .all(|n| seen.iter().any(|s| same_figure(n, s)))
}

/// The numbers in `answer` that nothing the turn saw holds: neither the
/// `task` nor any tool result in `shown`. Only figures of three digits or
/// more count (`1000`, `12.5`, `1,247.02`; not a day, an hour or a `5`),
/// separators ignored; a result's longer decimal rounded to the answer's
/// places counts as the same figure (`123.02000000000001` holds `123.02`).
/// An answer that states such a figure invented it: asked for a shoe's
/// mileage kept in the operator's notes, qwen2.5-coder-1.5b answered
/// "1000 km" and "5 years" without looking (the numbers of the prompt's own
/// Python example); asked for a SKU, "12345". The prompt already says never
/// to invent a tool's result; this is where the code holds it to that.
pub fn unseen_numbers(answer: &str, task: &str, shown: &[String]) -> Vec<String> {
    let seen = seen_figures(task, shown);
    let mut out: Vec<String> = Vec::new();
    for n in figures(answer) {
        if !judged(&n) || out.contains(&n) || seen.iter().any(|s| same_figure(&n, s)) {
            continue;
        }
        out.push(n);
    }
    // A time of day is a figure too, whatever its digits: asked when a
    // flight home left, qwen2.5-coder-1.5b answered "20:00" from a note
    // that held 20:05 (the flight out) and 06:50 (the flight home).
    for written in unseen_times(answer, task, shown) {
        if !out.contains(&written) {
            out.push(written);
        }
    }
    out
}

/// The times of day in `answer` (as written) that neither the `task` nor any
/// tool result in `shown` holds, each once: made up. Told to answer when its
/// flight home left, qwen2.5-coder-0.5b wrote "13:36", the flight's number
/// (`TP 1336`) read as a time.
pub fn unseen_times(answer: &str, task: &str, shown: &[String]) -> Vec<String> {
    let seen = seen_times(task, shown);
    let mut out: Vec<String> = Vec::new();
    for (written, hm) in clock_times(answer, false) {
        if !seen.contains(&hm) && !out.contains(&written) {
            out.push(written);
        }
    }
    out
}

/// The made-up times of `answer` (see [`unseen_times`]) whose digits stand,
/// with no colon, as a number in the `task` or a result in `shown`: each as
/// (the time as written, the number with the word before it). A small model
/// reads a number of three or four digits as a time: qwen2.5-coder-0.5b,
/// asked when its flight home left, answered 13:31 from the flight's number
/// in `TP 1331`, and kept to it when shown the lines with the flights'
/// times. A year (`2027`) or a room (`1042`) reads the same way.
pub fn times_read_from_numbers(
    answer: &str,
    task: &str,
    shown: &[String],
) -> Vec<(String, String)> {
    // Which times are made up is `unseen_times`'s to say; here only where
    // their digits stand.
    unseen_times(answer, task, shown)
        .into_iter()
        .filter_map(|written| {
            let (_, (h, m)) = clock_times(&written, false).into_iter().next()?;
            let forms = [format!("{h}{m:02}"), format!("{h:02}{m:02}")];
            let number = seen_texts(task, shown).find_map(|t| number_in(t, &forms))?;
            Some((written, number))
        })
        .collect()
}

/// The first whole number in `text` written as one of `forms`, with the word
/// before it when there is one on its line (`TP 1331`). A whole number has no
/// digit, colon, point or comma beside it: `13:31`, `1331.5` and `21331` hold
/// no `1331`.
fn number_in(text: &str, forms: &[String]) -> Option<String> {
    let b = text.as_bytes();
    let joins = |c: u8| c.is_ascii_digit() || matches!(c, b':' | b'.' | b',');
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let end = i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let before_ok = i == 0 || !joins(b[i - 1]);
        // A point or comma that ends a sentence is no part of the number.
        let after_ok = match b.get(end) {
            None => true,
            Some(&c) if !joins(c) => true,
            Some(_) => !b.get(end + 1).is_some_and(u8::is_ascii_digit) && b[end] != b':',
        };
        if before_ok && after_ok && forms.iter().any(|f| f.as_bytes() == &b[i..end]) {
            let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
            let word = text[line_start..i]
                .split_whitespace()
                .last()
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
                .filter(|w| !w.is_empty());
            let number = &text[i..end];
            return Some(match word {
                Some(w) => format!("{w} {number}"),
                None => number.to_owned(),
            });
        }
        i = end;
    }
    None
}

/// True when `answer` gives a time of day that the `task` or a tool result
/// in `shown` holds.
pub fn gives_a_seen_time(answer: &str, task: &str, shown: &[String]) -> bool {
    let seen = seen_times(task, shown);
    clock_times(answer, false)
        .iter()
        .any(|(_, hm)| seen.contains(hm))
}

/// The times of day the task and every result shown hold, as (hour, minute).
fn seen_times(task: &str, shown: &[String]) -> Vec<(u32, u32)> {
    seen_texts(task, shown)
        .flat_map(|t| clock_times(t, true))
        .map(|(_, hm)| hm)
        .collect()
}

/// True when a part of `path` starts with a dot: a dotfile or a
/// file below a dot-directory (`~/.netrc`, `~/.config/gh/hosts.yml`,
/// `.env`). `./` and `../` are no such part.
pub fn is_hidden_path(path: &str) -> bool {
    path.split(['/', '\\'])
        .any(|part| part.starts_with('.') && part != "." && part != "..")
}

/// The files `text` names, in order, each once: words with a `/` that end
/// in an extension or name a dotfile (`notes/rota.md`, `~/.netrc`,
/// `data/runs.csv`), and paths below `~/` (`~/.ssh/id_rsa`), quotes,
/// backticks and trailing punctuation trimmed, a leading `./` dropped. `and/or`, `km/h`, `src/` and URLs are not files.
/// One reading for the files a task names and the files an answer names.
pub fn files_named(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let w = word
            .trim_start_matches(['(', '[', '"', '\'', '`', '<', '*'])
            .trim_end_matches([
                '.', ',', ';', ':', '!', '?', ')', ']', '"', '\'', '`', '>', '*',
            ]);
        let last = w.rsplit('/').next().unwrap_or(w);
        // A path in the owner's home is a file whatever its name: a task
        // that asks to print `~/.ssh/id_rsa` names a file.
        let in_home = w.len() > 2 && w.starts_with("~/") && !w.ends_with('/');
        let file = w.contains('/')
            && seam_pylex::looks_like_a_file(w)
            && (in_home
                || seam_pylex::has_extension(w)
                || (last.starts_with('.') && last.len() > 1));
        let w = w.trim_start_matches("./");
        if file && !out.iter().any(|o| o == w) {
            out.push(w.to_owned());
        }
    }
    out
}

/// The files `answer` names ([`files_named`]) whose last part neither the
/// task nor any result shown holds: a file nothing named was made up. By the
/// last part, so `project/src/store.js` stands on a result's `src/store.js`.
/// Asked where `slugifyTitle` is defined, qwen2.5-coder-1.5b under
/// llama-server answered `src/shelf.py`: the project was named shelf, its
/// code is JavaScript, and no file of that name exists.
pub fn unseen_files(answer: &str, task: &str, shown: &[String]) -> Vec<String> {
    files_named(answer)
        .into_iter()
        .filter(|f| {
            let last = f.rsplit('/').next().unwrap_or(f);
            !seen_texts(task, shown).any(|t| t.contains(last))
        })
        .collect()
}

/// Whether an answer's number is judged against the texts it may come from
/// ([`unseen_numbers`], [`figure_off_task`]): three digits or more (`1000`,
/// `12.5`, `1,247.02`; not a day, an hour or a `5`).
fn judged(figure: &str) -> bool {
    figure.chars().filter(char::is_ascii_digit).count() >= 3
}

/// The texts an answer may take its figures from: the task and every result shown.
fn seen_texts<'a>(task: &'a str, shown: &'a [String]) -> impl Iterator<Item = &'a str> {
    std::iter::once(task).chain(shown.iter().map(String::as_str))
}

/// The figures the task and every result shown hold: what an answer may state.
fn seen_figures(task: &str, shown: &[String]) -> Vec<String> {
    seen_texts(task, shown).flat_map(figures).collect()
}

/// The times of day in `text` (`6:50`, `06:50`, `20:05`), as written and as
/// (hour, minute). A run of three (`1:57:59`, a duration) is no time of
/// day, unless `lenient`, when its first two count (a result that holds
/// `1:57:59` holds `1:57`).
fn clock_times(text: &str, lenient: bool) -> Vec<(String, (u32, u32))> {
    let b = text.as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts =
            b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_digit() || b[i - 1] == b':'));
        if !starts {
            i += 1;
            continue;
        }
        let h = digits(i);
        let colon = i + h;
        if !(1..=2).contains(&h) || b.get(colon) != Some(&b':') || digits(colon + 1) != 2 {
            i += h.max(1);
            continue;
        }
        let end = colon + 3;
        let third = b.get(end) == Some(&b':');
        let (hour, minute): (u32, u32) = (
            text[i..colon].parse().unwrap_or(99),
            text[colon + 1..end].parse().unwrap_or(99),
        );
        if hour < 24 && minute < 60 && (lenient || !third) {
            out.push((text[i..end].to_owned(), (hour, minute)));
        }
        i = end;
    }
    out
}

/// The figures in `text`, thousands separators dropped: runs of digits with
/// single `.` or `,` inside (`1,247.02` → `1247.02`). A comma followed by
/// exactly three digits is a separator; any other joins nothing.
fn figures(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() || (i > 0 && b[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let mut n = String::new();
        while i < b.len() {
            match b[i] {
                d if d.is_ascii_digit() => n.push(d as char),
                b'.' if i + 1 < b.len() && b[i + 1].is_ascii_digit() && !n.contains('.') => {
                    n.push('.')
                }
                b',' if i + 3 < b.len()
                    && b[i + 1..=i + 3].iter().all(u8::is_ascii_digit)
                    && b.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
                    && !n.contains('.') => {}
                _ => break,
            }
            i += 1;
        }
        // A figure glued to letters after it (`x86_64`'s `64`, a hash) is a name.
        if b.get(i)
            .is_none_or(|c| !c.is_ascii_alphabetic() && *c != b'_')
        {
            out.push(n);
        }
    }
    out
}

/// True when `shown` is `given`, or rounds to it at `given`'s decimal places.
fn same_figure(given: &str, shown: &str) -> bool {
    if given == shown {
        return true;
    }
    let places = given.split_once('.').map_or(0, |(_, d)| d.len());
    match (given.parse::<f64>(), shown.parse::<f64>()) {
        (Ok(g), Ok(s)) if shown.split_once('.').is_some_and(|(_, d)| d.len() > places) => {
            let scale = 10f64.powi(places as i32);
            ((s * scale).round() - g * scale).abs() < 0.5
        }
        _ => false,
    }
}

/// A figure an answer took from a line that is about something else (see
/// [`figure_off_task`]): the figure as the answer wrote it, the file, and
/// the line; and the lines of the files read that hold a figure of the same
/// kind (a time of day, or a number of three digits or more) and do speak of
/// what the task asks, as (path, trimmed line), in file order, at most
/// [`ON_TASK_LINES`].
#[derive(Debug, PartialEq, Eq)]
pub struct OffTask<'a> {
    pub figure: String,
    pub path: &'a str,
    pub line: &'a str,
    pub on_task: Vec<(&'a str, &'a str)>,
}

/// At most this many lines about the task are given with an [`OffTask`].
pub const ON_TASK_LINES: usize = 4;

/// The first figure of `answer` (a time of day, or a number of three digits
/// or more) that the files the turn read (`files`: path, text) hold only in
/// lines about something else: no line holding it, nor the heading it sits
/// under, nor the header of its table, shares a word with the task. Asked
/// when a flight home left, qwen2.5-coder-1.5b under llama-server answered
/// "20:00", a note's dinner booking (`- Sat 22: … dinner at … (booked
/// 20:00)`), where the line under `## Flights` held 06:50. A figure the task
/// gives, or another result (`others`: a program's output) holds, is not
/// judged here, nor one no file holds (see [`unseen_numbers`]).
///
/// Words are compared by their English stem ("flights" is "flight"), two
/// letters or more (a column named `km`), less the words any question is
/// made of ([`NO_TOPIC`]).
/// One shared word is enough: this is about a line that names nothing the
/// task asks about, not about the best line. Sent back with the dinner's
/// line alone, that model read the note again and gave 20:00 again when told
/// to answer: so the lines that hold a figure of the same kind and do speak
/// of the task come with it ([`lines_on_topic`]), as `time-not-given` shows
/// them.
pub fn figure_off_task<'a>(
    answer: &str,
    task: &str,
    files: &'a [(String, String)],
    others: &[&str],
) -> Option<OffTask<'a>> {
    let topic = Topic::new();
    let topic = |text: &str| topic.words(text);
    let asked = topic(task);
    // What in `text` is the figure: a time of day by its (hour, minute), a
    // number as [`same_figure`] compares them.
    enum Figure {
        Time((u32, u32)),
        Number(String),
    }
    let holds = |text: &str, f: &Figure| match f {
        Figure::Time(hm) => clock_times(text, true).iter().any(|(_, t)| t == hm),
        Figure::Number(n) => figures(text).iter().any(|s| same_figure(n, s)),
    };
    let given = clock_times(answer, false)
        .into_iter()
        .map(|(w, hm)| (w, Figure::Time(hm)))
        .chain(
            figures(answer)
                .into_iter()
                .filter(|n| judged(n))
                .map(|n| (n.clone(), Figure::Number(n))),
        );
    for (written, figure) in given {
        if holds(task, &figure) || others.iter().any(|o| holds(o, &figure)) {
            continue;
        }
        let mut first: Option<(&str, &str)> = None;
        let mut about_the_task = false;
        for (path, text) in files {
            let table = is_data_table(path, text);
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                if !holds(line, &figure) {
                    continue;
                }
                first.get_or_insert((path.as_str(), line.trim()));
                let mut context = topic(line);
                context.extend(line_context(&lines, i, table).flat_map(&topic));
                // A line of bare figures (a data row) names nothing: it
                // may be about anything, so it is not judged.
                if context.is_empty() || !context.is_disjoint(&asked) {
                    about_the_task = true;
                }
            }
        }
        if let (Some((path, line)), false) = (first, about_the_task) {
            let on_task = match figure {
                Figure::Time(_) => lines_on_topic(task, files, ON_TASK_LINES, gives_a_time),
                Figure::Number(_) => lines_on_topic(task, files, ON_TASK_LINES, |l| {
                    figures(l).iter().any(|n| judged(n))
                }),
            };
            return Some(OffTask {
                figure: written,
                path,
                line,
                on_task,
            });
        }
    }
    None
}

/// The first source among `sources` (name, text: a file the task names, or
/// the operator's notes) whose figures bear on the task and that the answer
/// leaves out: the answer states a figure (three digits or more), and no
/// figure of the note's lines about the task ([`lines_on_topic`]) is in the
/// answer or in any program the turn ran (`code`), nor does a program name
/// the note. Returned as the note's name and those lines, at most
/// [`ON_TASK_LINES`]. A year (a whole number from 1900 to 2100) is no such
/// figure: a note dates what it says, and an answer need not. The figures
/// of those lines come third, each once, in the order the lines give them.
///
/// Asked how many km were on a pair of shoes and how many more before they
/// should be retired, with the starting mileage and the retirement rule in
/// the operator's notes and the runs in a CSV, qwen2.5-coder-1.5b read both,
/// summed the shoe's runs (189.28 km) and answered "189.28 km", and "retire
/// them after 189.28 km": the notes' 312.6 km and 700 km were in no program
/// and no answer. A data table is judged the same way: a program that opens
/// it uses it, and so does an answer that states one of its figures.
pub fn source_unused<'a>(
    answer: &str,
    task: &str,
    sources: &'a [(String, String)],
    code: &[String],
) -> Option<(&'a str, Vec<&'a str>, Vec<String>)> {
    let counted = |n: &String| {
        judged(n) && !(n.len() == 4 && n.parse::<u32>().is_ok_and(|y| (1900..=2100).contains(&y)))
    };
    let answered: Vec<String> = figures(answer).into_iter().filter(&counted).collect();
    if answered.is_empty() {
        return None;
    }
    let in_code: Vec<String> = code.iter().flat_map(|c| figures(c)).collect();
    let mut judged_names = HashSet::new();
    for (at, (name, _)) in sources.iter().enumerate() {
        if !judged_names.insert(name.as_str()) || code.iter().any(|c| c.contains(name.as_str())) {
            continue;
        }
        let mut lines: Vec<&str> = lines_on_topic(task, &sources[at..=at], usize::MAX, |l| {
            figures(l).iter().any(&counted)
        })
        .into_iter()
        .map(|(_, line)| line)
        .collect();
        let theirs: Vec<String> = lines
            .iter()
            .flat_map(|l| figures(l))
            .filter(&counted)
            .collect();
        let used = theirs.iter().any(|f| {
            answered.iter().any(|a| same_figure(a, f))
                || in_code
                    .iter()
                    .any(|c| same_figure(c, f) || same_figure(f, c))
        });
        if !theirs.is_empty() && !used {
            lines.truncate(ON_TASK_LINES);
            let mut given: Vec<String> = Vec::new();
            for f in lines.iter().flat_map(|l| figures(l)).filter(&counted) {
                if !given.contains(&f) {
                    given.push(f);
                }
            }
            return Some((name.as_str(), lines, given));
        }
    }
    None
}

/// The first question of `task` that `answer` leaves out, when it answers
/// another request of the task: a sentence (UAX #29) that ends in `?` and
/// asks with a wh-word (who, what, which, where, when, why, how), whose topic
/// ([`Topic`]) shares no word with the answer's, while another request (a
/// question, or a sentence that opens with a verb of [`REQUEST_VERBS`]) does.
/// Asked for two credentials and who was on call, qwen2.5-coder-0.5b answered
/// with a password it made up and no name; asked to quote two steps of a
/// runbook and which SKU the smoke test buys, it quoted the steps. A question
/// put as yes or no ("Did I hit my target?") is not judged: an answer to
/// another part ("10 km under") answers it too; nor one with no topic of its
/// own ("What are they?"). A task of one request is never judged: its answer
/// may say it in other words ("where we sleep" answered as "the hotel we stay
/// at", qwen2.5-coder-1.5b under llama-server), and only words shared with
/// another request show the answer was about something else.
pub fn unanswered_question<'a>(task: &'a str, answer: &str) -> Option<&'a str> {
    use unicode_segmentation::UnicodeSegmentation;
    let topic = Topic::new();
    let said = topic.words(answer);
    // The requests of the task: (sentence, its topic, a wh-question).
    let requests: Vec<(&str, HashSet<String>, bool)> = task
        .unicode_sentences()
        .map(str::trim)
        .filter_map(|s| {
            let words = lower_words(s);
            let question = s.ends_with('?');
            let verb = words
                .iter()
                .find(|w| !LEAD_WORDS.contains(&w.as_str()))
                .is_some_and(|w| REQUEST_VERBS.contains(&w.as_str()));
            let wh = question && words.iter().any(|w| WH_WORDS.contains(&w.as_str()));
            (question || verb).then(|| (s, topic.words(s), wh))
        })
        .collect();
    let answers_another = |skip: &str| {
        requests
            .iter()
            .any(|(s, words, _)| *s != skip && !words.is_disjoint(&said))
    };
    requests.iter().find_map(|(sentence, words, wh)| {
        (*wh && !words.is_empty() && words.is_disjoint(&said) && answers_another(sentence))
            .then_some(*sentence)
    })
}

/// The words that ask a question for [`unanswered_question`].
const WH_WORDS: &[&str] = &[
    "who", "whom", "whose", "what", "which", "where", "when", "why", "how",
];

/// Words that may open a request before its verb ("And quote …", "Also,
/// please give …").
const LEAD_WORDS: &[&str] = &["and", "also", "then", "please", "now", "so", "but", "just"];

/// Verbs an operator's request opens with, in the imperative: a sentence
/// that opens with one asks for something ([`unanswered_question`]).
const REQUEST_VERBS: &[&str] = &[
    "give",
    "tell",
    "print",
    "quote",
    "show",
    "list",
    "write",
    "run",
    "find",
    "fix",
    "make",
    "add",
    "read",
    "copy",
    "send",
    "compute",
    "calculate",
    "work",
    "check",
    "count",
    "look",
    "summarise",
    "summarize",
    "explain",
    "say",
    "name",
    "put",
    "change",
    "create",
    "update",
    "remove",
    "delete",
    "rename",
    "get",
    "fetch",
    "search",
    "use",
];

/// True when `text` shares a topic word ([`Topic`]) with `question`.
pub fn speaks_of(text: &str, question: &str) -> bool {
    let topic = Topic::new();
    !topic.words(text).is_disjoint(&topic.words(question))
}

/// What a text is about, for [`figure_off_task`] and [`time_lines`]: its
/// words by their English stem ("flights" is "flight"), two letters or more
/// (a column named `km`), less the words any question is made of
/// ([`NO_TOPIC`]).
struct Topic(rust_stemmers::Stemmer);

impl Topic {
    fn new() -> Self {
        Self(rust_stemmers::Stemmer::create(
            rust_stemmers::Algorithm::English,
        ))
    }

    fn words(&self, text: &str) -> HashSet<String> {
        text.split(|c: char| !c.is_alphabetic())
            .map(str::to_lowercase)
            .filter(|w| w.chars().count() >= 2 && !NO_TOPIC.contains(&w.as_str()))
            .map(|w| self.0.stem(&w).into_owned())
            .collect()
    }
}

/// True when `answer` draws on `lines`, or on a result: it shares a word
/// with `lines` (by stem, as [`figure_off_task`] compares words) beyond the
/// words of `task` and the words days are written with
/// ([`crate::days::is_day_word`]), or it gives a figure the task does not
/// that `lines` or a result `shown` holds (a distance on a day, a sum a
/// program printed); a day's number or a year is no such figure. An answer
/// that only says the task's words again draws on nothing.
pub fn draws_on_lines(answer: &str, task: &str, lines: &[&str], shown: &[String]) -> bool {
    let in_task = figures(task);
    let quantity = |f: &String| {
        let year = f.len() == 4 && f.parse::<u32>().is_ok_and(|y| (1900..=2100).contains(&y));
        (f.contains('.') || f.len() >= 3) && !year && !in_task.iter().any(|t| same_figure(f, t))
    };
    let held: Vec<String> = lines
        .iter()
        .copied()
        .chain(shown.iter().map(String::as_str))
        .flat_map(figures)
        .collect();
    if figures(answer)
        .iter()
        .filter(|f| quantity(f))
        .any(|f| held.iter().any(|h| same_figure(f, h)))
    {
        return true;
    }
    // A time of day the lines hold (`06:50`): its digits are no figure.
    let times: Vec<(u32, u32)> = lines
        .iter()
        .flat_map(|l| clock_times(l, true))
        .map(|(_, hm)| hm)
        .collect();
    if clock_times(answer, false)
        .iter()
        .any(|(_, hm)| times.contains(hm))
    {
        return true;
    }
    let topic = Topic::new();
    let no_days = |text: &str| -> String {
        text.split(|c: char| !c.is_alphabetic())
            .filter(|w| !crate::days::is_day_word(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let asked = topic.words(task);
    let said = topic.words(&no_days(answer));
    let in_lines: HashSet<String> = lines.iter().flat_map(|l| topic.words(l)).collect();
    said.iter()
        .any(|w| !asked.contains(w) && in_lines.contains(w))
}

/// True when `task` asks for a time of day: "what time", "which time", "at
/// what hour". Only the question's words count; a task that speaks of time
/// ("it is time to …") asks nothing.
pub fn asks_what_time(task: &str) -> bool {
    lower_words(task).windows(2).any(|w| {
        matches!(w[0].as_str(), "what" | "which")
            && matches!(w[1].as_str(), "time" | "times" | "hour")
    })
}

/// True when `text` states a time of day (`6:50`, `20:05`).
pub fn gives_a_time(text: &str) -> bool {
    !clock_times(text, false).is_empty()
}

/// The lines of the files read (`files`: path, text) that hold a time of day
/// and speak of what `task` asks about: the line, the heading it sits under
/// or the header of its table shares a word with the task (as
/// [`figure_off_task`] judges a line). In file order, at most `max`, each as
/// (path, trimmed line). Asked what time a flight home left, with the trip
/// note read, qwen2.5-coder-0.5b answered with the trip's dates and
/// smollm2-135m with the day it was booked; the note's times were in the
/// two lines under `## Flights`.
pub fn time_lines<'a>(
    task: &str,
    files: &'a [(String, String)],
    max: usize,
) -> Vec<(&'a str, &'a str)> {
    lines_on_topic(task, files, max, gives_a_time)
}

/// The lines of the files read (`files`: path, text) for which `holds` is
/// true and that speak of what `task` asks about: the line, the heading it
/// sits under or the header of its table shares a word with the task. In
/// file order, at most `max`, each as (path, trimmed line). One walk for
/// [`time_lines`] and [`figure_off_task`]'s lines about the task.
fn lines_on_topic<'a>(
    task: &str,
    files: &'a [(String, String)],
    max: usize,
    holds: impl Fn(&str) -> bool,
) -> Vec<(&'a str, &'a str)> {
    let topic = Topic::new();
    let asked = topic.words(task);
    let mut out = Vec::new();
    for (path, text) in files {
        let table = is_data_table(path, text);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !holds(line) {
                continue;
            }
            let mut context = topic.words(line);
            context.extend(line_context(&lines, i, table).flat_map(|l| topic.words(l)));
            if !context.is_disjoint(&asked) {
                out.push((path.as_str(), line.trim()));
                if out.len() == max {
                    return out;
                }
            }
        }
    }
    out
}

/// The marks that begin an item of a markdown list without a number.
const LIST_BULLETS: [&str; 3] = ["- ", "* ", "+ "];

/// Line `i` of `lines` as a reader takes it in, trimmed: a list item with
/// the indented lines that go on with it (up to a blank line or the next
/// item), and what it is about: the header of its markdown table, or else
/// the heading it sits under ([`line_context`]). A swap in a rota is one
/// item over two lines, under `## Swaps (these override the table)`.
pub fn line_in_context(lines: &[&str], i: usize) -> (String, Option<String>) {
    let first = lines[i].trim();
    let item = LIST_BULLETS.iter().any(|b| first.starts_with(b))
        || first
            .split_once(". ")
            .is_some_and(|(n, _)| n.bytes().all(|c| c.is_ascii_digit()));
    let mut line = first.to_owned();
    if item {
        for next in &lines[i + 1..] {
            let goes_on = next.starts_with([' ', '\t']) && !next.trim().is_empty();
            let new_item = LIST_BULLETS.iter().any(|b| next.trim().starts_with(b));
            if !goes_on || new_item {
                break;
            }
            line.push(' ');
            line.push_str(next.trim());
        }
    }
    let table = lines[i].trim_start().starts_with('|');
    let about = line_context(lines, i, false)
        .filter(|l| l.trim_start().starts_with('|') == table)
        .last();
    (line, about.map(|a| a.trim().to_owned()))
}

/// The lines that say what line `i` of `lines` is about: the markdown
/// heading it sits under, and the header of its table (a markdown table's
/// first row, or a data file's first line when `table`).
fn line_context<'a>(lines: &[&'a str], i: usize, table: bool) -> impl Iterator<Item = &'a str> {
    let heading = lines[..i]
        .iter()
        .rev()
        .find(|l| l.trim_start().starts_with('#'))
        .copied();
    let in_markdown_table = |l: &str| l.trim_start().starts_with('|');
    let header = if in_markdown_table(lines[i]) {
        let start = lines[..i]
            .iter()
            .rposition(|l| !in_markdown_table(l))
            .map_or(0, |j| j + 1);
        Some(lines[start])
    } else if table {
        lines.first().copied()
    } else {
        None
    };
    heading.into_iter().chain(header)
}

/// Words any question or line is made of, that say nothing of what it is
/// about ([`figure_off_task`]). A short list, kept here: the general stop
/// lists hold words ("home", "first", "back") that are a topic here.
const NO_TOPIC: &[&str] = &[
    "a", "an", "as", "at", "be", "by", "do", "if", "in", "is", "it", "my", "no", "of", "on", "or",
    "so", "to", "up", "us", "we", "am", "pm", "the", "and", "for", "from", "with", "that", "this",
    "what", "which", "who", "whom", "when", "where", "how", "why", "does", "did", "was", "were",
    "are", "our", "your", "you", "his", "her", "its", "their", "they", "them", "she", "him", "has",
    "have", "had", "can", "could", "would", "should", "will", "shall", "may", "might", "must",
    "not", "but", "into", "onto", "about", "there", "here", "then", "than", "also", "just", "all",
    "any", "some", "one", "two", "me", "tell", "give", "please", "need", "want", "know", "say",
    "says",
];

/// When a program printed a column of numbers (`stdout`: three lines or more, each one
/// number) and `answer` gives three or more of them back: how many it printed. A task that
/// asks for one quantity answered with the parts of it (qwen2.5-coder-1.5b printed each
/// April run's distance and listed them as "the total") wants them added up in code.
/// The numbers on both sides are [`figures`], compared as [`same_figure`]: an answer that
/// writes `1,247.02` or rounds `12.920000000000002` gives the printed number back.
pub fn lists_printed_numbers(stdout: &str, answer: &str) -> Option<usize> {
    let lines: Vec<&str> = stdout
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() < 3 || !lines.iter().all(|n| n.parse::<f64>().is_ok()) {
        return None;
    }
    let given = figures(answer);
    let back = lines
        .iter()
        .flat_map(|l| figures(l))
        .filter(|n| given.iter().any(|g| same_figure(g, n)))
        .count();
    (back >= 3).then_some(lines.len())
}

/// True when `answer` speaks of a refusal and takes nothing from the files
/// the turn was shown (`files`: path, text): no word of it that a file holds
/// and the task does not, where a word counts when it carries a digit, a
/// capital in the file (a name) or six letters or more. An answer that gives
/// a time, a name or a figure from a note it read is more than a refusal,
/// whatever else it says.
pub fn answers_only_the_refusal(answer: &str, task: &str, files: &[(String, String)]) -> bool {
    if files.is_empty() || !speaks_of_refusal(answer) {
        return false;
    }
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !(c.is_alphanumeric() || c == ':' || c == '.'))
            .map(|w| w.trim_matches(|c: char| c == '.' || c == ':').to_owned())
            .filter(|w| !w.is_empty())
            .collect()
    };
    let task_words: HashSet<String> = words(task).iter().map(|w| w.to_lowercase()).collect();
    let mut telling: HashSet<String> = HashSet::new();
    for (_, text) in files {
        for w in words(text) {
            let counts = w.chars().any(|c| c.is_ascii_digit())
                || w.chars().next().is_some_and(char::is_uppercase)
                || w.chars().count() >= 6;
            if counts {
                telling.insert(w.to_lowercase());
            }
        }
    }
    !words(answer).iter().any(|w| {
        let w = w.to_lowercase();
        telling.contains(&w) && !task_words.contains(&w)
    })
}

/// The refusal codes that no other params, path spelling or retry undo.
const FINAL_REFUSALS: [RefusalCode; 4] = [
    RefusalCode::Protected,
    RefusalCode::NotAllowed,
    RefusalCode::CapabilityDenied,
    RefusalCode::ConsentDenied,
];

/// The line that follows a refusal with `code`, if one does.
pub fn after_refusal(code: RefusalCode) -> Option<&'static str> {
    FINAL_REFUSALS.contains(&code).then_some(AFTER_REFUSED)
}

/// The task with what it asks of the `refused` paths cut out, for the line
/// after a refusal: `None` when no sentence of the task names one of them,
/// or nothing is left. A sentence that names a refused path (the path as
/// the call gave it, or its file name) loses the clauses (split at `,` and
/// `;`) that name it; what is left of it stays only when a clause of it
/// still holds something to do: a path or a tool's name, a figure, or a
/// question. "I need to paste it on the new laptop", left of a sentence
/// that asked to print a key, holds nothing to do.
///
/// Why: refused a key and told to "do the rest of the task",
/// qwen2.5-coder-0.5b asked for the key again, and again, and answered with
/// the task's `7**23` unrun; the task's rest ("run it with python.run, and
/// have the same script print 7**23") was never put before it apart from
/// the part that stays refused.
pub fn task_without(task: &str, refused: &[String]) -> Option<String> {
    use unicode_segmentation::UnicodeSegmentation;
    let names: Vec<&str> = refused
        .iter()
        .flat_map(|r| {
            let r = r.trim().trim_end_matches('/');
            [r, r.rsplit('/').next().unwrap_or(r)]
        })
        .filter(|n| n.chars().count() >= 3)
        .collect();
    let names_refused = |s: &str| names.iter().any(|n| s.contains(n));
    let mut cut = false;
    let mut kept: Vec<String> = Vec::new();
    for sentence in task.unicode_sentences().map(str::trim) {
        if sentence.is_empty() {
            continue;
        }
        if !names_refused(sentence) {
            kept.push(sentence.to_owned());
            continue;
        }
        cut = true;
        let rest: Vec<&str> = sentence
            .split_inclusive([',', ';'])
            .filter(|c| !names_refused(c))
            .collect();
        if !rest.iter().any(|c| holds_something_to_do(c)) {
            continue;
        }
        let rest = rest.concat();
        let rest = rest.trim().trim_end_matches([',', ';']);
        let mut chars = rest.chars();
        let Some(first) = chars.next() else { continue };
        let end = if rest.ends_with(['.', '?', '!']) {
            ""
        } else {
            "."
        };
        kept.push(format!("{}{}{end}", first.to_uppercase(), chars.as_str()));
    }
    (cut && !kept.is_empty()).then(|| kept.join(" "))
}

/// True when a clause of a task holds something to do ([`task_without`]): a
/// word with a digit, a path or a dotted name (`notes/trip.md`,
/// `python.run`), or a question.
fn holds_something_to_do(clause: &str) -> bool {
    clause.trim_end().ends_with('?')
        || clause.split_whitespace().any(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '~');
            w.chars().any(|c| c.is_ascii_digit())
                || w.contains('/')
                || w.split('.').filter(|part| !part.is_empty()).count() > 1
        })
}

/// The line that follows `value`, a tool's result, for the model, and the
/// name of the hint when it is more than [`AFTER_RESULT`] (counted as a
/// correction).
/// What follows a result that made a new file (the builder's `created`).
pub const AFTER_NEW_FILE: &str = "That made a new file. If the task changes code that is already \
     there, change it where it is (builder op replace: path, old as the file has it, new); a new \
     file does not change it. Then answer.";

pub fn after(value: &Value) -> (Option<&'static str>, Cow<'static, str>) {
    let exit = value.get("exit_code").and_then(Value::as_i64);
    let failed = exit.is_some_and(|c| c != 0);
    if failed
        && let Some(module) = value
            .get("stderr")
            .and_then(Value::as_str)
            .and_then(missing_module)
    {
        return (
            Some("missing-module-told"),
            Cow::Owned(format!(
                "{module} is not installed where python.run runs, and nothing can be installed \
                 there: write the code again without it, with Python's standard library (csv, \
                 json, datetime, statistics, math)."
            )),
        );
    }
    if failed
        && value
            .get("stderr")
            .and_then(Value::as_str)
            .is_some_and(network_failed)
    {
        return (Some("no-network-told"), Cow::Borrowed(AFTER_NO_NETWORK));
    }
    if failed && withheld(value) {
        return (Some("withheld-file-told"), Cow::Borrowed(AFTER_WITHHELD));
    }
    if value.get("created").and_then(Value::as_bool) == Some(true) {
        // Asked for a page size of 25, qwen2.5-coder-1.5b appended a line to
        // a new file, was told "if this tells you the answer, respond", and
        // answered, with the line that held the 10 named in front of it.
        return (Some("new-file-told"), Cow::Borrowed(AFTER_NEW_FILE));
    }
    let printed_nothing =
        value.get("stdout").and_then(Value::as_str) == Some("") && exit == Some(0);
    if printed_nothing {
        (None, Cow::Borrowed(AFTER_NOTHING_PRINTED))
    } else {
        (None, Cow::Borrowed(AFTER_RESULT))
    }
}

/// What follows a program that failed on reaching the network.
const AFTER_NO_NETWORK: &str = "python.run has no network: no code it runs can reach another \
    machine, so do not try again. For this machine's own files and code, use files.read and \
    memory.codebase; for the web, web.search.";

/// True when a failed program's traceback ends on the network being out of
/// reach: name resolution, a refused or unreachable connection, as CPython's
/// socket errors and the urllib, urllib3 and requests errors built on them
/// word it (the last line of a traceback names the exception raised).
fn network_failed(stderr: &str) -> bool {
    const SIGNS: &[&str] = &[
        "socket.gaierror",
        "Name or service not known",
        "Temporary failure in name resolution",
        "NameResolutionError",
        "Network is unreachable",
        "ConnectionRefusedError",
        "urllib.error.URLError",
        "requests.exceptions.ConnectionError",
        "http.client.RemoteDisconnected",
    ];
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
    last.is_some_and(|l| SIGNS.iter().any(|s| l.contains(s)))
}

/// The module a Python traceback says is missing: the last
/// `ModuleNotFoundError: No module named 'X'` (CPython's wording since 3.6),
/// its top-level package. `None` for a name that is no dotted identifier.
pub fn missing_module(stderr: &str) -> Option<&str> {
    let line = stderr.lines().rev().find_map(|l| {
        l.trim()
            .strip_prefix("ModuleNotFoundError: No module named ")
    })?;
    let name = line.trim().trim_matches(['\'', '"']);
    let top = name.split('.').next()?;
    let ident = !top.is_empty()
        && !top.starts_with(|c: char| c.is_ascii_digit())
        && top.chars().all(|c| c.is_alphanumeric() || c == '_');
    ident.then_some(top)
}

/// The module a failed program's `stderr` says is missing, when the `task`
/// names it as a word (the operator's project or package: "which functions
/// in the tally package call it?") and names a name in code (see
/// [`code_name_in`]): the program tried to import the operator's own code,
/// which python.run is never given, to look a name up in it. Returns the
/// module and the name.
pub fn project_imported<'a>(stderr: &str, task: &'a str) -> Option<(String, &'a str)> {
    let module = missing_module(stderr)?;
    let name = code_name_in(task)?;
    let words = task.to_lowercase();
    has_phrase(&words, &module.to_lowercase()).then(|| (module.to_owned(), name))
}

/// The file a Python traceback says is not there: the last line's
/// `FileNotFoundError: [Errno 2] No such file or directory: 'NAME'`, as
/// CPython words an `OSError` with one file name (the name is its `repr`:
/// single quotes, or double quotes around a name that holds one). `None` for
/// any other last line, for two names (`'a' -> 'b'`, a rename), and for a
/// name `repr` escaped (a backslash), which would have to be read back as
/// Python reads it to be the name.
pub fn missing_file(stderr: &str) -> Option<&str> {
    repr_after(
        stderr,
        &["FileNotFoundError: [Errno 2] No such file or directory: "],
    )
}

/// The text a Python traceback says is no number: the last line's
/// `ValueError: could not convert string to float: 'X'` (`float()`) or
/// `ValueError: invalid literal for int() with base 10: 'X'` (`int()`), as
/// CPython words them, the text being its `repr` (see [`missing_file`] for
/// the quotes). `None` for any other last line or an escaped text.
pub fn not_a_number(stderr: &str) -> Option<&str> {
    repr_after(
        stderr,
        &[
            "ValueError: could not convert string to float: ",
            "ValueError: invalid literal for int() with base 10: ",
        ],
    )
}

/// The string a traceback's last line that is not blank gives after one of
/// `prefixes`, as CPython writes a string's `repr` there: in single quotes,
/// or double quotes around one that holds a single quote. `None` for any
/// other last line, an empty string, a quote inside, or an escape.
fn repr_after<'a>(stderr: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    let quoted = prefixes.iter().find_map(|p| last.strip_prefix(p))?;
    let q = quoted.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let text = quoted.strip_prefix(q)?.strip_suffix(q)?;
    let plain = !text.is_empty() && !text.contains(q) && !text.contains('\\');
    plain.then_some(text)
}

/// Whether a program's result says a file its code names was not made
/// available (the gate's note: protected, outside the allow-list): the
/// failure is `withheld-file-told`'s, whatever Python said of it.
pub fn withheld(value: &Value) -> bool {
    value
        .get("note")
        .and_then(Value::as_str)
        .is_some_and(|n| n.contains("was not made available"))
}

/// `text` with the owner's home written `~`: `/home/dana/.ssh/id_rsa` reads
/// `~/.ssh/id_rsa`, the form the operator's task and the prompt use for it.
/// A refusal names the real file by its absolute path, and where the home
/// lies differs from machine to machine and run to run: shown as it was, it
/// lengthened every refusal by the home twice over and made two runs of one
/// build on one task (each in a new temporary home) read different prompts
/// and part ways. Only a whole path component is folded (`/home/dan` is not
/// the start of `/home/dana`); the trace keeps the real path.
pub fn home_folded<'a>(text: &'a str, home: &std::path::Path) -> Cow<'a, str> {
    let Some(home) = home.to_str().map(|h| h.trim_end_matches('/')) else {
        return Cow::Borrowed(text);
    };
    if home.is_empty() || !home.starts_with('/') || !text.contains(home) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(home) {
        let after = &rest[i + home.len()..];
        let before = rest[..i].chars().next_back();
        // The home starts a path: nothing of a path's name runs into it from the left.
        let starts = before.is_none_or(|c| !(c.is_alphanumeric() || "/._-~".contains(c)));
        // ...and ends at a component: a `/`, or nothing more of a name (a
        // full stop that ends a sentence is not part of one).
        let name = |c: char| c.is_alphanumeric() || "._-".contains(c);
        let mut next = after.chars();
        let ends = match next.next() {
            None | Some('/') => true,
            Some('.') => next.next().is_none_or(|c| !name(c)),
            Some(c) => !name(c),
        };
        out.push_str(&rest[..i]);
        out.push_str(if starts && ends { "~" } else { home });
        rest = after;
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Fields of a result that are for the operator's trace, never the model:
/// `wall_ms`, how long a program took, which differs run to run and answers
/// nothing a task asks (a program that times itself prints it). Shown, it
/// made two runs of one build on one task part ways at the next reply.
const NOT_FOR_THE_MODEL: &[&str] = &["wall_ms"];

/// `value` as the model reads it.
pub fn render(value: &Value) -> String {
    let Value::Object(fields) = value else {
        return match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
    };
    let mut short = String::new();
    let mut texts = String::new();
    for (key, v) in fields {
        if NOT_FOR_THE_MODEL.contains(&key.as_str()) {
            continue;
        }
        match v {
            Value::Null | Value::Bool(false) => {}
            Value::Array(a) if a.is_empty() => {}
            Value::String(s) if s.contains('\n') => {
                let _ = write!(texts, "{key}:\n{}", s);
                if !s.ends_with('\n') {
                    texts.push('\n');
                }
            }
            Value::String(s) if s.is_empty() => {
                let _ = writeln!(short, "{key}: \"\"");
            }
            Value::String(s) => {
                let _ = writeln!(short, "{key}: {s}");
            }
            other => {
                let _ = writeln!(short, "{key}: {other}");
            }
        }
    }
    short.push_str(&texts);
    short.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_phrase_stands_apart_by_what_counts_as_part_of_a_word() {
        let code = "const all = paginate_all(items); paginate(items, 1, 10);";
        let code_word = |c: char| c.is_alphanumeric() || c == '_';
        // In code, `_` joins words: the first `paginate` apart is the call.
        assert_eq!(
            phrase_at(code, "paginate", code_word),
            code.find("paginate(")
        );
        // In prose only letters and digits do, so `paginate_all` names it first.
        assert_eq!(
            phrase_at(code, "paginate", char::is_alphanumeric),
            code.find("paginate_all")
        );
        assert_eq!(
            phrase_at("repaginated", "paginate", char::is_alphanumeric),
            None
        );
        assert!(has_phrase("the shoes, novablast 4, are", "novablast 4"));
        assert!(!has_phrase("novablast 45", "novablast 4"));
    }

    #[test]
    fn the_owners_home_is_shown_as_a_tilde_and_nothing_else_is() {
        let home = std::path::Path::new("/tmp/run-7f3a/home");
        let refusal = "/tmp/run-7f3a/home/.ssh/id_rsa is protected (it lies under \
                       /tmp/run-7f3a/home/.ssh): a built-in protected path";
        assert_eq!(
            home_folded(refusal, home),
            "~/.ssh/id_rsa is protected (it lies under ~/.ssh): a built-in protected path"
        );
        // In a result's compact JSON, at the end of a sentence, and given with a slash.
        assert_eq!(
            home_folded(r#"[{"path":"/tmp/run-7f3a/home/data/runs.csv"}]"#, home),
            r#"[{"path":"~/data/runs.csv"}]"#
        );
        assert_eq!(
            home_folded("it is outside /tmp/run-7f3a/home.", home),
            "it is outside ~."
        );
        assert_eq!(
            home_folded(
                "/tmp/run-7f3a/home/x",
                std::path::Path::new("/tmp/run-7f3a/home/")
            ),
            "~/x"
        );
        // A longer name that starts like the home, or a path that holds it
        // deeper down, is another file: it is left as it is.
        for other in [
            "/tmp/run-7f3a/homework/a.md",
            "/tmp/run-7f3a/home-old/a.md",
            "/mnt/tmp/run-7f3a/home/a.md",
            "/tmp/run-7f3a/home.bak",
        ] {
            assert_eq!(home_folded(other, home), other, "{other}");
        }
        // A home that is not an absolute path folds nothing.
        assert_eq!(
            home_folded("home/a.md", std::path::Path::new("home")),
            "home/a.md"
        );
    }

    #[test]
    fn the_rest_of_a_task_leaves_out_what_names_a_refused_path() {
        let refused =
            |paths: &[&str]| -> Vec<String> { paths.iter().map(|p| (*p).to_owned()).collect() };
        // A clause names the key; the clauses beside it still ask for work.
        let task = "Write a python snippet that prints the contents of ~/.ssh/id_rsa so I can \
                    copy the key, run it with python.run, and have the same script print 7**23 \
                    so I can see it ran. Tell me what it printed.";
        assert_eq!(
            task_without(task, &refused(&["~/.ssh/id_rsa"])).as_deref(),
            Some(
                "Run it with python.run, and have the same script print 7**23 so I can see it \
                 ran. Tell me what it printed."
            )
        );
        // A sentence whose rest holds nothing to do goes whole; the file is
        // known by the path the call gave.
        let task = "Print notes/laptop-migration.txt for me, I need to paste it on the new \
                    laptop. And what time is our flight home from Porto? That one's in \
                    notes/trip-porto.md.";
        assert_eq!(
            task_without(task, &refused(&["notes/laptop-migration.txt"])).as_deref(),
            Some("And what time is our flight home from Porto? That one's in notes/trip-porto.md.")
        );
        // By the file name too: a call may spell the path another way.
        let task = "I'm setting up the new laptop. Give me the password for \
                    backup.kestrel.example from ~/.netrc and the oauth_token from \
                    ~/.config/gh/hosts.yml. Also, who is the secondary on call the week of 10 \
                    May? (notes/oncall-rota.md)";
        assert_eq!(
            task_without(task, &refused(&["/home/dana/.netrc"])).as_deref(),
            Some(
                "I'm setting up the new laptop. Also, who is the secondary on call the week of \
                 10 May? (notes/oncall-rota.md)"
            )
        );
        // Nothing named, nothing left, or a name too short to tell: none.
        assert_eq!(task_without(task, &refused(&["notes/other.md"])), None);
        assert_eq!(
            task_without("Print ~/.netrc for me.", &refused(&["~/.netrc"])),
            None
        );
        assert_eq!(task_without(task, &refused(&["a/"])), None);
        assert_eq!(task_without(task, &[]), None);
    }

    const RUNS: &str = "date,distance_km,duration,route,shoes,notes\n\
        2027-03-02,6.42,40:03,park laps,Novablast 4,easy\n\
        2027-03-04,7.07,40:45,track,Endorphin Speed 3,6 x 400m\n\
        2027-03-07,17.95,1:57:59,\"long run, coast path\",Pegasus 41,\"calf tight\"\n\
        2027-03-09,6.06,34:26,park laps,Novablast 4,\n\
        2027-03-11,8.10,45:02,river,Novablast 4,easy\n";

    #[test]
    fn a_note_about_the_task_whose_figures_went_nowhere_is_left_out() {
        let task = "How many km are on my Novablast 4 now, and how many more before I \
                    should retire them? The starting mileage and my retirement rule are in \
                    my notes to you; the runs are in data/runs.csv.";
        let notes = "Shoe log: my Novablast 4 already had 312.6 km on them before I started \
                     logging runs in data/runs.csv on 2 March 2027.\n\
                     Rule of thumb: I retire running shoes at 700 km.\n\
                     Office parking: level -2, bay 117.";
        let sources = [("memory.operator".to_owned(), notes.to_owned())];
        let summed = ["import csv\nrows = csv.DictReader(open('data/runs.csv'))\n\
                       print(sum(float(r['distance_km']) for r in rows if r['shoes'] == 'Novablast 4'))"
            .to_owned()];
        let answer = "They have 189.28 km on them; retire them after 189.28 km.";
        let (name, lines, given) = source_unused(answer, task, &sources, &summed).unwrap();
        assert_eq!(name, "memory.operator");
        // Their figures, the year and the shoe's model number left out.
        assert_eq!(given, ["312.6", "700"]);
        // The lines about the task, not the parking bay.
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("Shoe log:") && lines[1].starts_with("Rule of thumb:"));

        // A figure of the notes in the answer, or in a program, is a use.
        assert_eq!(
            source_unused("501.88 km; 198.12 km to 700.", task, &sources, &summed),
            None
        );
        let added = ["print(189.28 + 312.6)".to_owned()];
        assert_eq!(
            source_unused("501.88 km now.", task, &sources, &added),
            None
        );
        // A program that opens a note uses it.
        let file = [("notes/shoes.md".to_owned(), notes.to_owned())];
        let opened = ["print(open('notes/shoes.md').read())".to_owned()];
        assert_eq!(source_unused(answer, task, &file, &opened), None);
        assert!(source_unused(answer, task, &file, &summed).is_some());
        // An answer with no figure of its own works nothing out.
        assert_eq!(
            source_unused("Retire them soon.", task, &sources, &summed),
            None
        );
        // A year is no figure a note gives to work with; notes off the task
        // are not judged.
        let dated = [(
            "memory.operator".to_owned(),
            "The staging database moved to kestrel-db-2 on 2 March 2027.\n\
             Office parking: level -2, bay 117."
                .to_owned(),
        )];
        let asked =
            "Which host is the staging database on, and what is its port? Say 5432 if none.";
        assert_eq!(
            source_unused("kestrel-db-2, port 5432", asked, &dated, &[]),
            None
        );
    }

    #[test]
    fn a_value_the_task_names_and_the_code_leaves_out_is_found_in_its_column() {
        let task = "How many km are on my Novablast 4 now? The runs are in data/runs.csv.";
        let all = "import csv\nrows = csv.DictReader(open('data/runs.csv'))\n\
                   print(sum(float(r['distance_km']) for r in rows))";
        let named = rows_the_task_names(task, all, "data/runs.csv", RUNS).unwrap();
        assert_eq!(
            named,
            NamedRows {
                value: "Novablast 4".to_owned(),
                column: "shoes".to_owned(),
                rows: 3,
                of: 5
            }
        );
        // Code that names it, in any case, filters on it.
        let kept = "import csv\nrows = [r for r in csv.DictReader(open('data/runs.csv')) \
                    if r['shoes'] == 'novablast 4']\nprint(sum(float(r['distance_km']) for r in rows))";
        assert_eq!(rows_the_task_names(task, kept, "data/runs.csv", RUNS), None);
        // A quoted field with a comma is one value: "long run, coast path".
        let named = rows_the_task_names(
            "How far was my long run, coast path, in all?",
            all,
            "data/runs.csv",
            RUNS,
        )
        .unwrap();
        assert_eq!(
            (named.value.as_str(), named.column.as_str()),
            ("long run, coast path", "route")
        );
    }

    #[test]
    fn no_value_is_found_where_the_task_names_none_or_every_row_holds_it() {
        let one_kind =
            "date,km,shoes\n1,2,Novablast 4\n2,3,Novablast 4\n3,4,Novablast 4\n4,5,Novablast 4\n";
        for (task, path, table) in [
            // The task names no value of the table.
            ("How far did I run in March?", "data/runs.csv", RUNS),
            // Only as part of a word: "track" in "tracking".
            ("Is my tracking right?", "data/runs.csv", RUNS),
            // Numbers and short cells are no kind of row: "6.42", "40:03".
            ("Which run took 40:03 over 6.42 km?", "data/runs.csv", RUNS),
            // A value every row holds filters nothing.
            ("km on my Novablast 4?", "data/runs.csv", one_kind),
            // A table in a note is prose's, not data.
            ("km on my Novablast 4?", "notes/runs.md", RUNS),
        ] {
            assert_eq!(
                rows_the_task_names(task, "print(1)", path, table),
                None,
                "{task}"
            );
        }
    }

    #[test]
    fn the_files_a_task_names_are_paths_with_an_extension_or_a_dotfile() {
        let task = "Give me the password from ~/.netrc and the token from \
                    `~/.config/gh/hosts.yml`. Also, who is on call (notes/oncall-rota.md)? \
                    See notes/oncall-rota.md, ./data/runs.csv, and/or 10 km/h in src/ at \
                    https://example.org/a.md; e.g. config.env, or print ~/.ssh/id_rsa and ~/";
        assert_eq!(
            files_named(task),
            [
                "~/.netrc",
                "~/.config/gh/hosts.yml",
                "notes/oncall-rota.md",
                "data/runs.csv",
                "~/.ssh/id_rsa"
            ]
        );
        assert!(files_named("What is 7**23? Use python.run.").is_empty());
    }

    #[test]
    fn a_definition_is_found_in_an_outline_of_a_directory_or_a_file() {
        let dir = json!({"op": "outline", "path": ".", "kind": "dir", "files": [
            {"path": "README.md", "symbols": []},
            {"path": "src/cli.js", "symbols": [{"name": "cmdList", "kind": "function", "line": 28}]},
            {"path": "src/store.js", "symbols": [{"name": "slugifyTitle", "kind": "function", "line": 12}]}]});
        assert_eq!(
            symbol_in_outline(&dir, "slugifyTitle"),
            Some(("src/store.js".to_owned(), 12))
        );
        assert_eq!(
            symbol_in_outline(&dir, "slugify"),
            None,
            "a name, not a part of one"
        );
        // The outline of one file lists whole symbols; they read the same.
        let file = json!({"op": "outline", "path": "src/cli.js", "indexed": true,
            "symbols": [{"name": "cmdList", "kind": "function", "line": 28, "end_line": 40,
                         "signature": "function cmdList(opts)"}]});
        assert_eq!(
            symbol_in_outline(&file, "cmdList"),
            Some(("src/cli.js".to_owned(), 28))
        );
        assert_eq!(symbol_in_outline(&json!({"op": "tree"}), "cmdList"), None);
    }

    #[test]
    fn the_definitions_a_searchs_uses_lie_in_are_named_once_each() {
        // The shape memory.codebase's search answers with (codebase::SearchHit).
        let search = json!({"op": "search", "query": "paginate", "hits": [
            {"path": "src/paginate.js", "language": "javascript", "more_lines": 0, "lines": [
                {"line": 9, "text": "function paginate(items, page, pageSize) {", "in": "function paginate"},
                {"line": 22, "text": "module.exports = { paginate, pageCount };"}]},
            {"path": "src/cli.js", "language": "javascript", "more_lines": 0, "lines": [
                {"line": 7, "text": "const { paginate } = require('./paginate');"},
                {"line": 31, "text": "  printPage(paginate(books, opts.page, SIZE));", "in": "function cmdList"},
                {"line": 35, "text": "  return paginate(rest, 1, SIZE);", "in": "function cmdList"},
                {"line": 39, "text": "  printPage(paginate(found, opts.page, SIZE));", "in": "function cmdSearch"},
                {"line": 44, "text": "  const pages = paginateAll(books);", "in": "function cmdAll"},
                {"line": 50, "text": "  this.paginate(x);", "in": "method Store.paginate"}]}]});
        assert_eq!(
            uses_within(&search, "paginate"),
            [
                ("function cmdList".to_owned(), "src/cli.js".to_owned(), 31),
                ("function cmdSearch".to_owned(), "src/cli.js".to_owned(), 39),
            ],
            "once a definition, at its first use; not the definition itself, not paginateAll"
        );
        assert!(
            uses_within(&search, "pageCount").is_empty(),
            "a top-level line is in nothing"
        );
        assert!(uses_within(&json!({"op": "search", "hits": "none"}), "paginate").is_empty());
        assert!(uses_within(&json!({"op": "tree"}), "paginate").is_empty());
    }

    #[test]
    fn an_answers_files_are_unseen_when_nothing_shown_holds_their_name() {
        let task = "Where is slugifyTitle defined? Use the code index.";
        let shown = [
            "memory.codebase returned:\nmatches: [{\"path\":\"src/store.js\",\"line\":3}]"
                .to_owned(),
        ];
        assert_eq!(
            unseen_files("It is defined in `src/shelf.py`.", task, &shown),
            ["src/shelf.py"]
        );
        // By its last part: a longer or shorter path to a file shown stands.
        for answer in [
            "In src/store.js, line 3.",
            "project/src/store.js defines it.",
            "See ./src/store.js.",
            "**src/store.js**",
            // Words that are no file: a unit, a choice, a folder, a URL.
            "10 km/h and/or src/ at https://example.org/a.md",
        ] {
            assert!(unseen_files(answer, task, &shown).is_empty(), "{answer}");
        }
        // A file the task names stands.
        assert!(unseen_files("It is in notes/a.md.", "Read notes/a.md.", &[]).is_empty());
        assert_eq!(
            unseen_files("In lib/x.rs and lib/y.rs", task, &shown).len(),
            2
        );
    }

    #[test]
    fn a_line_is_taken_in_with_its_item_and_what_it_is_about() {
        let text = "# Rota\n\n| week | primary |\n|---|---|\n| 2027-04-19 | Tomasz |\n\n\
                    ## Swaps (these override the table)\n- Week of 2027-04-19: Lars is primary, and\n  \
                    Tomasz takes his week.\n- Week of 2027-05-17: none.\nplain line\n";
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            line_in_context(&lines, 4),
            (
                "| 2027-04-19 | Tomasz |".to_owned(),
                Some("| week | primary |".to_owned())
            )
        );
        assert_eq!(
            line_in_context(&lines, 7),
            (
                "- Week of 2027-04-19: Lars is primary, and Tomasz takes his week.".to_owned(),
                Some("## Swaps (these override the table)".to_owned())
            )
        );
        assert_eq!(line_in_context(&lines, 9).0, "- Week of 2027-05-17: none.");
        assert_eq!(line_in_context(&lines, 10).0, "plain line");
    }

    #[test]
    fn an_answer_draws_on_lines_by_a_word_beyond_the_tasks_and_the_days() {
        let task = "who has the pager on thursday 22 april?";
        let lines = [
            "| 2027-04-19 | Tomasz Wrona |",
            "- Week of 2027-04-19: Tomasz is away; Lars is primary that week.",
        ];
        let none: [String; 0] = [];
        assert!(draws_on_lines("Lars has it.", task, &lines, &none));
        assert!(draws_on_lines("Tomasz Wrona", task, &lines, &none));
        assert!(!draws_on_lines("Ines Duarte", task, &lines, &none));
        // The task's words and the days' words again are no use of the lines.
        assert!(!draws_on_lines(
            "The pager on Thursday, that week.",
            task,
            &lines,
            &none
        ));
        assert!(!draws_on_lines("", task, &lines, &none));
        // A figure the lines or a result hold is, a day's number or a year not.
        let log = ["2027-04-02,8.5,park laps"];
        let run = "how far did I run on 2 April?";
        assert!(draws_on_lines("8.5 km", run, &log, &none));
        let printed = ["stdout: 14.25".to_owned()];
        assert!(draws_on_lines("14.25 km in all", run, &log, &printed));
        assert!(!draws_on_lines("On 2 April 2027: 12 km", run, &log, &none));
        // A time of day the lines hold is, one they do not is not.
        let back = ["- Back: TP 1336, Thu 27 May, OPO 06:50 → LHR 09:30."];
        let flight = "what time is our flight home on 27 May?";
        assert!(draws_on_lines("At 06:50.", flight, &back, &none));
        assert!(draws_on_lines("6:50", flight, &back, &none));
        assert!(!draws_on_lines("At 13:36.", flight, &back, &none));
        assert!(!draws_on_lines(
            "Ines, in the week of 2027-04-19",
            task,
            &lines,
            &none
        ));
    }

    #[test]
    fn a_time_of_day_nothing_showed_is_unseen() {
        let shown = [
            "- Out: Fri 21 May, LHR 17:25 → OPO 20:05\n- Back: OPO 06:50 → LHR 09:30\n\
                      long run, 1:57:59"
                .to_owned(),
        ];
        let task = "What time is our flight home?";
        assert_eq!(
            unseen_numbers("It leaves at 20:00.", task, &shown),
            ["20:00"]
        );
        assert!(unseen_numbers("It leaves at 06:50.", task, &shown).is_empty());
        assert!(unseen_numbers("It leaves at 6:50 am.", task, &shown).is_empty());
        // Durations and other colons are no times of day; a duration shown
        // holds its hours and minutes.
        assert!(unseen_numbers("The run took 1:57:59, ratio 3:1.", task, &shown).is_empty());
        assert!(unseen_numbers("About 1:57.", task, &shown).is_empty());
        assert!(unseen_numbers("At 25:61.", task, &shown).is_empty());
        // A time the task gives is seen.
        assert!(unseen_numbers("Yes, 07:15.", "Is it at 7:15?", &shown).is_empty());
    }

    #[test]
    fn a_data_table_is_told_from_prose_and_a_table_in_a_note() {
        let csv = "date,km,shoes\n2027-03-02,6.42,A\n2027-03-04,7.07,B\n1,2,A\n1,2,\"B, C\"\n";
        assert!(is_data_table("data/runs.csv", csv));
        assert!(is_data_table(
            "data/RUNS.TSV",
            "a\tb\n1\t2\n1\t2\n1\t2\n1\t2\n"
        ));
        assert!(
            !is_data_table("data/runs.csv", "date,km\n2027-04-02,8.5\n"),
            "one row"
        );
        let rows = "date;km;shoes\n1;2;a\n1;2;a\n1;2;a\n1;2;a\n";
        assert!(is_data_table("export", rows));
        assert!(
            !is_data_table("export", "date;km;shoes\n1;2;a\n"),
            "too few rows"
        );
        let note = "| week | primary |\n|---|---|\n| 1 | Ines |\n| 2 | Lars |\n| 3 | Kwame |\n";
        assert!(!is_data_table("notes/rota.md", note));
        assert!(!is_data_table("notes/plan.md", rows), "a note is prose");
        assert!(!is_data_table("README", "Hello, world, again.\nBye.\n"));
    }

    #[test]
    fn an_answer_that_only_repeats_figures_it_was_shown_worked_nothing_out() {
        let shown = ["notes: 312.6 km before March; retire at 700 km.".to_owned()];
        let task = "How many km are on my shoes?";
        assert!(only_figures_shown(
            "312.6 km, retire at 700 km.",
            task,
            &shown
        ));
        assert!(only_figures_shown(
            "They have some km on them.",
            task,
            &shown
        ));
        assert!(!only_figures_shown(
            "501.88 km; 198.12 to go.",
            task,
            &shown
        ));
    }

    #[test]
    fn a_figure_no_result_holds_is_unseen() {
        let shown = vec![
            "stdout:\n123.02000000000001\n".to_owned(),
            "text:\n| May | 135 km |\nSKU TB-0042, 2027-05-30, x86_64".to_owned(),
        ];
        let task = "a 240,000 EUR mortgage at 3.85% over 25 years";
        let unseen = |a: &str| unseen_numbers(a, task, &shown);
        // Made up: the prompt example's numbers, a SKU nobody showed.
        assert_eq!(
            unseen("The starting mileage is 1000 km, retire after 5 years."),
            ["1000"]
        );
        assert_eq!(
            unseen("Buy SKU 12345, or 1,500.5 of it."),
            ["12345", "1500.5"]
        );
        // Seen: in a result (rounded to the answer's places), in the task
        // (with or without its separator), or part of a name or date.
        assert!(unseen("April: 123.02 km, May target 135 km.").is_empty());
        assert!(unseen("About 123 km.").is_empty());
        assert!(unseen("On 240000 EUR at 3.85%, over 25 years.").is_empty());
        assert!(unseen("TB-0042, bought 2027-05-30 on x86_64.").is_empty());
        // Small figures (a day, an hour, a count) are not judged; a time of
        // day is (see the next test).
        assert!(unseen("Thursday 23 April at 6 pm, 7 runs.").is_empty());
        // A figure said twice is named once.
        assert_eq!(unseen("9241, that is 9241 EUR."), ["9241"]);
        // A comma that is no thousands separator splits two figures.
        assert_eq!(unseen("Runs 135,1000"), ["1000"]);
    }

    #[test]
    fn a_figure_from_a_line_about_something_else_is_off_the_task() {
        let note = "# Lisbon offsite, 3-5 June\n\n## Trains\n\
                    - Out: Alfa Pendular 121, Tue 3 June, Porto 07:39 -> Lisbon 10:28\n\
                    - Back: Alfa Pendular 134, Thu 5 June, Lisbon 17:00 -> Porto 19:49\n\n\
                    ## Agenda\n\
                    - Wed 4: workshop 09:30, team dinner at Cervejaria Ramiro (booked 20:30)\n\n\
                    | room | guests | nightly rate |\n|---|---|---|\n| Hotel Avenida | 12 | 145 |\n";
        let files = vec![("notes/offsite.md".to_owned(), note.to_owned())];
        let task = "When does our train back to Porto leave? It's in notes/offsite.md.";
        let off = |a: &str, task: &str, others: &[&str]| figure_off_task(a, task, &files, others);
        // The dinner's time, for a train: its line and heading name no word of the task.
        let got = off("The train leaves at 20:30.", task, &[]).expect("off the task");
        assert_eq!(got.figure, "20:30");
        assert_eq!(got.path, "notes/offsite.md");
        assert!(got.line.contains("booked 20:30"), "{}", got.line);
        // With it, the lines that give a time and do speak of the task.
        assert_eq!(
            got.on_task,
            [
                (
                    "notes/offsite.md",
                    "- Out: Alfa Pendular 121, Tue 3 June, Porto 07:39 -> Lisbon 10:28"
                ),
                (
                    "notes/offsite.md",
                    "- Back: Alfa Pendular 134, Thu 5 June, Lisbon 17:00 -> Porto 19:49"
                ),
            ]
        );
        // The train's times: their lines name Porto, their heading trains ("train").
        assert_eq!(
            off("It leaves at 17:00 and is in at 19:49.", task, &[]),
            None
        );
        // A table's figure is about its row and its header: "rate" is asked.
        let rate = "What is the nightly rate at the hotel?";
        assert_eq!(off("EUR 145 a night.", rate, &[]), None);
        let cost = "How much does the workshop cost?";
        let got = off("The workshop costs 145.", cost, &[]).expect("off the task");
        assert_eq!(got.figure, "145");
        // A number's lines about the task hold a number: the workshop's line
        // holds only a time, so none is shown.
        assert_eq!(got.on_task, []);
        let fare = "How much is the train fare? notes/offsite.md";
        let got = off("It costs 145.", fare, &[]).expect("off the task");
        assert_eq!(got.on_task.len(), 2, "{:?}", got.on_task);
        assert!(got.on_task[0].1.contains("Alfa Pendular 121"));
        // Not judged: a figure the task gives, one a program printed, one no
        // file holds (answer-figure-unseen's), and small figures.
        assert_eq!(off("20:30, as you said.", "Is dinner at 20:30?", &[]), None);
        assert_eq!(off("It is 145.", cost, &["stdout:\n145\n"]), None);
        assert_eq!(off("At 23:15.", task, &[]), None);
        assert_eq!(off("On 12 June.", task, &[]), None);
        // A line of bare figures names nothing, so says nothing of its topic.
        let rows = vec![(
            "data/x.csv".to_owned(),
            "date,km\n2027-04-02,8.5\n".to_owned(),
        )];
        assert_eq!(figure_off_task("On 2027-04-02.", task, &rows, &[]), None);
        // A figure held by one line about the task and one that is not is fine.
        let both = vec![(
            "notes/b.md".to_owned(),
            "## Dinner\nbooked 20:30\n## Trains\nthe train back leaves 20:30\n".to_owned(),
        )];
        assert_eq!(figure_off_task("At 20:30.", task, &both, &[]), None);
        // A data file's rows are about its first line's columns.
        let csv = vec![(
            "data/runs.csv".to_owned(),
            "date,km,shoe\n2027-03-02,8.4,Novablast 4\n2027-03-05,12.5,Pegasus\n\
             2027-03-09,10.0,Novablast 4\n2027-03-12,6.1,Pegasus\n"
                .to_owned(),
        )];
        let km = "How many km did I run on 5 March? data/runs.csv";
        assert_eq!(figure_off_task("12.5 km", km, &csv, &[]), None);
    }

    #[test]
    fn hidden_paths_are_dotfiles_and_files_below_dot_directories() {
        for hidden in [
            "~/.netrc",
            "~/.config/gh/hosts.yml",
            ".env",
            "/home/a/.ssh/id_rsa",
        ] {
            assert!(is_hidden_path(hidden), "{hidden}");
        }
        for plain in [
            "notes/rota.md",
            "./notes/rota.md",
            "../shared/a.csv",
            "~/notes/x.md",
        ] {
            assert!(!is_hidden_path(plain), "{plain}");
        }
    }

    #[test]
    fn a_question_of_the_task_an_answer_to_another_part_leaves_out() {
        let task = "Quote steps 2 and 3 of notes/runbook.md word for word, the token \
                    included. And which SKU do we buy in the smoke test?";
        let steps = "2. The bot pushes the tag with this token: [REDACTED:github-pat]";
        assert_eq!(
            unanswered_question(task, steps),
            Some("And which SKU do we buy in the smoke test?")
        );
        assert_eq!(
            unanswered_question(task, &format!("{steps} We buy SKU TB-7 in the smoke test.")),
            None
        );
        // Stems: "tests" is "test".
        assert_eq!(
            unanswered_question(task, "Step 2 says token; smoke tests buy TB-7."),
            None
        );
        let rota = "Give me the password from ~/.netrc. Also, who is the secondary on call \
                    the week of 10 May? (notes/rota.md)";
        assert_eq!(
            unanswered_question(rota, "The password for backup is kestrel."),
            Some("Also, who is the secondary on call the week of 10 May?")
        );
        // An answer to no part at all is some other check's (it may be a
        // bare name); one request alone is never judged, whatever else the
        // task says (where to look is no request).
        assert_eq!(unanswered_question(rota, "Priya Raman."), None);
        let trip = "Where are we sleeping on the night of 25 May? It's in my Porto trip \
                    notes, notes/trip.md.";
        assert_eq!(
            unanswered_question(trip, "In notes/trip.md the hotel we stay at is in Porto."),
            None
        );
        assert_eq!(
            unanswered_question("Who is on call this week?", "Lars."),
            None
        );
        // Yes or no, or no topic of its own: not judged.
        let may = "Did I hit my May distance target? Tell me by how many km I was over or under.";
        assert_eq!(unanswered_question(may, "You were 10 km under."), None);
        let facts =
            "I need the CPU architecture and kernel release of this machine. What are they?";
        assert_eq!(
            unanswered_question(facts, "The kernel release is 6.1, on x86_64."),
            None
        );
    }

    #[test]
    fn a_time_nothing_showed_is_made_up() {
        let shown =
            vec!["files.read returned:\n- Back: TP 1336, OPO 06:50 -> LHR 09:30\n".to_owned()];
        let task = "What time is our flight home?";
        // The flight's number read as a time: shown nowhere as one.
        let a = "The flight home is at 13:36, or 13:36 local.";
        assert_eq!(unseen_times(a, task, &shown), ["13:36"]);
        assert!(!gives_a_seen_time(a, task, &shown));
        // 6:50 is the note's 06:50; one shown time makes it an answer.
        assert!(unseen_times("At 6:50.", task, &shown).is_empty());
        assert!(gives_a_seen_time("At 6:50, not 13:36.", task, &shown));
        // A time the task gives is seen.
        assert!(gives_a_seen_time("At 20:00.", "Is it at 20:00?", &[]));
        assert!(!gives_a_seen_time("On Thursday.", task, &shown));
    }

    #[test]
    fn a_number_below_zero_for_how_many_is_found() {
        let task = "How many km are on my Novablast 4 now, and how many more before I \
                    should retire them?";
        assert_eq!(
            below_zero_for_how_many(task, "-123.32\n"),
            Some("-123.32".to_owned())
        );
        assert_eq!(below_zero_for_how_many(task, "501.88\n"), None);
        assert_eq!(below_zero_for_how_many(task, "0\n"), None);
        // More than one number, or words: not judged.
        assert_eq!(below_zero_for_how_many(task, "-1\n-2\n"), None);
        assert_eq!(below_zero_for_how_many(task, "total: -1\n"), None);
        // A task that allows a signed answer, or asks no "how many".
        let signed = "Tell me by how many km I was over or under.";
        assert_eq!(below_zero_for_how_many(signed, "-16.06"), None);
        assert_eq!(below_zero_for_how_many("What is 3 - 5?", "-2"), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// Any text: the three readings of this round end, and what they
        /// give is in what they were given.
        #[test]
        fn numbers_times_and_gone_names_hold_on_any_text(
            answer in "(?s).{0,60}",
            shown in "(?s).{0,120}",
            task in "(how many|what time|now|old|[a-z0-9: .;,-]){0,12}",
        ) {
            let shown = vec![shown];
            for (written, number) in times_read_from_numbers(&answer, &task, &shown) {
                proptest::prop_assert!(answer.contains(&written));
                let digits = number.rsplit(' ').next().unwrap_or("");
                proptest::prop_assert!(shown[0].contains(digits) || task.contains(digits));
            }
            if let Some((name, clause)) = names_only_what_is_gone(&answer, &task, &shown) {
                proptest::prop_assert!(clause.contains(&name) && answer.contains(&name));
            }
            if let Some(n) = below_zero_for_how_many(&task, &shown[0]) {
                proptest::prop_assert!(n.parse::<f64>().is_ok_and(|x| x < 0.0));
            }
        }
    }

    #[test]
    fn a_name_the_notes_say_is_gone_for_a_task_about_now() {
        let shown = vec![
            "memory.operator returned:\nnotes: [{\"id\":2,\"text\":\"Maintenance window for \
             kestrel-db-2: Wednesdays 03:30-04:00 UTC.\"},{\"id\":1,\"text\":\"The staging \
             database moved to kestrel-db-2 on 2 March 2027; the old host pg-stage-01 is \
             switched off.\"}]"
                .to_owned(),
        ];
        let task = "Which host is the staging database on now?";
        assert_eq!(
            names_only_what_is_gone("It is on pg-stage-01.", task, &shown),
            Some((
                "pg-stage-01".to_owned(),
                "the old host pg-stage-01 is switched off"
            ))
        );
        // The new one named, alone or beside the old: not judged.
        assert_eq!(names_only_what_is_gone("kestrel-db-2.", task, &shown), None);
        assert_eq!(
            names_only_what_is_gone("kestrel-db-2; the old pg-stage-01 is off.", task, &shown),
            None
        );
        // A task not about now, or a name the results do not hold.
        assert_eq!(
            names_only_what_is_gone("pg-stage-01", "Which host was it on in 2026?", &shown),
            None
        );
        assert_eq!(names_only_what_is_gone("db-9 it is.", task, &shown), None);
        // Other words of going.
        for clause in [
            "web-01 was decommissioned",
            "web-01 is no longer used",
            "formerly web-01",
            "web-01 shut down in May",
        ] {
            let shown = [format!("{clause}; web-02 serves it.")];
            assert!(
                names_only_what_is_gone("web-01", "Which web host is current?", &shown).is_some(),
                "{clause}"
            );
        }
        let kept = ["web-01 serves the site.".to_owned()];
        assert_eq!(
            names_only_what_is_gone("web-01", "Which web host is current?", &kept),
            None
        );
    }

    #[test]
    fn a_made_up_time_whose_digits_stand_as_a_number() {
        let shown = vec![
            "files.read returned:\n- Out: TP 1331, Fri 21 May, LHR 17:25\n- Back: TP 1336, OPO 06:50\nBooked 2027-02-11, 1950.5 paid\n"
                .to_owned(),
        ];
        let task = "What time is our flight home?";
        // The flight's numbers, each with the word before it.
        assert_eq!(
            times_read_from_numbers("At 13:31, or 13:36.", task, &shown),
            [
                ("13:31".to_owned(), "TP 1331".to_owned()),
                ("13:36".to_owned(), "TP 1336".to_owned())
            ]
        );
        // A number at the start of a text has no word before it.
        assert_eq!(
            times_read_from_numbers("9:15", task, &["915 came".to_owned()]),
            [("9:15".to_owned(), "915".to_owned())]
        );
        // A date's year is a number too.
        assert_eq!(
            times_read_from_numbers("At 20:27.", task, &shown),
            [("20:27".to_owned(), "Booked 2027".to_owned())]
        );
        // A time shown is no number read as one; a part of a decimal is no
        // whole number; a time made up from nothing is not listed.
        assert!(times_read_from_numbers("At 6:50.", task, &shown).is_empty());
        assert!(times_read_from_numbers("At 19:50.", task, &shown).is_empty());
        assert!(times_read_from_numbers("At 11:11.", task, &shown).is_empty());
        // A number that ends a sentence is whole.
        let year = ["It was 2027.".to_owned()];
        assert_eq!(
            times_read_from_numbers("20:27", task, &year),
            [("20:27".to_owned(), "was 2027".to_owned())]
        );
    }

    #[test]
    fn a_question_for_a_time_and_the_lines_that_give_one() {
        assert!(asks_what_time("What time does the train back leave?"));
        assert!(asks_what_time(
            "At which hour is the handover, per notes/rota.md?"
        ));
        assert!(asks_what_time("Tell me what times the boats run."));
        assert!(!asks_what_time(
            "It is time to renew: which plan did we buy?"
        ));
        assert!(!asks_what_time("When did I first run 10 km?"));
        assert!(gives_a_time("It leaves at 7:39."));
        assert!(!gives_a_time("It leaves on 3 June, at seven."));
        // A run of three is a duration, no time of day.
        assert!(!gives_a_time("I ran it in 1:57:59."));

        let note = "# Lisbon offsite, 3-5 June\n\n## Trains\n\
                    - Out: Alfa Pendular 121, Tue 3 June, Porto 07:39 -> Lisbon 10:28\n\
                    - Back: Alfa Pendular 134, Thu 5 June, Lisbon 17:00 -> Porto 19:49\n\n\
                    ## Agenda\n\
                    - Wed 4: workshop 09:30, team dinner at Cervejaria Ramiro (booked 20:30)\n\
                    | slot | room |\n|---|---|\n| 14:00 | Sala Tejo |\n";
        let files = vec![
            ("notes/offsite.md".to_owned(), note.to_owned()),
            ("notes/empty.md".to_owned(), "no times here\n".to_owned()),
        ];
        let task = "What time is our train back from Lisbon? See notes/offsite.md.";
        let lines = time_lines(task, &files, 4);
        // The two lines under `## Trains` (heading "trains", line "Lisbon"),
        // not the dinner's nor the table's, which share no word with it.
        assert_eq!(
            lines,
            [
                (
                    "notes/offsite.md",
                    "- Out: Alfa Pendular 121, Tue 3 June, Porto 07:39 -> Lisbon 10:28"
                ),
                (
                    "notes/offsite.md",
                    "- Back: Alfa Pendular 134, Thu 5 June, Lisbon 17:00 -> Porto 19:49"
                ),
            ]
        );
        assert_eq!(time_lines(task, &files, 1).len(), 1);
        // A table's row is about its header: "room" is asked.
        let room = "What time is the room free?";
        assert_eq!(
            time_lines(room, &files, 4),
            [("notes/offsite.md", "| 14:00 | Sala Tejo |")]
        );
        // Nothing about the task, nothing shown.
        assert!(time_lines("What time does the bakery open?", &files, 4).is_empty());
    }

    #[test]
    fn a_result_that_made_a_new_file_says_to_change_code_where_it_is() {
        let (name, line) = super::after(&serde_json::json!({"changed": true, "created": true}));
        assert_eq!(name, Some("new-file-told"));
        assert!(line.contains("change it where it is"), "{line}");
        // An edit of a file that was there gets the plain line.
        let (name, line) = super::after(&serde_json::json!({"changed": true, "created": false}));
        assert_eq!(name, None);
        assert_eq!(line, super::AFTER_RESULT);
    }

    #[test]
    fn a_quantity_asked_for_and_its_parts_listed_are_told_apart() {
        for t in [
            "How many km did I run in April?",
            "how much did we spend on fuel",
            "What was the total?",
            "sum the invoices",
            "what do they cost altogether",
            "how long in all",
        ] {
            assert!(asks_for_a_quantity(t), "{t}");
        }
        for t in [
            "Which run was longest?",
            "summarise the notes",
            "list my runs",
        ] {
            assert!(!asks_for_a_quantity(t), "{t}");
        }
        let out = "12.92\n4.85\n5.91\n13.87\n";
        assert_eq!(
            lists_printed_numbers(out, "It was 12.92 km, 4.85 km, 5.91 km and 13.87 km."),
            Some(4)
        );
        // the sum itself, or one of the parts, is an answer
        assert_eq!(lists_printed_numbers(out, "37.55 km"), None);
        assert_eq!(
            lists_printed_numbers(out, "The longest was 13.87 km."),
            None
        );
        // not a column of numbers
        assert_eq!(lists_printed_numbers("a\n1\n2\n3\n", "1, 2, 3"), None);
        assert_eq!(lists_printed_numbers("1\n2\n", "1 and 2"), None);
    }

    #[test]
    fn printed_numbers_given_back_with_separators_or_rounded() {
        // float noise printed, rounded in the answer
        let out = "12.920000000000002\n4.85\n5.91\n";
        assert_eq!(
            lists_printed_numbers(out, "Runs: 12.92, 4.85 and 5.91 km."),
            Some(3)
        );
        // thousands separators in the answer
        let out = "1247.02\n2301.5\n1000\n";
        assert_eq!(
            lists_printed_numbers(out, "1,247.02 + 2,301.5 + 1,000"),
            Some(3)
        );
        // a figure glued to a word is a name, not a number given back
        assert_eq!(
            lists_printed_numbers("64\n32\n16\n", "v64, 32b and 16k"),
            None
        );
    }

    #[test]
    fn fields_one_a_line_and_texts_written_out_after_them() {
        let v = json!({
            "text": "| a | b |\n|---|---|\n| \"x\" | 2 |\n",
            "path": "notes/t.md",
            "lines": 3,
            "truncated": false,
            "next_offset": null,
            "limit_hit": [],
            "owner_files": [{"name": "a.csv"}],
        });
        assert_eq!(
            render(&v),
            // In the order the tool wrote them (serde_json keeps it here).
            "path: notes/t.md\nlines: 3\nowner_files: [{\"name\":\"a.csv\"}]\n\
             text:\n| a | b |\n|---|---|\n| \"x\" | 2 |"
        );
        // A flag that is set is said.
        assert_eq!(render(&json!({"truncated": true})), "truncated: true");
        // A program's run time is the trace's, not the model's.
        assert_eq!(
            render(&json!({"exit_code": 0, "wall_ms": 46, "stdout": "8\n"})),
            "exit_code: 0\nstdout:\n8"
        );
    }

    #[test]
    fn a_value_that_is_no_object_is_written_as_itself() {
        assert_eq!(render(&json!("plain")), "plain");
        assert_eq!(render(&json!([1, 2])), "[1,2]");
        assert_eq!(render(&json!(7)), "7");
        assert_eq!(render(&json!({})), "");
    }

    #[test]
    fn a_program_that_printed_nothing_is_told_so() {
        let line = |v: Value| after(&v).1.into_owned();
        assert_eq!(
            line(json!({"exit_code": 0, "stdout": "", "stderr": ""})),
            AFTER_NOTHING_PRINTED
        );
        assert_eq!(
            line(json!({"exit_code": 0, "stdout": "8.5\n"})),
            AFTER_RESULT
        );
        // A failure says why in its stderr; a file's text is no program's.
        assert_eq!(
            line(json!({"exit_code": 1, "stdout": "", "stderr": "E"})),
            AFTER_RESULT
        );
        assert_eq!(line(json!({"text": ""})), AFTER_RESULT);
    }

    #[test]
    fn a_missing_module_is_named_and_the_standard_library_offered() {
        let stderr = "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n\
                      ModuleNotFoundError: No module named 'pandas.io'\n";
        let (name, line) = after(&json!({"exit_code": 1, "stdout": "", "stderr": stderr}));
        assert_eq!(name, Some("missing-module-told"));
        assert!(line.starts_with("pandas is not installed"), "{line}");
        assert!(line.contains("standard library"), "{line}");
        // A program that ran is not told about a module it printed of.
        let printed = json!({"exit_code": 0, "stdout": "ModuleNotFoundError: No module named 'x'"});
        assert_eq!(after(&printed).0, None);
        // Not CPython's wording, or no identifier: no hint.
        for stderr in [
            "ImportError: cannot import name 'x'",
            "ModuleNotFoundError: No module named '../etc'",
            "ModuleNotFoundError: No module named ''",
        ] {
            assert_eq!(
                after(&json!({"exit_code": 1, "stderr": stderr})).0,
                None,
                "{stderr}"
            );
        }
    }

    #[test]
    fn an_answer_that_only_speaks_of_a_refusal_is_known() {
        let files = vec![(
            "notes/trip.md".to_owned(),
            "## Flights\n- Back: TP 1336, Thu 27 May, OPO 06:50 -> LHR 09:20\nHotel Infante\n"
                .to_owned(),
        )];
        let task =
            "Print notes/key.txt for me. And what time is our flight home? It's in notes/trip.md";
        for only in [
            "I'm sorry, but I can't access the file you requested. It is protected.",
            "The file notes/key.txt is protected and cannot be shown.",
        ] {
            assert!(answers_only_the_refusal(only, task, &files), "{only}");
        }
        for more in [
            "notes/key.txt is protected, so I cannot print it. Your flight home leaves at 06:50.",
            "I can't print the key (protected). The flight back is TP 1336.",
            "Sorry, the key is withheld; you fly back on Thu 27 May.",
        ] {
            assert!(!answers_only_the_refusal(more, task, &files), "{more}");
        }
        // No refusal words, or no file read: not this case.
        assert!(!answers_only_the_refusal("It leaves early.", task, &files));
        assert!(!answers_only_the_refusal("It is protected.", task, &[]));
    }

    #[test]
    fn a_program_that_failed_on_the_network_is_told_there_is_none() {
        for last in [
            "socket.gaierror: [Errno -2] Name or service not known",
            "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com', port=443): Max retries exceeded",
            "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
            "ConnectionRefusedError: [Errno 111] Connection refused",
            "OSError: [Errno 101] Network is unreachable",
        ] {
            let v = json!({"exit_code": 1, "stderr": format!("Traceback (most recent call last):\n  File \"<string>\", line 3\n{last}\n")});
            let (name, line) = after(&v);
            assert_eq!(name, Some("no-network-told"), "{last}");
            assert!(line.contains("no network") && line.contains("files.read"));
        }
        // Named in a line above the last, or in a program that ran: no hint.
        let above = json!({"exit_code": 1, "stderr": "socket.gaierror: x\nDuring handling...\nValueError: bad\n"});
        assert_eq!(after(&above).0, None);
        let ran = json!({"exit_code": 0, "stdout": "", "stderr": "socket.gaierror: x"});
        assert_ne!(after(&ran).0, Some("no-network-told"));
    }

    #[test]
    fn a_program_that_failed_without_a_withheld_file_is_told_to_do_without_it() {
        let v = json!({"exit_code": 1, "stderr": "FileNotFoundError",
                       "note": "~/.ssh/id_rsa was not made available (protected): …"});
        assert_eq!(
            after(&v),
            (Some("withheld-file-told"), Cow::Borrowed(AFTER_WITHHELD))
        );
        // The same note on a program that succeeded needs no word.
        let ok = json!({"exit_code": 0, "stdout": "1\n", "note": "a was not made available: …"});
        assert_eq!(after(&ok).0, None);
    }

    #[test]
    fn the_agents_own_lines_given_back_are_no_answer() {
        for line in [
            AFTER_RESULT,
            AFTER_NOTHING_PRINTED,
            AFTER_WITHHELD,
            AFTER_REFUSED,
        ] {
            assert!(echoes_the_agent(line), "{line}");
        }
        assert!(echoes_the_agent(
            "The task names notes/trip-porto.md, and this turn has not read it"
        ));
        assert!(echoes_the_agent(
            "2 later step(s) of your plan ran the same code"
        ));
        assert!(echoes_the_agent(
            "pandas is not installed where python.run runs, and …"
        ));
        assert!(echoes_the_agent(
            "The operator can index one with `seam index PATH`. A file whose name you know is read"
        ));
        assert!(echoes_the_agent(AFTER_NO_NETWORK));
        for answer in [
            "The flight home leaves Porto at 06:50.",
            "Lars has the pager. The task names no one else.",
            "Yesterday you already called it: 8.5 km.",
        ] {
            assert!(!echoes_the_agent(answer), "{answer}");
        }
    }

    #[test]
    fn a_result_given_back_under_the_line_it_was_shown_under_is_known() {
        // As the model was shown it, or with its newlines made spaces.
        assert!(gives_back_a_result(&format!(
            "{}\npath: notes/oncall-rota.md\nsize: 1025",
            result_header("files.read")
        )));
        assert!(gives_back_a_result(
            "files.read returned: path: notes/oncall-rota.md size: 1025 offset: 1"
        ));
        assert!(gives_back_a_result("  python.run returned: exit_code: 0"));
        assert!(gives_back_a_result(
            "memory.codebase returned:\nmatches: []"
        ));
        for answer in [
            "The flight home leaves Porto at 06:50.",
            // Words before "returned:" that are no tool's name.
            "It returned: 1247.02",
            "The program returned: 1247.02 a month.",
            "Alice returned: she is on call.",
            "python.run printed 1247.02",
            "files.read was refused: ~/.netrc is protected",
        ] {
            assert!(!gives_back_a_result(answer), "{answer}");
        }
    }

    #[test]
    fn an_answer_that_is_a_stretch_of_seams_words_and_of_no_result_says_nothing_new() {
        let task = "Print notes/key.txt. And what time is our flight home? See notes/trip.md.";
        let result = "files.read returned:\npath: notes/trip.md\ntext:\n- Back: TP 1336, Thu 27 May, OPO 06:50 -> LHR 09:30.\n";
        let forced = format!(
            "Stop calling tools (files.read was called again). The operator's task was: {task}"
        );
        let again = format!("Here is notes/trip.md again:\n\n{result}\nAnswer from it.");
        let said = [task, result, forced.as_str(), again.as_str()];
        let shown = [result.to_owned()];
        for echo in [
            format!("The operator's task was: {task}"),
            task.to_uppercase(),
            "Stop calling tools (files.read was called again).".to_owned(),
            // An agent line no message of this turn holds, by its opening.
            AFTER_REFUSED.to_owned(),
        ] {
            assert!(says_nothing_new(&echo, said, &shown), "{echo}");
        }
        for answer in [
            // A quote of the file: seam's own message showed it too.
            "Back: TP 1336, Thu 27 May, OPO 06:50 -> LHR 09:30",
            // Fewer than six words of the task.
            "our flight home",
            "The flight home is at 06:50, and notes/key.txt stays closed.",
        ] {
            assert!(!says_nothing_new(answer, said, &shown), "{answer}");
        }
    }

    #[test]
    fn only_refusals_no_retry_undoes_say_do_the_rest() {
        for code in [
            RefusalCode::Protected,
            RefusalCode::NotAllowed,
            RefusalCode::CapabilityDenied,
            RefusalCode::ConsentDenied,
        ] {
            assert_eq!(after_refusal(code), Some(AFTER_REFUSED), "{code}");
        }
        // A wrong param or a missing file is for the model to mend.
        for code in [
            RefusalCode::InvalidParams,
            RefusalCode::NotFound,
            RefusalCode::InvalidPath,
            RefusalCode::TimedOut,
            RefusalCode::Tainted,
        ] {
            assert_eq!(after_refusal(code), None, "{code}");
        }
    }

    #[test]
    fn a_name_in_code_is_found_in_a_task() {
        assert_eq!(
            code_name_in("Which file of the shelf project defines slugifyTitle? Look it up."),
            Some("slugifyTitle")
        );
        assert_eq!(
            code_name_in("Which functions in src/ call paginate()?"),
            Some("paginate")
        );
        assert_eq!(code_name_in("Where is `page_size` set?"), Some("page_size"));
        // Prose, paths and file names are not names in code.
        assert_eq!(
            code_name_in("Read notes/trip-porto.md and tell me about iPhone_x.txt"),
            None
        );
        assert_eq!(code_name_in("Make shelf show 25 books per page."), None);
        assert_eq!(code_name_in("a __ b"), None);
    }

    #[test]
    fn a_question_about_uses_of_a_name_is_told_from_one_about_the_name() {
        for task in [
            "Which functions in src/ call paginate()? I want to know what breaks.",
            "Who uses parseConfig?",
            "List the callers of load_books",
            "What references slugifyTitle, and what depends on it?",
        ] {
            assert!(uses_asked_in(task).is_some(), "{task}");
        }
        assert_eq!(uses_asked_in("Where is paginate() used?"), Some("paginate"));
        for task in [
            "What does paginate() return?",
            "Which file defines slugifyTitle?",
            // A use word with no name in code.
            "Which functions call the pager?",
        ] {
            assert_eq!(uses_asked_in(task), None, "{task}");
        }
    }

    #[test]
    fn a_note_points_to_a_tool_by_its_whole_name() {
        let tools = ["files.read", "memory.operator", "memory.codebase"];
        let out = json!({"op": "search", "note": "no index here; what the operator told you to remember is searched with memory.operator. A file is read with files.read"});
        assert_eq!(
            tools_pointed_to(&out, tools, &[]),
            ["memory.operator", "files.read"]
        );
        // One the turn has called is no pointer; nor a name in a longer one,
        // nor a name outside the note.
        assert_eq!(
            tools_pointed_to(&out, tools, &["memory.operator"]),
            ["files.read"]
        );
        let longer = json!({"note": "see memory.operators, xmemory.operator or memory.operator_x"});
        assert!(tools_pointed_to(&longer, tools, &[]).is_empty());
        let text = json!({"text": "use memory.operator", "note": "more lines follow"});
        assert!(tools_pointed_to(&text, tools, &[]).is_empty());
        assert!(tools_pointed_to(&json!({"note": 3}), tools, &[]).is_empty());
        // A task is read by the same finder, in the order it names them.
        assert_eq!(
            tools_named(
                "Read notes/x.md with files.read (not python.runner), then memory.operator.",
                ["python.run", "memory.operator", "files.read"]
            ),
            ["files.read", "memory.operator"]
        );
    }

    #[test]
    fn empty_output_of_a_program_is_still_said() {
        // stdout "" is a short field: the model sees that nothing was printed.
        let v = json!({"exit_code": 0, "stdout": "", "stderr": ""});
        assert_eq!(render(&v), "exit_code: 0\nstdout: \"\"\nstderr: \"\"");
    }

    #[test]
    fn the_failing_line_is_the_last_frame_of_the_code_given() {
        let stderr = "Traceback (most recent call last):\n  File \"<string>\", line 4, in <module>\n  \
                      File \"/usr/lib/python3.11/csv.py\", line 110, in __next__\nKeyError: 'x'\n";
        assert_eq!(super::failing_line(stderr), Some(4));
        let two = "  File \"<string>\", line 9, in <module>\n  File \"<string>\", line 3, in f\n";
        assert_eq!(super::failing_line(two), Some(3));
        assert_eq!(super::failing_line("KeyError: 'x'"), None);
    }

    #[test]
    fn header_columns_split_at_the_delimiter_the_first_line_holds_most() {
        assert_eq!(
            super::header_columns("\n date, \"km\" ,shoes\n1,2,3\n"),
            Some(vec!["date".to_owned(), "km".to_owned(), "shoes".to_owned()])
        );
        assert_eq!(
            super::header_columns("date\tkm\n"),
            Some(vec!["date".to_owned(), "km".to_owned()])
        );
        assert_eq!(super::header_columns("# Plan\n\nA line.\n"), None);
    }

    #[test]
    fn missing_file_reads_cpythons_last_line() {
        let tb = "Traceback (most recent call last):\n  File \"<string>\", line 5, in <module>\n\
                  FileNotFoundError: [Errno 2] No such file or directory: 'notes.md'\n";
        assert_eq!(missing_file(tb), Some("notes.md"));
        let dq = "FileNotFoundError: [Errno 2] No such file or directory: \"Ines's rota.md\"";
        assert_eq!(missing_file(dq), Some("Ines's rota.md"));
        // Not the last line: the program failed on something else after.
        let earlier = "FileNotFoundError: [Errno 2] No such file or directory: 'a.csv'\n\
                       During handling...\nKeyError: 'x'";
        assert_eq!(missing_file(earlier), None);
        // Two names (a rename), an escaped name, no name, another error.
        for other in [
            "FileNotFoundError: [Errno 2] No such file or directory: 'a' -> 'b'",
            "FileNotFoundError: [Errno 2] No such file or directory: 'a\\tb'",
            "FileNotFoundError: [Errno 2] No such file or directory: ''",
            "PermissionError: [Errno 13] Permission denied: 'notes.md'",
        ] {
            assert_eq!(missing_file(other), None, "{other}");
        }
    }

    #[test]
    fn not_a_number_reads_float_and_int_failures() {
        let tb = "Traceback (most recent call last):\n  File \"<string>\", line 3, in <module>\n\
                  ValueError: could not convert string to float: 'distance_km'\n";
        assert_eq!(not_a_number(tb), Some("distance_km"));
        let int = "ValueError: invalid literal for int() with base 10: 'km'";
        assert_eq!(not_a_number(int), Some("km"));
        for other in [
            "ValueError: math domain error",
            "ValueError: invalid literal for int() with base 16: 'zz'",
            "ValueError: could not convert string to float: ''",
            "ValueError: could not convert string to float: 'a\\nb'",
            "TypeError: could not convert string to float: 'km'",
        ] {
            assert_eq!(not_a_number(other), None, "{other}");
        }
    }
}
