//! The terminal filter: text from somebody else, made safe to print.
//!
//! A terminal is an interpreter. A tool's output, a file, a build log or a model's answer that
//! reaches it raw can move the cursor, rewrite what is already on the screen, change the window
//! title, write to the clipboard (OSC 52), reorder what the reader sees (bidi overrides, the
//! "Trojan Source" trick) or hide words entirely (zero-width and tag characters). This crate owns
//! the one transformation every such sink goes through: [`visible`] (newline and tab survive as
//! layout) and [`on_one_line`] (they are shown too), and [`TerminalFilter`], the same in a
//! streaming form for output that arrives in chunks.
//!
//! # What it must never do
//!
//! It never interprets data and never drops it silently: every byte of the input is either
//! copied as it is or *shown* — replaced by a printable escape that names it. Nothing is
//! swallowed, nothing is replaced by U+FFFD, and no escape sequence is ever obeyed, stripped or
//! "cleaned". The output is valid UTF-8 and holds no byte a terminal would act on: in
//! [`Mode::Visible`] the only controls left are newline and tab, in [`Mode::OneLine`] none.
//!
//! # What is shown, and how
//!
//! | input | shown as |
//! |---|---|
//! | carriage return (0x0D) | `\r` |
//! | newline, tab (0x0A, 0x09) | themselves in [`Mode::Visible`]; `\n`, `\t` in [`Mode::OneLine`] |
//! | every other C0 control (0x00–0x1F) and DEL (0x7F) | `\xNN`, e.g. `\x1b`, `\x08`, `\x00`, `\x7f` |
//! | a byte that is not part of valid UTF-8 (among them a raw C1 byte 0x80–0x9F) | `\xNN`, one per byte |
//! | a C1 control encoded as UTF-8 (U+0080–U+009F) | `\u{NN}`, e.g. `\u{85}`, `\u{9b}` |
//! | bidi controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069) | `\u{…}`, e.g. `\u{202e}` |
//! | invisible format characters: U+00AD soft hyphen, U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E, U+FFF9–U+FFFB, the tag characters U+E0000–U+E007F, variation selectors, Hangul fillers, every other `Cf` and `Default_Ignorable_Code_Point` | `\u{…}` |
//! | line and paragraph separators U+2028, U+2029 | `\u{2028}`, `\u{2029}` |
//! | noncharacters (U+FDD0–U+FDEF, U+nFFFE, U+nFFFF) | `\u{…}` |
//! | a literal backslash | `\` where that cannot be misread, otherwise `\\` (below) |
//! | everything else | itself |
//!
//! Hex digits are lowercase; `\u{…}` uses as few digits as the code point needs (Rust's form).
//! [`is_shown_escaped`] answers, for any character, whether it is shown escaped.
//!
//! The escaping is unambiguous: [`unescape`] gives back exactly the bytes that went in, for
//! either mode. For that, a literal backslash is doubled whenever it could be read as the start
//! of an escape: when the byte after it is `\`, `x`, `u`, `n`, `t` or `r`, anything that is not
//! printable ASCII, or the end of the input. Everywhere else (`C:\Users`, `\d+`, `\[`) it stays
//! single, so ordinary text with backslashes still reads as written, while the literal text
//! `\x1b` is shown as `\\x1b` and can never be taken for an escape character that was there.
//!
//! Not escaped, on purpose: visible characters that merely look alike (homoglyphs such as
//! Cyrillic `а`, visible spaces such as U+00A0 or U+3000), private-use characters, combining marks
//! and U+FFFD. They do not act on a terminal and they are not invisible; catching look-alikes is
//! a different job from making text safe to print.
//!
//! # Design
//!
//! Speed matters because whole build logs go through here. The input is validated as UTF-8 a
//! 64 KiB window at a time by the standard library (`std::str::from_utf8`, which reads ASCII a
//! word at a time), and each window is filtered while it is still in cache. Within valid text the
//! filter looks for the next byte that needs attention — a control shown in this mode, DEL, a
//! backslash, or a byte at or above 0x80 — 32 bytes at a time with a branch-free test the
//! compiler vectorises, and copies the runs between such bytes in bulk. A 256-entry table then
//! passes the non-ASCII bytes that cannot begin an escaped character, so most non-ASCII text
//! (accents, Cyrillic, CJK) is copied without being decoded; the rest is decoded one character
//! at a time and looked up in a short sorted table of ranges. Invalid bytes are shown one by one.
//!
//! The streaming form holds back at most three bytes between chunks — an incomplete UTF-8
//! sequence, or a final backslash whose form depends on the next byte — so that output does not
//! depend on where the chunks were cut: feeding any split of the input gives exactly what
//! [`visible`] or [`on_one_line`] give for the whole.
//!
//! # Clipping
//!
//! [`clip`] and [`head`] shorten text for display, in characters and never inside one (the
//! module `clip` says why characters and not width). They stand apart from the filter: they
//! drop the end of a text on purpose and say so (the flag, the caller's marker), and they make
//! nothing safe to print, so clipped text from others still goes through [`visible`] or
//! [`on_one_line`] on its way to a terminal.
//!
//! [`head_bytes`] and [`tail_bytes`] are their counterparts for a budget of bytes (what a
//! store keeps, what a model's context holds): the longest start or end of a text within the
//! budget, never inside a character.

