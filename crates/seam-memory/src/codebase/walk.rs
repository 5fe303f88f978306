//! Step 1 of an index run: the walk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::IndexProgress;

/// A file the walk found: its path, its path relative to the repository's root, and its
/// metadata (not following a link).
pub(super) type Candidate = (PathBuf, String, std::fs::Metadata);

/// The regular files below `walk_root` that the repository's ignore files keep in, outside
/// `own_dir` (the store's directory), in order of their path relative to `repo_root`. What is
/// left out is counted in `skipped` by reason.
pub(super) fn walk(
    walk_root: &Path,
    repo_root: &Path,
    own_dir: Option<&Path>,
    skipped: &mut BTreeMap<String, u64>,
    progress: &mut dyn FnMut(IndexProgress<'_>),
) -> Vec<Candidate> {
    let mut skip = |reason: &str| *skipped.entry(reason.to_owned()).or_default() += 1;
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut since_progress = 0u32;
    let walker = ignore::WalkBuilder::new(walk_root)
        .hidden(true)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .build();
    for entry in walker {
        let Ok(entry) = entry else {
            skip("unreadable");
            continue;
        };
        let Some(ft) = entry.file_type() else {
            continue;
        };
        if ft.is_dir() {
            continue;
        }
        let path = entry.into_path();
        if own_dir.is_some_and(|own| path.starts_with(own)) {
            continue;
        }
        if ft.is_symlink() {
            skip("link");
            continue;
        }
        if !ft.is_file() {
            skip("special");
            continue;
        }
        let Some(rel) = path
            .strip_prefix(repo_root)
            .ok()
            .and_then(Path::to_str)
            .map(str::to_owned)
        else {
            skip("name_not_utf8");
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            skip("unreadable");
            continue;
        };
        candidates.push((path, rel, meta));
        since_progress += 1;
        if since_progress == 256 {
            since_progress = 0;
            progress(IndexProgress::Walking {
                found: candidates.len() as u64,
            });
        }
    }
    candidates.sort_by(|a, b| a.1.cmp(&b.1));
    progress(IndexProgress::Walking {
        found: candidates.len() as u64,
    });
    candidates
}
