//! The normaliser in front of the known-value matchers: it undoes the cheap disguises a known
//! value may wear in a tool's output, and keeps a map from every byte of its output back to
//! the bytes of the original text they came from, so that a match in the normalised text is
//! redacted over the right bytes of the original.
//!
//! What it undoes, in one pass:
//!
//! - line breaks are dropped (`\n`, `\r\n`, `\r`), as are the quoted-printable soft break
//!   `=` + line break and the line continuation `\` + line break: a value split over lines is
//!   joined again (indentation after the break is kept);
//! - escapes are decoded: `\uXXXX` (with surrogate pairs), `\u{X…}`, `\UXXXXXXXX`, `\xXX` (a
//!   code point up to U+00FF, as in Python's strings), and `\"`, `\'`, `\/`, `\\`;
//! - HTML character references are decoded: `&#…;`, `&#x…;` and the common named ones;
//! - Unicode default-ignorable code points are dropped (zero-width space, joiners, soft
//!   hyphen, BOM, variation selectors, bidirectional controls, tag characters…);
//! - every other character is put through its compatibility decomposition (NFKD, one
//!   character at a time). Two texts have the same NFKC form exactly when they have the same
//!   NFKD form, so this is NFKC's equivalence (fullwidth letters, ligatures, superscripts…),
//!   and decomposing keeps every output byte tied to one input character, which composing
//!   would not. (Not done: the canonical reordering of several combining marks.)
//!
//! Nothing is decoded across a line break or across a region cut (see `engine`), so the
//! normalised form of a text cut at a line break is a prefix of the normalised form of the
//! whole: the streaming scrubber relies on it.
//!
//! Fast path: a run of bytes that are printable ASCII other than `\`, `&`, `=` is copied as it
//! is, and stays one piece of the map.

use unicode_normalization::char::decompose_compatible;

/// One piece of the map: the normalised bytes from `norm` (to the next piece's `norm`) came
/// from the original bytes `orig..orig + orig_len`; when `copied`, byte for byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    norm: usize,
    orig: usize,
    orig_len: usize,
    copied: bool,
}

/// A normalised text and its map back to the original.
#[derive(Debug, Default)]
pub(crate) struct Normalised {
    pub(crate) text: Vec<u8>,
    pieces: Vec<Piece>,
}

impl Normalised {
    /// Normalise `text`, the regions between `cuts` one after another.
    pub(crate) fn new(text: &[u8], cuts: &[usize]) -> Normalised {
        let mut n = Normalised {
            text: Vec::with_capacity(text.len()),
            pieces: Vec::new(),
        };
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
            n.region(text, start, cut);
            start = cut;
        }
        n
    }

    /// The normalised form of a short string (a known value): the whole string, one region.
    pub(crate) fn of(s: &str) -> Vec<u8> {
        Normalised::new(s.as_bytes(), &[]).text
    }

    /// The original byte range that the normalised bytes `start..end` came from.
    pub(crate) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        debug_assert!(start < end && end <= self.text.len());
        let piece = |p: usize| self.pieces[self.pieces.partition_point(|x| x.norm <= p) - 1];
        let a = piece(start);
        let b = piece(end - 1);
        let s = if a.copied {
            a.orig + (start - a.norm)
        } else {
            a.orig
        };
        let e = if b.copied {
            b.orig + (end - 1 - b.norm) + 1
        } else {
            b.orig + b.orig_len
        };
        (s, e)
    }

    /// The normalised position of original position `orig`: the first normalised byte that
    /// comes from `orig` or later.
    pub(crate) fn position_of(&self, orig: usize) -> usize {
        let i = self.pieces.partition_point(|p| p.orig + p.orig_len <= orig);
        match self.pieces.get(i) {
            None => self.text.len(),
            Some(p) if p.copied && orig > p.orig => p.norm + (orig - p.orig),
            Some(p) => p.norm,
        }
    }

    fn push_copied(&mut self, orig: usize, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(last)
                if last.copied
                    && last.orig + last.orig_len == orig
                    && last.norm + last.orig_len == self.text.len() =>
            {
                last.orig_len += bytes.len();
            }
            _ => self.pieces.push(Piece {
                norm: self.text.len(),
                orig,
                orig_len: bytes.len(),
                copied: true,
            }),
        }
        self.text.extend_from_slice(bytes);
    }

    /// Push the normal form of `c`, which stood at `orig..orig + orig_len`.
    fn push_char(&mut self, c: char, orig: usize, orig_len: usize) {
        if is_default_ignorable(c) {
            return;
        }
        let at = self.text.len();
        if c.is_ascii() {
            self.text.push(c as u8);
        } else {
            let mut buf = [0u8; 4];
            decompose_compatible(c, |d| {
                if !is_default_ignorable(d) {
                    self.text
                        .extend_from_slice(d.encode_utf8(&mut buf).as_bytes());
                }
            });
        }
        if self.text.len() == at {
            return;
        }
        self.pieces.push(Piece {
            norm: at,
            orig,
            orig_len,
            copied: false,
        });
    }

    fn region(&mut self, text: &[u8], start: usize, end: usize) {
        let mut i = start;
        while i < end {
            // The fast path: plain bytes, copied.
            let run = text[i..end]
                .iter()
                .position(|&b| SPECIAL[usize::from(b)])
                .map_or(end, |k| i + k);
            self.push_copied(i, &text[i..run]);
            i = run;
            if i >= end {
                break;
            }
            let b = text[i];
            let rest = &text[i..end];
            match b {
                b'\n' => i += 1,
                b'\r' => i += if rest.get(1) == Some(&b'\n') { 2 } else { 1 },
                b'=' | b'\\' if matches!(rest.get(1), Some(b'\n')) => i += 2,
                b'=' | b'\\' if rest.get(1..3) == Some(b"\r\n") => i += 3,
                b'\\' => match escape(rest) {
                    Some((c, len)) => {
                        self.push_char(c, i, len);
                        i += len;
                    }
                    None => {
                        // A lone backslash, or `\\`: one literal backslash for the pair.
                        let len = if rest.get(1) == Some(&b'\\') { 2 } else { 1 };
                        self.push_char('\\', i, len);
                        i += len;
                    }
                },
                b'&' => match entity(rest) {
                    Some((c, len)) => {
                        self.push_char(c, i, len);
                        i += len;
                    }
                    None => {
                        self.push_copied(i, b"&");
                        i += 1;
                    }
                },
                b if b < 0x80 => {
                    // `=` not before a line break, and control bytes.
                    self.push_copied(i, &text[i..=i]);
                    i += 1;
                }
                _ => match utf8_char(rest) {
                    Some((c, len)) => {
                        self.push_char(c, i, len);
                        i += len;
                    }
                    None => {
                        // Not UTF-8: the byte as it is.
                        self.push_copied(i, &text[i..=i]);
                        i += 1;
                    }
                },
            }
        }
    }
}