mod classes;
mod clip;
mod unescape;

use classes::{
    BACKSLASH, CONTROL, LEAD, ONE_LINE_CLASSES, PASS, VISIBLE_CLASSES, is_escaped_char,
    plain_after_backslash,
};

pub use clip::{clip, head, head_bytes, tail_bytes};
pub use unescape::{UnescapeError, unescape};

/// Text from somebody else, made safe for a terminal; newline and tab survive as layout.
///
/// ```
/// assert_eq!(seam_term::visible(b"\x1b[2Jok\r\n"), "\\x1b[2Jok\\r\n");
/// ```
pub fn visible(bytes: &[u8]) -> String {
    filter_whole(Mode::Visible, bytes)
}

/// Like [`visible`], but newline and tab are shown too (`\n`, `\t`): the result is one line.
///
/// ```
/// assert_eq!(seam_term::on_one_line(b"a\tb\nc"), "a\\tb\\nc");
/// ```
pub fn on_one_line(bytes: &[u8]) -> String {
    filter_whole(Mode::OneLine, bytes)
}

/// Whether the character `c` is shown as an escape (`\xNN`, `\r`, `\u{…}`, …) rather than as
/// itself in `mode`. A backslash is not counted here: it is shown as itself, doubled only where
/// it could be misread (see the crate documentation).
pub fn is_shown_escaped(c: char, mode: Mode) -> bool {
    if c.is_ascii() {
        mode.classes()[c as usize] == CONTROL
    } else {
        is_escaped_char(c)
    }
}

/// Which layout survives the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Newline and tab are kept as layout; every other control is shown ([`visible`]).
    Visible,
    /// Newline and tab are shown as `\n` and `\t` too ([`on_one_line`]).
    OneLine,
}

impl Mode {
    fn classes(self) -> &'static [u8; 256] {
        match self {
            Mode::Visible => &VISIBLE_CLASSES,
            Mode::OneLine => &ONE_LINE_CLASSES,
        }
    }
}

/// The terminal filter for output that arrives in chunks (a pipe, a build log).
///
/// Feed chunks with [`push`](Self::push) and end with [`finish`](Self::finish); whatever the
/// chunking, the text appended to `out` is exactly what [`visible`] or [`on_one_line`] give
/// for the whole input. Between calls the filter holds back at most three bytes (an incomplete
/// UTF-8 sequence, or a trailing backslash), which `finish` shows. After `finish` the filter is
/// empty and can be used again.
///
/// ```
/// use seam_term::{Mode, TerminalFilter};
/// let mut filter = TerminalFilter::new(Mode::Visible);
/// let mut out = String::new();
/// filter.push(b"caf\xc3", &mut out);
/// filter.push(b"\xa9 \x1b", &mut out);
/// filter.finish(&mut out);
/// assert_eq!(out, "caf\u{e9} \\x1b");
/// ```
#[derive(Debug, Clone)]
pub struct TerminalFilter {
    mode: Mode,
    held: [u8; 4],
    held_len: usize,
}

impl TerminalFilter {
    /// A filter with nothing held back.
    pub fn new(mode: Mode) -> Self {
        TerminalFilter {
            mode,
            held: [0; 4],
            held_len: 0,
        }
    }

