//! `seam index PATH`: index a repository for memory.codebase, with a progress bar on a
//! terminal, then one summary line.
//!
//! The index is read by the model (through memory.codebase), so nothing the policy protects
//! may enter it: every file is put to path admission first, and a protected one (a key, a
//! password store, anything in the protected list, by any name) is left out and counted.
//! seam's own home is left out too. A file outside the read allow-list is indexed: the
//! operator asked for this directory by name. Each file is admitted as `Access::Source` under
//! the same policy with the indexed root as its workspace root, so every check of admission
//! runs on it — the (device, inode) check too, which catches a hard link to a key.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use seam_memory::{IndexOptions, IndexProgress, IndexReport, MemoryError, MemoryHome};
use seam_policy::{
    Access, Capability, Decision, FileAccess, PathAdmission, Policy, PolicyEnv, PolicyOrigin,
};
use seam_protocol::RefusalCode;

use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

pub fn run(ctx: &Context, path: &Path, json: bool) -> anyhow::Result<Exit> {
    let decision = ctx.policy.decision(Capability::FilesystemRead);
    if decision != Decision::Allow {
        output::error(&format!(
            "the policy says \"{decision}\" for filesystem.read, and indexing reads every file \
             of the repository; an owner can set \"filesystem.read\" = \"allow\" under \
             [capabilities] in the policy file"
        ));
        return Ok(Exit::Refused);
    }
    let root = std::fs::canonicalize(path)
        .map_err(|e| UsageError(format!("cannot index {}: {e}", path.display())))?;
    let admission = PathAdmission::new(ctx.policy.clone());
    let read = Access::Owner(FileAccess::Read);
    if let Err(r) = admission.admitted_path(read, root.as_os_str())
        && r.code != RefusalCode::NotAllowed
    {
        let message = seam_scrub::Scrubber::new().scrub(&r.message).text;
        output::error(&format!("refused ({}): {message}", r.code));
        return Ok(Exit::Refused);
    }

    let home = ctx.ensure_home()?;
    let seam_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_owned());
    // The same policy, with the indexed root as the place Access::Source admits.
    let env = PolicyEnv {
        workspace_root: root.clone(),
        ..ctx.policy.env().clone()
    };
    let rooted = match ctx.policy.origin() {
        PolicyOrigin::Builtin => Policy::builtin(env),
        PolicyOrigin::File(file) => Policy::load(Some(file), env)
            .map_err(|e| UsageError(format!("the policy is invalid: {e}")))?,
    };
    let source = PathAdmission::new(Arc::new(rooted));
    let skip = |p: &Path| -> Option<String> {
        if p.starts_with(&seam_home) {
            return Some("seam_home".into());
        }
        match source.admitted_path(Access::Source, p.as_os_str()) {
            Ok(_) => None,
            Err(r) => Some(r.code.as_str().to_owned()),
        }
    };
    let options = IndexOptions {
        skip: Some(&skip),
        ..IndexOptions::default()
    };
    let memory = MemoryHome::new(home);
    let mut index = memory
        .codebase()
        .with_context(|| format!("opening the codebase index in {}", memory.dir().display()))?;

    let bar = output::Progress::new();
    let result = index.index(&root, &options, &mut |p| match p {
        IndexProgress::Walking { found } => bar.set(0, None, &format!("walking: {found} files")),
        IndexProgress::Indexing { done, total, path } => bar.set(done, Some(total), path),
        IndexProgress::Finishing => bar.set(0, None, "dropping removed files"),
    });
    bar.finish();
    let report = match result {
        Ok(r) => r,
        Err(e @ (MemoryError::NotADirectory(_) | MemoryError::RootRefused { .. })) => {
            return Err(UsageError(e.to_string()).into());
        }
        Err(e @ MemoryError::Io { .. }) => {
            return Err(UsageError(crate::exit::with_causes(&e)).into());
        }
        Err(e) => return Err(e.into()),
    };
    if json {
        output::json(&report);
    } else {
        output::line(&summary(&report));
    }
    Ok(Exit::Ok)
}

/// One line: what the index holds and what this run did.
fn summary(r: &IndexReport) -> String {
    let mut langs: Vec<(&String, &u64)> = r.languages.iter().collect();
    langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let langs: Vec<String> = langs.iter().map(|(l, n)| format!("{l} {n}")).collect();
    let mut s = format!(
        "indexed {}: {} files, {} symbols, {} lines; languages: {}; this run: {} parsed, {} rehashed, {} unchanged, {} removed",
        r.walked,
        r.files,
        r.symbols,
        r.lines,
        if langs.is_empty() {
            "none".to_owned()
        } else {
            langs.join(", ")
        },
        r.parsed,
        r.rehashed,
        r.unchanged,
        r.removed,
    );
    if r.walked != r.root {
        s.push_str(&format!(" (a part of {})", r.root));
    }
    let without: Vec<String> = r
        .without_text
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if !without.is_empty() {
        s.push_str(&format!("; without text: {}", without.join(", ")));
    }
    let skipped: Vec<String> = r.skipped.iter().map(|(k, n)| format!("{k} {n}")).collect();
    if !skipped.is_empty() {
        s.push_str(&format!("; left out: {}", skipped.join(", ")));
    }
    s.push_str(&format!("; {:.2} s", r.elapsed_ms as f64 / 1000.0));
    s
}
