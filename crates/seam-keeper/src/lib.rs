//! The keeper: the secrets (API keys) the gate holds, and nothing else.
//!
//! **What it owns.** One owner-only file, `<seam_home>/keys/secrets.toml` (mode 0600, in the
//! 0700 `keys/` directory the default policy protects), holding named secrets:
//!
//! ```toml
//! [secrets]
//! brave = "…"
//! ```
//!
//! The operator sets them with `seam secret set NAME` (the value from stdin, never from argv);
//! the gate's configuration names them by handle (`api_key = "keeper:brave"`, see
//! [`KeeperHandle`]); the gate injects a value at egress, and hands every value to the
//! scrubber's known-value filter so it is removed by identity from every output.
//!
//! **How it is designed.** [`Keeper::open`] reads the file only after checking, on the opened
//! handle, that it is a regular file owned by the user running seam with no group or other
//! permission bits, in a directory nobody else can write; anything else is refused, naming the
//! file and what is wrong. Writes take an exclusive `flock` on `keys/secrets.lock`, re-read the
//! file under it (so two concurrent `seam secret set` lose nothing), write a new file owner-only,
//! fsync it, rename it over the old one and fsync the directory: a reader sees the old set or the
//! new, never a mix. Values are [`SecretValue`]s: their `Debug` never shows them, and no error of
//! this crate quotes a value (a malformed file is reported by line, not by content).
//!
//! **What it must never do.** Let a value reach a log, an error, `Debug` output or a listing
//! (`names` lists names); read a file another user could have written or can read; follow a
//! symbolic link to the file. And the agent must never depend on this crate: the agent holds
//! no credentials, so only the gate (and the `seam` binary that wires the gate) may link it.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::Read as _;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub use seam_scrub::SecretValue;

/// The directory in seam's home that holds the keeper's file (shared with the ledger's key).
pub const KEYS_DIR: &str = seam_home::layout::KEYS;
/// The keeper's file name, inside [`KEYS_DIR`].
pub const SECRETS_FILE: &str = "secrets.toml";
/// The lock taken while the file is rewritten, inside [`KEYS_DIR`].
const LOCK_FILE: &str = "secrets.lock";
/// The prefix of a handle in configuration: `keeper:NAME`.
pub const HANDLE_PREFIX: &str = "keeper:";
/// The longest secret name.
pub const MAX_NAME_LEN: usize = 64;
/// The largest secret value accepted (bytes).
pub const MAX_VALUE_LEN: usize = 16 * 1024;
/// The largest keeper file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// What went wrong. No variant carries a secret value. An I/O cause is part of the message and
/// not a `source()`: the gate shows this error by its message alone (an upstream's report).
#[derive(Debug, thiserror::Error)]
pub enum KeeperError {
    #[error("cannot {action} {}: {cause}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "refusing to use {}: it belongs to uid {owner}, not to the user running seam (uid {uid})",
        path.display()
    )]
    ForeignOwner { path: PathBuf, owner: u32, uid: u32 },
    #[error(
        "refusing to read {}: its mode {mode:04o} lets other users read or write it; \
         the keeper's file must be owner-only (chmod 600 {})",
        path.display(), path.display()
    )]
    InsecureFile { path: PathBuf, mode: u32 },
    #[error(
        "refusing to use {}: its mode {mode:04o} lets other users write in it, so they could \
         replace the keeper's file (chmod 700 {})",
        path.display(), path.display()
    )]
    InsecureDir { path: PathBuf, mode: u32 },
    #[error("refusing to read {}: {what}, not a regular file", path.display())]
    NotRegular { path: PathBuf, what: &'static str },
    #[error("{} is larger than {MAX_FILE_BYTES} bytes: not a keeper file", path.display())]
    TooLarge { path: PathBuf },
    #[error("{}, line {line}: {message}", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{name:?} is not a valid secret name: {reason}")]
    BadName { name: String, reason: String },
    #[error("the value given for secret {name:?} cannot be kept: {reason}")]
    BadValue { name: String, reason: String },
    #[error(
        "{handle:?} is not a keeper handle: write \"{HANDLE_PREFIX}NAME\", e.g. \"{HANDLE_PREFIX}brave\""
    )]
    BadHandle { handle: String },
    #[error(
        "the keeper holds no secret named {name:?}; set it with `seam secret set {name}` \
         (the value is read from stdin)"
    )]
    Unknown { name: String },
}

