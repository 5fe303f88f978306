//! `memory.codebase`: the structure of the workspace's code, from the index `seam index` made.
//!
//! Four operations on one flat schema (an `op` and the fields it uses — easier for a small
//! model than one schema per operation): `tree` (files and directories, depth-limited),
//! `outline` (the symbols of one file), `find_symbol` (where a name is defined) and `search`
//! (full text). Every answer is bounded and says when it was cut.
//!
//! What small models send is met halfway, and the answer's `note` says so, so the trace shows
//! the correction: an `outline` of a directory answers with the indexed files under it and
//! their top-level symbols; a `find_symbol` given `query` and no `name` reads the query as
//! the name, and a `search` given `name` and no `query` searches for the name (the schema
//! lets each stand in for the other there, and nowhere else).
//!
//! Scope: only files below the gate's workspace root are answered about, whatever else was
//! indexed — the same place `Access::Source` admits. Paths in answers are relative to the
//! workspace root, as every tool takes them.
//!
//! The `path` of `tree` and `outline` is declared `Access::Source`: admission checks it is
//! inside the workspace root and not protected, and resolves where it really is. The tool
//! never reads the file or lists the directory: it looks the real path up in the index. The
//! index holds the owner's code, so every answer taints the turn.
//!
//! One exception, where no index covers the workspace: a `tree` of an admitted directory (or
//! with no path, of the workspace root) answers with the regular files directly in it that a
//! `files.read` of each would admit, by their paths (`notes/a.md`), as the toolbox names them
//! ([`ToolCall::files_in_directory`], the one listing `files.read`'s refusal of a directory
//! gives too): never a protected file, a hidden entry, a link or a subdirectory's contents.
//! The tool still lists nothing itself. A model that lists a directory to find the file a task
//! means then learns its name instead of making an answer up.

use std::path::{Path, PathBuf};

use seam_memory::{
    CodebaseIndex, FIND_SYMBOL_LIMIT, MemoryHome, OUTLINE_LIMIT, SEARCH_LIMIT, TREE_LIMIT,
    TREE_MAX_DEPTH,
};
use seam_policy::{Access, Capability, Policy};
use seam_protocol::RefusalCode;
use seam_protocol::codebase::{FileOutline, LineHit, SearchHit, SymbolAt};
use serde::Deserialize;
use serde_json::{Value, json};

use super::memory_store::{StorePool, cut_note, failure, limit, with_notes};
use seam_toolbox::{
    Admitted, DirectoryFiles, GovernedTool, PathParam, ToolCall, ToolDecl, ToolFailure,
};

const TREE_DEFAULT_DEPTH: usize = 2;
/// An outline of a directory: at most this many files…
const DIR_OUTLINE_FILES: usize = 50;
/// …each with at most this many of its top-level symbols.
const DIR_OUTLINE_SYMBOLS: usize = 12;

#[derive(Debug)]
pub struct MemoryCodebase {
    decl: ToolDecl,
    /// The workspace root, canonical: the scope of every answer.
    scope: PathBuf,
    stores: StorePool<CodebaseIndex>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    op: String,
    #[allow(dead_code)] // admitted by the toolbox; the tool gets the real path
    path: Option<String>,
    depth: Option<u64>,
    name: Option<String>,
    query: Option<String>,
    limit: Option<u64>,
}

impl MemoryCodebase {
    /// The tool over `<seam_home>/memory/codebase.sqlite`, scoped to the policy's workspace root.
    pub fn new(policy: &Policy) -> Self {
        let env = policy.env();
        Self::with_home(Some(MemoryHome::new(&env.seam_home)), &env.workspace_root)
    }

