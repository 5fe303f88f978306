//! Arbitrary bytes through the terminal filter: the output is safe in both modes, streaming in
//! arbitrary chunks gives the same text as one call, and `unescape` gives the input back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seam_term::{Mode, TerminalFilter, is_shown_escaped, on_one_line, unescape, visible};

fn assert_safe(shown: &str, mode: Mode) {
    for c in shown.chars() {
        let layout = mode == Mode::Visible && (c == '\n' || c == '\t');
        assert!(
            layout || !c.is_control(),
            "control U+{:04X} left",
            u32::from(c)
        );
        assert!(
            !is_shown_escaped(c, mode),
            "escaped character U+{:04X} left",
            u32::from(c)
        );
    }
}

/// Feeds `input` in chunks whose sizes cycle through `sizes` (each 1..=15 bytes; a size of 0
/// pushes an empty chunk first and then one byte).
fn streamed(mode: Mode, input: &[u8], sizes: &[u8]) -> String {
    let mut filter = TerminalFilter::new(mode);
    let mut out = String::new();
    let mut rest = input;
    let mut i = 0;
    while !rest.is_empty() {
        let mut size = usize::from(sizes.get(i % sizes.len().max(1)).copied().unwrap_or(1) & 0xF);
        if size == 0 {
            filter.push(&[], &mut out);
            size = 1;
        }
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        filter.push(chunk, &mut out);
        rest = tail;
        i += 1;
    }
    filter.finish(&mut out);
    out
}

fuzz_target!(|data: &[u8]| {
    // The first byte says how many of the next bytes are chunk sizes; the rest is the input.
    let (sizes, input) = match data.split_first() {
        Some((&n, rest)) => rest.split_at(usize::from(n & 0x7).min(rest.len())),
        None => (&[][..], data),
    };
    for (mode, shown) in [
        (Mode::Visible, visible(input)),
        (Mode::OneLine, on_one_line(input)),
    ] {
        assert_safe(&shown, mode);
        assert_eq!(
            streamed(mode, input, sizes),
            shown,
            "streaming differs, {mode:?}"
        );
        assert_eq!(
            unescape(&shown).as_deref(),
            Ok(input),
            "no round trip, {mode:?}"
        );
    }
});
