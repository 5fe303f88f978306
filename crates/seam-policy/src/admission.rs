//! Path admission: whether a tool may touch the path it was given, decided about the file that
//! is actually opened.
//!
//! The order, for every access:
//! 1. normalise lexically (`lexical`): empty, NUL, non-UTF-8, over-long and shell syntax are
//!    refused (`invalid_path`); `~` expands; relative is relative to the workspace root; no `..`
//!    survives, and the normalised path (never the raw one) is what is opened;
//! 2. the capability's decision: `deny` refuses; `ask` refuses a read (consent is for changes);
//! 3. the protected deny-list, then the allow-list for this access, on the normalised name;
//! 4. for a read: open an `O_PATH` handle (links followed, `/proc` magic links never), ask the
//!    kernel where the handle really is and on what file system (procfs, sysfs and the other
//!    kernel file systems are refused wherever they are mounted), and ask both lists again about
//!    that real path, about the handle's `(device, inode)` and its ancestors' (a hard link or a
//!    bind mount of a protected file, a case-folding name), and when the file has more than one
//!    name and is not in the index, whether another name of it is protected (a bounded walk of
//!    the protected trees). Only then, and only for a regular file, is that same handle reopened
//!    for reading: there is no window between the check and the use, and nothing is read, no
//!    device driver opened and no FIFO waited on before the decision;
//! 5. for a write: follow links by hand to where the write would land (the file may not exist
//!    yet; the rest of the path must be plain names) and ask both lists about that.
//!
//! Where a refusal happens before the open, the message still names the real file when that
//! file is refused too (a lexical name that is protected, a link that leads outside), and a
//! place the caller may not look is never said to exist or not.
//!
//! Known limits: the lists' canonical forms and the `(device, inode)` index of the protected
//! trees are a snapshot, refreshed after [`LISTS_REFRESH_AFTER`] (or by
//! [`PathAdmission::refresh`]); the index covers at most `PROTECTED_INDEX_PER_TREE` entries a
//! tree (beyond that, a hard link is still found by the walk, a bind-mounted single file deep in
//! a huge tree is not); a link inside a protected tree protects its target only while indexed.
//! An admitted write is a decision about a path: whoever then creates the file must open it
//! without following a link at the end (`O_NOFOLLOW`, `O_EXCL`) and check the result again.

use std::ffi::OsStr;
use std::fmt;
use std::fs::{File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use seam_protocol::RefusalCode;

use crate::fsops::{self, kind_of};
use crate::lexical;
use crate::lists::{Protector, ResolvedLists, Rule, holding, is_kernel_tree};
use crate::resolve::{MAX_LINK_HOPS, Outcome, resolve};
use crate::rules::ProtectedRule;
use crate::{Access, Decision, FileAccess, Policy};

/// How long canonicalised lists are trusted before they are resolved again (a protected
/// directory replaced by a link, a key created, after the gate started).
pub const LISTS_REFRESH_AFTER: Duration = Duration::from_secs(1);

/// How many entries of the protected trees are looked at, at most, to rule out that a file
/// with several names (hard links) is a protected file. Past it the file is refused.
pub const DEFAULT_HARD_LINK_SEARCH_BUDGET: usize = 200_000;

/// Why a path was refused: a code from the protocol and a message that names the real file
/// (where links led) and, where it helps, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRefusal {
    pub code: RefusalCode,
    pub message: String,
}