    pub fn with_home(home: Option<MemoryHome>, workspace_root: &Path) -> Self {
        let scope =
            std::fs::canonicalize(workspace_root).unwrap_or_else(|_| workspace_root.to_owned());
        MemoryCodebase {
            decl: ToolDecl {
                name: "memory.codebase",
                version: "1",
                description: "Ask the index of the workspace's code. op=tree lists files and directories (path, depth); op=outline lists the functions, types and modules of one file (path); op=find_symbol finds which file defines a function, class or other name (name), e.g. {op: find_symbol, name: parseConfig}; op=search finds files containing words (query), code before prose. Paths are relative to the workspace.",
                schema: json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["op"],
                    // In the order a model writes them (the grammar asks in
                    // this order): what to look for before where. With
                    // `path` second, qwen2.5-coder-1.5b asked for the
                    // outline of a file it guessed instead of the symbol.
                    "properties": {
                        "op": {"type": "string", "enum": ["tree", "outline", "find_symbol", "search"],
                               "description": "tree: files and directories; outline: symbols of one file; find_symbol: definitions of a name; search: full-text search"},
                        "name": {"type": "string", "minLength": 1,
                                 "description": "find_symbol: a function, type or module name, or its start; Type::method or Class.method for a member. Case is ignored"},
                        "query": {"type": "string", "minLength": 1,
                                  "description": "search: words to find (files holding them all, else those holding some); word* matches a prefix"},
                        "path": {"type": "string", "minLength": 1,
                                 "description": "tree: the directory to list (default: the workspace root); outline: the file (a directory gives its files' top-level symbols). Relative to the workspace. Looked up in the index, not read"},
                        "depth": {"type": "integer", "minimum": 1,
                                  "description": format!("tree: how many levels to show (default {TREE_DEFAULT_DEPTH}, at most {TREE_MAX_DEPTH})")},
                        "limit": {"type": "integer", "minimum": 1,
                                  "description": format!(
                                      "most results: tree {}/{}, outline {}/{}, find_symbol {}/{}, search {}/{} (default/maximum)",
                                      TREE_LIMIT.default, TREE_LIMIT.max, OUTLINE_LIMIT.default, OUTLINE_LIMIT.max,
                                      FIND_SYMBOL_LIMIT.default, FIND_SYMBOL_LIMIT.max, SEARCH_LIMIT.default, SEARCH_LIMIT.max)}
                    },
                    "allOf": [
                        // A name or a query without a path is looked up (see `looked_up`).
                        {"if": {"properties": {"op": {"const": "outline"}},
                                "not": {"anyOf": [{"required": ["name"]}, {"required": ["query"]}]}},
                         "then": {"required": ["path"]}},
                        {"if": {"properties": {"op": {"const": "find_symbol"}}, "not": {"required": ["query"]}},
                         "then": {"required": ["name"]}},
                        // A name without a query is searched for (see `search`).
                        {"if": {"properties": {"op": {"const": "search"}}, "not": {"required": ["name"]}},
                         "then": {"required": ["query"]}}
                    ]
                }),
                capability: Capability::Memory,
                reads: true,
                paths: vec![PathParam {
                    field: "path",
                    access: Access::Source,
                }],
                taints: true,
                egress: false,
                destinations: Vec::new(),
                none_named: crate::NoneNamed::Unknown,
            },
            scope,
            stores: StorePool::new(home, |h: &MemoryHome| h.existing_codebase()),
        }
    }

    /// A path of the index as the caller uses it: relative to the workspace root.
    fn shown(&self, abs: &str) -> String {
        match Path::new(abs).strip_prefix(&self.scope) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => abs.to_owned(),
        }
    }

    fn not_indexed(&self, op: &str, listed: Option<(String, DirectoryFiles)>) -> Value {
        // A tree of a directory with no index: the readable files directly in it, as a
        // files.read of each would admit them (the toolbox's one listing). Asked for the train
        // home "in my Lisbon notes in notes/", qwen2.5-coder-1.5b listed notes/ (os.listdir,
        // routed here), was told only that nothing is indexed, and made a time up.
        if let Some((path, held)) = listed {
            let what = if held.files.is_empty() {
                format!("there is no file directly in {path} that files.read can read")
            } else if held.cut {
                format!(
                    "these are the first {} files directly in {path} that can be read (it may \
                     hold more). Read one with files.read (its path)",
                    held.files.len()
                )
            } else {
                format!(
                    "these are the files directly in {path} that can be read. Read one with \
                     files.read (its path)"
                )
            };
            return json!({
                "op": op,
                "indexed": false,
                "path": path,
                "files": held.files,
                "note": format!(
                    "no indexed repository covers the workspace, so this is no tree: {what}"
                ),
            });
        }
        // The workspace's absolute path is not in the note: the model needs
        // none of it, and shown it, qwen2.5-coder-1.5b wrote a program over
        // a file under that path instead of reading the one the task named.
        json!({
            "op": op,
            "indexed": false,
            "note": "no indexed repository covers the workspace; the operator can index one with `seam index PATH`. A file whose name you know is read with files.read (its path); what the operator told you to remember is searched with memory.operator",
        })
    }
}

