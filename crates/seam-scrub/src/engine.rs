//! The compiled shape set and the single scanning pass.
//!
//! One Aho-Corasick automaton holds every keyword: the rules' prefixes (`ghp_`, `xoxb-`,
//! `AKIA`…), the credential words (`token`, `secret`, `password`…), the providers' names and
//! the block markers. Its DFA is re-encoded once as a flat table ([`KeywordTable`]) that the
//! scan walks itself, leftmost-longest, as the automaton's own iterator would. Each hit names
//! the rules to run, and each rule runs only on the line (the *window*) around the hit, at
//! most once per line. Blocks (PEM, PuTTY) are followed from their opening marker to their
//! closing one.
//!
//! Only the lines that pass a gate are searched: a line holding a token that may be
//! machine-made (found by a screen for digits) or one of a few gate words (a small SIMD
//! multi-literal search, run only between the lines the token screen already passed, and once
//! a line). Adjacent gated lines are searched as one stretch.
//!
//! The text is cut into *regions* first: a line longer than [`MAX_LINE`] is cut at a
//! whitespace near that length. Nothing is matched across a cut, and a streaming scrubber cuts
//! at the same places, which is what makes streaming give exactly the one-shot result.

use std::collections::HashMap;
use std::sync::LazyLock;

use aho_corasick::automaton::Automaton;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Anchored, Input, MatchKind};
use memchr::{memchr, memchr_iter, memrchr};
use regex::bytes::{Regex, RegexBuilder};

use crate::blocks::{self, Outcome};
use crate::context::{self, ContextHit};
use crate::known::{KNOWN_VALUE_SHAPE, KnownSet};
use crate::rules::{Check, RULES};
use crate::value;

/// The longest line scanned whole; longer lines are cut (see the module doc).
pub(crate) const MAX_LINE: usize = 32 * 1024;

/// The size of the keyword table (see [`KeywordTable::trans`]): 2^21 transitions, 8 MiB of
/// address space, of which the keyword set now fills about 4.5 MiB.
const TRANS_SLOTS: usize = 1 << 21;

/// How far back from [`MAX_LINE`] a cut looks for whitespace.
const CUT_SLACK: usize = 1024;

/// What a keyword hit asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Rule(u16),
    Context,
    Pem,
    Putty,
}

/// A redaction: byte range and shape, with the rank that decides which shape names a merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub shape: &'static str,
    pub rank: u16,
}

const RANK_KNOWN: u16 = 0;
const RANK_BLOCK: u16 = 1000;
const RANK_PASSWORD: u16 = 2000;
const RANK_PROVIDER: u16 = 2001;
const RANK_GENERIC: u16 = 2002;

/// A rule's regex, compiled at its first use: on most texts only a few rules' keywords ever
/// hit, and compiling all of them up front was a fifth of the cost of building the set (about
/// 70 of 340 million instructions), paid again by every short-lived process.
struct CompiledRule {
    regex: std::sync::OnceLock<Regex>,
    has_group: bool,
}

impl CompiledRule {
    fn regex(&self, i: usize) -> &Regex {
        self.regex.get_or_init(|| compile_rule(i))
    }
}

/// The regex of rule `i`.
fn compile_rule(i: usize) -> Regex {
    let rule = &RULES[i];
    RegexBuilder::new(rule.pattern)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("the built-in pattern of {} must compile: {e}", rule.id))
}

pub(crate) struct Engine {
    /// Every keyword, leftmost-longest: the DFA's table, walked by [`KeywordMatches`].
    keywords: KeywordTable,
    targets: Vec<Vec<Target>>,
    rules: Vec<CompiledRule>,
    /// The line gate's words (a small automaton: its prefilter is a SIMD multi-literal search).
    gate_words: AhoCorasick,
}

