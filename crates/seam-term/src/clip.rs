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

/// The longest start of `text` that fits in `max` bytes, never ending inside a character.
///
/// For a budget of bytes (what a store keeps, what a model's context holds), not for display:
/// where a limit bounds size rather than what a reader sees, it is counted in bytes, and this
/// is the one place that finds the character boundary below it.
///
/// ```
/// assert_eq!(seam_term::head_bytes("a€b", 3), "a");
/// assert_eq!(seam_term::head_bytes("a€b", 4), "a€");
/// ```
pub fn head_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    // A UTF-8 character is at most 4 bytes, so this steps back at most 3 times. (Rust 1.91's
    // `str::floor_char_boundary` does the same; the workspace still builds on 1.85.)
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The longest end of `text` that fits in `max` bytes, never starting inside a character.
///
/// ```
/// assert_eq!(seam_term::tail_bytes("a€b", 3), "b");
/// assert_eq!(seam_term::tail_bytes("a€b", 4), "€b");
/// ```
pub fn tail_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
