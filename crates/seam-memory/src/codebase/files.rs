//! Step 3 of an index run: every file walked is unchanged, rehashed, or read and parsed.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Transaction, params};
use sha2::{Digest, Sha256};

use super::known::Known;
use super::symbols::SymbolParser;
use super::walk::Candidate;
use super::{CodebaseIndex, IndexOptions, IndexProgress, IndexReport, count_lines, lang};
use crate::MemoryError;

/// A file changed this recently (or later) is re-hashed next time even if its time and size
/// look the same: a write in the same clock tick as the index would otherwise go unseen.
const RACY_WINDOW_NS: i64 = 2_000_000_000;
/// The head of a file looked at for NUL bytes to call it binary.
const SNIFF_BYTES: usize = 8192;
/// Changed files written per transaction (a reader sees progress; the WAL stays small).
const BATCH_FILES: usize = 500;

impl CodebaseIndex {
    /// Brings the index of `candidates` up to date in `tx`, committing it and going on in a
    /// new transaction every [`BATCH_FILES`] changed files; returns the transaction open at the
    /// end and the relative paths of the files kept. On an error the open transaction is
    /// dropped, and so rolled back.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn index_files<'c>(
        &'c self,
        mut tx: Transaction<'c>,
        repo_id: i64,
        repo_root: &str,
        candidates: &[Candidate],
        known: &HashMap<String, Known>,
        options: &IndexOptions<'_>,
        report: &mut IndexReport,
        progress: &mut dyn FnMut(IndexProgress<'_>),
    ) -> Result<(Transaction<'c>, HashSet<String>), MemoryError> {
        let total = candidates.len() as u64;
        let now_ns = unix_ns(SystemTime::now());
        let mut parser = SymbolParser::new();
        let mut seen: HashSet<String> = HashSet::with_capacity(candidates.len());
        let mut in_batch = 0usize;
        for (i, (path, rel, meta)) in candidates.iter().enumerate() {
            progress(IndexProgress::Indexing {
                done: i as u64 + 1,
                total,
                path: rel,
            });
            if let Some(reason) = options.skip.and_then(|f| f(path)) {
                *report.skipped.entry(reason).or_default() += 1;
                continue;
            }
            let size = meta.size() as i64;
            let mtime_ns = mtime_of(meta);
            let old = known.get(rel.as_str());
            if let Some(k) = old
                && k.size == size
                && k.mtime_ns == mtime_ns
                && !k.racy
            {
                seen.insert(rel.clone());
                report.unchanged += 1;
                continue;
            }
            let Some(read) = read_file(path, options.max_file_bytes) else {
                *report.skipped.entry("unreadable".into()).or_default() += 1;
                continue;
            };
            seen.insert(rel.clone());
            // What was opened is what is recorded (it may have changed since the walk).
            let size = read.size as i64;
            let mtime_ns = read.mtime_ns;
            let racy = mtime_ns > now_ns - RACY_WINDOW_NS;
            if let (Some(k), Some(bytes)) = (old, &read.bytes) {
                let digest = Sha256::digest(bytes).to_vec();
                if k.sha256.as_deref() == Some(&digest) {
                    self.conn
                        .prepare_cached(
                            "UPDATE files SET size = ?2, mtime_ns = ?3, racy = ?4 WHERE id = ?1",
                        )
                        .and_then(|mut st| st.execute(params![k.id, size, mtime_ns, racy]))
                        .map_err(self.sql("updating a file's time"))?;
                    report.rehashed += 1;
                    continue;
                }
            }
            self.store_file(
                repo_id,
                repo_root,
                rel,
                path,
                size,
                mtime_ns,
                racy,
                read.bytes.as_deref(),
                &mut parser,
            )?;
            report.parsed += 1;
            in_batch += 1;
            if in_batch >= BATCH_FILES {
                self.commit(tx)?;
                tx = self.begin()?;
                in_batch = 0;
            }
        }
        Ok((tx, seen))
    }