/// Words that make a line worth a full look even without a token that looks machine-made.
const GATE_WORDS: &[&str] = &[
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

/// Words that wake the context detector, besides the providers' names.
const CONTEXT_WORDS: &[&str] = &[
    "key",
    "token",
    "secret",
    "pass",
    "pwd",
    "auth",
    "cred",
    "bearer",
    "basic",
    "sig",
    "session",
    "cookie",
    "license",
    "AQAAABAAA",
];

/// `word`, `Word` and `WORD` for a lower-case word; the keyword itself otherwise.
fn case_variants(k: &str) -> Vec<String> {
    let wordy = k
        .bytes()
        .all(|b| b.is_ascii_lowercase() || matches!(b, b'_' | b' ' | b'-' | b'.'))
        && k.bytes().any(|b| b.is_ascii_lowercase());
    if !wordy {
        return vec![k.to_owned()];
    }
    let mut cap = k.to_owned();
    if let Some(first) = cap.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    vec![k.to_owned(), cap, k.to_ascii_uppercase()]
}

/// The keyword set: every keyword (sorted) and what its hit asks for.
fn keywords() -> (Vec<String>, Vec<Vec<Target>>) {
    let mut by_keyword: HashMap<String, Vec<Target>> = HashMap::new();
    let mut add = |k: &str, t: Target| {
        for v in case_variants(k) {
            let e = by_keyword.entry(v).or_default();
            if !e.contains(&t) {
                e.push(t);
            }
        }
    };
    for (i, rule) in RULES.iter().enumerate() {
        let i = u16::try_from(i).unwrap_or(u16::MAX);
        for k in rule.keywords {
            add(k, Target::Rule(i));
        }
    }
    for w in CONTEXT_WORDS {
        add(w, Target::Context);
    }
    for p in crate::providers::names() {
        add(p, Target::Context);
    }
    add("-----BEGIN ", Target::Pem);
    add("PuTTY-User-Key-File-", Target::Putty);
    let mut patterns: Vec<String> = by_keyword.keys().cloned().collect();
    patterns.sort();
    let targets = patterns.iter().map(|p| by_keyword[p].clone()).collect();
    (patterns, targets)
}

impl Engine {
    fn build() -> Engine {
        let (patterns, targets) = keywords();
        assert!(
            patterns.iter().all(|p| !p.is_empty() && !p.contains('\n')),
            "keywords are not empty and hold no line break"
        );
        let automaton = aho_corasick::dfa::Builder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .prefilter(false)
            .build(&patterns)
            .unwrap_or_else(|e| panic!("the built-in keyword set must compile: {e}"));
        let rules = RULES
            .iter()
            .map(|r| CompiledRule {
                regex: std::sync::OnceLock::new(),
                has_group: r.pattern.contains("(?P<s>"),
            })
            .collect();
        let gate_words = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostFirst)
            .build(GATE_WORDS)
            .unwrap_or_else(|e| panic!("the gate words must compile: {e}"));
        Engine {
            keywords: KeywordTable::build(automaton, &patterns),
            targets,
            rules,
            gate_words,
        }
    }

    /// The number of keywords in the automaton.
    pub(crate) fn keyword_count(&self) -> usize {
        self.targets.len()
    }

    /// Scan `text` (whose end is final) and return the merged redactions.
    pub(crate) fn scan(&self, text: &[u8], known: Option<&KnownSet>) -> Vec<Span> {
        let mut spans = Vec::new();
        let mut start = 0;
        let cuts = forced_cuts(text);
        for &cut in &cuts {
            self.scan_region(text, start, cut, &mut spans);
            start = cut;
        }
        self.scan_region(text, start, text.len(), &mut spans);
        // Known values are searched in the normalised text, whose matches may cross lines.
        if let Some(k) = known {
            spans.extend(k.find(text, &cuts).into_iter().map(|f| Span {
                start: f.start,
                end: f.end,
                shape: KNOWN_VALUE_SHAPE,
                rank: RANK_KNOWN,
            }));
        }
        merge(spans)
    }

    fn scan_region(&self, text: &[u8], rs: usize, re: usize, spans: &mut Vec<Span>) {
        let first = spans.len();
        let mut ran = vec![0u32; self.rules.len() + 1];
        let mut stamp = 0u32;
        let context_slot = self.rules.len();
        let mut context_hits: Vec<ContextHit> = Vec::new();
        let mut scratch = context::Scratch::for_text(re - rs);
        let lines = self.gated_lines(text, rs, re);
        // Adjacent gated lines are searched as one stretch: no keyword holds a line break, so
        // the matches are those of searching each line on its own; each match is then given
        // to its line.
        let mut at = 0;
        while at < lines.len() {
            let mut last = at;
            while last + 1 < lines.len() && lines[last + 1].0 == lines[last].1 + 1 {
                last += 1;
            }
            let (stretch_start, stretch_end) = (lines[at].0, lines[last].1);
            let mut line = at;
            stamp += 1;
            let mut matches = KeywordMatches {
                table: &self.keywords,
                text,
                at: stretch_start,
                end: stretch_end,
            };
            while let Some((pattern, p)) = matches.next_match() {
                if p > lines[line].1 {
                    while p > lines[line].1 {
                        line += 1;
                    }
                    stamp += 1;
                }
                let (ws, we) = lines[line];
                for &t in &self.targets[pattern] {
                    match t {
                        Target::Rule(i) => {
                            let i = usize::from(i);
                            if ran[i] != stamp {
                                ran[i] = stamp;
                                self.run_rule(i, text, ws, we, spans);
                            }
                        }
                        Target::Context => {
                            if ran[context_slot] != stamp {
                                ran[context_slot] = stamp;
                                context_hits.clear();
                                context::scan_line(&text[ws..we], &mut context_hits, &mut scratch);
                                spans.extend(context_hits.iter().map(|h| Span {
                                    start: ws + h.start,
                                    end: ws + h.end,
                                    shape: h.shape,
                                    rank: match h.shape {
                                        context::PASSWORD_SHAPE => RANK_PASSWORD,
                                        context::PROVIDER_SHAPE => RANK_PROVIDER,
                                        _ => RANK_GENERIC,
                                    },
                                }));
                            }
                        }
                        Target::Pem | Target::Putty => {
                            let outcome = if t == Target::Pem {
                                blocks::pem(text, p, re, false)
                            } else {
                                blocks::putty(text, p, re, false)
                            };
                            if let Outcome::Found { start, end, shape } = outcome {
                                spans.push(Span {
                                    start,
                                    end,
                                    shape,
                                    rank: RANK_BLOCK,
                                });
                            }
                        }
                    }
                }
            }
            at = last + 1;
        }
        Self::repeats(text, rs, re, &lines, first, spans);
    }

    /// The lines of `text[rs..re]` worth a full look, in order: those holding a token that may
    /// be machine-made (eight or more token bytes mixing letters and digits, sixteen or more
    /// mixing cases, fourteen or more digits) or one of the gate words. Every shape's secret
    /// is such a token or stands next to such a word, so the other lines are skipped whole.
    fn gated_lines(&self, text: &[u8], rs: usize, re: usize) -> Vec<(usize, usize)> {
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

    /// A secret found once on a line is a secret wherever else it stands on that line
    /// (`token = 'abc…' | 'abc…'`).
    #[inline(never)]
    fn repeats(
        text: &[u8],
        rs: usize,
        re: usize,
        lines: &[(usize, usize)],
        first: usize,
        spans: &mut Vec<Span>,
    ) {
        let found = spans.len();
        // The bounds of the last one-line span's line: the next spans are mostly on it.
        let mut cached: Option<(usize, usize)> = None;
        for k in first..found {
            let s = spans[k];
            if s.end - s.start < 8 {
                continue;
            }
            // The gated line the span starts on, if it ends there too (spans are found on
            // gated lines, so most are; the lines are in order).
            let gated = || {
                let g = lines.partition_point(|&(_, we)| we < s.start);
                lines
                    .get(g)
                    .copied()
                    .filter(|&(ws, we)| ws <= s.start && s.end <= we)
            };
            let known = match cached {
                Some((ls, le)) if ls <= s.start && s.end <= le => Some((ls, le)),
                _ => gated(),
            };
            let (ls, le) = match known {
                Some((ls, le)) => {
                    cached = Some((ls, le));
                    (ls, le)
                }
                None => {
                    let ls = memrchr(b'\n', &text[rs..s.start]).map_or(rs, |i| rs + i + 1);
                    let le = memchr(b'\n', &text[s.end..re]).map_or(re, |i| s.end + i);
                    // Only a line with no break inside the span is one line to reuse.
                    cached = memchr(b'\n', &text[s.start..s.end])
                        .is_none()
                        .then_some((ls, le));
                    (ls, le)
                }
            };
            let needle = &text[s.start..s.end];
            let line = &text[ls..le];
            if line.len() <= needle.len() {
                // The span is the whole line: nowhere else for it to stand.
                continue;
            }
            let (first_byte, second_byte) = (needle[0], needle[1]);
            for at in memchr_iter(first_byte, &line[..=line.len() - needle.len()]) {
                if line[at + 1] != second_byte || !line[at..].starts_with(needle) {
                    continue;
                }
                let at = ls + at;
                if at != s.start {
                    spans.push(Span {
                        start: at,
                        end: at + needle.len(),
                        ..s
                    });
                }
            }
        }
    }

    fn run_rule(&self, i: usize, text: &[u8], ws: usize, we: usize, spans: &mut Vec<Span>) {
        let rule = &RULES[i];
        let compiled = &self.rules[i];
        let window = &text[ws..we];
        if let Some(precheck) = rule.precheck
            && !precheck(window)
        {
            return;
        }
        let mut push = |s: usize, e: usize| {
            let secret = &window[s..e];
            if rule.bounded {
                let before = s.checked_sub(1).map(|k| window[k]);
                let after = window.get(e).copied();
                if before.is_some_and(|b| b.is_ascii_alphanumeric())
                    || after.is_some_and(|b| b.is_ascii_alphanumeric())
                {
                    return;
                }
            }
            if passes(rule.check, secret) {
                spans.push(Span {
                    start: ws + s,
                    end: ws + e,
                    shape: rule.id,
                    rank: u16::try_from(i + 1).unwrap_or(u16::MAX),
                });
            }
        };
        let regex = compiled.regex(i);
        if compiled.has_group {
            for caps in regex.captures_iter(window) {
                if let Some(g) = caps.name("s") {
                    push(g.start(), g.end());
                }
            }
        } else {
            for m in regex.find_iter(window) {
                push(m.start(), m.end());
            }
        }
    }
}

/// The keyword DFA re-encoded as one flat table that the walk reads with plain indexing.
/// Every transition is the DFA's own (asked of it once, state by state, when the table is
/// built), so the walk sees exactly the DFA's states; only their numbering changes: a state
/// is the offset of its row, the dead state is row 0 and the match states come right after
/// it, so one comparison tells an ordinary state from one that needs a look.
struct KeywordTable {
    /// The column of each byte: bytes in no keyword all share column 0 (no state can tell
    /// them apart), every other byte has a column of its own.
    columns: [u8; 256],
    /// The number of columns (the walk reads rows by offset, and finds rows by `row`).
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests"))]
    stride: usize,
    /// The transitions, row after row, in a table of a fixed power-of-two size: an offset
    /// masked to that size is known to be in it, so the walk's look-up needs no bounds
    /// check. Only the rows' part is touched (the rest stays unmapped zero pages).
    trans: Box<[u32; TRANS_SLOTS]>,
    start: u32,
    /// States at or below this are the dead state (0) or match states.
    last_special: u32,
    /// For each match state, by row: the keyword it ends and the keyword's length.
    hits: Vec<(u32, u32)>,
    /// The row of a state is its offset divided by the stride, an exact division, done as
    /// a shift by the stride's factors of two and a multiplication by the inverse of its odd
    /// part (modulo 2^32), rather than by a division at every hit.
    row_shift: u32,
    row_inverse: u32,
}

impl KeywordTable {
    /// The shift and the inverse that divide a multiple of `stride` by it (see `row`).
    fn exact_division(stride: usize) -> (u32, u32) {
        let shift = stride.trailing_zeros();
        let odd = u32::try_from(stride >> shift)
            .unwrap_or_else(|_| panic!("the keyword table's stride fits in 32 bits"));
        // Newton's iteration doubles the correct low bits each step: 3, 6, 12, 24, 48.
        let mut inverse = odd;
        for _ in 0..4 {
            inverse = inverse.wrapping_mul(2u32.wrapping_sub(odd.wrapping_mul(inverse)));
        }
        (shift, inverse)
    }

    /// The row of `state` (the offset of a row, so a multiple of the stride).
    fn row(&self, state: usize) -> usize {
        // Offsets fit in 32 bits (checked when the table is built).
        let shifted = (state >> self.row_shift) as u32;
        shifted.wrapping_mul(self.row_inverse) as usize
    }

    fn build(dfa: aho_corasick::dfa::DFA, patterns: &[String]) -> KeywordTable {
        let mut used = [false; 256];
        for p in patterns {
            for &b in p.as_bytes() {
                used[usize::from(b)] = true;
            }
        }
        let mut columns = [0u8; 256];
        let mut representative = vec![0u8];
        for b in 0..=255u8 {
            if used[usize::from(b)] {
                columns[usize::from(b)] = u8::try_from(representative.len())
                    .unwrap_or_else(|_| panic!("at most 255 distinct keyword bytes"));
                representative.push(b);
            }
        }
        // A byte in no keyword stands for column 0 (there is one: keywords are ASCII).
        representative[0] = (0..=255u8)
            .find(|&b| columns[usize::from(b)] == 0)
            .unwrap_or_else(|| panic!("some byte is in no keyword"));
        let stride = representative.len();
        // Every state reachable from the start, breadth first.
        let start = dfa
            .start_state(Anchored::No)
            .unwrap_or_else(|e| panic!("the keyword DFA supports unanchored search: {e}"));
        let mut index: HashMap<usize, u32, std::hash::BuildHasherDefault<StateIdHasher>> =
            HashMap::default();
        index.insert(start.as_usize(), 0);
        let mut states = vec![start];
        let mut next: Vec<u32> = Vec::new();
        let mut k = 0;
        while k < states.len() {
            let sid = states[k];
            for &b in &representative {
                let to = dfa.next_state(Anchored::No, sid, b);
                let n =
                    u32::try_from(states.len()).unwrap_or_else(|_| panic!("keyword DFA too large"));
                let i = *index.entry(to.as_usize()).or_insert(n);
                if i == n {
                    states.push(to);
                }
                next.push(i);
            }
            k += 1;
        }
        drop(index);
        // Rows: the dead state, the match states, the others.
        let rank = |sid: aho_corasick::automaton::StateID| {
            if dfa.is_dead(sid) {
                0
            } else if dfa.is_match(sid) {
                1
            } else {
                2
            }
        };
        let ranks: Vec<u8> = states.iter().map(|&sid| rank(sid)).collect();
        // What each match state ends: the keyword and its length.
        let ends: Vec<(u32, u32)> = states
            .iter()
            .zip(&ranks)
            .map(|(&sid, &r)| {
                if r != 1 {
                    return (0, 0);
                }
                let pattern = dfa.match_pattern(sid, 0);
                (
                    u32::try_from(pattern.as_usize()).unwrap_or(u32::MAX),
                    u32::try_from(dfa.pattern_len(pattern)).unwrap_or(u32::MAX),
                )
            })
            .collect();
        // The DFA is no longer needed: let its memory go before the table's is taken.
        let state_count = states.len();
        drop(states);
        drop(dfa);
        let mut order: Vec<usize> = Vec::with_capacity(state_count + 1);
        for r in 0..3 {
            order.extend((0..state_count).filter(|&i| ranks[i] == r));
        }
        if ranks[order[0]] != 0 {
            // No dead state is reachable (it always is for leftmost search); keep row 0 one.
            order.insert(0, usize::MAX);
        }
        let mut row = vec![0usize; state_count];
        for (r, &i) in order.iter().enumerate() {
            if i != usize::MAX {
                row[i] = r;
            }
        }
        let id = |i: usize| {
            u32::try_from(row[i] * stride).unwrap_or_else(|_| panic!("keyword table too large"))
        };
        assert!(
            order.len() * stride <= TRANS_SLOTS,
            "the keyword table needs {} slots, more than the {TRANS_SLOTS} it has",
            order.len() * stride
        );
        let mut trans: Box<[u32; TRANS_SLOTS]> = vec![0u32; TRANS_SLOTS]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| panic!("a boxed slice of the table's size"));
        let mut hits = vec![(0u32, 0u32); order.len()];
        let mut last_special = 0;
        for i in 0..state_count {
            let r = row[i];
            for c in 0..stride {
                trans[r * stride + c] = id(next[i * stride + c] as usize);
            }
            if ranks[i] == 1 {
                hits[r] = ends[i];
                last_special = last_special.max(id(i));
            }
        }
        if ranks[order[0]] == 0 {
            // The dead state's row: it stays dead.
            trans[..stride].fill(0);
        }
        let (row_shift, row_inverse) = Self::exact_division(stride);
        KeywordTable {
            columns,
            stride,
            trans,
            start: id(0),
            last_special,
            hits,
            row_shift,
            row_inverse,
        }
    }
}