    /// The mode this filter was made with.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Filters `chunk`, appending to `out` everything that can be decided without seeing more.
    pub fn push(&mut self, chunk: &[u8], out: &mut String) {
        let mut chunk = chunk;
        if self.held_len > 0 {
            // Decide the held bytes with the first few bytes of this chunk: a UTF-8 sequence
            // is at most four bytes, and a backslash needs one byte of look-ahead.
            let held = self.held_len;
            let take = chunk.len().min(4);
            let mut joined = [0u8; 8];
            joined[..held].copy_from_slice(&self.held[..held]);
            joined[held..held + take].copy_from_slice(&chunk[..take]);
            let consumed = filter_into(self.mode, &joined[..held + take], out, false);
            if consumed < held {
                // Still undecided: this chunk was shorter than what the held bytes wait for.
                // Nothing was shown, and what is held now is at most an incomplete sequence.
                self.hold(&joined[consumed..held + take]);
                return;
            }
            self.held_len = 0;
            chunk = &chunk[consumed - held..];
        }
        out.reserve(chunk.len());
        let consumed = filter_into(self.mode, chunk, out, false);
        self.hold(&chunk[consumed..]);
    }

    /// Shows whatever is still held back (as if the input ended here) and empties the filter.
    pub fn finish(&mut self, out: &mut String) {
        let held = self.held;
        let held_len = self.held_len;
        self.held_len = 0;
        let consumed = filter_into(self.mode, &held[..held_len], out, true);
        debug_assert_eq!(consumed, held_len, "at the end every byte is shown");
    }

    fn hold(&mut self, bytes: &[u8]) {
        // filter_into leaves at most three bytes undecided; anything more is a bug here, and
        // holding it would be a silent loss later, so fail loudly instead.
        assert!(
            bytes.len() < self.held.len(),
            "terminal filter left {} bytes undecided",
            bytes.len()
        );
        self.held[..bytes.len()].copy_from_slice(bytes);
        self.held_len = bytes.len();
    }
}

fn filter_whole(mode: Mode, bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 16);
    let consumed = filter_into(mode, bytes, &mut out, true);
    debug_assert_eq!(consumed, bytes.len());
    out
}

/// Filters `input` into `out` and returns how many bytes were consumed. With `at_end` every byte
/// is consumed; without, a trailing incomplete UTF-8 sequence or a trailing backslash (at most
/// three bytes) is left for the caller to present again with what follows.
fn filter_into(mode: Mode, input: &[u8], out: &mut String, at_end: bool) -> usize {
    match mode {
        Mode::Visible => filter_into_mode::<false>(input, out, at_end),
        Mode::OneLine => filter_into_mode::<true>(input, out, at_end),
    }
}

fn filter_into_mode<const ONE_LINE: bool>(input: &[u8], out: &mut String, at_end: bool) -> usize {
    // The input is taken a window at a time so that validating and filtering a window happen
    // while it is still in cache.
    const WINDOW: usize = 64 * 1024;
    let mut offset = 0;
    while offset < input.len() {
        let window_end = input.len().min(offset + WINDOW);
        let window = &input[offset..window_end];
        let last_window = window_end == input.len();
        let error = match std::str::from_utf8(window) {
            Ok(text) => {
                let after = match input.get(window_end) {
                    Some(&b) => After::Byte(b),
                    None if at_end => After::End,
                    None => After::Unknown,
                };
                let shown = filter_valid::<ONE_LINE>(text, after, out);
                offset += shown;
                if shown < text.len() {
                    // A trailing backslash waits for its next byte.
                    return offset;
                }
                continue;
            }
            Err(error) => error,
        };
        let valid_len = error.valid_up_to();
        let (valid, rest) = window.split_at(valid_len);
        // `std::str::from_utf8` is used (not `<[u8]>::utf8_chunks`) for its word-at-a-time ASCII
        // path; the price is validating the valid prefix twice here, once per invalid sequence.
        if !valid.is_empty() {
            let text =
                std::str::from_utf8(valid).expect("a prefix up to valid_up_to is valid UTF-8");
            // Followed by an invalid byte, so a final backslash is decided and all is shown.
            offset += filter_valid::<ONE_LINE>(text, After::Byte(rest[0]), out);
        }
        match error.error_len() {
            Some(invalid_len) => {
                for &b in &rest[..invalid_len] {
                    push_byte_escape(out, b);
                }
                offset += invalid_len;
                // Binary input: bytes that can never begin a UTF-8 sequence are shown here
                // directly rather than by asking the validator again for each of them.
                while let Some(&b) = input.get(offset).filter(|&&b| never_begins_a_character(b)) {
                    push_byte_escape(out, b);
                    offset += 1;
                }
            }
            // A sequence cut by the end of this window, but not of the input: the next window
            // starts with it and sees the rest.
            None if !last_window => {}
            None if at_end => {
                for &b in rest {
                    push_byte_escape(out, b);
                }
                offset += rest.len();
            }
            // A sequence cut by the end of this chunk: wait for the rest.
            None => return offset,
        }
    }
    offset
}