impl PathRefusal {
    pub fn new(code: RefusalCode, message: impl Into<String>) -> PathRefusal {
        PathRefusal {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for PathRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for PathRefusal {}

/// A path admitted for an access (`seam policy check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmittedPath {
    /// Where the path really is (links followed). For a write to a file that does not exist
    /// yet, where it will be.
    pub real: PathBuf,
    /// The capability's decision: `Allow`, or `Ask` for a write (the change waits for consent).
    pub decision: Decision,
    /// False for a write whose file does not exist yet.
    pub exists: bool,
}

/// A regular file admitted for reading, already open: read `file`, never `real` again.
#[derive(Debug)]
pub struct AdmittedFile {
    pub file: File,
    /// Where the opened file really is.
    pub real: PathBuf,
    /// The opened file's metadata (size, times, …), from the open descriptor.
    pub metadata: Metadata,
}

#[derive(Debug)]
struct ListsSnapshot {
    taken: Instant,
    lists: Arc<ResolvedLists>,
}

/// Decides about paths under one policy. Cheap to share (`Sync`).
#[derive(Debug)]
pub struct PathAdmission {
    policy: Arc<Policy>,
    snapshot: Mutex<ListsSnapshot>,
    hard_link_budget: usize,
}

/// What a request is about once it passed the lexical checks.
struct Request {
    access: Access,
    lexical: PathBuf,
    decision: Decision,
}

impl PathAdmission {
    pub fn new(policy: Arc<Policy>) -> Self {
        let lists = Arc::clone(policy.lists());
        PathAdmission {
            policy,
            snapshot: Mutex::new(ListsSnapshot {
                taken: Instant::now(),
                lists,
            }),
            hard_link_budget: DEFAULT_HARD_LINK_SEARCH_BUDGET,
        }
    }

    /// Sets how many entries of the protected trees a hard-link search may look at.
    pub fn with_hard_link_budget(mut self, entries: usize) -> Self {
        self.hard_link_budget = entries;
        self
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Canonicalises the lists again now (they are also refreshed after
    /// [`LISTS_REFRESH_AFTER`]).
    pub fn refresh(&self) {
        let lists = self.policy.resolve_lists();
        let mut snapshot = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        *snapshot = ListsSnapshot {
            taken: Instant::now(),
            lists,
        };
    }

    fn lists(&self) -> Arc<ResolvedLists> {
        let mut snapshot = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        if snapshot.taken.elapsed() > LISTS_REFRESH_AFTER {
            *snapshot = ListsSnapshot {
                taken: Instant::now(),
                lists: self.policy.resolve_lists(),
            };
        }
        Arc::clone(&snapshot.lists)
    }

    /// Whether `raw` may be used for `access`, and where it really is. A read must exist (a
    /// regular file or a directory); a write may name a file that does not exist yet.
    pub fn admitted_path(&self, access: Access, raw: &OsStr) -> Result<AdmittedPath, PathRefusal> {
        let lists = self.lists();
        let request = self.request(access, raw, &lists)?;
        match access {
            Access::Owner(FileAccess::Write) => self.admit_write(&request, &lists),
            Access::Owner(FileAccess::Read) | Access::Source => {
                let (_handle, real, meta) = self.open_handle(&request, &lists)?;
                let t = meta.file_type();
                if !(t.is_file() || t.is_dir()) {
                    return Err(not_a_file(&real, &meta));
                }
                Ok(AdmittedPath {
                    real,
                    decision: request.decision,
                    exists: true,
                })
            }
        }
    }

    /// Opens `raw` for reading when it is admitted for `access` (a read) and is a regular
    /// file. The decision is about the file that is returned open.
    pub fn open_read(&self, access: Access, raw: &OsStr) -> Result<AdmittedFile, PathRefusal> {
        if let Access::Owner(FileAccess::Write) = access {
            return Err(PathRefusal::new(
                RefusalCode::NotAllowed,
                "a path declared for writing cannot be opened for reading",
            ));
        }
        let lists = self.lists();
        let request = self.request(access, raw, &lists)?;
        let (handle, real, meta) = self.open_handle(&request, &lists)?;
        if !meta.file_type().is_file() {
            return Err(not_a_file(&real, &meta));
        }
        let (file, metadata) = fsops::reopen_for_reading(&handle, &meta).map_err(|e| {
            PathRefusal::new(
                RefusalCode::NotAllowed,
                format!("{} could not be opened for reading: {e}", real.display()),
            )
        })?;
        Ok(AdmittedFile {
            file,
            real,
            metadata,
        })
    }

    /// Steps 1–3: normalise, the capability, both lists on the normalised name.
    fn request(
        &self,
        access: Access,
        raw: &OsStr,
        lists: &ResolvedLists,
    ) -> Result<Request, PathRefusal> {
        let env = self.policy.env();
        let lexical =
            lexical::normalise(raw, &env.owner_home, Some(&env.workspace_root)).map_err(|e| {
                PathRefusal::new(RefusalCode::InvalidPath, format!("invalid path: {e}"))
            })?;
        let cap = access.capability();
        let decision = self.policy.decision(cap);
        match decision {
            Decision::Deny => {
                return Err(PathRefusal::new(
                    RefusalCode::CapabilityDenied,
                    format!(
                        "the policy denies {cap} (\"{cap}\" = \"deny\" under [capabilities]); the owner can change that key in the policy file",
                        cap = cap.as_str()
                    ),
                ));
            }
            Decision::Ask if access.is_read() => {
                return Err(PathRefusal::new(
                    RefusalCode::ConsentRequired,
                    format!(
                        "the policy says \"{cap}\" = \"ask\", and a read cannot wait for consent: consent is given for a change, not for a read; the owner can set \"{cap}\" = \"allow\" under [capabilities] in the policy file",
                        cap = cap.as_str()
                    ),
                ));
            }
            Decision::Ask | Decision::Allow => {}
        }
        if let Some(rule) = lists.protecting(&lexical) {
            // Name the real file when it, too, is protected; else the name is what is refused.
            let real = match resolve(&lexical).outcome {
                Outcome::Exists { real, .. } | Outcome::Missing { real, .. }
                    if lists.protecting(&real).is_some() =>
                {
                    real
                }
                _ => lexical,
            };
            return Err(protected(&real, rule));
        }
        if holding(allow_list(access, lists), &lexical).is_none() {
            // Name the real file when it, too, is refused; say so when it is protected.
            let real = match resolve(&lexical).outcome {
                Outcome::Exists { real, .. } | Outcome::Missing { real, .. } => Some(real),
                _ => None,
            };
            if let Some(real) = real {
                if let Some(rule) = lists.protecting(&real) {
                    return Err(protected(&real, rule));
                }
                if holding(allow_list(access, lists), &real).is_none() {
                    return Err(not_allowed(access, &real, lists));
                }
            }
            return Err(not_allowed(access, &lexical, lists));
        }
        Ok(Request {
            access,
            lexical,
            decision,
        })
    }

    /// Step 4: the handle, where it really is, and every check about that.
    fn open_handle(
        &self,
        request: &Request,
        lists: &ResolvedLists,
    ) -> Result<(File, PathBuf, Metadata), PathRefusal> {
        let handle = match fsops::open_path_handle(&request.lexical) {
            Ok(handle) => handle,
            Err(errno) => return Err(self.explain_failed_open(request, errno, lists)),
        };
        let meta = handle.metadata().map_err(|e| {
            PathRefusal::new(
                RefusalCode::NotFound,
                format!("{} could not be examined: {e}", request.lexical.display()),
            )
        })?;
        let real = fsops::handle_real_path(&handle).map_err(|e| {
            PathRefusal::new(
                RefusalCode::NotAllowed,
                format!(
                    "seam cannot verify which file {} is ({e}), so it does not use it; /proc must be mounted",
                    request.lexical.display()
                ),
            )
        })?;
        if meta.nlink() == 0 {
            return Err(PathRefusal::new(
                RefusalCode::NotFound,
                format!("{} was removed while it was being opened", real.display()),
            ));
        }
        if let Some(kind) = fsops::kernel_file_system(&handle) {
            return Err(PathRefusal::new(
                RefusalCode::Protected,
                format!(
                    "{} is in {kind}, a kernel file system that exposes processes' memory and environments (seam's own too) and the kernel's state; seam never reads or writes it",
                    real.display()
                ),
            ));
        }
        self.check_real(request.access, &real, &meta, lists)?;
        Ok((handle, real, meta))
    }

    /// Both lists about a real path, and the protected list about the file's identity.
    /// `meta` is the file's own (links followed), when it exists.
    fn check_real(
        &self,
        access: Access,
        real: &Path,
        meta: &Metadata,
        lists: &ResolvedLists,
    ) -> Result<(), PathRefusal> {
        if let Some(rule) = lists.protecting(real) {
            return Err(protected(real, rule));
        }
        if let Some(known) = lists.protected_ids.get(&(meta.dev(), meta.ino())) {
            let what = match &known.via_link {
                Some(_) => format!(": it is {}", known.describe()),
                None if known.path == real => String::new(),
                None => format!(
                    ": it is {} under another name (a hard link or a bind mount)",
                    known.path.display()
                ),
            };
            return Err(PathRefusal::new(
                RefusalCode::Protected,
                format!(
                    "{} is protected{what}; seam never reads or writes it",
                    real.display()
                ),
            ));
        }
        check_ancestors(real, lists)?;
        if meta.nlink() > 1 && !meta.is_dir() {
            match find_protected_name(meta, lists, self.hard_link_budget) {
                HardLinkSearch::Found(other) => {
                    return Err(PathRefusal::new(
                        RefusalCode::Protected,
                        format!(
                            "{} is a hard link to {}, which is protected; seam never reads or writes it",
                            real.display(),
                            other.display()
                        ),
                    ));
                }
                HardLinkSearch::Exhausted => {
                    return Err(PathRefusal::new(
                        RefusalCode::Protected,
                        format!(
                            "{} has {} names (hard links), and seam could not rule out that one of them is protected (the protected trees hold more than {} entries)",
                            real.display(),
                            meta.nlink(),
                            self.hard_link_budget
                        ),
                    ));
                }
                HardLinkSearch::Absent => {}
            }
        }
        if holding(allow_list(access, lists), real).is_none() {
            return Err(not_allowed(access, real, lists));
        }
        Ok(())
    }

    /// Step 5: where a write would land.
    fn admit_write(
        &self,
        request: &Request,
        lists: &ResolvedLists,
    ) -> Result<AdmittedPath, PathRefusal> {
        let resolved = resolve(&request.lexical);
        if let Some(proc_link) = &resolved.via_proc {
            return Err(through_proc(request, proc_link, &resolved.outcome, lists));
        }
        match resolved.outcome {
            Outcome::Exists { real, .. } => {
                // The resolver's `lstat` of the end; the end is no link, so this is the file.
                let meta = std::fs::metadata(&real).map_err(|e| {
                    PathRefusal::new(
                        RefusalCode::NotFound,
                        format!("{} could not be examined: {e}", real.display()),
                    )
                })?;
                self.check_real(request.access, &real, &meta, lists)?;
                if !meta.file_type().is_file() {
                    return Err(not_a_file(&real, &meta));
                }
                Ok(AdmittedPath {
                    real,
                    decision: request.decision,
                    exists: true,
                })
            }
            Outcome::Missing { real, plain } => {
                check_lists_only(request.access, &real, lists)?;
                check_ancestors(&real, lists)?;
                if !plain {
                    return Err(PathRefusal::new(
                        RefusalCode::NotFound,
                        format!(
                            "{} cannot be created: a link on the way leads through a directory that does not exist and then back up with \"..\"",
                            real.display()
                        ),
                    ));
                }
                Ok(AdmittedPath {
                    real,
                    decision: request.decision,
                    exists: false,
                })
            }
            outcome => Err(unresolvable(request.access, outcome, lists)),
        }
    }

    /// Why the kernel-side open failed, about the real file where that can be found, and
    /// never saying whether something exists in a place the caller may not look.
    fn explain_failed_open(
        &self,
        request: &Request,
        errno: Errno,
        lists: &ResolvedLists,
    ) -> PathRefusal {
        let resolved = resolve(&request.lexical);
        if let Some(proc_link) = &resolved.via_proc {
            return through_proc(request, proc_link, &resolved.outcome, lists);
        }
        match resolved.outcome {
            Outcome::Exists { real, .. } => {
                if let Err(refusal) = check_lists_only(request.access, &real, lists) {
                    return refusal;
                }
                let code = if errno == Errno::ACCESS || errno == Errno::PERM {
                    RefusalCode::NotAllowed
                } else {
                    RefusalCode::NotFound
                };
                PathRefusal::new(
                    code,
                    format!(
                        "{} could not be opened: {}",
                        real.display(),
                        std::io::Error::from(errno)
                    ),
                )
            }
            Outcome::Missing { real, .. } => {
                if let Err(refusal) = check_lists_only(request.access, &real, lists) {
                    return refusal;
                }
                PathRefusal::new(
                    RefusalCode::NotFound,
                    format!("{} does not exist", real.display()),
                )
            }
            outcome => unresolvable(request.access, outcome, lists),
        }
    }
}

/// The protected list, then the allow-list, about a path (no identity: it may not exist).
fn check_lists_only(access: Access, real: &Path, lists: &ResolvedLists) -> Result<(), PathRefusal> {
    if let Some(rule) = lists.protecting(real) {
        return Err(protected(real, rule));
    }
    if holding(allow_list(access, lists), real).is_none() {
        return Err(not_allowed(access, real, lists));
    }
    Ok(())
}

/// Refuses `real` when one of its directories is a protected directory reached by another
/// path: a bind mount of it, or a different spelling on a case-folding file system.
fn check_ancestors(real: &Path, lists: &ResolvedLists) -> Result<(), PathRefusal> {
    if lists.protected_ids.is_empty() {
        return Ok(());
    }
    for dir in real.ancestors().skip(1) {
        if dir.as_os_str().len() <= 1 {
            break;
        }
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            continue;
        };
        if let Some(known) = lists.protected_ids.get(&(meta.dev(), meta.ino())) {
            return Err(PathRefusal::new(
                RefusalCode::Protected,
                format!(
                    "{} is protected: it lies in {}, which is {}; seam never reads or writes it",
                    real.display(),
                    dir.display(),
                    if known.via_link.is_some() {
                        known.describe()
                    } else if known.path == dir {
                        "protected".to_owned()
                    } else {
                        format!(
                            "{} reached by another path (a bind mount or a case-folding name)",
                            known.path.display()
                        )
                    }
                ),
            ));
        }
    }
    Ok(())
}

fn allow_list(access: Access, lists: &ResolvedLists) -> &[Rule] {
    match access {
        Access::Owner(FileAccess::Read) => &lists.read,
        Access::Owner(FileAccess::Write) => &lists.write,
        Access::Source => &lists.source,
    }
}

fn protected(real: &Path, by: Protector<'_>) -> PathRefusal {
    let whose = if by.builtin() {
        "a built-in protected path, which no policy can open"
    } else {
        "listed under [filesystem] protected in the policy file"
    };
    let under = match by {
        Protector::Tree(rule) if rule.spec.lexical == real || rule.canonical == real => {
            String::new()
        }
        Protector::Tree(rule) => format!(" (it lies under {})", rule.describe()),
        Protector::Pattern(spec) => match &spec.rule {
            ProtectedRule::FileName(glob) => {
                format!(" (its name matches {glob}, which is protected wherever it is)")
            }
            rule => format!(" (it matches {rule}, where * stands for any name)"),
        },
    };
    PathRefusal::new(
        RefusalCode::Protected,
        format!(
            "{} is protected{under}: {whose}; seam never reads or writes it, at any autonomy level",
            real.display()
        ),
    )
}

fn not_allowed(access: Access, real: &Path, lists: &ResolvedLists) -> PathRefusal {
    let rules = allow_list(access, lists);
    const SHOWN: usize = 6;
    let mut places: Vec<String> = rules
        .iter()
        .take(SHOWN)
        .map(|r| r.canonical.display().to_string())
        .collect();
    if rules.len() > SHOWN {
        places.push(format!("and {} more", rules.len() - SHOWN));
    }
    let places = if places.is_empty() {
        "nothing".to_owned()
    } else {
        places.join(", ")
    };
    let message = match access {
        Access::Owner(FileAccess::Read) => format!(
            "{} is outside the read allow-list ({places}); the owner can add a directory that holds it to read under [filesystem] in the policy file",
            real.display()
        ),
        Access::Owner(FileAccess::Write) => format!(
            "{} is outside the write allow-list ({places}); the owner can add a directory that holds it to write under [filesystem] in the policy file",
            real.display()
        ),
        Access::Source => format!(
            "{} is outside the workspace root ({places}); a source path must lie in the workspace the gate works on",
            real.display()
        ),
    };
    PathRefusal::new(RefusalCode::NotAllowed, message)
}

fn not_a_file(real: &Path, meta: &Metadata) -> PathRefusal {
    PathRefusal::new(
        RefusalCode::NotAFile,
        format!(
            "{} is {}; seam reads only regular files",
            real.display(),
            kind_of(meta)
        ),
    )
}

/// A path that goes through a `/proc` link (`/proc/self/root`, `/proc/self/fd/N`, `/dev/fd/N`,
/// …): refused always; said to be protected when it leads to a protected file.
fn through_proc(
    request: &Request,
    proc_link: &Path,
    outcome: &Outcome,
    lists: &ResolvedLists,
) -> PathRefusal {
    let leads_to = match outcome {
        Outcome::Exists { real, .. } | Outcome::Missing { real, .. } => Some(real),
        _ => None,
    };
    if let Some(real) = leads_to
        && let Some(rule) = lists.protecting(real)
    {
        return protected(real, rule);
    }
    let target = leads_to.map_or(String::new(), |r| format!(" (to {})", r.display()));
    PathRefusal::new(
        RefusalCode::NotAllowed,
        format!(
            "{} leads through {}{target}, a /proc link that seam never follows; name the file by its own path",
            request.lexical.display(),
            proc_link.display()
        ),
    )
}

/// A loop, a file used as a directory, or a place the system will not show.
fn unresolvable(access: Access, outcome: Outcome, lists: &ResolvedLists) -> PathRefusal {
    let (at, message) = match outcome {
        Outcome::Loop { at } => {
            let m = format!(
                "{}: too many levels of symbolic links (a loop, or a chain longer than {MAX_LINK_HOPS})",
                at.display()
            );
            (at, m)
        }
        Outcome::NotDir { at } => {
            let m = format!(
                "{} is not a directory, so the path cannot go on after it",
                at.display()
            );
            (at, m)
        }
        Outcome::Unreadable { at, error } => {
            if let Err(refusal) = check_lists_only(access, &at, lists) {
                return refusal;
            }
            let m = format!("{} cannot be examined: {error}", at.display());
            return PathRefusal::new(RefusalCode::NotAllowed, m);
        }
        Outcome::Exists { real, .. } | Outcome::Missing { real, .. } => {
            let m = format!("{} could not be resolved", real.display());
            (real, m)
        }
    };
    if let Err(refusal) = check_lists_only(access, &at, lists) {
        return refusal;
    }
    PathRefusal::new(RefusalCode::NotFound, message)
}

enum HardLinkSearch {
    Found(PathBuf),
    Absent,
    Exhausted,
}

/// Looks through the protected trees (links not followed) for another name of the file with
/// `meta`'s `(device, inode)`. Looks at `budget` entries at most.
fn find_protected_name(meta: &Metadata, lists: &ResolvedLists, budget: usize) -> HardLinkSearch {
    let wanted = (meta.dev(), meta.ino());
    let mut seen = 0usize;
    let mut roots: Vec<&Path> = Vec::new();
    for rule in lists.protected_trees() {
        for root in [rule.canonical.as_path(), rule.spec.lexical.as_path()] {
            if !roots.contains(&root) && !is_kernel_tree(root) {
                roots.push(root);
            }
        }
    }
    for root in roots {
        let Ok(root_meta) = std::fs::symlink_metadata(root) else {
            continue;
        };
        if !root_meta.is_dir() {
            if (root_meta.dev(), root_meta.ino()) == wanted {
                return HardLinkSearch::Found(root.to_path_buf());
            }
            continue;
        }
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > budget {
                    return HardLinkSearch::Exhausted;
                }
                let Ok(file_type) = entry.file_type() else {
                    continue;
                };
                if file_type.is_dir() {
                    let path = entry.path();
                    if !is_kernel_tree(&path) {
                        stack.push(path);
                    }
                } else if !file_type.is_symlink()
                    && let Ok(m) = entry.metadata()
                    && (m.dev(), m.ino()) == wanted
                {
                    return HardLinkSearch::Found(entry.path());
                }
            }
        }
    }
    HardLinkSearch::Absent
}
