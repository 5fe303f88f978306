//! The line gate: which lines of a region are worth a full look. A line passes when it holds
//! a token that may be machine-made (the token gate, a screen for digits) or one of a few gate
//! words (a small multi-literal search, run only between the lines the token gate passed).

use aho_corasick::Input;
use memchr::{memchr, memrchr};

use super::Engine;

/// Words that make a line worth a full look even without a token that looks machine-made.
pub(super) const GATE_WORDS: &[&str] = &[
    // Formats whose random part may hold no digit.
    "hf_",
    "api_org_",
    "rzp_",
    "CONTRIBSYS",
    "contribsys",
    "xox",
    "sk_",
    "sk-",
    "AKCp",
    "AIza",
    "EAA",
    "SG.",
    "AAAAAAAAAA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "glpat-",
    "key",
    "Key",
    "KEY",
    "token",
    "Token",
    "TOKEN",
    "secret",
    "Secret",
    "SECRET",
    "pass",
    "Pass",
    "PASS",
    "pwd",
    "Pwd",
    "PWD",
    "auth",
    "Auth",
    "AUTH",
    "cred",
    "Cred",
    "CRED",
    "bearer",
    "Bearer",
    "BEARER",
    "AQAAABAAA",
    "-----BEGIN ",
    "PuTTY-User-Key-File-",
    "://",
    // Command lines whose password may be a plain word (`mysql -psecret`).
    "mysql",
    "mariadb",
    "sshpass",
];

impl Engine {
    /// The lines of `text[rs..re]` worth a full look, in order: those holding a token that may
    /// be machine-made (eight or more token bytes mixing letters and digits, sixteen or more
    /// mixing cases, fourteen or more digits) or one of the gate words. Every shape's secret
    /// is such a token or stands next to such a word, so the other lines are skipped whole.
    pub(super) fn gated_lines(&self, text: &[u8], rs: usize, re: usize) -> Vec<(usize, usize)> {
        let line_of = |p: usize| {
            let ws = memrchr(b'\n', &text[rs..p]).map_or(rs, |i| rs + i + 1);
            let we = memchr(b'\n', &text[p..re]).map_or(re, |i| p + i);
            (ws, we)
        };
        // The lines the token gate marks (at most one mark a line, in order).
        let mut marks: Vec<(usize, usize)> = Vec::new();
        token_gate(&text[rs..re], rs, &mut marks);
        let mut lines: Vec<(usize, usize)> = Vec::with_capacity(marks.len());
        // Between them, the lines holding a gate word: only whether a line holds one
        // matters, so the search goes on from the end of each line found.
        let mut pos = rs;
        for next in marks
            .iter()
            .map(|&(p, we)| {
                let ws = memrchr(b'\n', &text[rs..p]).map_or(rs, |i| rs + i + 1);
                Some((ws, we))
            })
            .chain(std::iter::once(None))
        {
            let gap_end = next.map_or(re, |(ws, _)| ws);
            while pos < gap_end {
                let Some(m) = self.gate_words.find(Input::new(text).span(pos..gap_end)) else {
                    break;
                };
                let (ws, we) = line_of(m.start());
                lines.push((ws, we));
                pos = we + 1;
            }
            if let Some((ws, we)) = next {
                lines.push((ws, we));
                pos = we + 1;
            }
        }
        lines
    }
}

/// Byte classes for the token gate: 1 lower, 2 upper, 4 digit, 8 other token byte.
static TOKEN_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_lowercase() {
            1
        } else if c.is_ascii_uppercase() {
            2
        } else if c.is_ascii_digit() {
            4
        } else if matches!(c, b'_' | b'-' | b'+' | b'/' | b'=' | b'.' | b'~' | b'%') {
            8
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Mark every token that may be machine-made (push its position, and the end of its line);
/// see `gated_lines`. Such tokens hold a digit (those that do not are caught by the gate
/// words), so the text is screened 32 bytes at a time for digits, and only the tokens around
/// digits are measured.
pub(super) fn token_gate(text: &[u8], base: usize, marks: &mut Vec<(usize, usize)>) {
    const CHUNK: usize = 32;
    let mut i = 0;
    let n = text.len();
    while i < n {
        let end = (i + CHUNK).min(n);
        let chunk = &text[i..end];
        let any_digit = chunk.iter().fold(false, |acc, &b| acc | b.is_ascii_digit());
        if !any_digit {
            i = end;
            continue;
        }
        let Some(k) = chunk.iter().position(u8::is_ascii_digit) else {
            i = end;
            continue;
        };
        let d = i + k;
        // The token around the digit.
        let mut seen = 0u8;
        let mut start = d;
        while start > 0 && TOKEN_CLASS[usize::from(text[start - 1])] != 0 {
            start -= 1;
            seen |= TOKEN_CLASS[usize::from(text[start])];
        }
        let mut t = d;
        // Four bytes a step while four are left, then one at a time.
        'token: {
            while let Some(four) = text.get(t..t + 4) {
                for &b in four {
                    let class = TOKEN_CLASS[usize::from(b)];
                    if class == 0 {
                        break 'token;
                    }
                    seen |= class;
                    t += 1;
                }
            }
            while t < n && TOKEN_CLASS[usize::from(text[t])] != 0 {
                seen |= TOKEN_CLASS[usize::from(text[t])];
                t += 1;
            }
        }
        let stop = t.max(d);
        if stop - start >= 8 && qualifies(stop - start, seen) {
            // The rest of this line is already marked.
            let line_end = memchr(b'\n', &text[stop..]).map_or(n, |k| stop + k);
            marks.push((base + start, base + line_end));
            i = line_end + 1;
        } else {
            i = stop.max(d + 1);
        }
    }
}

fn qualifies(run: usize, seen: u8) -> bool {
    let letters = seen & 3 != 0;
    let digits = seen & 4 != 0;
    (letters && digits) || (run >= 16 && seen & 3 == 3) || (run >= 14 && seen == 4)
}
