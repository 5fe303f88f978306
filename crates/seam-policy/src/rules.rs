//! The kinds of protected entry, parsed once: a path (a file or a tree), a path some of whose
//! names are patterns (`~/.var/app/*/.mozilla`), and a file-name pattern that holds anywhere
//! (`*.kdbx`).
//!
//! A pattern is one name with at most one `*`, which stands for any run of characters (none
//! too); there is no `?`, no `[…]` and no `**`. A name pattern of a [`ProtectedRule::FileName`]
//! is compared with every name of a path, ASCII letters folded (`DB.KDBX` is a KeePass file
//! too); the names of a [`WildcardPath`] are compared exactly, as the path entries are.

use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::lexical::NAME_MAX_BYTES;

/// How many paths one wildcard entry stands for, at most, when it is expanded against the disk
/// (the rest are still refused by name, but not by `(device, inode)`).
pub const WILDCARD_MATCHES_MAX: usize = 1024;

/// Why a protected entry could not be parsed. The texts say what is wrong and what to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("an empty name")]
    EmptyName,
    #[error("the name \"{name}\" has more than one \"*\"; a pattern takes one (e.g. \"*.kdbx\")")]
    TwoStars { name: String },
    #[error(
        "the name \"{name}\" contains \"{found}\", which seam does not expand; only \"*\" is a pattern, for protected entries"
    )]
    Unsupported { name: String, found: char },
    #[error("the name \"{name}\" is longer than {NAME_MAX_BYTES} bytes")]
    TooLong { name: String },
    #[error("\"{name}\" in a pattern: write the path out without \".\" and \"..\"")]
    DotName { name: String },
    #[error(
        "the pattern is relative; write a name pattern without \"/\" (\"*.kdbx\"), or a path that starts with \"/\" or \"~/\""
    )]
    Relative,
    #[error("the pattern \"{name}\" is all stars: it would protect every file")]
    Everything { name: String },
}

/// One name, literal or with one `*` standing for any run of characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NameGlob {
    /// Exactly this name.
    Literal(String),
    /// `prefix*suffix`.
    Star { prefix: String, suffix: String },
}

impl NameGlob {
    /// Parses one name: no `/`, no NUL, at most one `*`, none of `?`, `[`, `$`, `` ` ``.
    pub fn parse(name: &str) -> Result<NameGlob, RuleError> {
        if name.is_empty() {
            return Err(RuleError::EmptyName);
        }
        if name.len() > NAME_MAX_BYTES {
            return Err(RuleError::TooLong {
                name: name.to_owned(),
            });
        }
        if name == "." || name == ".." {
            return Err(RuleError::DotName {
                name: name.to_owned(),
            });
        }
        if let Some(found) = name
            .chars()
            .find(|c| matches!(c, '/' | '\0' | '?' | '[' | '$' | '`'))
        {
            return Err(RuleError::Unsupported {
                name: name.to_owned(),
                found,
            });
        }
        match name.split_once('*') {
            None => Ok(NameGlob::Literal(name.to_owned())),
            Some((_, rest)) if rest.contains('*') => Err(RuleError::TwoStars {
                name: name.to_owned(),
            }),
            Some((prefix, suffix)) => Ok(NameGlob::Star {
                prefix: prefix.to_owned(),
                suffix: suffix.to_owned(),
            }),
        }
    }

    /// Whether `name` matches; with `fold_case`, ASCII letters compare case-insensitively.
    pub fn matches(&self, name: &[u8], fold_case: bool) -> bool {
        let eq = |a: &[u8], b: &[u8]| {
            if fold_case {
                a.eq_ignore_ascii_case(b)
            } else {
                a == b
            }
        };
        match self {
            NameGlob::Literal(literal) => eq(name, literal.as_bytes()),
            NameGlob::Star { prefix, suffix } => {
                let (p, s) = (prefix.as_bytes(), suffix.as_bytes());
                name.len() >= p.len() + s.len()
                    && eq(&name[..p.len()], p)
                    && eq(&name[name.len() - s.len()..], s)
            }
        }
    }

    /// True for a name without `*`.
    pub fn is_literal(&self) -> bool {
        matches!(self, NameGlob::Literal(_))
    }
}

impl fmt::Display for NameGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameGlob::Literal(name) => f.write_str(name),
            NameGlob::Star { prefix, suffix } => write!(f, "{prefix}*{suffix}"),
        }
    }
}

/// An absolute path whose names are [`NameGlob`]s, some with `*`: it stands for every path
/// whose names match them one for one, and for what is under those.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WildcardPath {
    names: Vec<NameGlob>,
}

impl WildcardPath {
    /// Parses `~/a/*/b` (with `home` for `~`) or `/a/*/b`. Empty names are skipped; `.` and
    /// `..`, `~user` and shell syntax are refused.
    pub fn parse(text: &str, home: &Path) -> Result<WildcardPath, RuleError> {
        let (mut names, rest) = if let Some(rest) = text.strip_prefix("~/") {
            let home_names = home
                .components()
                .filter_map(|c| match c {
                    Component::Normal(n) => Some(NameGlob::Literal(n.to_string_lossy().into())),
                    _ => None,
                })
                .collect();
            (home_names, rest)
        } else if let Some(rest) = text.strip_prefix('/') {
            (Vec::new(), rest)
        } else {
            return Err(RuleError::Relative);
        };
        for name in rest.split('/').filter(|n| !n.is_empty()) {
            names.push(NameGlob::parse(name)?);
        }
        Ok(WildcardPath { names })
    }

