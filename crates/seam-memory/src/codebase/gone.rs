//! Step 4 of an index run: the files gone from the part of the tree walked.

use std::collections::{HashMap, HashSet};

use super::CodebaseIndex;
use super::known::Known;
use crate::MemoryError;

impl CodebaseIndex {
    /// Drops the files of `known` that the run did not keep (`seen`): gone from the tree, now
    /// ignored, or now skipped. Returns how many.
    pub(super) fn drop_gone(
        &self,
        known: &HashMap<String, Known>,
        seen: &HashSet<String>,
    ) -> Result<u64, MemoryError> {
        let gone: Vec<i64> = known
            .iter()
            .filter(|(rel, _)| !seen.contains(rel.as_str()))
            .map(|(_, k)| k.id)
            .collect();
        for id in &gone {
            self.conn
                .prepare_cached("DELETE FROM files WHERE id = ?1")
                .and_then(|mut st| st.execute([id]))
                .map_err(self.sql("dropping a removed file"))?;
        }
        Ok(gone.len() as u64)
    }
}
