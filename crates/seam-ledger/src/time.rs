//! [`Timestamp`]: UTC wall-clock time in unix nanoseconds, shown as RFC 3339; and
//! [`rfc3339_seconds`], seam's one RFC 3339 formatter, which every crate that shows a time
//! uses (the memory stores, the return queue, `facts.get`).

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in UTC time with nanosecond resolution: nanoseconds since the unix
/// epoch (the form the record hash covers). It displays, serializes and parses
/// as RFC 3339 with nine fraction digits: `2026-04-20T06:03:07.123456789Z`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    unix_nanos: i64,
}

/// Why a text is not an RFC 3339 UTC timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an RFC 3339 UTC time like 2026-04-20T06:03:07.123456789Z: {reason}")]
pub struct TimestampParseError {
    text: String,
    reason: &'static str,
}

const NANOS_PER_SEC: i64 = 1_000_000_000;
const SECS_PER_DAY: i64 = 86_400;

impl Timestamp {
    /// The system's wall clock now. Times before 1970 or after 2262 saturate.
    pub fn now() -> Timestamp {
        let unix_nanos = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_nanos())
                .map(|n| -n)
                .unwrap_or(i64::MIN),
        };
        Timestamp { unix_nanos }
    }

    pub const fn from_unix_nanos(unix_nanos: i64) -> Timestamp {
        Timestamp { unix_nanos }
    }

    pub const fn unix_nanos(self) -> i64 {
        self.unix_nanos
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.unix_nanos.div_euclid(NANOS_PER_SEC);
        let nanos = self.unix_nanos.rem_euclid(NANOS_PER_SEC);
        write!(f, "{}.{nanos:09}Z", DateTime(secs))
    }
}

/// `2026-04-20T06:03:07Z`: a time in whole seconds since the unix epoch, as RFC 3339 UTC
/// (proleptic Gregorian calendar). Any `i64` is a time: years past 9999 take more digits.
pub fn rfc3339_seconds(unix_secs: i64) -> String {
    format!("{}Z", DateTime(unix_secs))
}

/// `YYYY-MM-DDTHH:MM:SS` of a time in seconds since the unix epoch, UTC: the part every
/// RFC 3339 time seam shows has in common.
struct DateTime(i64);

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(SECS_PER_DAY);
        let sod = self.0.rem_euclid(SECS_PER_DAY);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            sod / 3600,
            (sod / 60) % 60,
            sod % 60
        )
    }
}

impl FromStr for Timestamp {
    type Err = TimestampParseError;

    fn from_str(text: &str) -> Result<Timestamp, TimestampParseError> {
        let fail = |reason| TimestampParseError {
            text: crate::clipped(text, 64),
            reason,
        };
        let b = text.as_bytes();
        if b.len() < 20 || !b.is_ascii() {
            return Err(fail("too short or not ASCII"));
        }
        let num = |range: std::ops::Range<usize>| -> Result<i64, TimestampParseError> {
            let digits = &b[range];
            if !digits.iter().all(u8::is_ascii_digit) {
                return Err(fail("a digit was expected"));
            }
            Ok(digits
                .iter()
                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
        };
        let sep = |at: usize, want: u8| {
            if b[at] == want {
                Ok(())
            } else {
                Err(fail("a separator is missing or wrong"))
            }
        };
        let year = num(0..4)?;
        sep(4, b'-')?;
        let month = num(5..7)?;
        sep(7, b'-')?;
        let day = num(8..10)?;
        sep(10, b'T')?;
        let hour = num(11..13)?;
        sep(13, b':')?;
        let minute = num(14..16)?;
        sep(16, b':')?;
        let second = num(17..19)?;
        let mut nanos = 0i64;
        let rest = &b[19..];
        let zone_at = if rest[0] == b'.' {
            let frac_len = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if frac_len == 0 || frac_len > 9 {
                return Err(fail("the fraction must have 1 to 9 digits"));
            }
            nanos = num(20..20 + frac_len)? * 10i64.pow(9 - frac_len as u32);
            20 + frac_len
        } else {
            19
        };
        if &b[zone_at..] != b"Z" {
            return Err(fail("the time must end in Z (UTC)"));
        }
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return Err(fail("no such date"));
        }
        if hour > 23 || minute > 59 || second > 59 {
            return Err(fail("no such time of day"));
        }
        let secs =
            days_from_civil(year, month, day) * SECS_PER_DAY + hour * 3600 + minute * 60 + second;
        let unix_nanos = secs
            .checked_mul(NANOS_PER_SEC)
            .and_then(|n| n.checked_add(nanos))
            .ok_or_else(|| fail("outside the years 1677 to 2262"))?;
        Ok(Timestamp { unix_nanos })
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number since 1970-01-01 (inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_instants() {
        assert_eq!(
            Timestamp::from_unix_nanos(0).to_string(),
            "1970-01-01T00:00:00.000000000Z"
        );
        assert_eq!(
            Timestamp::from_unix_nanos(1_709_251_199_999_999_999).to_string(),
            "2024-02-29T23:59:59.999999999Z"
        );
        assert_eq!(
            Timestamp::from_unix_nanos(-1).to_string(),
            "1969-12-31T23:59:59.999999999Z"
        );
        assert_eq!(
            "2024-02-29T23:59:59.5Z".parse::<Timestamp>().unwrap(),
            Timestamp::from_unix_nanos(1_709_251_199_500_000_000)
        );
    }

    // Moved whole from seam-gate's facts.get, whose copy of the formatter this replaced.
    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339_seconds(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_seconds(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_seconds(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_seconds(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn rejects_what_is_not_rfc3339_utc() {
        for bad in [
            "",
            "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:00+01:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00.1234567891Z",
            "2024-01-01 00:00:00Z",
            "9999-12-31T23:59:59Z",
        ] {
            assert!(bad.parse::<Timestamp>().is_err(), "{bad:?} was accepted");
        }
    }

    proptest! {
        #[test]
        fn display_parse_round_trip(n in any::<i64>()) {
            let t = Timestamp::from_unix_nanos(n);
            prop_assert_eq!(t.to_string().parse::<Timestamp>().unwrap(), t);
        }

        /// The two forms agree: a timestamp is its whole seconds and a fraction.
        #[test]
        fn seconds_are_the_timestamp_without_its_fraction(n in any::<i64>()) {
            let t = Timestamp::from_unix_nanos(n).to_string();
            let whole = rfc3339_seconds(n.div_euclid(NANOS_PER_SEC));
            prop_assert_eq!(format!("{}Z", &t[..t.len() - 11]), whole);
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,40}") {
            let _ = s.parse::<Timestamp>();
        }
    }
}
