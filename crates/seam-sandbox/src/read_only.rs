//! Where each file shown read-only ([`ReadOnlyFile`]) lands in the sandbox's view, worked out
//! in the gate before the fork: the directories to make, the copies in the root tmpfs, and
//! the read-only binds under scratch.

use std::collections::{BTreeMap, BTreeSet};

use crate::SandboxError;
use crate::job::{Job, MAX_READ_ONLY_BYTES, MAX_READ_ONLY_FILES, MAX_READ_ONLY_NAME};
use crate::run::Layout;

/// The directory of the new root where copies bound under scratch are staged before the
/// bind; removed again before the root turns read-only. No name may land there.
pub(crate) const STAGE_DIR: &str = ".seam-ro";

/// Where a name leads, as components from the sandbox's root: the directories the walk
/// passes through (parents first) and the file it ends at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Walk {
    pub dirs: Vec<Vec<String>>,
    pub file: Vec<String>,
}

impl Walk {
    fn under_scratch(path: &[String]) -> bool {
        path.len() >= 2 && path[0] == "scratch"
    }
}

/// Walks `name` from the working directory (`/scratch`) as the kernel would: `.` and empty
/// components vanish, `..` goes up (never above the root), `/tmp` is scratch (a link there).
pub(crate) fn walk(name: &str) -> Result<Walk, String> {
    if name.is_empty() || name.len() > MAX_READ_ONLY_NAME || name.contains('\0') {
        return Err(format!(
            "{name:?} is not a file name (empty, a NUL byte, or over {MAX_READ_ONLY_NAME} bytes)"
        ));
    }
    let parts: Vec<&str> = name
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let (Some(last), false) = (parts.last(), name.ends_with('/')) else {
        return Err(format!("{name:?} names a directory, not a file"));
    };
    if *last == ".." {
        return Err(format!("{name:?} names a directory, not a file"));
    }
    let mut cur: Vec<String> = if name.starts_with('/') {
        Vec::new()
    } else {
        vec!["scratch".to_owned()]
    };
    let mut dirs = Vec::new();
    for part in &parts[..parts.len() - 1] {
        if *part == ".." {
            cur.pop();
            continue;
        }
        cur.push((*part).to_owned());
        if cur.len() == 1 && cur[0] == "tmp" {
            cur[0] = "scratch".to_owned();
        }
        if cur.len() == 1 && cur[0] == "scratch" {
            continue;
        }
        if !dirs.contains(&cur) {
            dirs.push(cur.clone());
        }
    }
    cur.push((*last).to_owned());
    Ok(Walk { dirs, file: cur })
}

/// Everything the files shown read-only need, relative to the new root.
#[derive(Debug, Default)]
pub(crate) struct Placed {
    /// Directories of the root (not under scratch) to make, parents first.
    pub root_dirs: Vec<String>,
    /// Copies in the root (relative path, index into `Job::read_only`).
    pub root_files: Vec<(String, usize)>,
    /// Directories under scratch to make (`scratch/data`), parents first.
    pub scratch_dirs: Vec<String>,
    /// Copies bound read-only under scratch (`scratch/data/runs.csv`, index).
    pub scratch_files: Vec<(String, usize)>,
    /// Bytes of the copies in the root.
    pub root_bytes: u64,
    /// Bytes of the copies bound under scratch.
    pub scratch_bytes: u64,
}

impl Placed {
    /// How many inodes the copies and their directories take in the root tmpfs.
    pub fn root_inodes(&self) -> u64 {
        (self.root_dirs.len() + self.root_files.len() + 1) as u64
    }
}

