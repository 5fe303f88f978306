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
//!
//! Its parts: the keyword table and its walk (`keywords`), the line gate (`gate`: the token
//! gate and the gate words) and the checks a rule's match must pass (`checks`); the scan that
//! puts them together is here.

use std::collections::HashMap;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use memchr::{memchr, memchr_iter, memrchr};
use regex::bytes::{Regex, RegexBuilder};

mod checks;
mod gate;
mod keywords;

use checks::passes;
use gate::GATE_WORDS;
use keywords::{KeywordMatches, KeywordTable};

use crate::blocks::{self, Outcome};
use crate::context::{self, ContextHit};
use crate::known::{KNOWN_VALUE_SHAPE, KnownSet};
use crate::rules::RULES;

/// The longest line scanned whole; longer lines are cut (see the module doc).
pub(crate) const MAX_LINE: usize = 32 * 1024;

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
    use aho_corasick::Input;

    use super::gate::token_gate;
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

    /// The keyword set in the automaton's own searcher (the keyword table's tests hold its
    /// walk to it too).
    pub(super) static KEYWORDS_AC: LazyLock<AhoCorasick> = LazyLock::new(|| {
        AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(keywords().0)
            .expect("the keyword set compiles")
    });

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

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
