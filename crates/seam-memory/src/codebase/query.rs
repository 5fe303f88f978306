//! The queries: repositories, tree, outline, symbols and full-text search.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{OptionalExtension, params};

use super::{
    CodebaseIndex, FileKind, LineHit, Outline, Repository, SEARCH_POOL, SearchHit, SearchResults,
    Symbol, SymbolMatch, SymbolMatches, TREE_MAX_DEPTH, Tree, TreeEntry, below, path_str,
};
use crate::bound::{clip, cut};
use crate::fts::{FtsQuery, Matched};
use crate::{MemoryError, time};

/// Matching lines shown per file in a search, and the longest line shown.
const SEARCH_LINES_PER_FILE: usize = 3;
const SEARCH_LINE_BYTES: usize = 200;

impl CodebaseIndex {
    /// The indexed repositories.
    pub fn repositories(&self) -> Result<Vec<Repository>, MemoryError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT root, indexed_at, (SELECT count(*) FROM files WHERE repo_id = repos.id)
                 FROM repos ORDER BY root",
            )
            .map_err(self.sql("listing repositories"))?;
        st.query_map([], |r| {
            Ok(Repository {
                root: r.get(0)?,
                indexed_at: time::rfc3339(r.get(1)?),
                files: r.get::<_, i64>(2)? as u64,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(self.sql("listing repositories"))
    }

    /// True when some indexed file lies below `scope` (or is it).
    pub fn covers(&self, scope: &Path) -> Result<bool, MemoryError> {
        let s = path_str(scope);
        let (lo, hi) = below(&s);
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM files WHERE (abs > ?1 AND abs < ?2) OR abs = ?3)",
                params![lo, hi, s],
                |r| r.get(0),
            )
            .map_err(self.sql("looking for indexed files"))
    }

    /// The indexed files and directories below `dir`, `depth` levels deep (1: its direct
    /// entries), at most `limit` entries (see [`TREE_LIMIT`]). A file given as `dir` is listed
    /// alone.
    pub fn tree(&self, dir: &Path, depth: usize, limit: usize) -> Result<Tree, MemoryError> {
        let depth = depth.clamp(1, TREE_MAX_DEPTH);
        let root = path_str(dir);
        let (lo, hi) = below(&root);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT abs, language, size, lines FROM files
                 WHERE (abs > ?1 AND abs < ?2) OR abs = ?3 ORDER BY abs",
            )
            .map_err(self.sql("listing files"))?;
        let rows = st
            .query_map(params![lo, hi, root], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                ))
            })
            .map_err(self.sql("listing files"))?;
        // Keyed by path components, so a directory sorts right before its contents.
        let mut entries: BTreeMap<Vec<String>, TreeEntry> = BTreeMap::new();
        for row in rows {
            let (abs, language, size, lines) = row.map_err(self.sql("listing files"))?;
            if abs == root {
                entries.insert(
                    Vec::new(),
                    TreeEntry {
                        path: abs,
                        kind: "file",
                        language,
                        size: Some(size as u64),
                        lines: lines.map(|l| l as u64),
                        files: None,
                    },
                );
                continue;
            }
            let rel = abs[lo.len()..].to_owned();
            let parts: Vec<&str> = rel.split('/').collect();
            // every directory on the way, up to the depth, counts this file
            for d in 1..parts.len().min(depth + 1) {
                let key: Vec<String> = parts[..d].iter().map(|s| (*s).to_owned()).collect();
                let e = entries.entry(key).or_insert_with(|| TreeEntry {
                    path: format!("{lo}{}", parts[..d].join("/")),
                    kind: "dir",
                    language: None,
                    size: None,
                    lines: None,
                    files: Some(0),
                });
                e.files = e.files.map(|n| n + 1);
                e.lines = Some(e.lines.unwrap_or(0) + lines.unwrap_or(0) as u64);
            }
            if parts.len() <= depth {
                entries.insert(
                    parts.iter().map(|s| (*s).to_owned()).collect(),
                    TreeEntry {
                        path: abs,
                        kind: "file",
                        language,
                        size: Some(size as u64),
                        lines: lines.map(|l| l as u64),
                        files: None,
                    },
                );
            }
        }
        let total_entries = entries.len();
        let mut list: Vec<TreeEntry> = entries.into_values().collect();
        let truncated = cut(&mut list, limit);
        Ok(Tree {
            root,
            depth,
            entries: list,
            total_entries,
            truncated,
        })
    }

    /// The symbols of one indexed file, in line order, at most `limit`; `None` when the file
    /// is not in the index.
    pub fn outline(&self, file: &Path, limit: usize) -> Result<Option<Outline>, MemoryError> {
        let abs = path_str(file);
        let row = self
            .conn
            .query_row(
                "SELECT id, language, lines, content FROM files WHERE abs = ?1",
                [&abs],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<i64>>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(self.sql("looking up a file"))?;
        let Some((id, language, lines, content)) = row else {
            return Ok(None);
        };
        let total: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM symbols WHERE file_id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(self.sql("counting symbols"))?;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT name, kind, line, end_line, parent, signature FROM symbols
                 WHERE file_id = ?1 ORDER BY line, id LIMIT ?2",
            )
            .map_err(self.sql("reading symbols"))?;
        let symbols: Vec<Symbol> = st
            .query_map(params![id, limit as i64], |r| {
                Ok(Symbol {
                    name: r.get(0)?,
                    kind: r.get(1)?,
                    line: r.get(2)?,
                    end_line: r.get(3)?,
                    parent: r.get(4)?,
                    signature: r.get(5)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(self.sql("reading symbols"))?;
        Ok(Some(Outline {
            path: abs,
            language,
            lines: lines.map(|l| l as u64),
            truncated: (total as usize) > symbols.len(),
            total_symbols: total as usize,
            symbols,
            content,
        }))
    }

    /// Definitions named `name` (exactly, ignoring case, first) or whose name starts with it,
    /// in files below `scope`. `Parent::name` or `Parent.name` asks for members of `Parent`.
    /// Among equal names, free items (no parent) come before members.
    pub fn find_symbol(
        &self,
        scope: &Path,
        name: &str,
        limit: usize,
    ) -> Result<SymbolMatches, MemoryError> {
        let name = name.trim();
        let (parent, name) = match name.rsplit_once("::").or_else(|| name.rsplit_once('.')) {
            Some((p, n)) if !p.is_empty() => {
                let p = p.rsplit(['.', ':']).next().unwrap_or(p);
                (Some(p.to_owned()), n)
            }
            _ => (None, name),
        };
        if name.is_empty() {
            return Err(MemoryError::EmptyQuery);
        }
        let upper = format!("{name}\u{10FFFF}");
        let scope_s = path_str(scope);
        let (lo, hi) = below(&scope_s);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT s.name, s.kind, f.abs, s.line, s.end_line, s.parent, s.signature,
                        CASE WHEN s.name = ?1 THEN 0
                             WHEN s.name = ?1 COLLATE NOCASE THEN 1 ELSE 2 END AS rank
                 FROM symbols s JOIN files f ON f.id = s.file_id
                 WHERE s.name >= ?1 COLLATE NOCASE AND s.name < ?2 COLLATE NOCASE
                   AND f.abs > ?3 AND f.abs < ?4
                   AND (?5 IS NULL OR s.parent = ?5 COLLATE NOCASE)
                 ORDER BY rank, length(s.name), s.name, s.parent IS NOT NULL, f.abs, s.line
                 LIMIT ?6",
            )
            .map_err(self.sql("finding symbols"))?;
        let mut matches: Vec<SymbolMatch> = st
            .query_map(
                params![name, upper, lo, hi, parent, limit as i64 + 1],
                |r| {
                    Ok(SymbolMatch {
                        name: r.get(0)?,
                        kind: r.get(1)?,
                        path: r.get(2)?,
                        line: r.get(3)?,
                        end_line: r.get(4)?,
                        parent: r.get(5)?,
                        signature: r.get(6)?,
                        exact: r.get::<_, i64>(7)? < 2,
                    })
                },
            )
            .and_then(|rows| rows.collect())
            .map_err(self.sql("finding symbols"))?;
        let truncated = cut(&mut matches, limit);
        Ok(SymbolMatches { matches, truncated })
    }

    /// Files below `scope` whose text holds every word of `query`, at most `limit`, each with
    /// its best matching lines; when none does, the files holding any of them (`matched` says
    /// which). Code comes first, then settings, tests and prose ([`FileKind`], by the path in
    /// the repository), each best first (BM25): this is the index of the code, and a README
    /// that says the words of a bug report more often than the code that has the bug led a
    /// small model to read the README and answer from it. The kinds are sorted among the
    /// [`SEARCH_POOL`] best files.
    pub fn search(
        &self,
        scope: &Path,
        query: &str,
        limit: usize,
    ) -> Result<SearchResults, MemoryError> {
        let q = FtsQuery::parse(query)?;
        let scope_s = path_str(scope);
        let (lo, hi) = below(&scope_s);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT f.abs, f.language, t.body, snippet(file_text, 0, '', '', '…', 12), f.rel
                 FROM file_text t JOIN files f ON f.id = t.rowid
                 WHERE file_text MATCH ?1 AND ((f.abs > ?2 AND f.abs < ?3) OR f.abs = ?4)
                 ORDER BY t.rank
                 LIMIT ?5",
            )
            .map_err(self.sql("searching"))?;
        let mut found = Vec::new();
        let mut matched = Matched::Every;
        for (expr, how) in q.tries() {
            let rows = st
                .query_map(
                    params![expr, lo, hi, scope_s, SEARCH_POOL.max(limit + 1) as i64],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, Option<String>>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, String>(3)?,
                            FileKind::of(&r.get::<_, String>(4)?),
                        ))
                    },
                )
                .map_err(self.sql("searching"))?;
            for row in rows {
                found.push(row.map_err(self.sql("searching"))?);
            }
            if !found.is_empty() {
                matched = how;
                break;
            }
        }
        // Stable: BM25's order within a kind.
        found.sort_by_key(|row| row.4);
        let truncated = cut(&mut found, limit);
        let mut hits = Vec::new();
        for (path, language, body, snippet, _) in found {
            let (mut lines, more_lines) = best_lines(&q, &body);
            if !lines.is_empty() {
                let symbols = self.symbol_spans(&path)?;
                for hit in &mut lines {
                    hit.within = innermost(&symbols, hit.line);
                }
            }
            hits.push(SearchHit {
                path,
                language,
                snippet: lines.is_empty().then_some(snippet),
                lines,
                more_lines,
            });
        }
        Ok(SearchResults {
            hits,
            truncated,
            matched,
        })
    }
}

