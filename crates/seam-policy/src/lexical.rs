//! Lexical normalisation: a raw path as a tool or the policy file wrote it, made into a clean
//! absolute path without touching the file system.
//!
//! The result never holds `.` or `..` and never ends with `/` (except `/` itself), so a list can
//! compare it by prefix. `..` is applied to the text (`a/link/..` is `a`), which is why admission
//! always opens the *normalised* path, never the raw one: what was checked is what is opened.
//!
//! Only `~` and `~/` expand (to the owner's home). Shell syntax is refused, not taken literally:
//! `~user` (and `~+`, `~-`), `$` in any form (`$HOME`, `${X}`, `$(cmd)`), backticks, and the glob
//! characters `*` and `?`. `[`, `{` and the like are common in real file names and stay literal
//! (no expansion happens here, so a literal name can only name itself).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// The longest path the kernel takes, in bytes (`PATH_MAX` 4096 counts the terminating NUL).
pub const PATH_MAX_BYTES: usize = 4095;
/// The longest single component, in bytes (`NAME_MAX`).
pub const NAME_MAX_BYTES: usize = 255;

/// Why a raw path could not be normalised. The texts say what was wrong and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LexicalError {
    #[error("the path is empty")]
    Empty,
    #[error("the path contains a NUL byte (at byte {offset})")]
    Nul { offset: usize },
    #[error(
        "the path is not valid UTF-8 (byte 0x{byte:02x} at offset {offset}); seam takes only UTF-8 paths"
    )]
    NotUtf8 { offset: usize, byte: u8 },
    #[error("the path is {len} bytes long; the limit is {PATH_MAX_BYTES} bytes")]
    TooLong { len: usize },
    #[error(
        "a component of the path is {len} bytes long (it starts with \"{start}\"); the limit is {NAME_MAX_BYTES} bytes"
    )]
    ComponentTooLong { len: usize, start: String },
    #[error(
        "the path starts with \"{prefix}\": only \"~\" and \"~/\" expand (to the owner's home); \"~user\" and other tilde forms are not expanded"
    )]
    TildeForm { prefix: String },
    #[error(
        "the path contains \"{found}\": {what}, which seam does not expand; write the path out literally (e.g. \"~/notes\", not \"$HOME/notes\")"
    )]
    ShellSyntax { found: String, what: &'static str },
    #[error("the path is relative; write an absolute path or one that starts with \"~/\"")]
    Relative,
}

/// Checks what can be checked on the raw bytes: not empty, no NUL, UTF-8, not over-long.
pub fn check_raw(raw: &OsStr) -> Result<&str, LexicalError> {
    let bytes = raw.as_encoded_bytes();
    if bytes.is_empty() {
        return Err(LexicalError::Empty);
    }
    if let Some(offset) = bytes.iter().position(|&b| b == 0) {
        return Err(LexicalError::Nul { offset });
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let offset = e.valid_up_to();
            return Err(LexicalError::NotUtf8 {
                offset,
                byte: bytes[offset],
            });
        }
    };
    if text.len() > PATH_MAX_BYTES {
        return Err(LexicalError::TooLong { len: text.len() });
    }
    Ok(text)
}

/// Refuses shell syntax that a reader would expect to be expanded.
fn check_shell_syntax(text: &str) -> Result<(), LexicalError> {
    if let Some(rest) = text.strip_prefix('~')
        && !rest.is_empty()
        && !rest.starts_with('/')
    {
        let end = text.find('/').unwrap_or(text.len());
        return Err(LexicalError::TildeForm {
            prefix: snippet(&text[..end]),
        });
    }
    for (i, c) in text.char_indices() {
        let what = match c {
            '$' => "a variable or command substitution",
            '`' => "a command substitution",
            '*' | '?' => "a glob pattern",
            _ => continue,
        };
        let end = text[i..].find('/').map_or(text.len(), |e| i + e);
        return Err(LexicalError::ShellSyntax {
            found: snippet(&text[i..end]),
            what,
        });
    }
    Ok(())
}

/// At most 40 characters of `s`, and `…` when there were more, for a message.
fn snippet(s: &str) -> String {
    seam_term::clip(s, 40, "…").into_owned()
}

/// Normalises `raw`: `~` and `~/…` expand to `home`, a relative path is relative to `base`
/// (refused when `base` is `None`), `.` and empty components vanish, `..` removes the component
/// before it (and stops at `/`). `home` and `base` must already be clean absolute paths.
pub fn normalise(raw: &OsStr, home: &Path, base: Option<&Path>) -> Result<PathBuf, LexicalError> {
    normalise_str(check_raw(raw)?, home, base)
}

