//! Scrubbing never panics; what it found is gone from its output (unless the same bytes also
//! stand where nothing was found); and streaming, split at any two points, gives exactly the
//! one-shot output and hits. A marker's own bytes (`…]`) followed by text may spell a found
//! secret again (`]'--!r…` after `[REDACTED:…]` when the secret began with `]`): the output is
//! searched with each marker as one byte no text holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seam_scrub::Scrubber;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (a, b) = (usize::from(data[0]), usize::from(data[1]));
    let text = String::from_utf8_lossy(&data[2..]).into_owned();
    let s = Scrubber::new();
    let whole = s.scrub(&text);

    let mut unflagged = text.clone().into_bytes();
    for h in &whole.hits {
        assert!(h.start < h.end && h.end <= text.len(), "hit out of range: {h:?}");
        unflagged[h.start..h.end].fill(0);
    }
    let unflagged = String::from_utf8_lossy(&unflagged).into_owned();
    // The output with each marker as 0xFF, a byte no UTF-8 text holds.
    let mut unmarked = Vec::with_capacity(text.len());
    let mut last = 0;
    for h in &whole.hits {
        unmarked.extend_from_slice(&text.as_bytes()[last..h.start]);
        unmarked.push(0xFF);
        last = h.end;
    }
    unmarked.extend_from_slice(&text.as_bytes()[last..]);
    for h in &whole.hits {
        let secret = &text[h.start..h.end];
        let survives = unmarked
            .windows(secret.len())
            .any(|w| w == secret.as_bytes());
        assert!(
            !survives || unflagged.contains(secret),
            "found secret {secret:?} survives in {:?}",
            whole.text
        );
    }

    let bytes = text.as_bytes();
    let mut cuts = [a * bytes.len() / 256, b * bytes.len() / 256];
    cuts.sort_unstable();
    let mut st = s.stream();
    let mut out = st.push_bytes(&bytes[..cuts[0]]);
    out.extend(st.push_bytes(&bytes[cuts[0]..cuts[1]]));
    out.extend(st.push_bytes(&bytes[cuts[1]..]));
    out.extend(st.finish_bytes());
    assert_eq!(String::from_utf8_lossy(&out), whole.text, "stream split at {cuts:?}");
    assert_eq!(st.hits(), whole.hits.as_slice(), "stream hits split at {cuts:?}");
});
