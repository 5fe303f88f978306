//! Step 2 of an index run: what the index knows about the part of the repository walked.

use std::collections::HashMap;

use rusqlite::params;

use super::{CodebaseIndex, below};
use crate::MemoryError;

/// An indexed file as the index recorded it.
#[derive(Debug, Clone)]
pub(super) struct Known {
    pub(super) id: i64,
    pub(super) size: i64,
    pub(super) mtime_ns: i64,
    pub(super) sha256: Option<Vec<u8>>,
    pub(super) racy: bool,
}

impl CodebaseIndex {
    /// The indexed files of repository `repo_id` below `walk_root`, by relative path.
    pub(super) fn known(
        &self,
        repo_id: i64,
        walk_root: &str,
    ) -> Result<HashMap<String, Known>, MemoryError> {
        let (lo, hi) = below(walk_root);
        let mut known: HashMap<String, Known> = HashMap::new();
        {
            let mut st = self
                .conn
                .prepare(
                    "SELECT rel, id, size, mtime_ns, sha256, racy FROM files
                     WHERE repo_id = ?1 AND abs > ?2 AND abs < ?3",
                )
                .map_err(self.sql("reading the index"))?;
            let rows = st
                .query_map(params![repo_id, lo, hi], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        Known {
                            id: r.get(1)?,
                            size: r.get(2)?,
                            mtime_ns: r.get(3)?,
                            sha256: r.get(4)?,
                            racy: r.get::<_, i64>(5)? != 0,
                        },
                    ))
                })
                .map_err(self.sql("reading the index"))?;
            for row in rows {
                let (rel, k) = row.map_err(self.sql("reading the index"))?;
                known.insert(rel, k);
            }
        }
        Ok(known)
    }
}