/// A file primitive's failure (seam_home::file) is the keeper's file failure.
impl From<seam_home::FileError> for KeeperError {
    fn from(e: seam_home::FileError) -> KeeperError {
        KeeperError::Io {
            action: e.action,
            path: e.path,
            cause: e.source,
        }
    }
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> KeeperError {
    let path = path.to_path_buf();
    move |cause| KeeperError::Io {
        action,
        path,
        cause,
    }
}

/// A reference to a secret in configuration: `keeper:NAME`. Holds the name, never a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeeperHandle(String);

impl KeeperHandle {
    /// Parses `keeper:NAME`; the name must be a valid secret name.
    pub fn parse(text: &str) -> Result<KeeperHandle, KeeperError> {
        let Some(name) = text.strip_prefix(HANDLE_PREFIX) else {
            return Err(KeeperError::BadHandle {
                handle: handle_shown(text),
            });
        };
        check_name(name).map_err(|_| KeeperError::BadHandle {
            handle: handle_shown(text),
        })?;
        Ok(KeeperHandle(name.to_owned()))
    }

    /// The secret's name.
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeeperHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{HANDLE_PREFIX}{}", self.0)
    }
}

/// What a refused handle is shown as: a handle is a name, but something that is not a handle
/// might be a key pasted where a handle belongs, so it is never echoed whole.
fn handle_shown(text: &str) -> String {
    if text.starts_with(HANDLE_PREFIX) && text.len() <= HANDLE_PREFIX.len() + MAX_NAME_LEN {
        text.to_owned()
    } else {
        format!("<{} characters, not shown>", text.chars().count())
    }
}

/// Checks a secret name: 1 to 64 of `A-Z a-z 0-9 _ - .`, starting with a letter or digit.
pub fn check_name(name: &str) -> Result<(), KeeperError> {
    let bad = |reason: &str| KeeperError::BadName {
        name: seam_term::head(name, MAX_NAME_LEN + 8).0.to_owned(),
        reason: reason.to_owned(),
    };
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(bad(&format!("it is longer than {MAX_NAME_LEN} characters")));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(bad("it must start with a letter or a digit"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(bad(&format!(
            "{c:?} is not allowed (letters, digits, '_', '-' and '.' are)"
        )));
    }
    Ok(())
}

/// Checks a value: not empty, not too long, no NUL, and long enough (every line) for the
/// scrubber to remove it by identity without redacting ordinary text.
fn check_value(name: &str, value: &SecretValue) -> Result<(), KeeperError> {
    let bad = |reason: String| KeeperError::BadValue {
        name: name.to_owned(),
        reason,
    };
    let v = value.expose();
    if v.is_empty() {
        return Err(bad("it is empty".to_owned()));
    }
    if v.len() > MAX_VALUE_LEN {
        return Err(bad(format!("it is longer than {MAX_VALUE_LEN} bytes")));
    }
    if v.contains('\0') {
        return Err(bad("it holds a NUL byte".to_owned()));
    }
    seam_scrub::Scrubber::with_known_values([value.clone()]).map_err(|_| {
        bad(format!(
            "it (or one of its lines) is shorter than {} bytes, too short for the scrubber to \
             remove it by identity without redacting ordinary text",
            seam_scrub::MIN_KNOWN_VALUE_LEN
        ))
    })?;
    Ok(())
}

/// The gate's secrets, as read from the keeper's file.
pub struct Keeper {
    dir: PathBuf,
    secrets: BTreeMap<String, SecretValue>,
}

impl fmt::Debug for Keeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keeper")
            .field("file", &self.file())
            .field("names", &self.secrets.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Keeper {
    /// Opens the keeper of `seam_home`. A missing file is an empty keeper (nothing is created
    /// until a secret is set); a file that is not owner-only is refused.
    pub fn open(seam_home: &Path) -> Result<Keeper, KeeperError> {
        let dir = seam_home::SeamHome::new(seam_home).keys();
        let secrets = read_secrets(&dir)?;
        Ok(Keeper { dir, secrets })
    }

    /// The keeper's file.
    pub fn file(&self) -> PathBuf {
        self.dir.join(SECRETS_FILE)
    }

    /// The value of the secret `name`, if the keeper holds one.
    pub fn get(&self, name: &str) -> Option<&SecretValue> {
        self.secrets.get(name)
    }

    /// The value a handle names, or an error that says how to set it.
    pub fn resolve(&self, handle: &KeeperHandle) -> Result<&SecretValue, KeeperError> {
        self.get(handle.name()).ok_or_else(|| KeeperError::Unknown {
            name: handle.name().to_owned(),
        })
    }

    /// The names of the secrets, sorted. Never the values.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.secrets.keys().map(String::as_str)
    }

    /// Every value, for the scrubber's known-value filter.
    pub fn values(&self) -> impl Iterator<Item = &SecretValue> {
        self.secrets.values()
    }

    /// The number of secrets.
    pub fn len(&self) -> usize {
        self.secrets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Sets (or replaces) the secret `name` and writes the file. Returns true when a secret of
    /// that name was replaced.
    pub fn set(&mut self, name: &str, value: SecretValue) -> Result<bool, KeeperError> {
        check_name(name)?;
        check_value(name, &value)?;
        let mut replaced = false;
        self.update(|secrets| {
            replaced = secrets.insert(name.to_owned(), value).is_some();
        })?;
        Ok(replaced)
    }

    /// Removes the secret `name`. Returns whether there was one.
    pub fn remove(&mut self, name: &str) -> Result<bool, KeeperError> {
        check_name(name)?;
        let mut removed = false;
        self.update(|secrets| {
            removed = secrets.remove(name).is_some();
        })?;
        Ok(removed)
    }

    /// Read-modify-write under the lock: the change is applied to the file as it is now, not
    /// to what this keeper read earlier, so concurrent writers lose nothing.
    fn update(
        &mut self,
        change: impl FnOnce(&mut BTreeMap<String, SecretValue>),
    ) -> Result<(), KeeperError> {
        ensure_private_dir(&self.dir)?;
        let _lock = seam_home::Lock::exclusive(&self.dir.join(LOCK_FILE))?;
        // A writer that crashed between writing its temporary file and renaming it left
        // every secret in that file; under the lock no write is under way, so any there
        // now is such a leftover.
        seam_home::file::sweep_staged(&self.dir.join(SECRETS_FILE))?;
        let mut secrets = read_secrets(&self.dir)?;
        change(&mut secrets);
        write_secrets(&self.dir, &secrets)?;
        self.secrets = secrets;
        Ok(())
    }
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The `keys/` directory must be a real directory of this user that nobody else can write.
fn check_dir(dir: &Path) -> Result<bool, KeeperError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_err("inspect", dir)(e)),
    };
    if !meta.is_dir() {
        return Err(KeeperError::NotRegular {
            path: dir.to_path_buf(),
            what: if meta.file_type().is_symlink() {
                "a symbolic link where the keys directory belongs"
            } else {
                "not a directory"
            },
        });
    }
    if meta.uid() != euid() {
        return Err(KeeperError::ForeignOwner {
            path: dir.to_path_buf(),
            owner: meta.uid(),
            uid: euid(),
        });
    }
    if meta.mode() & 0o022 != 0 {
        return Err(KeeperError::InsecureDir {
            path: dir.to_path_buf(),
            mode: meta.mode() & 0o7777,
        });
    }
    Ok(true)
}