impl GovernedTool for MemoryCodebase {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    /// An `outline` or `tree` of a path that does not exist, given a `query`
    /// (or a `name`): small models put the symbol they look for there and the
    /// project's name in `path`. One word is looked up as a name
    /// (`find_symbol`), several are searched for (`search`).
    fn when_path_missing(&self, params: &Value) -> Option<(Value, String)> {
        let op = params.get("op")?.as_str()?;
        if op != "outline" && op != "tree" {
            return None;
        }
        looked_up(params)
    }

    fn run(&self, mut call: ToolCall) -> Result<Value, ToolFailure> {
        let p: Params = serde_json::from_value(call.params().clone())
            .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))?;
        // The real place the path leads to, as admission found it; nothing was read.
        let target: Option<(PathBuf, bool)> = match call.take_admitted("path") {
            Some(Admitted::ReadFile(f)) => Some((f.real, false)),
            Some(Admitted::Directory(d)) => Some((d.real, true)),
            Some(Admitted::WritePath(_)) | None => None,
        };
        let op = p.op.as_str();
        // What a tree with no index lists: the directory's readable files (see `not_indexed`).
        let (of_directory, of_nothing) = (matches!(target, Some((_, true))), target.is_none());
        let listed = || {
            if op != "tree" {
                return None;
            }
            let dir = match p.path.as_deref() {
                Some(raw) if of_directory => raw.trim_end_matches('/'),
                None if of_nothing => ".",
                _ => return None,
            };
            let dir = if dir.is_empty() { "." } else { dir };
            Some((
                dir.to_owned(),
                call.files_in_directory(std::ffi::OsStr::new(dir)),
            ))
        };
        let answer = self.stores.with(|idx| {
            if !idx.covers(&self.scope).map_err(failure)? {
                return Ok(self.not_indexed(op, listed()));
            }
            let mut notes = Vec::new();
            match op {
                "tree" => self.tree(idx, &p, target, &mut notes),
                // An outline lists symbols and takes no query: a small model that
                // gives one with a directory (`{op: outline, path: src/, query:
                // paginate}`) is looking for where the words are, so they are
                // searched for below the directory. (A file's outline stays one.)
                "outline"
                    if matches!(target, Some((_, true)))
                        && p.query.as_deref().is_some_and(|q| !q.trim().is_empty()) =>
                {
                    // Never wider than the tool's scope, whatever path was admitted.
                    let within = match &target {
                        Some((dir, true)) if dir.starts_with(&self.scope) => dir.clone(),
                        _ => self.scope.clone(),
                    };
                    notes.push(format!(
                        "op=outline takes no query: searched for params.query below {} (op=search)",
                        self.shown(&within.display().to_string())
                    ));
                    self.search(idx, &p, &within, &mut notes)
                }
                // An outline with no path at all, given a name or a query
                // (qwen2.5-coder-1.5b: `{op: outline, name: shelf}` for "which
                // file defines slugifyTitle"): looked up as a missing path's is.
                "outline"
                    if target.is_none()
                        && let Some((instead, note)) = looked_up(call.params()) =>
                {
                    let q: Params = serde_json::from_value(instead)
                        .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))?;
                    notes.push(format!(
                        "op=outline needs a path, and none was given: {note}"
                    ));
                    let found = match q.op.as_str() {
                        "find_symbol" => self.find_symbol(idx, &q, &mut notes),
                        _ => self.search(idx, &q, &self.scope, &mut notes),
                    }?;
                    // Nothing by that name or those words: the name was the
                    // project's (`shelf`), not a symbol's, so the outline
                    // asked for is the whole workspace's, the place a `tree`
                    // with no path lists.
                    if answered_nothing(&found) {
                        notes.push(format!(
                            "nothing found for it, so here is the outline of the workspace ({}) instead",
                            self.shown(&self.scope.display().to_string())
                        ));
                        let lim = limit(p.limit, OUTLINE_LIMIT, &mut notes);
                        self.outline_dir(idx, &self.scope, lim, &mut notes)
                    } else {
                        Ok(found)
                    }
                }
                "outline" => self.outline(idx, &p, target, &mut notes),
                "find_symbol" => self.find_symbol(idx, &p, &mut notes),
                "search" => self.search(idx, &p, &self.scope, &mut notes),
                other => Err(ToolFailure::new(
                    RefusalCode::InvalidParams,
                    format!("memory.codebase has no op {other:?}"),
                )),
            }
            .map(|out| with_notes(out, notes))
        })?;
        Ok(answer.unwrap_or_else(|| self.not_indexed(op, listed())))
    }
}

