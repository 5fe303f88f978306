//! The keyword table: the keyword automaton's DFA re-encoded as one flat table, and the walk
//! over it that gives the automaton's own leftmost-longest hits.

use std::collections::HashMap;

use aho_corasick::Anchored;
use aho_corasick::automaton::Automaton;

/// The size of the keyword table (see [`KeywordTable::trans`]): 2^21 transitions, 8 MiB of
/// address space, of which the keyword set now fills about 4.5 MiB.
const TRANS_SLOTS: usize = 1 << 21;

/// The keyword DFA re-encoded as one flat table that the walk reads with plain indexing.
/// Every transition is the DFA's own (asked of it once, state by state, when the table is
/// built), so the walk sees exactly the DFA's states; only their numbering changes: a state
/// is the offset of its row, the dead state is row 0 and the match states come right after
/// it, so one comparison tells an ordinary state from one that needs a look.
///
/// Why not walk the DFA through the automaton's own iterator (`Automaton::try_find_iter`),
/// which finds the same hits: its search is generic, a bounds-checked look-up a byte and a
/// search set up again for every hit (a new span, the start state asked for, the hit's pattern
/// and length read through the automaton), where this walk reads its table with no bounds
/// check (the table's size is a power of two), four bytes a step, one comparison a byte, and
/// finds a hit's pattern and length in the hit's row; the table also holds less (4.5 MB; the
/// DFA it is read from took 8.2 MB, and is dropped once read).
///
/// Measured on the crate's bench texts (`benches/scrub.rs`, one scrub of each under
/// callgrind: the bench binary run with `--test`), the whole scrub with this walk against the
/// same scan with the iterator's: ordinary text (16 MiB) 223.2 against 240.9 million
/// instructions (7% fewer), secret-dense text (50 MiB) 4,346 against 4,800 million (9.5%
/// fewer); the scrubbed output is the same. Wall-clock runs of `cargo bench`, interleaved,
/// on a machine at load 3 to 5 of 2 cores, moved more between two runs of one build than
/// between the builds, so they give no figure.
pub(super) struct KeywordTable {
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

    pub(super) fn build(dfa: aho_corasick::dfa::DFA, patterns: &[String]) -> KeywordTable {
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
pub(super) struct KeywordMatches<'a> {
    pub(super) table: &'a KeywordTable,
    pub(super) text: &'a [u8],
    pub(super) at: usize,
    pub(super) end: usize,
}

impl KeywordMatches<'_> {
    /// The next hit: its pattern index and where it starts. Kept out of line: the walk is
    /// the hottest loop of the scan and wants the registers to itself.
    #[inline(never)]
    pub(super) fn next_match(&mut self) -> Option<(usize, usize)> {
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

#[cfg(test)]
mod tests {
    use aho_corasick::Input;

    use super::*;
    use crate::engine::tests::KEYWORDS_AC;
    use crate::engine::{ENGINE, keywords};

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
    }
}