/// Places every file of `job.read_only`, checking the names against the sandbox's own view
/// (`layout`) and against the call's scratch files (`scratch_names`, `scratch_dirs`, relative
/// to scratch). With no layout (a run without the walls) a name outside scratch is left out:
/// such a run sees the machine's own file there.
pub(crate) fn place(
    layout: Option<&Layout>,
    job: &Job,
    scratch_dirs: &[String],
) -> Result<Placed, SandboxError> {
    let bad = |m: String| Err(SandboxError::InvalidJob(m));
    if job.read_only.len() > MAX_READ_ONLY_FILES {
        return bad(format!(
            "{} files to show read-only; at most {MAX_READ_ONLY_FILES}",
            job.read_only.len()
        ));
    }
    let bytes: u64 = job.read_only.iter().map(|f| f.content.len() as u64).sum();
    if bytes > MAX_READ_ONLY_BYTES {
        return bad(format!(
            "the files to show read-only hold {bytes} bytes; at most {MAX_READ_ONLY_BYTES}"
        ));
    }
    let scratch_names: BTreeSet<String> = job
        .files
        .iter()
        .map(|f| format!("scratch/{}", f.name))
        .collect();
    let scratch_made: BTreeSet<String> = scratch_dirs
        .iter()
        .map(|d| format!("scratch/{d}"))
        .collect();
    let mut placed = Placed::default();
    // file → index of the first name that led there
    let mut files: BTreeMap<String, usize> = BTreeMap::new();
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    for (i, f) in job.read_only.iter().enumerate() {
        let w = walk(&f.name).map_err(SandboxError::InvalidJob)?;
        if let Some(layout) = layout {
            for d in &w.dirs {
                if let Err(why) = layout.may_hold(d, true) {
                    return bad(format!("{:?} cannot be shown: {why}", f.name));
                }
            }
            if let Err(why) = layout.may_hold(&w.file, false) {
                return bad(format!("{:?} cannot be shown: {why}", f.name));
            }
        }
        let file = w.file.join("/");
        if let Some(&first) = files.get(&file) {
            if job.read_only[first].content == f.content {
                continue;
            }
            return bad(format!(
                "{:?} and {:?} lead to the same place with different contents",
                job.read_only[first].name, f.name
            ));
        }
        let in_scratch = Walk::under_scratch(&w.file);
        if in_scratch && (scratch_names.contains(&file) || scratch_made.contains(&file)) {
            return bad(format!(
                "{:?} is also one of the call's scratch files or directories",
                f.name
            ));
        }
        if !in_scratch && layout.is_none() {
            continue;
        }
        for d in &w.dirs {
            let d = d.join("/");
            if scratch_names.contains(&d) {
                return bad(format!(
                    "{:?} passes through {d:?}, one of the call's scratch files",
                    f.name
                ));
            }
            if dirs.insert(d.clone()) {
                if d.starts_with("scratch/") {
                    // every one, those of scratch files too: the binds come first, and
                    // the scratch files' directories are made again beside them
                    placed.scratch_dirs.push(d);
                } else if layout.is_none_or(|l| !l.has_dir(&d)) {
                    placed.root_dirs.push(d);
                }
            }
        }
        files.insert(file.clone(), i);
        let len = f.content.len() as u64;
        if in_scratch {
            placed.scratch_files.push((file, i));
            placed.scratch_bytes += len;
        } else {
            placed.root_files.push((file, i));
            placed.root_bytes += len;
        }
    }
    if let Some(both) = files.keys().find(|f| dirs.contains(*f)) {
        return bad(format!(
            "/{both} would be both a file and a directory of the files shown read-only"
        ));
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comps(p: &str) -> Vec<String> {
        p.split('/').map(str::to_owned).collect()
    }

    #[test]
    fn names_walk_as_the_kernel_walks_them() {
        let w = walk("data/runs.csv").unwrap();
        assert_eq!(w.file, comps("scratch/data/runs.csv"));
        assert_eq!(w.dirs, vec![comps("scratch/data")]);
        let w = walk("notes/../data/./runs.csv").unwrap();
        assert_eq!(w.file, comps("scratch/data/runs.csv"));
        assert_eq!(w.dirs, vec![comps("scratch/notes"), comps("scratch/data")]);
        let w = walk("/home/u/a.md").unwrap();
        assert_eq!(w.file, comps("home/u/a.md"));
        assert_eq!(w.dirs, vec![comps("home"), comps("home/u")]);
        assert_eq!(walk("/tmp/x/a").unwrap().file, comps("scratch/x/a"));
        assert_eq!(walk("../../../etc/x").unwrap().file, comps("etc/x"));
        assert_eq!(walk("a.csv").unwrap().dirs, Vec::<Vec<String>>::new());
        for bad in ["", "a/", "..", "a/..", "/", "x\0"] {
            assert!(walk(bad).is_err(), "{bad:?}");
        }
    }
}
