//! Step 5 of an index run: what the repository's index holds now.

use super::{CodebaseIndex, IndexReport};
use crate::MemoryError;

impl CodebaseIndex {
    pub(super) fn fill_totals(
        &self,
        repo_id: i64,
        report: &mut IndexReport,
    ) -> Result<(), MemoryError> {
        let (files, lines): (i64, i64) = self
            .conn
            .query_row(
                "SELECT count(*), coalesce(sum(lines), 0) FROM files WHERE repo_id = ?1",
                [repo_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(self.sql("counting files"))?;
        report.files = files as u64;
        report.lines = lines as u64;
        report.symbols = self
            .conn
            .query_row(
                "SELECT count(*) FROM symbols JOIN files ON files.id = symbols.file_id
                 WHERE files.repo_id = ?1",
                [repo_id],
                |r| r.get::<_, i64>(0),
            )
            .map_err(self.sql("counting symbols"))? as u64;
        let mut st = self
            .conn
            .prepare(
                "SELECT coalesce(language, 'other'), count(*) FROM files WHERE repo_id = ?1
                 GROUP BY 1",
            )
            .map_err(self.sql("counting languages"))?;
        report.languages = st
            .query_map([repo_id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
            .and_then(|rows| rows.collect::<Result<_, _>>())
            .map_err(self.sql("counting languages"))?;
        let mut st = self
            .conn
            .prepare(
                "SELECT content, count(*) FROM files WHERE repo_id = ?1 AND content != 'text'
                 GROUP BY 1",
            )
            .map_err(self.sql("counting files without text"))?;
        report.without_text = st
            .query_map([repo_id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
            .and_then(|rows| rows.collect::<Result<_, _>>())
            .map_err(self.sql("counting files without text"))?;
        Ok(())
    }
}