/// The definitions of the file at `abs`: (first line, last line, `kind name`
/// with its parent as `Parent.name`).
fn symbol_spans_query() -> &'static str {
    "SELECT s.line, s.end_line, s.kind, s.name, s.parent FROM symbols s
     JOIN files f ON f.id = s.file_id WHERE f.abs = ?1"
}

impl CodebaseIndex {
    fn symbol_spans(&self, abs: &str) -> Result<Vec<(u64, u64, String)>, MemoryError> {
        let mut st = self
            .conn
            .prepare_cached(symbol_spans_query())
            .map_err(self.sql("reading symbols"))?;
        st.query_map([abs], |r| {
            let kind: String = r.get(2)?;
            let name: String = r.get(3)?;
            let parent: Option<String> = r.get(4)?;
            let shown = match parent {
                Some(p) => format!("{kind} {p}.{name}"),
                None => format!("{kind} {name}"),
            };
            Ok((
                r.get::<_, u32>(0)? as u64,
                r.get::<_, u32>(1)? as u64,
                shown,
            ))
        })
        .and_then(|rows| rows.collect())
        .map_err(self.sql("reading symbols"))
    }
}

/// The narrowest span of `symbols` that holds `line` (the latest to start,
/// among equals).
fn innermost(symbols: &[(u64, u64, String)], line: u64) -> Option<String> {
    symbols
        .iter()
        .filter(|(first, last, _)| *first <= line && line <= *last)
        .min_by_key(|(first, last, _)| (last - first, u64::MAX - first))
        .map(|(_, _, shown)| shown.clone())
}