/// Hashes the DFA's state ids (distinct integers) while the table is built: one
/// multiplication, where the default hasher spends a hundred instructions.
#[derive(Default)]
struct StateIdHasher(u64);

impl std::hash::Hasher for StateIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        // Ids are multiples of a power of two: fold the well-mixed high bits down.
        let h = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// The keyword hits in `text[at..end]`, leftmost-longest and not overlapping, as the
/// automaton's own iterator gives them (the same walk: from the start state to the dead
/// state or the end, the last match seen is the hit, and the next walk starts where it
/// ends), with none of the iterator's per-hit set-up.
struct KeywordMatches<'a> {
    table: &'a KeywordTable,
    text: &'a [u8],
    at: usize,
    end: usize,
}

impl KeywordMatches<'_> {
    /// The next hit: its pattern index and where it starts. Kept out of line: the walk is
    /// the hottest loop of the scan and wants the registers to itself.
    #[inline(never)]
    fn next_match(&mut self) -> Option<(usize, usize)> {
        let t = self.table;
        // The table's parts in locals, so that the loop keeps them in registers.
        let (trans, columns) = (&*t.trans, &t.columns);
        let last_special = t.last_special as usize;
        let hay = &self.text[self.at..self.end];
        let mut state = t.start as usize;
        let mut k = 0;
        // The last match state seen (0: none yet) and the end of its match.
        let mut hit = (0usize, 0usize);
        let step =
            // (The mask changes no offset: every one is below the table's size.)
            |state: usize, b: u8| {
                trans[(state + usize::from(columns[usize::from(b)])) & (TRANS_SLOTS - 1)] as usize
            };
        'walk: loop {
            // Ordinary states need nothing but the next step: four at a time while four bytes
            // are left, then one at a time.
            'special: {
                while let Some(four) = hay.get(k..k + 4) {
                    let four: [u8; 4] = [four[0], four[1], four[2], four[3]];
                    for (n, b) in four.into_iter().enumerate() {
                        state = step(state, b);
                        if state <= last_special {
                            k += n + 1;
                            break 'special;
                        }
                    }
                    k += 4;
                }
                loop {
                    let Some(&b) = hay.get(k) else {
                        break 'walk;
                    };
                    state = step(state, b);
                    k += 1;
                    if state <= last_special {
                        break 'special;
                    }
                }
            }
            if state == 0 {
                break;
            }
            hit = (state, k);
        }
        let (state, end) = hit;
        if state == 0 {
            return None;
        }
        let (pattern, len) = t.hits[t.row(state)];
        let end = self.at + end;
        let (pattern, start) = (pattern as usize, end - len as usize);
        self.at = end;
        Some((pattern, start))
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
fn token_gate(text: &[u8], base: usize, marks: &mut Vec<(usize, usize)>) {
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

/// Whether a match passes its rule's check.
pub(crate) fn passes(check: Check, secret: &[u8]) -> bool {
    match check {
        Check::Format => true,
        Check::NotPlaceholder => !value::is_placeholder(secret),
        Check::Random => value::looks_random(secret),
        Check::GithubChecksum => {
            github_checksum_ok(secret)
                || (!value::is_placeholder(secret) && value::looks_random(secret))
        }
        Check::PlainPassword => {
            secret.len() >= 4
                && !value::is_variable_reference(secret)
                && !value::is_placeholder(secret)
                && !secret.starts_with(b"<")
        }
        Check::PasswordLike => value::credential_value(secret, true),
        Check::UserPassword => {
            let Some(colon) = secret.iter().position(|&b| b == b':') else {
                return false;
            };
            let (user, password) = (&secret[..colon], &secret[colon + 1..]);
            if password.is_empty() {
                return value::credential_value(user, true);
            }
            // The user may be empty (`redis://:pw@`, `curl -u :pw`) or a variable (`curl -u
            // "$USER:pw"`): the password alone decides.
            password != user
                && password.len() >= 3
                && !value::is_variable_reference(password)
                && !value::is_placeholder(password)
                && !password.starts_with(b"<")
        }
    }
}

/// GitHub tokens end in six base-62 characters of the CRC32 of the 30 before them.
pub(crate) fn github_checksum_ok(token: &[u8]) -> bool {
    const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    if token.len() != 40 || token.get(3) != Some(&b'_') {
        return false;
    }
    let (body, check) = (&token[4..34], &token[34..40]);
    let mut n = crc32(body);
    let mut digits = [b'0'; 6];
    for d in digits.iter_mut().rev() {
        *d = B62[(n % 62) as usize];
        n /= 62;
    }
    n == 0 && digits == *check
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// Where a line starting at `s` (and longer than [`MAX_LINE`] from `s`) is cut: after the last
/// whitespace in the final [`CUT_SLACK`] bytes before `s + MAX_LINE`, or at `s + MAX_LINE`
/// moved back to a UTF-8 character boundary.
pub(crate) fn next_cut(text: &[u8], s: usize) -> usize {
    let hard = s + MAX_LINE;
    let from = hard - CUT_SLACK;
    if let Some(i) = text[from..hard]
        .iter()
        .rposition(|b| matches!(b, b' ' | b'\t'))
    {
        return from + i + 1;
    }
    let mut cut = hard;
    while cut > s + 1 && (text[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    cut
}

/// The forced cuts of `text`. If the text's last line may continue, the cuts found in it are
/// still cuts of the longer line: each depends only on the [`MAX_LINE`] bytes after the one
/// before.
pub(crate) fn forced_cuts(text: &[u8]) -> Vec<usize> {
    // From each line start or cut `s`: if a line break stands within MAX_LINE bytes, every
    // line up to the last such break is short enough, and the next one starts after it;
    // otherwise the line from `s` is too long and is cut. So the text is read a window of
    // MAX_LINE bytes at a time, from its end (`memrchr`), not line by line.
    let mut cuts = Vec::new();
    let mut s = 0;
    while text.len() - s > MAX_LINE {
        match memrchr(b'\n', &text[s..=s + MAX_LINE]) {
            Some(i) => s += i + 1,
            None => {
                let c = next_cut(text, s);
                cuts.push(c);
                s = c;
            }
        }
    }
    cuts
}

/// Sort and merge overlapping spans; the merged span keeps the best-ranked shape.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        if s.end <= s.start {
            continue;
        }
        match out.last_mut() {
            Some(last) if s.start < last.end => {
                last.end = last.end.max(s.end);
                if s.rank < last.rank {
                    last.rank = s.rank;
                    last.shape = s.shape;
                }
            }
            _ => out.push(s),
        }
    }
    out
}

pub(crate) static ENGINE: LazyLock<Engine> = LazyLock::new(Engine::build);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_pattern_compiles_and_is_compiled_once() {
        // Rules compile at first use, so a bad pattern would only show on a text that wakes
        // it: compile every one here.
        let engine = &*ENGINE;
        for (i, rule) in RULES.iter().enumerate() {
            let first: *const Regex = engine.rules[i].regex(i);
            let again: *const Regex = engine.rules[i].regex(i);
            assert_eq!(first, again, "{}", rule.id);
            assert_eq!(engine.rules[i].regex(i).as_str(), rule.pattern);
        }
    }

    #[test]
    fn github_checksum_is_verified() {
        assert!(github_checksum_ok(
            b"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"
        ));
        assert!(!github_checksum_ok(
            b"ghp_wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUy"
        ));
    }

    #[test]
    fn rows_are_found_by_exact_division() {
        for stride in [1usize, 2, 3, 8, 9, 72, 73, 100, 255, 256] {
            let (shift, inverse) = KeywordTable::exact_division(stride);
            for row in [0usize, 1, 2, 17, 1000, 15_747, 40_000] {
                let state = row * stride;
                let got = ((state >> shift) as u32).wrapping_mul(inverse) as usize;
                assert_eq!(got, row, "stride {stride}, row {row}");
            }
        }
        let t = &ENGINE.keywords;
        for row in 0..=t.last_special as usize / t.stride {
            assert_eq!(t.row(row * t.stride), row);
        }
    }

    #[test]
    fn overlapping_spans_merge_and_keep_the_best_shape() {
        let spans = vec![
            Span {
                start: 5,
                end: 10,
                shape: "generic-assignment",
                rank: RANK_GENERIC,
            },
            Span {
                start: 0,
                end: 7,
                shape: "aws-access-key-id",
                rank: 1,
            },
            Span {
                start: 20,
                end: 25,
                shape: "jwt",
                rank: 3,
            },
        ];
        let merged = merge(spans);
        assert_eq!(merged.len(), 2);
        assert_eq!(
            (merged[0].start, merged[0].end, merged[0].shape),
            (0, 10, "aws-access-key-id")
        );
    }

    /// The forced cuts as first written: every line, one at a time.
    fn forced_cuts_line_by_line(text: &[u8]) -> Vec<usize> {
        let mut cuts = Vec::new();
        if text.len() <= MAX_LINE {
            return cuts;
        }
        let mut line_start = 0;
        let ends = memchr_iter(b'\n', text).chain(std::iter::once(text.len()));
        for nl in ends {
            let mut s = line_start;
            while nl - s > MAX_LINE {
                let c = next_cut(text, s);
                cuts.push(c);
                s = c;
            }
            line_start = nl + 1;
        }
        cuts
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        #[test]
        fn forced_cuts_are_those_of_the_line_by_line_walk(
            lines in proptest::collection::vec(
                (0usize..3 * MAX_LINE, 0usize..3, proptest::prelude::any::<u8>()),
                0..12,
            )
        ) {
            // Lines around MAX_LINE long, with no, few or many spaces to cut at.
            let mut text = Vec::new();
            for (len, spaces, seed) in lines {
                let len = if seed % 3 == 0 { MAX_LINE - 2 + usize::from(seed % 5) } else { len };
                let every = [0usize, 700, 9][spaces];
                text.extend((0..len).map(|i| {
                    if every > 0 && (i + usize::from(seed)) % every == 0 { b' ' } else { b'x' }
                }));
                text.push(b'\n');
            }
            proptest::prop_assert_eq!(forced_cuts(&text), forced_cuts_line_by_line(&text));
            text.pop();
            proptest::prop_assert_eq!(forced_cuts(&text), forced_cuts_line_by_line(&text));
        }
    }

    /// The scan as first written: the gate's marks sorted into lines, and the keyword
    /// automaton run on each line on its own.
    fn scan_line_by_line(engine: &Engine, text: &[u8]) -> Vec<Span> {
        let mut spans = Vec::new();
        let mut bounds = vec![0];
        bounds.extend(forced_cuts_line_by_line(text));
        bounds.push(text.len());
        for w in bounds.windows(2) {
            let (rs, re) = (w[0], w[1]);
            let mut gate_marks: Vec<(usize, usize)> = Vec::new();
            token_gate(&text[rs..re], rs, &mut gate_marks);
            let mut marks: Vec<usize> = gate_marks.iter().map(|&(p, _)| p).collect();
            marks.extend(
                engine
                    .gate_words
                    .find_iter(Input::new(text).span(rs..re))
                    .map(|m| m.start()),
            );
            marks.sort_unstable();
            let mut lines: Vec<(usize, usize)> = Vec::new();
            for p in marks {
                if lines.last().is_some_and(|&(_, e)| p <= e) {
                    continue;
                }
                let ws = memrchr(b'\n', &text[rs..p]).map_or(rs, |i| rs + i + 1);
                let we = memchr(b'\n', &text[p..re]).map_or(re, |i| p + i);
                lines.push((ws, we));
            }
            let first = spans.len();
            for (ws, we) in lines {
                let mut ran = vec![false; engine.rules.len() + 1];
                for m in KEYWORDS_AC.find_iter(Input::new(text).span(ws..we)) {
                    for &t in &engine.targets[m.pattern().as_usize()] {
                        match t {
                            Target::Rule(i) => {
                                let i = usize::from(i);
                                if !std::mem::replace(&mut ran[i], true) {
                                    engine.run_rule(i, text, ws, we, &mut spans);
                                }
                            }
                            Target::Context => {
                                if !std::mem::replace(&mut ran[engine.rules.len()], true) {
                                    let mut hits = Vec::new();
                                    context::scan_line(
                                        &text[ws..we],
                                        &mut hits,
                                        &mut context::Scratch::default(),
                                    );
                                    spans.extend(hits.iter().map(|h| Span {
                                        start: ws + h.start,
                                        end: ws + h.end,
                                        shape: h.shape,
                                        rank: match h.shape {
                                            context::PASSWORD_SHAPE => RANK_PASSWORD,
                                            context::PROVIDER_SHAPE => RANK_PROVIDER,
                                            _ => RANK_GENERIC,
                                        },
                                    }));
                                }
                            }
                            Target::Pem | Target::Putty => {
                                let outcome = if t == Target::Pem {
                                    blocks::pem(text, m.start(), re, false)
                                } else {
                                    blocks::putty(text, m.start(), re, false)
                                };
                                if let Outcome::Found { start, end, shape } = outcome {
                                    spans.push(Span {
                                        start,
                                        end,
                                        shape,
                                        rank: RANK_BLOCK,
                                    });
                                }
                            }
                        }
                    }
                }
            }
            repeats_span_by_span(text, rs, re, first, &mut spans);
        }
        merge(spans)
    }

    /// The repeats as first written: each span's line found anew, every place its first
    /// byte stands tried.
    fn repeats_span_by_span(
        text: &[u8],
        rs: usize,
        re: usize,
        first: usize,
        spans: &mut Vec<Span>,
    ) {
        let found = spans.len();
        for k in first..found {
            let s = spans[k];
            if s.end - s.start < 8 {
                continue;
            }
            let ls = memrchr(b'\n', &text[rs..s.start]).map_or(rs, |i| rs + i + 1);
            let le = memchr(b'\n', &text[s.end..re]).map_or(re, |i| s.end + i);
            let needle = &text[s.start..s.end];
            let line = &text[ls..le];
            for at in memchr_iter(needle[0], line) {
                if !line[at..].starts_with(needle) {
                    continue;
                }
                let at = ls + at;
                if at != s.start {
                    spans.push(Span {
                        start: at,
                        end: at + needle.len(),
                        ..s
                    });
                }
            }
        }
    }

    /// The keyword set in the automaton's own searcher.
    static KEYWORDS_AC: LazyLock<AhoCorasick> = LazyLock::new(|| {
        AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(keywords().0)
            .expect("the keyword set compiles")
    });

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        #[test]
        fn keyword_hits_are_the_automaton_iterator_s(
            picks in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(keywords().0),
                    "[a-zA-Z_ .:/=-]{0,6}",
                ],
                0..30,
            ),
            from in 0usize..8,
        ) {
            let text = picks.concat().into_bytes();
            let from = from.min(text.len());
            let mut ours = Vec::new();
            let mut matches = KeywordMatches { table: &ENGINE.keywords, text: &text, at: from, end: text.len() };
            while let Some((pattern, start)) = matches.next_match() {
                ours.push((pattern, start));
            }
            let theirs: Vec<(usize, usize)> = KEYWORDS_AC
                .find_iter(Input::new(&text).span(from..text.len()))
                .map(|m| (m.pattern().as_usize(), m.start()))
                .collect();
            proptest::prop_assert_eq!(ours, theirs);
        }

        #[test]
        fn the_scan_finds_what_the_line_by_line_scan_finds(
            picks in proptest::collection::vec(0..PIECES.len(), 0..40),
        ) {
            let text: Vec<u8> = picks.iter().flat_map(|&i| PIECES[i].bytes()).collect();
            proptest::prop_assert_eq!(ENGINE.scan(&text, None), scan_line_by_line(&ENGINE, &text));
        }
    }

    /// Lines with and without gate words, machine-made tokens, keywords and secrets.
    const PIECES: &[&str] = &[
        "\n",
        "\n",
        "plain words here ",
        "the key is ",
        "token = ",
        "'kxbj4b6u2iazvhc8n6b3oz0j5x6nrpyy' ",
        "AKIAZDOCIS2JHTLGMXGE ",
        "password: Zq8v2LkP9sXw ",
        "stripe ",
        "cloudimage: d__9rvli8sm4jo18v5q0q4n7vhkwbv ",
        "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 ",
        "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD ",
        "https://user:Zq8v2LkP9sXw@example.org/x ",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----",
        "build 20231105 ok ",
        "v1.2.3 ",
        "Zq-vLkPsXw ",
        "ipinfo token = '3ff77bb6fe6885' | '3ff77bb6fe6885' ",
        "3ff77bb6fe68853ff77bb6fe6885 ",
    ];

    #[test]
    fn long_lines_are_cut_at_whitespace() {
        let mut text = "word ".repeat(MAX_LINE / 5 + 100).into_bytes();
        text.push(b'\n');
        let cuts = forced_cuts(&text);
        assert_eq!(cuts.len(), 1);
        assert_eq!(text[cuts[0] - 1], b' ');
    }
}
