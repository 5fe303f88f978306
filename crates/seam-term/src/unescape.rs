//! The inverse of the filter: the bytes a shown text stands for.
//!
//! It exists to make the promise "nothing is dropped, nothing is ambiguous" checkable — by the
//! property tests, the fuzz target, and anyone who needs the original bytes back from a log.
//! Its result is raw and must never be printed to a terminal.

use crate::classes::plain_after_backslash;

/// A shown text that the filter could not have produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnescapeError {
    /// A backslash is followed by something that begins no escape.
    #[error("byte {offset} of the shown text: a backslash that begins no escape")]
    StrayBackslash {
        /// Byte offset of the backslash.
        offset: usize,
    },
    /// `\x` is not followed by two lowercase hex digits.
    #[error("byte {offset} of the shown text: `\\x` needs two lowercase hex digits")]
    BadByteEscape {
        /// Byte offset of the backslash.
        offset: usize,
    },
    /// `\u` is not followed by `{`, one to six lowercase hex digits naming a character, and `}`.
    #[error(
        "byte {offset} of the shown text: `\\u` needs {{1 to 6 lowercase hex digits}} naming a character"
    )]
    BadCharEscape {
        /// Byte offset of the backslash.
        offset: usize,
    },
}

/// The exact bytes that [`visible`](crate::visible) or [`on_one_line`](crate::on_one_line) were
/// given to produce `shown` (either mode: a raw newline or tab stands for itself).
///
/// The result is raw data — controls, escape sequences and all — and must never be printed.
///
/// ```
/// let input = b"\\x1b is not \x1b; \\d stays\r\n\xff";
/// assert_eq!(seam_term::unescape(&seam_term::visible(input)).unwrap(), input);
/// ```
pub fn unescape(shown: &str) -> Result<Vec<u8>, UnescapeError> {
    let bytes = shown.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let offset = i;
        match bytes.get(i + 1).copied() {
            Some(b'\\') => {
                out.push(b'\\');
                i += 2;
            }
            Some(b'n') => {
                out.push(b'\n');
                i += 2;
            }
            Some(b't') => {
                out.push(b'\t');
                i += 2;
            }
            Some(b'r') => {
                out.push(b'\r');
                i += 2;
            }
            Some(b'x') => {
                let byte = match (
                    bytes.get(i + 2).copied().and_then(hex_digit),
                    bytes.get(i + 3).copied().and_then(hex_digit),
                ) {
                    (Some(high), Some(low)) => (high << 4) | low,
                    _ => return Err(UnescapeError::BadByteEscape { offset }),
                };
                out.push(byte);
                i += 4;
            }
            Some(b'u') => {
                let bad = UnescapeError::BadCharEscape { offset };
                if bytes.get(i + 2) != Some(&b'{') {
                    return Err(bad);
                }
                let digits_start = i + 3;
                let mut cp: u32 = 0;
                let mut j = digits_start;
                while let Some(d) = bytes.get(j).copied().and_then(hex_digit) {
                    if j - digits_start == 6 {
                        return Err(bad);
                    }
                    cp = (cp << 4) | u32::from(d);
                    j += 1;
                }
                if j == digits_start || bytes.get(j) != Some(&b'}') {
                    return Err(bad);
                }
                let c = char::from_u32(cp).ok_or(bad)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i = j + 1;
            }
            Some(next) if plain_after_backslash(next) => {
                out.push(b'\\');
                i += 1;
            }
            _ => return Err(UnescapeError::StrayBackslash { offset }),
        }
    }
    Ok(out)
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}
