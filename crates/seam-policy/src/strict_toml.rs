//! Strict reading of seam's TOML files (the policy here, the gate's config in
//! seam-gate): a file read without ever blocking and within a size cap, every
//! key visited in file order with its span, and errors that name the line and
//! suggest the key that was meant. A typo must never silently widen or narrow
//! what is enforced, so both files share this one reading.

use std::io::Read as _;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

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