/// True when a `find_symbol` or `search` answer found nothing.
fn answered_nothing(answer: &Value) -> bool {
    ["matches", "hits"]
        .iter()
        .filter_map(|k| answer.get(*k).and_then(Value::as_array))
        .all(Vec::is_empty)
}

/// What a call that names no file it has (a path that does not exist, or an
/// outline with none) meant by its `query` or `name`: one word is looked up
/// as a name (`find_symbol`), several are searched for (`search`). The params
/// to run instead, and a note saying so.
fn looked_up(params: &Value) -> Option<(Value, String)> {
    let (key, words) = ["query", "name"].iter().find_map(|k| {
        let w = params.get(*k)?.as_str()?.trim();
        (!w.is_empty()).then_some((*k, w))
    })?;
    Some(if words.split_whitespace().count() == 1 {
        (
            json!({"op": "find_symbol", "name": words}),
            format!("looked params.{key} up as a name (op=find_symbol)"),
        )
    } else {
        (
            json!({"op": "search", "query": words}),
            format!("searched for params.{key} (op=search)"),
        )
    })
}

impl MemoryCodebase {
    fn tree(
        &self,
        idx: &CodebaseIndex,
        p: &Params,
        target: Option<(PathBuf, bool)>,
        notes: &mut Vec<String>,
    ) -> Result<Value, ToolFailure> {
        let dir = target.map(|t| t.0).unwrap_or_else(|| self.scope.clone());
        let requested = p.depth.map(|d| usize::try_from(d).unwrap_or(usize::MAX));
        let depth = requested.unwrap_or(TREE_DEFAULT_DEPTH);
        if depth > TREE_MAX_DEPTH {
            notes.push(format!(
                "depth is at most {TREE_MAX_DEPTH}: used {TREE_MAX_DEPTH}"
            ));
        }
        let lim = limit(p.limit, TREE_LIMIT, notes);
        let tree = idx.tree(&dir, depth, lim).map_err(failure)?;
        if tree.entries.is_empty() {
            notes.push(format!(
                "nothing is indexed at {} (it may be ignored, or new since the last `seam index`)",
                self.shown(&tree.root)
            ));
        }
        if tree.truncated {
            notes.push(format!(
                "{} of {} entries shown; {}",
                tree.entries.len(),
                tree.total_entries,
                cut_note("entries", lim, TREE_LIMIT)
            ));
        }
        let entries: Vec<Value> = tree
            .entries
            .into_iter()
            .map(|mut e| {
                e.path = self.shown(&e.path);
                serde_json::to_value(e).unwrap_or(Value::Null)
            })
            .collect();
        Ok(json!({
            "op": "tree",
            "path": self.shown(&tree.root),
            "depth": tree.depth,
            "entries": entries,
            "truncated": tree.truncated,
        }))
    }

