//! The signed, hash-chained audit ledger (stub: issue 4).