/// Continuation bytes and bytes that occur in no UTF-8 text: wherever a character could start,
/// such a byte is invalid on its own.
fn never_begins_a_character(b: u8) -> bool {
    matches!(b, 0x80..=0xC1 | 0xF5..=0xFF)
}

/// What follows a run of valid text.
#[derive(Debug, Clone, Copy)]
enum After {
    Byte(u8),
    End,
    Unknown,
}

/// Filters valid text; returns how many bytes of it were shown (all of them, unless it ends with
/// a backslash and what follows is [`After::Unknown`]).
fn filter_valid<const ONE_LINE: bool>(text: &str, after: After, out: &mut String) -> usize {
    let classes = if ONE_LINE {
        &ONE_LINE_CLASSES
    } else {
        &VISIBLE_CLASSES
    };
    let bytes = text.as_bytes();
    let mut start = 0;
    loop {
        let at = next_attention::<ONE_LINE>(bytes, start, classes);
        // Everything before `at` is PASS: printable ASCII, layout, or whole characters that are
        // not escaped, and `at` is a character boundary (the scan stops only on ASCII or lead
        // bytes), so the run can be copied as it is.
        out.push_str(&text[start..at]);
        let Some(&b) = bytes.get(at) else {
            return at;
        };
        match classes[usize::from(b)] {
            CONTROL => {
                push_control_escape(out, b);
                start = at + 1;
            }
            BACKSLASH => {
                let next = match bytes.get(at + 1) {
                    Some(&next) => After::Byte(next),
                    None => after,
                };
                match next {
                    After::Byte(next) if plain_after_backslash(next) => out.push('\\'),
                    After::Byte(_) | After::End => out.push_str("\\\\"),
                    After::Unknown => return at,
                }
                start = at + 1;
            }
            _ => {
                debug_assert_eq!(classes[usize::from(b)], LEAD);
                let c = text[at..].chars().next().unwrap_or_default();
                if is_escaped_char(c) {
                    push_char_escape(out, c);
                } else {
                    out.push(c);
                }
                start = at + c.len_utf8();
            }
        }
    }
}

/// The first index at or after `from` whose byte is not [`PASS`], or `bytes.len()`.
///
/// Hand-written because the class of bytes sought (most controls, DEL, backslash, some lead
/// bytes) is not a fixed set of two or three bytes that `memchr` could find. Pure ASCII text is
/// ruled out 32 bytes at a time with a branch-free test the compiler turns into vector compares;
/// a block that fails it is walked with the class table.
#[inline]
fn next_attention<const ONE_LINE: bool>(bytes: &[u8], from: usize, classes: &[u8; 256]) -> usize {
    const BLOCK: usize = 32;
    let mut i = from;
    loop {
        while let Some(block) = bytes.get(i..i + BLOCK) {
            if !is_plain_ascii_block::<ONE_LINE>(block) {
                break;
            }
            i += BLOCK;
        }
        let end = bytes.len().min(i + BLOCK);
        while i < end {
            if classes[usize::from(bytes[i])] != PASS {
                return i;
            }
            i += 1;
        }
        if i == bytes.len() {
            return i;
        }
    }
}

/// True when no byte of `block` is a control shown in this mode, DEL, a backslash, or non-ASCII.
#[inline(always)]
fn is_plain_ascii_block<const ONE_LINE: bool>(block: &[u8]) -> bool {
    let mut needs_look = false;
    for &b in block {
        let control = (b < 0x20) & (ONE_LINE | ((b != b'\n') & (b != b'\t')));
        needs_look |= control | (b >= 0x7F) | (b == b'\\');
    }
    !needs_look
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_byte_escape(out: &mut String, b: u8) {
    out.push('\\');
    out.push('x');
    out.push(char::from(HEX[usize::from(b >> 4)]));
    out.push(char::from(HEX[usize::from(b & 0xF)]));
}

fn push_control_escape(out: &mut String, b: u8) {
    match b {
        b'\r' => out.push_str("\\r"),
        b'\n' => out.push_str("\\n"),
        b'\t' => out.push_str("\\t"),
        _ => push_byte_escape(out, b),
    }
}

fn push_char_escape(out: &mut String, c: char) {
    let cp = u32::from(c);
    out.push_str("\\u{");
    let digits = (32 - cp.leading_zeros()).div_ceil(4).max(1);
    for d in (0..digits).rev() {
        out.push(char::from(HEX[((cp >> (4 * d)) & 0xF) as usize]));
    }
    out.push('}');
}

#[cfg(test)]
mod tests;
