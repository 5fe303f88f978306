//! Properties of the terminal filter on arbitrary input.

use proptest::collection::vec;
use proptest::prelude::*;
use seam_term::{Mode, TerminalFilter, is_shown_escaped, on_one_line, unescape, visible};

/// Bytes biased towards the interesting ones: controls, backslashes, escape letters, UTF-8 lead
/// and continuation bytes, and whole encodings of escaped characters.
fn tricky_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => any::<u8>().prop_map(|b| vec![b]),
        2 => prop::sample::select(b"\\xuntr{}\x1b\r\n\t\x7f ".to_vec()).prop_map(|b| vec![b]),
        2 => any::<char>().prop_map(|c| c.to_string().into_bytes()),
        1 => prop::sample::select(vec![
            '\u{85}', '\u{9b}', '\u{ad}', '\u{202e}', '\u{2066}', '\u{200b}', '\u{feff}',
            '\u{e0041}', '\u{2028}', '\u{fe0f}', '\u{3164}', '\u{ffff}',
        ])
        .prop_map(|c| c.to_string().into_bytes()),
        1 => "[a-z ]{1,40}".prop_map(String::into_bytes),
    ];
    vec(piece, 0..64).prop_map(|pieces| pieces.concat())
}

/// Characters that are shown as themselves: printable, not a backslash, not escaped.
fn plain_char() -> impl Strategy<Value = char> {
    any::<char>().prop_filter("shown as itself", |&c| {
        c != '\\' && !c.is_ascii_control() && !is_shown_escaped(c, Mode::OneLine)
    })
}

/// The invariant every output holds: nothing a terminal acts on, nothing invisible.
fn assert_safe(shown: &str, mode: Mode) {
    for c in shown.chars() {
        let layout = mode == Mode::Visible && (c == '\n' || c == '\t');
        assert!(
            layout || !c.is_control(),
            "control U+{:04X} in {shown:?}",
            u32::from(c)
        );
        assert!(
            !is_shown_escaped(c, mode),
            "escaped character U+{:04X} left in {shown:?}",
            u32::from(c)
        );
    }
    if mode == Mode::OneLine {
        assert!(!shown.contains(['\n', '\t', '\r']));
    }
}

fn filter_in_chunks(mode: Mode, input: &[u8], cuts: &[usize]) -> String {
    let mut filter = TerminalFilter::new(mode);
    let mut out = String::new();
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    cuts.sort_unstable();
    let mut start = 0;
    for cut in cuts {
        filter.push(&input[start..cut], &mut out);
        start = cut;
    }
    filter.push(&input[start..], &mut out);
    filter.finish(&mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn output_is_safe_in_both_modes(input in tricky_bytes()) {
        assert_safe(&visible(&input), Mode::Visible);
        assert_safe(&on_one_line(&input), Mode::OneLine);
    }

    #[test]
    fn any_bytes_are_safe(input in vec(any::<u8>(), 0..256)) {
        assert_safe(&visible(&input), Mode::Visible);
        assert_safe(&on_one_line(&input), Mode::OneLine);
    }

    #[test]
    fn one_line_output_is_visible_output_with_layout_shown(input in tricky_bytes()) {
        // The two modes differ only in how newline and tab are shown.
        let shown = visible(&input);
        let expected = shown.replace('\n', "\\n").replace('\t', "\\t");
        prop_assert_eq!(on_one_line(&input), expected);
    }

    #[test]
    fn plain_text_passes_unchanged(text in proptest::collection::vec(plain_char(), 0..200)) {
        let text: String = text.into_iter().collect();
        prop_assert_eq!(&visible(text.as_bytes()), &text);
        prop_assert_eq!(&on_one_line(text.as_bytes()), &text);
    }

    #[test]
    fn plain_text_with_layout_passes_visible_unchanged(
        lines in vec(vec(plain_char(), 0..40), 0..10)
    ) {
        let text = lines
            .into_iter()
            .map(|line| line.into_iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("\n\t");
        prop_assert_eq!(visible(text.as_bytes()), text);
    }

    #[test]
    fn streaming_equals_one_shot_for_any_chunking(
        input in tricky_bytes(),
        cuts in vec(any::<usize>(), 0..12),
    ) {
        prop_assert_eq!(filter_in_chunks(Mode::Visible, &input, &cuts), visible(&input));
        prop_assert_eq!(filter_in_chunks(Mode::OneLine, &input, &cuts), on_one_line(&input));
    }

    #[test]
    fn unescape_recovers_the_input(input in tricky_bytes()) {
        prop_assert_eq!(unescape(&visible(&input)).unwrap(), input.clone());
        prop_assert_eq!(unescape(&on_one_line(&input)).unwrap(), input);
    }

    #[test]
    fn different_inputs_are_shown_differently(a in tricky_bytes(), b in tricky_bytes()) {
        prop_assume!(a != b);
        prop_assert_ne!(visible(&a), visible(&b));
        prop_assert_ne!(on_one_line(&a), on_one_line(&b));
    }
}