    /// True when `path` (clean, absolute) is a match or lies under one.
    pub fn holds(&self, path: &Path) -> bool {
        let mut names = path.components().filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        });
        self.names.iter().all(|glob| {
            names
                .next()
                .is_some_and(|name| glob.matches(name.as_bytes(), false))
        })
    }

    /// The paths that match now (they exist; links on the way followed, the matched names
    /// kept as found), at most `limit`, in the order the directories list them. Never looks
    /// into `/proc` or `/sys`.
    pub fn expand(&self, limit: usize) -> Vec<PathBuf> {
        let mut current = vec![PathBuf::from("/")];
        for glob in &self.names {
            let mut next = Vec::new();
            for dir in &current {
                match glob {
                    NameGlob::Literal(name) => next.push(dir.join(name)),
                    NameGlob::Star { .. } => {
                        if crate::lists::is_kernel_tree(dir) {
                            continue;
                        }
                        let Ok(entries) = std::fs::read_dir(dir) else {
                            continue;
                        };
                        for entry in entries.flatten() {
                            if next.len() >= limit {
                                break;
                            }
                            if glob.matches(entry.file_name().as_bytes(), false) {
                                next.push(entry.path());
                            }
                        }
                    }
                }
            }
            current = next;
            if current.is_empty() {
                break;
            }
        }
        current.retain(|p| std::fs::symlink_metadata(p).is_ok());
        current.truncate(limit);
        current
    }
}

impl fmt::Display for WildcardPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.names.is_empty() {
            return f.write_str("/");
        }
        for name in &self.names {
            write!(f, "/{name}")?;
        }
        Ok(())
    }
}

/// What one protected entry protects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProtectedRule {
    /// This file or directory (clean, absolute) and everything under it.
    Path(PathBuf),
    /// Every path that matches, and everything under each.
    Wildcard(WildcardPath),
    /// Every file or directory whose name matches (ASCII case folded), wherever it is, and
    /// everything under such a directory.
    FileName(NameGlob),
}

impl ProtectedRule {
    /// A file-name pattern (`*.kdbx`): one name, with a `*`, not all stars.
    pub fn file_name(pattern: &str) -> Result<ProtectedRule, RuleError> {
        let glob = NameGlob::parse(pattern)?;
        if let NameGlob::Star { prefix, suffix } = &glob
            && prefix.is_empty()
            && suffix.is_empty()
        {
            return Err(RuleError::Everything {
                name: pattern.to_owned(),
            });
        }
        Ok(ProtectedRule::FileName(glob))
    }

    /// True when `path` (clean, absolute) is protected by this rule by its name alone.
    pub fn holds(&self, path: &Path) -> bool {
        match self {
            ProtectedRule::Path(root) => crate::lexical::is_within(path, root),
            ProtectedRule::Wildcard(pattern) => pattern.holds(path),
            ProtectedRule::FileName(glob) => path.components().any(|c| match c {
                Component::Normal(name) => glob.matches(name.as_bytes(), true),
                _ => false,
            }),
        }
    }
}

impl fmt::Display for ProtectedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtectedRule::Path(path) => write!(f, "{}", path.display()),
            ProtectedRule::Wildcard(pattern) => write!(f, "{pattern}"),
            ProtectedRule::FileName(glob) => write!(f, "{glob}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_into_literals_and_stars() {
        assert_eq!(
            NameGlob::parse(".ssh"),
            Ok(NameGlob::Literal(".ssh".into()))
        );
        assert_eq!(
            NameGlob::parse("*.kdbx"),
            Ok(NameGlob::Star {
                prefix: String::new(),
                suffix: ".kdbx".into()
            })
        );
        assert!(matches!(
            NameGlob::parse("a*b*"),
            Err(RuleError::TwoStars { .. })
        ));
        assert!(matches!(
            NameGlob::parse("a?"),
            Err(RuleError::Unsupported { found: '?', .. })
        ));
        assert!(matches!(
            NameGlob::parse(".."),
            Err(RuleError::DotName { .. })
        ));
        assert!(matches!(
            ProtectedRule::file_name("*"),
            Err(RuleError::Everything { .. })
        ));
    }

    #[test]
    fn stars_match_any_run_and_fold_case_only_when_asked() {
        let kdbx = NameGlob::parse("*.kdbx").unwrap();
        assert!(kdbx.matches(b"a.kdbx", true));
        assert!(kdbx.matches(b".kdbx", true));
        assert!(kdbx.matches(b"DB.KDBX", true));
        assert!(!kdbx.matches(b"DB.KDBX", false));
        assert!(!kdbx.matches(b"a.kdbx.txt", true));
        let kde = NameGlob::parse(".kde*").unwrap();
        assert!(kde.matches(b".kde", false) && kde.matches(b".kde4", false));
        assert!(!kde.matches(b".kd", false));
        assert!(!NameGlob::parse("ab*ba").unwrap().matches(b"aba", false));
    }

    #[test]
    fn wildcard_paths_hold_matches_and_what_is_under_them() {
        let w = WildcardPath::parse("~/.var/app/*/.mozilla", Path::new("/home/o")).unwrap();
        assert_eq!(w.to_string(), "/home/o/.var/app/*/.mozilla");
        assert!(w.holds(Path::new("/home/o/.var/app/org.mozilla.firefox/.mozilla")));
        assert!(w.holds(Path::new("/home/o/.var/app/x/.mozilla/firefox/key4.db")));
        assert!(!w.holds(Path::new("/home/o/.var/app/x")));
        assert!(!w.holds(Path::new("/home/o/.var/app/x/.config")));
        assert_eq!(
            WildcardPath::parse("rel/*", Path::new("/h")),
            Err(RuleError::Relative)
        );
        let file = ProtectedRule::file_name("*.kdbx").unwrap();
        assert!(file.holds(Path::new("/a/b/Passwords.KDBX")));
        assert!(file.holds(Path::new("/a/v.kdbx/inner")));
        assert!(!file.holds(Path::new("/a/kdbx")));
    }
}
