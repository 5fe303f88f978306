//! Everything the ledger parses from bytes it did not write itself: head
//! files and head slots, timestamps, public keys, digests. No input may
//! panic, and whatever parses must encode back to bytes or text that parse to
//! the same value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seam_ledger::{
    HEAD_FORMAT, HEAD_SLOT_LEN, LedgerPublicKey, Sha256Digest, SignedHead, Timestamp,
    parse_head_file,
};
use sha2::{Digest, Sha256};

/// Where the checksum sits in a slot, and what it covers (see
/// `SignedHead::to_slot_bytes`): marker 24, generation 8, floor 40,
/// ceiling 40, signature 64.
const CHECKSUM_AT: usize = 24 + 8 + 40 + 40 + 64;

fn round_trips(head: SignedHead) {
    let bytes = head.to_slot_bytes();
    assert_eq!(bytes.len(), HEAD_SLOT_LEN);
    assert_eq!(SignedHead::from_slot_bytes(&bytes), Ok(head));
}

fn check_slot(slot: &[u8]) {
    if let Ok(head) = SignedHead::from_slot_bytes(slot) {
        round_trips(head);
    }
}

fuzz_target!(|data: &[u8]| {
    // The raw input as a head file, and as a slot (zero-padded).
    if let Ok(slots) = parse_head_file(data) {
        slots.into_iter().flatten().for_each(round_trips);
    }
    let mut slot = vec![0u8; HEAD_SLOT_LEN];
    let n = data.len().min(HEAD_SLOT_LEN);
    slot[..n].copy_from_slice(&data[..n]);
    check_slot(&slot);
    // The input as a slot's fields behind a correct marker and checksum, so
    // the checks after the checksum are reached too.
    let mut slot = vec![0u8; HEAD_SLOT_LEN];
    slot[..HEAD_FORMAT.len()].copy_from_slice(HEAD_FORMAT.as_bytes());
    let n = data.len().min(CHECKSUM_AT - 24);
    slot[24..24 + n].copy_from_slice(&data[..n]);
    let checksum = Sha256::digest(&slot[..CHECKSUM_AT]);
    slot[CHECKSUM_AT..CHECKSUM_AT + 32].copy_from_slice(&checksum);
    check_slot(&slot);

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
