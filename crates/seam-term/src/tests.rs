//! Unit tests: one per class of input, the table cross-checks, and every split point.

use super::*;
use unicode_general_category::{GeneralCategory, get_general_category};

fn both(input: &[u8]) -> (String, String) {
    (visible(input), on_one_line(input))
}

#[test]
fn plain_ascii_passes_unchanged() {
    let text = "cargo build --release: Compiling seam v0.1.0 (100%) [ok] {a=1; b=\"x\"} ~/#!";
    assert_eq!(visible(text.as_bytes()), text);
    assert_eq!(on_one_line(text.as_bytes()), text);
}

#[test]
fn every_c0_control_is_shown_as_hex_except_layout_and_cr() {
    for b in 0u8..0x20 {
        let input = [b'a', b, b'z'];
        let (v, l) = both(&input);
        let expected = match b {
            b'\r' => "a\\rz".to_string(),
            _ => format!("a\\x{b:02x}z"),
        };
        match b {
            b'\n' => {
                assert_eq!(v, "a\nz");
                assert_eq!(l, "a\\nz");
            }
            b'\t' => {
                assert_eq!(v, "a\tz");
                assert_eq!(l, "a\\tz");
            }
            _ => {
                assert_eq!(v, expected, "visible, byte {b:#04x}");
                assert_eq!(l, expected, "one line, byte {b:#04x}");
            }
        }
    }
}

