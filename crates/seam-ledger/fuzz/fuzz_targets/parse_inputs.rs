//! Everything the ledger parses from text it did not write itself: the head
//! file, timestamps, public keys, digests. No input may panic, and whatever
//! parses must print back to text that parses to the same value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seam_ledger::{LedgerPublicKey, Sha256Digest, Timestamp, parse_head_file};

fuzz_target!(|data: &[u8]| {
    if let Some(head) = parse_head_file(data) {
        let text = format!(
            "{{\"format\":\"{}\",\"seq\":{},\"hash\":\"{}\",\"signature\":\"{}\"}}",
            seam_ledger::HEAD_FORMAT,
            head.seq,
            head.hash,
            head.signature
        );
        assert_eq!(parse_head_file(text.as_bytes()), Some(head));
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = text.parse::<Timestamp>() {
        assert_eq!(t.to_string().parse::<Timestamp>(), Ok(t));
    }
    if let Ok(key) = text.parse::<LedgerPublicKey>() {
        assert_eq!(key.to_string().parse::<LedgerPublicKey>().ok(), Some(key));
    }
    if let Ok(d) = text.parse::<Sha256Digest>() {
        assert_eq!(d.to_string().parse::<Sha256Digest>().ok(), Some(d));
    }
});
