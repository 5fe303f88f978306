//! Strict reading of seam's TOML files (the policy here, the gate's config in
//! seam-gate): a file read without ever blocking and within a size cap, every
//! key visited in file order with its span, and errors that name the line and
//! suggest the key that was meant. A typo must never silently widen or narrow
//! what is enforced, so both files share this one reading, and its one error
//! ([`TomlFileError`]: [`crate::PolicyError`] here, the gate's `ConfigError`).

use std::io::Read as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One of seam's TOML files that could not be used. The text names the file, and for a bad
/// key or value the key, its line and its column.
#[derive(Debug, thiserror::Error)]
pub enum TomlFileError {
    /// `what` says which of seam's files it is (`policy file`, `config file`).
    #[error("cannot read the {what} {}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}, line {line}, column {column}: {message}", origin.display())]
    Invalid {
        origin: PathBuf,
        line: usize,
        column: usize,
        /// The key at fault, dotted from the top (`capabilities.filesystem.raed`,
        /// `web.backend`), when there is one.
        key: Option<String>,
        message: String,
    },
}

/// Reads the file a load was given, as [`read_text_file`] does, and makes its path absolute:
/// the text and that path. A failure is [`TomlFileError::Read`], naming the file as `what`.
pub fn read_toml_file(
    path: &Path,
    max_bytes: u64,
    what: &'static str,
) -> Result<(String, PathBuf), TomlFileError> {
    let read_error = |source| TomlFileError::Read {
        what,
        path: path.to_path_buf(),
        source,
    };
    let text = read_text_file(path, max_bytes).map_err(read_error)?;
    let absolute = std::path::absolute(path).map_err(read_error)?;
    Ok((text, absolute))
}

/// The text being parsed and what errors call it (`origin`): turns a span into an error
/// with a line and a column.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub text: &'a str,
    pub origin: &'a Path,
}

impl Source<'_> {
    /// [`TomlFileError::Invalid`] at the start of `span`.
    pub fn error(&self, span: Range<usize>, key: Option<String>, message: String) -> TomlFileError {
        let (line, column) = line_column(self.text, span.start);
        TomlFileError::Invalid {
            origin: self.origin.to_path_buf(),
            line,
            column,
            key,
            message,
        }
    }
}

/// The text of a regular file, at most `max_bytes`. Opened without following
/// the file to a FIFO or device (it is refused, never waited on).
pub fn read_text_file(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    let (file, _) = crate::fsops::open_regular_for_reading(path)?;
    let mut text = String::new();
    file.take(max_bytes + 1).read_to_string(&mut text)?;
    if text.len() as u64 > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {max_bytes} bytes"),
        ));
    }
    Ok(text)
}

/// 1-based line and column (in characters) of byte `offset`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// One key and its value, both with their spans.
pub type Entry<'a, 'i> = (
    &'a Spanned<toml::de::DeString<'i>>,
    &'a Spanned<DeValue<'i>>,
);

/// A table's entries in the order they appear in the file.
pub fn entries_in_order<'a, 'i>(table: &'a DeTable<'i>) -> Vec<Entry<'a, 'i>> {
    let mut entries: Vec<Entry<'a, 'i>> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

/// What kind of value this is, for "expected …, found a table".
pub fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// ` (did you mean "x"?)` when a known word is close to `word`, else empty.
pub fn suggestion(word: &str, known: &[&str]) -> String {
    let best = known
        .iter()
        .map(|k| (edit_distance(&word.to_lowercase(), k), *k))
        .min();
    match best {
        Some((d, k)) if d <= 2.max(k.len() / 4) => format!(" (did you mean \"{k}\"?)"),
        _ => String::new(),
    }
}

/// Levenshtein distance; the first 64 characters of `a` are enough to suggest.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let swap = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + swap).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that cannot be read is named as the loader calls it (the policy's and the
    /// gate's config share this error), and the cause is said once: by the error's source,
    /// not again in its text.
    #[test]
    fn a_read_error_names_the_file_and_says_its_cause_once() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("config.toml");
        let err = read_toml_file(&missing, 1 << 20, "config file").unwrap_err();
        let shown = err.to_string();
        assert_eq!(
            shown,
            format!("cannot read the config file {}", missing.display())
        );
        let cause = std::error::Error::source(&err).expect("the io error is the source");
        assert!(!shown.contains(&cause.to_string()), "{shown}");
        assert!(matches!(
            err,
            TomlFileError::Read {
                what: "config file",
                ..
            }
        ));
    }

    /// A span becomes the line and column it starts at, in the file the error names, with
    /// the key at fault.
    #[test]
    fn a_span_becomes_an_error_at_its_line_and_column() {
        let text = "a = 1\n[web]\nbackend = \"x\"\n";
        let src = Source {
            text,
            origin: Path::new("config.toml"),
        };
        let at = text.find("\"x\"").unwrap();
        let err = src.error(at..at + 3, Some("web.backend".into()), "bad".into());
        assert_eq!(err.to_string(), "config.toml, line 3, column 11: bad");
        let TomlFileError::Invalid { key, .. } = err else {
            panic!("{err}")
        };
        assert_eq!(key.as_deref(), Some("web.backend"));
    }
}