/// Bytes that end the fast path: line breaks, `\`, `&`, `=`, and every byte that is not
/// printable ASCII or a tab.
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = !(b == b'\t' || (b >= 0x20 && b < 0x7f)) || b == b'\\' || b == b'&' || b == b'=';
        i += 1;
    }
    t
};

fn hex_value(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + char::from(d).to_digit(16)?;
    }
    Some(v)
}

/// The escape at the start of `s` (which starts with `\`): the character and the escape's
/// length.
fn escape(s: &[u8]) -> Option<(char, usize)> {
    match *s.get(1)? {
        b'"' => Some(('"', 2)),
        b'\'' => Some(('\'', 2)),
        b'/' => Some(('/', 2)),
        b'x' => {
            let v = hex_value(s.get(2..4)?)?;
            Some((char::from_u32(v)?, 4))
        }
        b'U' => {
            let v = hex_value(s.get(2..10)?)?;
            Some((char::from_u32(v)?, 10))
        }
        b'u' if s.get(2) == Some(&b'{') => {
            let close = s.iter().take(12).position(|&b| b == b'}')?;
            let v = hex_value(&s[3..close])?;
            Some((char::from_u32(v)?, close + 1))
        }
        b'u' => {
            let v = hex_value(s.get(2..6)?)?;
            if (0xD800..0xDC00).contains(&v) {
                // A high surrogate: a low one must follow.
                if s.get(6..8) != Some(b"\\u") {
                    return None;
                }
                let low = hex_value(s.get(8..12)?)?;
                if !(0xDC00..0xE000).contains(&low) {
                    return None;
                }
                let cp = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
                return Some((char::from_u32(cp)?, 12));
            }
            Some((char::from_u32(v)?, 6))
        }
        _ => None,
    }
}

/// The HTML character reference at the start of `s` (which starts with `&`).
fn entity(s: &[u8]) -> Option<(char, usize)> {
    let semi = s.iter().take(12).position(|&b| b == b';')?;
    let body = &s[1..semi];
    let c = if let Some(num) = body.strip_prefix(b"#") {
        let v = if let Some(h) = num.strip_prefix(b"x").or_else(|| num.strip_prefix(b"X")) {
            hex_value(h)?
        } else {
            if num.is_empty() || num.len() > 7 || !num.iter().all(u8::is_ascii_digit) {
                return None;
            }
            num.iter().fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'))
        };
        char::from_u32(v)?
    } else {
        match body {
            b"amp" => '&',
            b"lt" => '<',
            b"gt" => '>',
            b"quot" => '"',
            b"apos" => '\'',
            b"nbsp" => '\u{a0}',
            b"shy" => '\u{ad}',
            b"zwsp" | b"ZeroWidthSpace" => '\u{200b}',
            b"zwj" => '\u{200d}',
            b"zwnj" => '\u{200c}',
            b"colon" => ':',
            b"sol" => '/',
            b"equals" => '=',
            b"plus" => '+',
            b"num" => '#',
            b"percnt" => '%',
            b"commat" => '@',
            b"lowbar" => '_',
            b"hyphen" | b"dash" => '-',
            b"period" => '.',
            _ => return None,
        }
    };
    Some((c, semi + 1))
}

