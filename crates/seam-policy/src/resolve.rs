//! Following links by hand, without opening anything: where a path leads, also when its end does
//! not exist yet (a write) or a link on the way dangles.
//!
//! This is never what admits a read: reads are decided on the opened descriptor (see
//! `admission`). It canonicalises the policy's lists, finds where a write would land, and names
//! the real file in a refusal when the kernel-side open failed.

use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::lexical::is_within;

/// The kernel's limit on links followed in one lookup (`MAXSYMLINKS`).
pub(crate) const MAX_LINK_HOPS: usize = 40;

/// Where a path leads.
#[derive(Debug)]
pub(crate) struct Resolved {
    pub outcome: Outcome,
    /// The first symbolic link under `/proc` that was followed (e.g. `/proc/self/root`): these
    /// are magic links, which admission never follows for real.
    pub via_proc: Option<PathBuf>,
}

#[derive(Debug)]
pub(crate) enum Outcome {
    /// The path exists; `real` is its canonical form and `meta` its `lstat` (never a link).
    Exists { real: PathBuf, meta: Metadata },
    /// Some component does not exist. `real` is where the path would be: the deepest existing
    /// directory (canonical) joined with the rest. `plain` is true when the rest holds only plain
    /// names (no `..` spliced in by a link), so creating it would land exactly at `real`.
    Missing { real: PathBuf, plain: bool },
    /// More than [`MAX_LINK_HOPS`] links: a loop, or a chain too long to follow.
    Loop { at: PathBuf },
    /// A component that is not a directory has more components after it.
    NotDir { at: PathBuf },
    /// The operating system would not say what is there (e.g. permission denied).
    Unreadable { at: PathBuf, error: io::Error },
}

/// Resolves an absolute, lexically clean path the way the kernel would: links are followed
/// (also the last component), `..` in a link's target applies to where the link lives.
pub(crate) fn resolve(lexical: &Path) -> Resolved {
    let mut via_proc = None;
    let outcome = walk(lexical, &mut via_proc);
    Resolved { outcome, via_proc }
}

fn walk(lexical: &Path, via_proc: &mut Option<PathBuf>) -> Outcome {
    let mut done = PathBuf::from("/");
    let mut done_meta: Option<Metadata> = None;
    // A stack: the next component to look at is last.
    let mut todo: Vec<OsString> = components(lexical);
    let mut hops = 0usize;
    while let Some(component) = todo.pop() {
        if component == ".." {
            done.pop();
            done_meta = None;
            continue;
        }
        let candidate = done.join(&component);
        let meta = match fs::symlink_metadata(&candidate) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let mut real = candidate;
                let mut plain = true;
                while let Some(rest) = todo.pop() {
                    if rest == ".." {
                        plain = false;
                        real.pop();
                    } else {
                        real.push(rest);
                    }
                }
                return Outcome::Missing { real, plain };
            }
            Err(error) => {
                return Outcome::Unreadable {
                    at: candidate,
                    error,
                };
            }
        };
        if meta.file_type().is_symlink() {
            hops += 1;
            if hops > MAX_LINK_HOPS {
                return Outcome::Loop { at: candidate };
            }
            if via_proc.is_none() && is_within(&candidate, Path::new("/proc")) {
                *via_proc = Some(candidate.clone());
            }
            let target = match fs::read_link(&candidate) {
                Ok(target) => target,
                // It stopped being a link since the `lstat`: look at it again (bounded by hops).
                Err(error) if error.kind() == io::ErrorKind::InvalidInput => {
                    todo.push(component);
                    continue;
                }
                Err(error) => {
                    return Outcome::Unreadable {
                        at: candidate,
                        error,
                    };
                }
            };
            if target.is_absolute() {
                done = PathBuf::from("/");
                done_meta = None;
            }
            todo.extend(components(&target));
            continue;
        }
        if !meta.is_dir() && !todo.is_empty() {
            return Outcome::NotDir { at: candidate };
        }
        done = candidate;
        done_meta = Some(meta);
    }
    let meta = match done_meta {
        Some(meta) => meta,
        None => match fs::symlink_metadata(&done) {
            Ok(meta) => meta,
            Err(error) => return Outcome::Unreadable { at: done, error },
        },
    };
    Outcome::Exists { real: done, meta }
}

/// The components of `path` as a stack (last component first), without `/` and `.`.
fn components(path: &Path) -> Vec<OsString> {
    let mut out: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    out.reverse();
    out
}

/// The canonical form of a list entry: where it leads now, or where it would be if it does not
/// exist. A loop or an unreadable component leaves the lexical form.
pub(crate) fn canonical_form(lexical: &Path) -> (PathBuf, Option<Metadata>) {
    match resolve(lexical).outcome {
        Outcome::Exists { real, meta } => (real, Some(meta)),
        Outcome::Missing { real, .. } => (real, None),
        Outcome::Loop { .. } | Outcome::NotDir { .. } | Outcome::Unreadable { .. } => {
            (lexical.to_path_buf(), None)
        }
    }
}