    fn outline(
        &self,
        idx: &CodebaseIndex,
        p: &Params,
        target: Option<(PathBuf, bool)>,
        notes: &mut Vec<String>,
    ) -> Result<Value, ToolFailure> {
        let Some((file, is_dir)) = target else {
            return Err(ToolFailure::new(
                RefusalCode::InvalidParams,
                "outline needs a path: the file whose symbols to list",
            ));
        };
        let lim = limit(p.limit, OUTLINE_LIMIT, notes);
        if is_dir {
            return self.outline_dir(idx, &file, lim, notes);
        }
        let shown = self.shown(&file.to_string_lossy());
        let Some(outline) = idx.outline(&file, lim).map_err(failure)? else {
            notes.push(format!(
                "{shown} is not in the index (it may be ignored by .gitignore, or new since the last `seam index`)"
            ));
            return Ok(json!({"op": "outline", "path": shown, "indexed": false, "symbols": []}));
        };
        match outline.content.as_str() {
            "binary" => notes.push("a binary file: no symbols".into()),
            "too_large" => notes.push("too large to be parsed: no symbols".into()),
            _ => {}
        }
        if outline.truncated {
            notes.push(format!(
                "{} of {} symbols shown; {}",
                outline.symbols.len(),
                outline.total_symbols,
                cut_note("symbols", lim, OUTLINE_LIMIT)
            ));
        }
        Ok(json!({
            "op": "outline",
            "path": shown,
            "indexed": true,
            "language": outline.language,
            "lines": outline.lines,
            "symbols": outline.symbols,
            "truncated": outline.truncated,
        }))
    }

    /// An outline of a directory, which small models ask for: the indexed files below it
    /// (at most [`DIR_OUTLINE_FILES`], at any depth the index lists) with their first
    /// [`DIR_OUTLINE_SYMBOLS`] top-level symbols, at most `lim` symbols in all.
    fn outline_dir(
        &self,
        idx: &CodebaseIndex,
        dir: &Path,
        lim: usize,
        notes: &mut Vec<String>,
    ) -> Result<Value, ToolFailure> {
        let shown = self.shown(&dir.to_string_lossy());
        notes.push(format!(
            "{shown} is a directory: its indexed files with their top-level symbols (an outline of one file lists all of its symbols)"
        ));
        let tree = idx
            .tree(dir, TREE_MAX_DEPTH, TREE_LIMIT.max)
            .map_err(failure)?;
        let files: Vec<_> = tree.entries.iter().filter(|e| e.kind == "file").collect();
        let mut out = Vec::new();
        let mut left = lim;
        let mut cut = tree.truncated || files.len() > DIR_OUTLINE_FILES;
        for f in files.iter().take(DIR_OUTLINE_FILES) {
            let outline = idx
                .outline(Path::new(&f.path), OUTLINE_LIMIT.max)
                .map_err(failure)?;
            let (top, total) = outline.map_or((Vec::new(), 0), |o| {
                let top: Vec<_> = o
                    .symbols
                    .into_iter()
                    .filter(|s| s.parent.is_none())
                    .collect();
                let total = top.len();
                (top, total)
            });
            let take = top.len().min(DIR_OUTLINE_SYMBOLS).min(left);
            left -= take;
            let symbols = top
                .into_iter()
                .take(take)
                .map(|s| SymbolAt {
                    name: s.name,
                    kind: s.kind,
                    line: s.line.into(),
                })
                .collect();
            cut |= total > take;
            out.push(FileOutline {
                path: self.shown(&f.path),
                symbols,
                language: f.language.clone(),
                lines: f.lines,
                more_symbols: (total > take).then(|| total - take),
            });
        }
        if files.is_empty() {
            notes.push(format!(
                "nothing is indexed at {shown} (it may be ignored, or new since the last `seam index`)"
            ));
        }
        if cut {
            notes.push(format!(
                "cut: at most {DIR_OUTLINE_FILES} files and {DIR_OUTLINE_SYMBOLS} top-level symbols a file; outline one file, or op=tree, for more"
            ));
        }
        Ok(json!({
            "op": "outline",
            "path": shown,
            "kind": "dir",
            "indexed": !files.is_empty(),
            "files": out,
            "truncated": cut,
        }))
    }

