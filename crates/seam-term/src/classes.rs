//! What needs a closer look, byte by byte, and which characters are shown escaped.
//!
//! Two kinds of table live here, both built at compile time:
//!
//! - a 256-entry class table per [`Mode`](crate::Mode), saying for each input byte whether it can
//!   be copied as it is ([`PASS`]) or needs attention: a control to show escaped, a backslash whose
//!   meaning depends on the byte after it, or the first byte of a UTF-8 sequence that might encode a
//!   character from [`ESCAPED_RANGES`];
//! - [`ESCAPED_RANGES`], the characters at or above U+0080 that are shown as `\u{…}`.
//!
//! Written by hand because no crate exposes this particular set as a fast predicate: it is the
//! union of Unicode's C1 controls, `General_Category` `Cf`/`Zl`/`Zp`,
//! `Default_Ignorable_Code_Point` and the noncharacters. The unit tests cross-check it against the
//! `unicode-general-category` crate so that it cannot silently fall behind for `Cc`/`Cf`/`Zl`/`Zp`.

/// The byte is copied as it is.
pub(crate) const PASS: u8 = 0;
/// An ASCII control (or DEL) that is shown escaped.
pub(crate) const CONTROL: u8 = 1;
/// A backslash: doubled or not depending on the byte that follows it.
pub(crate) const BACKSLASH: u8 = 2;
/// The lead byte of a UTF-8 sequence that may encode a character of [`ESCAPED_RANGES`].
pub(crate) const LEAD: u8 = 3;

/// Characters at or above U+0080 that are never handed to a terminal as they are, as inclusive
/// ranges sorted by start. Each is shown as `\u{…}`. Besides these, every noncharacter
/// `U+nFFFE`/`U+nFFFF` of every plane is escaped (see [`is_escaped_char`]).
///
/// Sources (Unicode 16): `Cc` above ASCII (the C1 controls), every `Cf` format character, the line
/// and paragraph separators (`Zl`, `Zp`), every `Default_Ignorable_Code_Point` (which adds
/// the combining grapheme joiner, the Hangul fillers that render as nothing, the Khmer inherent
/// vowels, the Mongolian variation selectors and all variation selectors — a known channel for
/// hiding text inside an emoji), and the noncharacters U+FDD0–U+FDEF.
pub(crate) const ESCAPED_RANGES: &[(u32, u32)] = &[
    (0x0080, 0x009F),   // C1 controls: NEL, CSI, OSC, DCS, ST … act in many terminals
    (0x00AD, 0x00AD),   // soft hyphen: invisible unless a line breaks at it
    (0x034F, 0x034F),   // combining grapheme joiner
    (0x0600, 0x0605),   // Arabic number signs and friends (Cf)
    (0x061C, 0x061C),   // Arabic letter mark (bidi)
    (0x06DD, 0x06DD),   // Arabic end of ayah (Cf)
    (0x070F, 0x070F),   // Syriac abbreviation mark (Cf)
    (0x0890, 0x0891),   // Arabic pound/piastre mark above (Cf)
    (0x08E2, 0x08E2),   // Arabic disputed end of ayah (Cf)
    (0x115F, 0x1160),   // Hangul choseong/jungseong fillers: render as nothing
    (0x17B4, 0x17B5),   // Khmer inherent vowels: render as nothing
    (0x180B, 0x180F),   // Mongolian variation selectors, vowel separator
    (0x200B, 0x200F),   // zero-width space, ZWNJ, ZWJ, LRM, RLM
    (0x2028, 0x202E),   // line and paragraph separators; bidi embeddings and overrides
    (0x2060, 0x206F),   // word joiner, invisible operators, bidi isolates, deprecated formats
    (0x3164, 0x3164),   // Hangul filler: an "invisible letter" in identifiers
    (0xFDD0, 0xFDEF),   // noncharacters
    (0xFE00, 0xFE0F),   // variation selectors 1–16
    (0xFEFF, 0xFEFF),   // zero-width no-break space, byte order mark
    (0xFFA0, 0xFFA0),   // halfwidth Hangul filler
    (0xFFF0, 0xFFFB),   // unassigned ignorables; interlinear annotation anchors
    (0x110BD, 0x110BD), // Kaithi number sign (Cf)
    (0x110CD, 0x110CD), // Kaithi number sign above (Cf)
    (0x13430, 0x1343F), // Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3), // shorthand format controls
    (0x1D173, 0x1D17A), // musical symbol format controls
    (0xE0000, 0xE0FFF), // tag characters (invisible ASCII), variation selectors 17–256, reserved
];