fn ensure_private_dir(dir: &Path) -> Result<(), KeeperError> {
    seam_home::file::create_private_dir(dir)?;
    check_dir(dir).map(|_| ())
}

/// Reads the secrets in `dir` (empty when there is no file), after checking the file on its
/// opened handle.
fn read_secrets(dir: &Path) -> Result<BTreeMap<String, SecretValue>, KeeperError> {
    if !check_dir(dir)? {
        return Ok(BTreeMap::new());
    }
    let path = dir.join(SECRETS_FILE);
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let mut file = match OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(KeeperError::NotRegular {
                path,
                what: "a symbolic link",
            });
        }
        Err(e) => return Err(io_err("open", &path)(e)),
    };
    let meta = file.metadata().map_err(io_err("inspect", &path))?;
    if !meta.is_file() {
        return Err(KeeperError::NotRegular {
            path,
            what: "a directory, device, socket or FIFO",
        });
    }
    if meta.uid() != euid() {
        return Err(KeeperError::ForeignOwner {
            path,
            owner: meta.uid(),
            uid: euid(),
        });
    }
    if meta.mode() & 0o077 != 0 {
        return Err(KeeperError::InsecureFile {
            path,
            mode: meta.mode() & 0o7777,
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(KeeperError::TooLarge { path });
    }
    let mut text = String::new();
    (&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io_err("read", &path))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(KeeperError::TooLarge { path });
    }
    parse_secrets(&text, &path)
}