#[test]
fn escape_sequences_are_shown_not_obeyed() {
    assert_eq!(visible(b"\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
    assert_eq!(visible(b"\x1b]0;title\x07"), "\\x1b]0;title\\x07");
    assert_eq!(
        visible(b"\x1b]52;c;ZXZpbA==\x1b\\"),
        "\\x1b]52;c;ZXZpbA==\\x1b\\\\"
    );
    assert_eq!(
        visible(b"progress 10%\rprogress 99%"),
        "progress 10%\\rprogress 99%"
    );
    assert_eq!(
        visible(b"secret\x08\x08\x08\x08\x08\x08******"),
        "secret\\x08\\x08\\x08\\x08\\x08\\x08******"
    );
    assert_eq!(visible(b"nul\x00byte"), "nul\\x00byte");
}

#[test]
fn del_is_shown() {
    assert_eq!(visible(b"a\x7fb"), "a\\x7fb");
    assert_eq!(on_one_line(b"\x7f"), "\\x7f");
}

#[test]
fn raw_c1_bytes_are_shown_as_bytes() {
    for b in 0x80u8..=0x9F {
        assert_eq!(visible(&[b'a', b, b'z']), format!("a\\x{b:02x}z"));
    }
    // The 8-bit CSI a terminal in 8-bit mode would obey.
    assert_eq!(visible(b"\x9b2J"), "\\x9b2J");
}

#[test]
fn c1_controls_encoded_as_utf8_are_shown_as_code_points() {
    for cp in 0x80u32..=0x9F {
        let c = char::from_u32(cp).unwrap();
        let input = format!("a{c}z");
        assert_eq!(visible(input.as_bytes()), format!("a\\u{{{cp:x}}}z"));
        assert_eq!(on_one_line(input.as_bytes()), format!("a\\u{{{cp:x}}}z"));
    }
    assert_eq!(visible("\u{85}".as_bytes()), "\\u{85}");
    assert_eq!(visible("\u{9b}".as_bytes()), "\\u{9b}");
}

#[test]
fn invalid_utf8_is_shown_byte_by_byte() {
    // A lone continuation byte, a truncated sequence, an overlong encoding, a surrogate, a code
    // point above U+10FFFF, bytes that never occur.
    assert_eq!(visible(b"\xbf"), "\\xbf");
    assert_eq!(visible(b"a\xe2\x82z"), "a\\xe2\\x82z");
    assert_eq!(visible(b"\xc0\xaf"), "\\xc0\\xaf");
    assert_eq!(visible(b"\xed\xa0\x80"), "\\xed\\xa0\\x80");
    assert_eq!(visible(b"\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
    assert_eq!(visible(b"\xfe\xff"), "\\xfe\\xff");
    // A truncated sequence at the very end is shown too, not held or dropped.
    assert_eq!(visible(b"ok\xf0\x9f\x98"), "ok\\xf0\\x9f\\x98");
}

#[test]
fn valid_non_ascii_text_passes_unchanged() {
    let text = "café naïve Ελληνικά русский 日本語 한국어 עברית العربية 😀 ✓ → “quoted” — ½ °C © ¥";
    assert_eq!(visible(text.as_bytes()), text);
    assert_eq!(on_one_line(text.as_bytes()), text);
}

#[test]
fn bidi_controls_are_shown() {
    let bidi = [
        0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068,
        0x2069,
    ];
    for cp in bidi {
        let c = char::from_u32(cp).unwrap();
        assert_eq!(
            visible(format!("x{c}y").as_bytes()),
            format!("x\\u{{{cp:x}}}y")
        );
    }
    // The Trojan Source shape: an override that would make the reader see the code reversed.
    assert_eq!(
        visible("if (a) { /* \u{202e} } \u{2066}if (admin)\u{2069} \u{2066} begin */".as_bytes()),
        "if (a) { /* \\u{202e} } \\u{2066}if (admin)\\u{2069} \\u{2066} begin */"
    );
}

#[test]
fn invisible_format_characters_are_shown() {
    let invisible = [
        0x00AD, 0x034F, 0x180E, 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064,
        0x3164, 0xFE0F, 0xFEFF, 0xFFA0, 0xFFF9, 0xFFFA, 0xFFFB, 0xE0001, 0xE0020, 0xE0041, 0xE007F,
        0xE0100, 0xE01EF,
    ];
    for cp in invisible {
        let c = char::from_u32(cp).unwrap();
        assert_eq!(
            visible(format!("x{c}y").as_bytes()),
            format!("x\\u{{{cp:x}}}y"),
            "U+{cp:04X}"
        );
    }
    // Text hidden in tag characters ("hi") becomes readable as escapes.
    assert_eq!(
        visible("ok\u{E0068}\u{E0069}".as_bytes()),
        "ok\\u{e0068}\\u{e0069}"
    );
}

#[test]
fn line_and_paragraph_separators_are_shown_in_both_modes() {
    let (v, l) = both("a\u{2028}b\u{2029}c".as_bytes());
    assert_eq!(v, "a\\u{2028}b\\u{2029}c");
    assert_eq!(l, v);
}

#[test]
fn noncharacters_are_shown() {
    for cp in [0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x10FFFF] {
        let c = char::from_u32(cp).unwrap();
        assert_eq!(visible(c.to_string().as_bytes()), format!("\\u{{{cp:x}}}"));
    }
}

#[test]
fn neighbours_of_escaped_characters_pass() {
    // The characters right next to the escaped ranges are ordinary text.
    for cp in [
        0xA0, 0xAC, 0xAE, 0x200A, 0x2010, 0x2027, 0x202F, 0x205F, 0x2070, 0xFE10, 0xFFFD,
    ] {
        let c = char::from_u32(cp).unwrap();
        assert_eq!(
            visible(c.to_string().as_bytes()),
            c.to_string(),
            "U+{cp:04X}"
        );
    }
}

#[test]
fn backslash_is_single_where_it_cannot_be_misread() {
    assert_eq!(visible(br"C:\Users\me"), r"C:\Users\me");
    assert_eq!(visible(br"grep '\d+\.\s' \[x\]"), r"grep '\d+\.\s' \[x\]");
    // The printable ASCII range in order keeps its backslash as it is (it is followed by `]`).
    let printable: Vec<u8> = (0x20u8..0x7F).collect();
    assert_eq!(visible(&printable).as_bytes(), printable.as_slice());
}

#[test]
fn backslash_is_doubled_where_it_could_be_misread() {
    assert_eq!(visible(br"\x1b"), r"\\x1b");
    assert_eq!(visible(br"\u{202e}"), r"\\u{202e}");
    assert_eq!(visible(br"a\nb\tc\rd"), r"a\\nb\\tc\\rd");
    assert_eq!(visible(br"\\"), r"\\\\");
    // Before anything shown escaped, before non-ASCII, and at the end.
    assert_eq!(visible(b"\\\x1b"), r"\\\x1b");
    assert_eq!(visible("\\é".as_bytes()), "\\\\é");
    assert_eq!(visible(b"\\\xff"), r"\\\xff");
    assert_eq!(visible(b"end\\"), r"end\\");
    assert_eq!(visible(b"\\\n"), "\\\\\n");
    assert_eq!(on_one_line(b"\\\n"), r"\\\n");
}

#[test]
fn literal_escape_text_and_the_real_control_differ() {
    assert_ne!(visible(b"\x1b"), visible(br"\x1b"));
    assert_ne!(on_one_line(b"\n"), on_one_line(br"\n"));
    assert_ne!(visible("\u{202e}".as_bytes()), visible(br"\u{202e}"));
}

#[test]
fn unescape_gives_back_the_input() {
    let input: &[u8] = b"a\\b \\x1b \x1b[0m \r\n\t \xff\xe2\x82 \\";
    let with_chars = [input, "\u{85}\u{202e}\u{e0041}😀é".as_bytes()].concat();
    for mode in [Mode::Visible, Mode::OneLine] {
        let shown = filter_whole(mode, &with_chars);
        assert_eq!(unescape(&shown).unwrap(), with_chars, "{mode:?}");
    }
}

#[test]
fn unescape_refuses_what_the_filter_never_writes() {
    assert_eq!(
        unescape("a\\"),
        Err(UnescapeError::StrayBackslash { offset: 1 })
    );
    assert_eq!(
        unescape("\\\u{1b}"),
        Err(UnescapeError::StrayBackslash { offset: 0 })
    );
    assert_eq!(
        unescape("\\x1"),
        Err(UnescapeError::BadByteEscape { offset: 0 })
    );
    assert_eq!(
        unescape("\\x1B"),
        Err(UnescapeError::BadByteEscape { offset: 0 })
    );
    assert_eq!(
        unescape("ab\\u{}"),
        Err(UnescapeError::BadCharEscape { offset: 2 })
    );
    assert_eq!(
        unescape("\\u{d800}"),
        Err(UnescapeError::BadCharEscape { offset: 0 })
    );
    assert_eq!(
        unescape("\\u{1234567}"),
        Err(UnescapeError::BadCharEscape { offset: 0 })
    );
    assert_eq!(
        unescape("\\u85"),
        Err(UnescapeError::BadCharEscape { offset: 0 })
    );
    assert_eq!(
        UnescapeError::StrayBackslash { offset: 7 }.to_string(),
        "byte 7 of the shown text: a backslash that begins no escape"
    );
}

#[test]
fn every_control_format_and_separator_character_is_escaped() {
    // Cross-check of the hand-written table with an independent source of Unicode data.
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let category = get_general_category(c);
        let must = matches!(
            category,
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        ) && c != '\n'
            && c != '\t';
        if must {
            assert!(
                is_shown_escaped(c, Mode::Visible),
                "U+{:04X} ({category:?})",
                u32::from(c)
            );
        }
    }
    assert!(is_shown_escaped('\n', Mode::OneLine));
    assert!(!is_shown_escaped('\n', Mode::Visible));
    assert!(!is_shown_escaped('a', Mode::OneLine));
}

#[test]
fn escaped_ranges_are_sorted_and_disjoint() {
    let ranges = classes::ESCAPED_RANGES;
    for pair in ranges.windows(2) {
        assert!(pair[0].0 <= pair[0].1 && pair[0].1 < pair[1].0, "{pair:x?}");
    }
}

#[test]
fn every_escaped_character_is_shown_and_its_neighbours_are_not_by_mistake() {
    // Each character the predicate names really comes out escaped through the fast path (its
    // lead byte is in the table), and every other character comes out as itself.
    for c in (0x80..=0x10FFFFu32).filter_map(char::from_u32) {
        let input = c.to_string();
        let shown = visible(input.as_bytes());
        if is_shown_escaped(c, Mode::Visible) {
            assert_eq!(shown, format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            assert_eq!(shown, input, "U+{:04X}", u32::from(c));
        }
    }
}

/// Input that holds every class above, with multi-byte sequences of each length.
fn every_class() -> Vec<u8> {
    let mut input = Vec::new();
    input.extend_from_slice(b"plain \\d \\x1b \\");
    input.extend_from_slice(b"\x1b[1m\r\n\t\x00\x7f");
    input.extend_from_slice("é日😀\u{85}\u{202e}\u{feff}\u{e0041}\u{2028}".as_bytes());
    input.extend_from_slice(b"\xff\xc3\xe2\x82\xf0\x9f\x98\\");
    input.extend_from_slice(b"\\\xc3\xa9\\\xf0\x9f\x98\x80\\");
    input
}

#[test]
fn streaming_gives_the_same_at_every_split_point() {
    let input = every_class();
    for mode in [Mode::Visible, Mode::OneLine] {
        let whole = filter_whole(mode, &input);
        for split in 0..=input.len() {
            let mut filter = TerminalFilter::new(mode);
            let mut out = String::new();
            filter.push(&input[..split], &mut out);
            filter.push(&input[split..], &mut out);
            filter.finish(&mut out);
            assert_eq!(out, whole, "{mode:?}, split at {split}");
        }
    }
}

#[test]
fn streaming_gives_the_same_at_every_pair_of_split_points() {
    let input = every_class();
    for mode in [Mode::Visible, Mode::OneLine] {
        let whole = filter_whole(mode, &input);
        for first in 0..=input.len() {
            for second in first..=input.len() {
                let mut filter = TerminalFilter::new(mode);
                let mut out = String::new();
                filter.push(&input[..first], &mut out);
                filter.push(&input[first..second], &mut out);
                filter.push(&input[second..], &mut out);
                filter.finish(&mut out);
                assert_eq!(out, whole, "{mode:?}, splits at {first} and {second}");
            }
        }
    }
}

#[test]
fn streaming_byte_by_byte_gives_the_same() {
    let input = every_class();
    let mut filter = TerminalFilter::new(Mode::Visible);
    let mut out = String::new();
    for b in &input {
        filter.push(std::slice::from_ref(b), &mut out);
    }
    filter.finish(&mut out);
    assert_eq!(out, visible(&input));
}

#[test]
fn finish_shows_what_was_held_and_the_filter_can_be_reused() {
    let mut filter = TerminalFilter::new(Mode::OneLine);
    let mut out = String::new();
    filter.push(b"x\xe2\x82", &mut out);
    assert_eq!(out, "x", "an incomplete sequence waits for more");
    filter.finish(&mut out);
    assert_eq!(out, "x\\xe2\\x82");
    out.clear();
    filter.push(b"end\\", &mut out);
    assert_eq!(out, "end", "a trailing backslash waits for its next byte");
    filter.finish(&mut out);
    assert_eq!(out, r"end\\");
    out.clear();
    filter.push(b"ok\n", &mut out);
    filter.finish(&mut out);
    assert_eq!(out, "ok\\n");
    assert_eq!(filter.mode(), Mode::OneLine);
}

#[test]
fn long_ascii_runs_with_rare_controls_cross_block_boundaries() {
    // Controls at every offset of the 32-byte scan blocks.
    for at in 0..100 {
        let mut input = vec![b'a'; 100];
        input[at] = 0x1b;
        let shown = visible(&input);
        let expected = format!("{}\\x1b{}", "a".repeat(at), "a".repeat(99 - at));
        assert_eq!(shown, expected, "ESC at {at}");
    }
}

#[test]
fn sequences_and_backslashes_across_the_64_kib_windows_are_shown_as_in_small_input() {
    // The one-shot filter validates 64 KiB at a time; whatever straddles a window boundary must
    // come out exactly as it does in a short input.
    let tails: [&[u8]; 5] = [
        "\\é日😀\u{202e}\u{85}".as_bytes(),
        b"\\x1b\\\x1b",
        b"\xf0\x9f\x98\xff\xe2\x82",
        b"\\\xf0\x9f\x98\x80",
        b"\x1b[0m\\",
    ];
    for tail in tails {
        for pad in 0..8 {
            let lead = 64 * 1024 - pad;
            let mut input = vec![b'a'; lead];
            input.extend_from_slice(tail);
            for mode in [Mode::Visible, Mode::OneLine] {
                let expected = format!("{}{}", "a".repeat(lead), filter_whole(mode, tail));
                assert_eq!(filter_whole(mode, &input), expected, "{mode:?}, pad {pad}");
                let mut filter = TerminalFilter::new(mode);
                let mut out = String::new();
                filter.push(&input, &mut out);
                filter.finish(&mut out);
                assert_eq!(out, expected, "{mode:?}, pad {pad}, streamed");
            }
        }
    }
}