/// Whether a character at or above U+0080 is shown escaped rather than as itself.
pub(crate) fn is_escaped_char(c: char) -> bool {
    let cp = u32::from(c);
    if cp & 0xFFFE == 0xFFFE {
        // U+FFFE, U+FFFF, U+1FFFE, U+1FFFF, … : the noncharacters at the end of every plane.
        return true;
    }
    // The set is small: a binary search over it is cheaper than any general-purpose table, and
    // it only runs for characters whose lead byte is in the set's lead bytes.
    match ESCAPED_RANGES.binary_search_by(|&(start, _)| start.cmp(&cp)) {
        Ok(_) => true,
        Err(0) => false,
        Err(after) => cp <= ESCAPED_RANGES[after - 1].1,
    }
}

/// The first byte of the UTF-8 encoding of `cp`.
const fn utf8_lead(cp: u32) -> u8 {
    if cp < 0x80 {
        cp as u8
    } else if cp < 0x800 {
        0xC0 | (cp >> 6) as u8
    } else if cp < 0x1_0000 {
        0xE0 | (cp >> 12) as u8
    } else {
        0xF0 | (cp >> 18) as u8
    }
}

/// The class table for one mode. `one_line` shows newline and tab too.
const fn class_table(one_line: bool) -> [u8; 256] {
    let mut table = [PASS; 256];
    let mut b = 0;
    while b < 0x20 {
        if one_line || (b != b'\n' as usize && b != b'\t' as usize) {
            table[b] = CONTROL;
        }
        b += 1;
    }
    table[0x7F] = CONTROL;
    table[b'\\' as usize] = BACKSLASH;
    // Every lead byte that can begin a character of ESCAPED_RANGES. Continuation bytes and the
    // other lead bytes stay PASS: they are only ever looked at inside text already known to be
    // valid UTF-8 (invalid bytes never reach the table).
    let mut r = 0;
    while r < ESCAPED_RANGES.len() {
        let (start, end) = ESCAPED_RANGES[r];
        let mut lead = utf8_lead(start) as usize;
        while lead <= utf8_lead(end) as usize {
            table[lead] = LEAD;
            lead += 1;
        }
        r += 1;
    }
    // The plane-end noncharacters U+nFFFE/U+nFFFF: every three-byte lead's plane 0 is covered by
    // 0xEF above; every four-byte lead (0xF0–0xF4) can start one.
    let mut lead = 0xF0;
    while lead <= 0xF4 {
        table[lead] = LEAD;
        lead += 1;
    }
    table[0xEF] = LEAD;
    table
}

/// Byte classes when newline and tab survive as layout.
pub(crate) static VISIBLE_CLASSES: [u8; 256] = class_table(false);
/// Byte classes when newline and tab are shown too.
pub(crate) static ONE_LINE_CLASSES: [u8; 256] = class_table(true);

/// Bytes after which a literal backslash is shown as a single `\`: printable ASCII that does not
/// begin an escape (`\`, `x`, `u`, `n`, `t`, `r` do). Before any other byte, and at the end of
/// the input, a literal backslash is shown doubled, `\\`.
pub(crate) const fn plain_after_backslash(b: u8) -> bool {
    matches!(b, 0x20..=0x7E) && !matches!(b, b'\\' | b'x' | b'u' | b'n' | b't' | b'r')
}