/// The UTF-8 character at the start of `s`, and its length.
fn utf8_char(s: &[u8]) -> Option<(char, usize)> {
    let len = match s[0] {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let c = std::str::from_utf8(s.get(..len)?).ok()?.chars().next()?;
    Some((c, len))
}

/// Unicode's `Default_Ignorable_Code_Point` property (DerivedCoreProperties.txt): characters
/// that render as nothing.
pub(crate) fn is_default_ignorable(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn norm(s: &str) -> String {
        String::from_utf8(Normalised::of(s)).expect("utf-8")
    }

    #[test]
    fn disguises_are_undone() {
        for (text, plain) in [
            ("ab\u{200b}cd\u{feff}ef\u{ad}gh", "abcdefgh"),
            ("\\u0041\\u00e9\\x42\\u{1F600}\\uD83D\\uDE00", "AéB😀😀"),
            ("&#65;&#x42;&amp;&lt;&quot;", "AB&<\""),
            ("ab\ncd\r\nef=\ngh\\\nij", "abcdefghij"),
            ("ＡＢＣ１２３ ﬁ", "ABC123 fi"),
            ("plain = text \\ & here", "plain = text \\ & here"),
            ("\\\\u0041", "\\u0041"),
        ] {
            let want: String = plain
                .chars()
                .flat_map(|c| {
                    let mut v = Vec::new();
                    decompose_compatible(c, |d| v.push(d));
                    v
                })
                .collect();
            assert_eq!(norm(text), want, "{text:?}");
        }
    }

    #[test]
    fn the_map_leads_back_to_the_original_bytes() {
        let text = "x \\u0041B\u{200b}C\n&#68;E";
        let n = Normalised::new(text.as_bytes(), &[]);
        assert_eq!(n.text, b"x ABCDE");
        let (s, e) = n.original(2, 7);
        assert_eq!(&text[s..e], "\\u0041B\u{200b}C\n&#68;E");
        let (s, e) = n.original(3, 4);
        assert_eq!(&text[s..e], "B");
    }

    /// One way of writing a character, and what it normalises to.
    fn disguise(c: char, how: u8) -> String {
        match how % 6 {
            0 => c.to_string(),
            1 => format!("\\u{:04x}", u32::from(c)),
            2 => format!("&#{};", u32::from(c)),
            3 => format!("&#x{:X};", u32::from(c)),
            4 => format!("{c}\u{200b}"),
            _ => format!("{c}\n"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// The plain oracle: a value written one character at a time in any of the disguises,
        /// between any text, is found in the normalised text, and the original range of the
        /// match holds the whole disguised value, and nothing of the text before or after
        /// it but what normalises to nothing.
        #[test]
        fn a_match_maps_back_onto_the_disguised_value(
            before in "[a-z \\n]{0,12}",
            value in "[A-Za-z0-9]{6,16}",
            hows in proptest::collection::vec(any::<u8>(), 16),
            after in "[a-z \\n]{0,12}",
        ) {
            let disguised: String = value
                .chars()
                .zip(hows.iter())
                .map(|(c, &h)| disguise(c, h))
                .collect();
            let text = format!("{before}#{disguised}#{after}");
            let n = Normalised::new(text.as_bytes(), &[]);
            let at = memchr::memmem::find(&n.text, format!("#{value}#").as_bytes());
            prop_assert!(at.is_some(), "{:?} → {:?}", text, String::from_utf8_lossy(&n.text));
            let at = at.unwrap_or(0) + 1;
            let (s, e) = n.original(at, at + value.len());
            let inner_start = before.len() + 1;
            let inner_end = inner_start + disguised.len();
            prop_assert!(s == inner_start, "start {} for {}", s, inner_start);
            // The end may stop short of a trailing disguise that normalises to nothing
            // (a zero-width space, a line break), never past the value.
            let trailing_ok = e <= inner_end
                && text[e..inner_end].chars().all(|c| c == '\u{200b}' || c == '\n');
            prop_assert!(trailing_ok, "end {} for {}", e, inner_end);
            let again = String::from_utf8_lossy(&Normalised::of(&text[s..e])).into_owned();
            prop_assert_eq!(again, value);
        }

        /// Every original position maps to a normalised one and back into range.
        #[test]
        fn positions_are_monotone(text in "[a-z\\\\&#;=\\n\u{200b}é]{0,40}") {
            let n = Normalised::new(text.as_bytes(), &[]);
            let mut last = 0;
            for p in 0..=text.len() {
                let q = n.position_of(p);
                prop_assert!(q >= last && q <= n.text.len());
                last = q;
            }
        }
    }
}