/// Parses the file strictly. Errors say the line and what is wrong, never the content.
fn parse_secrets(text: &str, path: &Path) -> Result<BTreeMap<String, SecretValue>, KeeperError> {
    use toml::de::{DeTable, DeValue};
    let malformed = |offset: usize, message: String| KeeperError::Malformed {
        path: path.to_path_buf(),
        line: line_of(text, offset),
        message,
    };
    let doc = DeTable::parse(text).map_err(|e| {
        malformed(
            e.span().map_or(0, |s| s.start),
            format!("not valid TOML: {}", e.message()),
        )
    })?;
    let mut out = BTreeMap::new();
    for (key, value) in doc.get_ref().iter() {
        let key_name: &str = key.get_ref();
        if key_name != "secrets" {
            return Err(malformed(
                key.span().start,
                format!("unknown key {key_name:?}: the keeper's file has only a [secrets] table"),
            ));
        }
        let DeValue::Table(table) = value.get_ref() else {
            return Err(malformed(
                value.span().start,
                "\"secrets\" must be a table ([secrets])".to_owned(),
            ));
        };
        for (name, v) in table.iter() {
            let name_str: &str = name.get_ref();
            check_name(name_str).map_err(|e| malformed(name.span().start, e.to_string()))?;
            let Some(s) = v.get_ref().as_str() else {
                return Err(malformed(
                    v.span().start,
                    format!("the value of secret {name_str:?} must be a string"),
                ));
            };
            out.insert(name_str.to_owned(), SecretValue::new(s));
        }
    }
    Ok(out)
}

fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Writes the secrets to a new owner-only file, then renames it over the old one.
fn write_secrets(dir: &Path, secrets: &BTreeMap<String, SecretValue>) -> Result<(), KeeperError> {
    let mut text = String::from(
        "# seam's keeper: the secrets the gate holds. Owner-only (0600).\n\
         # Change with `seam secret set NAME` (value from stdin) and `seam secret rm NAME`.\n\
         [secrets]\n",
    );
    for (name, value) in secrets {
        // Names are checked to be bare-key safe; values are TOML basic strings.
        text.push_str(name);
        text.push_str(" = ");
        push_toml_string(&mut text, value.expose());
        text.push('\n');
    }
    let path = dir.join(SECRETS_FILE);
    // Written beside the old file, synced, renamed over it, the directory synced (we hold
    // the lock, so no other writer races us).
    let result = seam_home::file::replace(&path, text.as_bytes(), seam_home::file::OWNER_ONLY)
        .map_err(KeeperError::from);
    // The text held every value: overwrite it before it is freed.
    zero_string(text);
    result
}

fn zero_string(text: String) {
    let mut bytes = text.into_bytes();
    for b in bytes.iter_mut() {
        // A volatile-free overwrite; the optimiser may elide it, so this is best effort.
        *b = 0;
    }
    std::hint::black_box(&bytes);
}

fn push_toml_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_parse() {
        assert_eq!(KeeperHandle::parse("keeper:brave").unwrap().name(), "brave");
        assert_eq!(
            KeeperHandle::parse("keeper:brave").unwrap().to_string(),
            "keeper:brave"
        );
        for bad in ["brave", "keeper:", "keeper:a b", "keeper:-x", "KEEPER:x"] {
            assert!(KeeperHandle::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_pasted_key_is_not_echoed_in_the_handle_error() {
        let key = "BSAxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
        let err = KeeperHandle::parse(key).unwrap_err().to_string();
        assert!(!err.contains(key), "{err}");
        assert!(err.contains("keeper:NAME"), "{err}");
    }

    #[test]
    fn names_are_checked() {
        for good in ["brave", "a", "x_y-z.1", "0abc"] {
            check_name(good).unwrap();
        }
        for bad in ["", "_x", "a b", "a/b", "a=b", "é", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn toml_strings_round_trip() {
        let nasty = "a\"b\\c\nd\te\u{1}f\u{7f}g é";
        let mut s = String::from("[secrets]\nk = ");
        push_toml_string(&mut s, nasty);
        let back = parse_secrets(&s, Path::new("f")).unwrap();
        assert_eq!(back["k"].expose(), nasty);
    }

    #[test]
    fn malformed_file_errors_name_the_line_not_the_content() {
        let text = "[secrets]\nbrave = \"sk-very-secret-value\"\nother = 42\n";
        let err = parse_secrets(text, Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3"), "{err}");
        assert!(!err.contains("very-secret"), "{err}");
        let err = parse_secrets(
            "[secrets]\nk = \"unterminated-secret-value\n",
            Path::new("s"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("line 2"), "{err}");
        assert!(!err.contains("unterminated-secret"), "{err}");
        let err = parse_secrets("[sekrets]\n", Path::new("s"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown key \"sekrets\""), "{err}");
    }
}