    #[allow(clippy::too_many_arguments)]
    fn store_file(
        &self,
        repo_id: i64,
        repo_root: &str,
        rel: &str,
        path: &Path,
        size: i64,
        mtime_ns: i64,
        racy: bool,
        bytes: Option<&[u8]>,
        parser: &mut SymbolParser,
    ) -> Result<(), MemoryError> {
        let language = lang::detect(path);
        let abs = format!("{}/{rel}", repo_root.trim_end_matches('/'));
        let (content, text, digest) = match bytes {
            None => ("too_large", None, None),
            Some(b) if b[..b.len().min(SNIFF_BYTES)].contains(&0) => {
                ("binary", None, Some(Sha256::digest(b).to_vec()))
            }
            Some(b) => (
                "text",
                Some(String::from_utf8_lossy(b)),
                Some(Sha256::digest(b).to_vec()),
            ),
        };
        let lines = text.as_deref().map(count_lines);
        let id: i64 = self
            .conn
            .prepare_cached(
                "INSERT INTO files (repo_id, rel, abs, language, size, lines, mtime_ns, sha256, racy, content)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (abs) DO UPDATE SET repo_id = excluded.repo_id, rel = excluded.rel,
                    language = excluded.language, size = excluded.size, lines = excluded.lines,
                    mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256, racy = excluded.racy,
                    content = excluded.content
                 RETURNING id",
            )
            .and_then(|mut st| {
                st.query_row(
                    params![
                        repo_id,
                        rel,
                        abs,
                        language.map(|l| l.name),
                        size,
                        lines.map(|l| l as i64),
                        mtime_ns,
                        digest,
                        racy,
                        content
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(self.sql("recording a file"))?;
        self.conn
            .prepare_cached("DELETE FROM symbols WHERE file_id = ?1")
            .and_then(|mut st| st.execute([id]))
            .map_err(self.sql("dropping old symbols"))?;
        self.conn
            .prepare_cached("DELETE FROM file_text WHERE rowid = ?1")
            .and_then(|mut st| st.execute([id]))
            .map_err(self.sql("dropping old text"))?;
        let Some(text) = text else {
            return Ok(());
        };
        self.conn
            .prepare_cached("INSERT INTO file_text (rowid, body) VALUES (?1, ?2)")
            .and_then(|mut st| st.execute(params![id, text.as_ref()]))
            .map_err(self.sql("indexing a file's text"))?;
        if let Some(parsed) = language.and_then(|l| l.parsed) {
            let found = parser.symbols(parsed, &text);
            let mut st = self
                .conn
                .prepare_cached(
                    "INSERT INTO symbols (file_id, name, kind, line, end_line, parent, signature)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(self.sql("recording symbols"))?;
            for s in found {
                st.execute(params![
                    id,
                    s.name,
                    s.kind,
                    s.line,
                    s.end_line,
                    s.parent,
                    s.signature
                ])
                .map_err(self.sql("recording symbols"))?;
            }
        }
        Ok(())
    }
}

fn unix_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

fn mtime_of(meta: &std::fs::Metadata) -> i64 {
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

#[derive(Debug)]
struct ReadFile {
    size: u64,
    mtime_ns: i64,
    /// `None` when the file is larger than the limit (not read).
    bytes: Option<Vec<u8>>,
}

/// Opens a file without following a link at its end and without blocking (a FIFO put in its
/// place), and reads it if it is a regular file no larger than `max`.
fn read_file(path: &Path, max: u64) -> Option<ReadFile> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut file = File::from(fd);
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let size = meta.len();
    let mtime_ns = mtime_of(&meta);
    if size > max {
        return Some(ReadFile {
            size,
            mtime_ns,
            bytes: None,
        });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    (&mut file).take(max + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > max {
        return Some(ReadFile {
            size: bytes.len() as u64,
            mtime_ns,
            bytes: None,
        });
    }
    Some(ReadFile {
        size: bytes.len() as u64,
        mtime_ns,
        bytes: Some(bytes),
    })
}