/// The lines of `body` holding the most query words, in line order, and how many more match.
fn best_lines(q: &FtsQuery, body: &str) -> (Vec<LineHit>, usize) {
    let mut scored: Vec<(usize, u64, &str)> = body
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let n = q.words_in(line);
            (n > 0).then_some((n, i as u64 + 1, line))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let more = scored.len().saturating_sub(SEARCH_LINES_PER_FILE);
    scored.truncate(SEARCH_LINES_PER_FILE);
    scored.sort_by_key(|s| s.1);
    let lines = scored
        .into_iter()
        .map(|(_, line, text)| LineHit {
            line,
            text: around_match(q, text.trim_end()),
            within: None,
        })
        .collect();
    (lines, more)
}

/// A long line cut to a window around its first match.
fn around_match(q: &FtsQuery, line: &str) -> String {
    if line.len() <= SEARCH_LINE_BYTES {
        return line.to_owned();
    }
    let lower = line.to_lowercase();
    // Lower-casing can change byte lengths; fall back to the line's start then.
    let at = if lower.len() == line.len() {
        q.terms
            .iter()
            .filter_map(|t| lower.find(t.as_str()))
            .min()
            .unwrap_or(0)
    } else {
        0
    };
    // the last character boundary at or before a quarter of the budget ahead of the match
    let start = seam_term::head_bytes(line, at.saturating_sub(SEARCH_LINE_BYTES / 4)).len();
    let (body, cut_end) = clip(&line[start..], SEARCH_LINE_BYTES);
    let _ = cut_end;
    if start > 0 {
        format!("…{body}")
    } else {
        body
    }
}
