//! `head` and `clip` against a plain oracle: the text as a vector of characters; `head_bytes`
//! and `tail_bytes` against one that tries every character boundary.

use proptest::prelude::*;

/// The oracle: the text's characters, the first `max` of them kept.
fn oracle(text: &str, max: usize, marker: &str) -> (String, bool) {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        (text.to_owned(), false)
    } else {
        let mut kept: String = chars[..max].iter().collect();
        kept.push_str(marker);
        (kept, true)
    }
}

/// The byte oracle: of the text's character boundaries, the last one within `max` bytes of
/// the start (or, for the tail, the first one within `max` bytes of the end).
fn bytes_oracle(text: &str, max: usize) -> (&str, &str) {
    let mut bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    bounds.push(text.len());
    let end = bounds
        .iter()
        .copied()
        .filter(|&b| b <= max)
        .max()
        .unwrap_or(0);
    let start = bounds
        .iter()
        .copied()
        .filter(|&b| text.len() - b <= max)
        .min()
        .unwrap_or(text.len());
    (&text[..end], &text[start..])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn byte_budgets_are_the_oracle(text in "\\PC{0,40}", max in 0usize..170) {
        let (head, tail) = bytes_oracle(&text, max);
        prop_assert_eq!(seam_term::head_bytes(&text, max), head);
        prop_assert_eq!(seam_term::tail_bytes(&text, max), tail);
        prop_assert!(head.len() <= max && tail.len() <= max);
    }

    #[test]
    fn clip_is_the_oracle(text in "\\PC{0,40}", max in 0usize..50, marker in "(…|\\.\\.\\.|)") {
        let (want, cut) = oracle(&text, max, &marker);
        prop_assert_eq!(seam_term::clip(&text, max, &marker), want.as_str());
        let (kept, was_cut) = seam_term::head(&text, max);
        prop_assert_eq!(was_cut, cut);
        let (want_kept, _) = oracle(&text, max, "");
        prop_assert_eq!(kept, want_kept.as_str());
        prop_assert!(text.starts_with(kept));
        prop_assert!(kept.chars().count() <= max);
    }
}

#[test]
fn a_character_is_never_split() {
    for max in 0..6 {
        let (kept, _) = seam_term::head("a€😀é\u{301}z", max);
        assert_eq!(kept.chars().count(), max.min(6), "{kept:?}");
    }
    assert_eq!(seam_term::clip("", 0, "…"), "");
    assert_eq!(seam_term::clip("a", 0, "…"), "…");
}
