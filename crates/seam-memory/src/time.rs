//! Timestamps: milliseconds since the Unix epoch, shown as RFC 3339 UTC (the stores' format;
//! seam-local's queue uses it too) by `seam_ledger::rfc3339_seconds`.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `2026-05-01T12:34:56Z` for a time in milliseconds since the epoch (the fraction dropped),
/// by the ledger's formatter, seam's one.
pub fn rfc3339(ms: i64) -> String {
    seam_ledger::rfc3339_seconds(ms.div_euclid(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20Z");
    }
}