/// [`normalise`] for text already known to be UTF-8.
pub fn normalise_str(raw: &str, home: &Path, base: Option<&Path>) -> Result<PathBuf, LexicalError> {
    if raw.is_empty() {
        return Err(LexicalError::Empty);
    }
    if let Some(offset) = raw.bytes().position(|b| b == 0) {
        return Err(LexicalError::Nul { offset });
    }
    if raw.len() > PATH_MAX_BYTES {
        return Err(LexicalError::TooLong { len: raw.len() });
    }
    check_shell_syntax(raw)?;
    let (start, rest): (&Path, &str) = if raw == "~" {
        (home, "")
    } else if let Some(rest) = raw.strip_prefix("~/") {
        (home, rest)
    } else if raw.starts_with('/') {
        (Path::new("/"), raw)
    } else {
        match base {
            Some(base) => (base, raw),
            None => return Err(LexicalError::Relative),
        }
    };
    let mut out: Vec<u8> = Vec::with_capacity(start.as_os_str().len() + rest.len() + 1);
    // `start` is clean, but it may come from the environment: clean it anyway (cheap).
    for component in start.as_os_str().as_encoded_bytes().split(|&b| b == b'/') {
        push_component(&mut out, component);
    }
    for component in rest.split('/') {
        if component.len() > NAME_MAX_BYTES {
            return Err(LexicalError::ComponentTooLong {
                len: component.len(),
                start: snippet(component),
            });
        }
        push_component(&mut out, component.as_bytes());
    }
    if out.is_empty() {
        out.push(b'/');
    }
    if out.len() > PATH_MAX_BYTES {
        return Err(LexicalError::TooLong { len: out.len() });
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// Appends one component to a clean absolute path kept without a trailing `/` ("" is `/`).
fn push_component(out: &mut Vec<u8>, component: &[u8]) {
    match component {
        b"" | b"." => {}
        b".." => {
            let cut = out.iter().rposition(|&b| b == b'/').unwrap_or(0);
            out.truncate(cut);
        }
        name => {
            out.push(b'/');
            out.extend_from_slice(name);
        }
    }
}

/// Cleans an absolute path from the environment (`$HOME`, `--home`, the working directory)
/// lexically. A relative one is taken relative to `/`, so the result is always absolute.
pub fn clean_absolute(path: &Path) -> PathBuf {
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut parts: Vec<&[u8]> = Vec::new();
    for component in bytes.split(|&b| b == b'/') {
        match component {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    let mut out = PathBuf::from("/");
    for part in parts {
        // A component of a real path; `OsStr` round-trips the bytes on Unix.
        out.push(os_str_from_bytes(part));
    }
    out
}

fn os_str_from_bytes(bytes: &[u8]) -> &OsStr {
    std::os::unix::ffi::OsStrExt::from_bytes(bytes)
}

/// True when `path` is `root` or lies under it, compared by whole components. Both must be
/// clean absolute paths (as [`normalise`] makes them).
pub fn is_within(path: &Path, root: &Path) -> bool {
    let p = path.as_os_str().as_encoded_bytes();
    let r = root.as_os_str().as_encoded_bytes();
    if r == b"/" {
        return p.first() == Some(&b'/');
    }
    p.starts_with(r) && (p.len() == r.len() || p[r.len()] == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(raw: &str) -> Result<PathBuf, LexicalError> {
        normalise_str(raw, Path::new("/home/o"), Some(Path::new("/w/s")))
    }

    #[test]
    fn expands_only_tilde_and_tilde_slash() {
        assert_eq!(n("~").unwrap(), Path::new("/home/o"));
        assert_eq!(n("~/").unwrap(), Path::new("/home/o"));
        assert_eq!(n("~/a/b").unwrap(), Path::new("/home/o/a/b"));
        assert!(matches!(
            n("~root/.ssh"),
            Err(LexicalError::TildeForm { .. })
        ));
        assert!(matches!(n("~+"), Err(LexicalError::TildeForm { .. })));
        assert_eq!(n("a/~root").unwrap(), Path::new("/w/s/a/~root"));
    }

    #[test]
    fn dot_dot_never_survives() {
        assert_eq!(
            n("../../../../etc/passwd").unwrap(),
            Path::new("/etc/passwd")
        );
        assert_eq!(n("/..").unwrap(), Path::new("/"));
        assert_eq!(
            n("~/a/../../o/.ssh/./k").unwrap(),
            Path::new("/home/o/.ssh/k")
        );
        assert_eq!(n("x//y/").unwrap(), Path::new("/w/s/x/y"));
    }

    #[test]
    fn shell_syntax_is_refused() {
        for raw in ["$HOME/x", "${HOME}", "a/$(id)", "`id`", "~/*.md", "a?b"] {
            assert!(
                matches!(n(raw), Err(LexicalError::ShellSyntax { .. })),
                "{raw}"
            );
        }
    }

    #[test]
    fn relative_without_base_is_refused() {
        assert_eq!(
            normalise_str("x", Path::new("/h"), None),
            Err(LexicalError::Relative)
        );
    }

    #[test]
    fn within_compares_whole_components() {
        assert!(is_within(Path::new("/a/b"), Path::new("/a")));
        assert!(is_within(Path::new("/a"), Path::new("/a")));
        assert!(!is_within(Path::new("/ab"), Path::new("/a")));
        assert!(is_within(Path::new("/ab"), Path::new("/")));
    }

    #[test]
    fn clean_absolute_handles_odd_env() {
        assert_eq!(clean_absolute(Path::new("/a/./b/../c/")), Path::new("/a/c"));
        assert_eq!(clean_absolute(Path::new("rel")), Path::new("/rel"));
    }
}