    fn find_symbol(
        &self,
        idx: &CodebaseIndex,
        p: &Params,
        notes: &mut Vec<String>,
    ) -> Result<Value, ToolFailure> {
        // A small model gives find_symbol a query as often as a name: the schema lets it, and
        // the answer says how it was read.
        let name = match (p.name.as_deref(), p.query.as_deref()) {
            (Some(name), Some(q)) if q != name => {
                notes.push(
                    "params.query is not used by find_symbol: it looks up params.name".into(),
                );
                name
            }
            (Some(name), _) => name,
            (None, Some(q)) => {
                notes.push("read params.query as the name".into());
                q
            }
            (None, None) => {
                return Err(ToolFailure::new(
                    RefusalCode::InvalidParams,
                    "find_symbol needs a name: the function, type or module to look up",
                ));
            }
        };
        let lim = limit(p.limit, FIND_SYMBOL_LIMIT, notes);
        let found = idx.find_symbol(&self.scope, name, lim).map_err(failure)?;
        if found.matches.is_empty() {
            notes.push(format!(
                "no definition named {name:?} or starting with it (op=search finds any text)"
            ));
        }
        if found.truncated {
            notes.push(cut_note("matches", lim, FIND_SYMBOL_LIMIT));
        }
        let matches: Vec<Value> = found
            .matches
            .into_iter()
            .map(|mut m| {
                m.path = self.shown(&m.path);
                serde_json::to_value(m).unwrap_or(Value::Null)
            })
            .collect();
        Ok(json!({
            "op": "find_symbol",
            "name": name,
            "matches": matches,
            "truncated": found.truncated,
        }))
    }

    fn search(
        &self,
        idx: &CodebaseIndex,
        p: &Params,
        within: &Path,
        notes: &mut Vec<String>,
    ) -> Result<Value, ToolFailure> {
        // A small model gives search a name as often as a query (`{op: search, name:
        // parse_duration}`, refused by the schema before): with no query, the name is what
        // is searched for, and the answer says so.
        let query = match (p.query.as_deref(), p.name.as_deref()) {
            (Some(q), _) => q,
            (None, Some(name)) => {
                notes.push("searched for params.name: op=search takes params.query".into());
                name
            }
            (None, None) => "",
        };
        let lim = limit(p.limit, SEARCH_LIMIT, notes);
        let found = idx.search(within, query, lim).map_err(failure)?;
        if found.truncated {
            notes.push(cut_note("files", lim, SEARCH_LIMIT));
        }
        if found.matched == seam_memory::Matched::Some {
            notes.push(super::memory_store::SOME_WORDS.to_owned());
        }
        // The wire's hits (what the agent reads back), with paths as shown.
        let hits: Vec<SearchHit> = found
            .hits
            .into_iter()
            .map(|h| SearchHit {
                path: self.shown(&h.path),
                language: h.language,
                lines: h
                    .lines
                    .into_iter()
                    .map(|l| LineHit {
                        line: l.line,
                        text: l.text,
                        within: l.within,
                    })
                    .collect(),
                more_lines: h.more_lines,
                snippet: h.snippet,
            })
            .collect();
        Ok(json!({
            "op": "search",
            "query": query,
            "hits": hits,
            "truncated": found.truncated,
        }))
    }
}
