//! Clipping text for display: the one way seam shortens a message, a path or an error body
//! before a person or a model reads it.
//!
//! It counts characters (Unicode scalar values), not display width, and never splits one, so
//! what it gives back is always valid UTF-8. Not display width: the limits it keeps bound text
//! given to a model or set inside a sentence, not columns of a terminal, and a width would need
//! a width table and grapheme clusters that nothing here has reason to carry. Not bytes: a
//! byte limit cuts a non-ASCII text to a quarter of an ASCII one of the same limit, and finding
//! the char boundary is a copy every caller wrote again. What it may split is a grapheme
//! cluster (a base letter and a combining mark after it): the mark is a character of its own.
//!
//! The marker (`…` at most sites) is the caller's, and comes after the kept characters, not
//! counted among them.

use std::borrow::Cow;

/// The first `max` characters of `text`, and whether any were left out.
///
/// ```
/// assert_eq!(seam_term::head("añob", 2), ("añ", true));
/// assert_eq!(seam_term::head("año", 3), ("año", false));
/// ```
pub fn head(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

/// `text` whole when it has at most `max` characters; otherwise its first `max` characters
/// followed by `marker` (which is not counted in `max`).
///
/// ```
/// assert_eq!(seam_term::clip("ééé", 2, "…"), "éé…");
/// assert_eq!(seam_term::clip("éé", 2, "…"), "éé");
/// ```
pub fn clip<'a>(text: &'a str, max: usize, marker: &str) -> Cow<'a, str> {
    match head(text, max) {
        (_, false) => Cow::Borrowed(text),
        (kept, true) => {
            let mut out = String::with_capacity(kept.len() + marker.len());
            out.push_str(kept);
            out.push_str(marker);
            Cow::Owned(out)
        }
    }
}
