//! Multi-line secrets: PEM private-key blocks (any key type, real newlines or `\n` escapes)
//! and PuTTY key files. A block is matched from its opening marker to its closing marker, at
//! most [`BLOCK_CAP`] bytes apart, and never past the end of the region being scanned.

use memchr::memmem;

/// The longest block, opening marker to closing marker, that is recognised.
pub(crate) const BLOCK_CAP: usize = 16 * 1024;

pub(crate) const PEM_BEGIN: &[u8] = b"-----BEGIN ";
pub(crate) const PUTTY_BEGIN: &[u8] = b"PuTTY-User-Key-File-";

/// What a block marker at a position turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A block from `start` to `end` (exclusive) of the named shape.
    Found {
        start: usize,
        end: usize,
        shape: &'static str,
    },
    /// Not a block.
    Nothing,
    /// The text ends before the answer is known (only when more text may follow).
    Undetermined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parse {
    Ok(usize),
    No,
    Short,
}

/// Parse `[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----` at `i`; returns the end of the marker.
fn private_key_label(text: &[u8], mut i: usize, limit: usize) -> (Parse, &'static str) {
    let label_start = i;
    let mut shape = "pem-private-key";
    loop {
        if text[i..limit].starts_with(b"PRIVATE KEY") {
            let label = &text[label_start..i];
            if label.starts_with(b"OPENSSH") {
                shape = "openssh-private-key";
            } else if label.starts_with(b"PGP") {
                shape = "pgp-private-key";
            }
            i += b"PRIVATE KEY".len();
            if text[i..limit].starts_with(b" BLOCK") {
                i += b" BLOCK".len();
            } else if limit - i < b" BLOCK".len()
                && b" BLOCK".starts_with(&text[i..limit])
                && i < limit
            {
                return (Parse::Short, shape);
            }
            if text[i..limit].starts_with(b"-----") {
                return (Parse::Ok(i + 5), shape);
            }
            return if limit - i < 5 && b"-----".starts_with(&text[i..limit]) {
                (Parse::Short, shape)
            } else {
                (Parse::No, shape)
            };
        }
        if i >= limit {
            return (Parse::Short, shape);
        }
        if limit - i < b"PRIVATE KEY".len() && b"PRIVATE KEY".starts_with(&text[i..limit]) {
            return (Parse::Short, shape);
        }
        let b = text[i];
        if !(b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ') || i - label_start >= 40 {
            return (Parse::No, shape);
        }
        i += 1;
    }
}

fn base64_body(body: &[u8]) -> bool {
    body.iter()
        .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
        .count()
        >= 16
}

/// A PEM private-key block whose `-----BEGIN ` starts at `p`. `limit` is the end of the text
/// that may be read; `more` says whether more text may follow it.
pub(crate) fn pem(text: &[u8], p: usize, limit: usize, more: bool) -> Outcome {
    let short = if more {
        Outcome::Undetermined
    } else {
        Outcome::Nothing
    };
    let (header, shape) = private_key_label(text, p + PEM_BEGIN.len(), limit);
    let body_start = match header {
        Parse::Ok(e) => e,
        Parse::No => return Outcome::Nothing,
        Parse::Short => return short,
    };
    let cap = (p + BLOCK_CAP).min(limit);
    let mut from = body_start;
    while let Some(k) = memmem::find(&text[from..cap], b"-----END ") {
        let q = from + k;
        match private_key_label(text, q + b"-----END ".len(), limit) {
            (Parse::Ok(end), _) if end <= cap => {
                return if base64_body(&text[body_start..q]) {
                    Outcome::Found {
                        start: p,
                        end,
                        shape,
                    }
                } else {
                    Outcome::Nothing
                };
            }
            (Parse::Ok(_), _) => return Outcome::Nothing,
            (Parse::Short, _) => return short,
            (Parse::No, _) => from = q + 1,
        }
    }
    if cap == p + BLOCK_CAP {
        Outcome::Nothing
    } else {
        short
    }
}

/// A PuTTY private key file whose `PuTTY-User-Key-File-` starts at `p`: up to the end of its
/// `Private-MAC:` value.
pub(crate) fn putty(text: &[u8], p: usize, limit: usize, more: bool) -> Outcome {
    let short = if more {
        Outcome::Undetermined
    } else {
        Outcome::Nothing
    };
    let cap = (p + BLOCK_CAP).min(limit);
    let Some(k) = memmem::find(&text[p..cap], b"Private-MAC: ") else {
        return if cap == p + BLOCK_CAP {
            Outcome::Nothing
        } else {
            short
        };
    };
    let mac = p + k + b"Private-MAC: ".len();
    let mut end = mac;
    while end < cap && text[end].is_ascii_hexdigit() {
        end += 1;
    }
    if end == cap && cap < p + BLOCK_CAP && more {
        return Outcome::Undetermined;
    }
    if end - mac < 16 || memmem::find(&text[p..mac], b"Private-Lines:").is_none() {
        return Outcome::Nothing;
    }
    Outcome::Found {
        start: p,
        end,
        shape: "putty-private-key",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\nKUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ==\n-----END RSA PRIVATE KEY-----";

    #[test]
    fn a_whole_key_is_found() {
        let t = KEY.as_bytes();
        assert_eq!(
            pem(t, 0, t.len(), false),
            Outcome::Found {
                start: 0,
                end: t.len(),
                shape: "pem-private-key"
            }
        );
    }

    #[test]
    fn a_cut_key_is_undetermined_until_the_end() {
        let t = &KEY.as_bytes()[..KEY.len() - 3];
        assert_eq!(pem(t, 0, t.len(), true), Outcome::Undetermined);
        assert_eq!(pem(t, 0, t.len(), false), Outcome::Nothing);
    }

    #[test]
    fn an_empty_key_is_not_a_key() {
        let t = b"-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----";
        assert_eq!(pem(t, 0, t.len(), false), Outcome::Nothing);
    }

    #[test]
    fn a_public_key_is_not_a_private_key() {
        let t = b"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----";
        assert_eq!(pem(t, 0, t.len(), false), Outcome::Nothing);
    }
}
