//! Wall-clock formatting and the random parts of ids, without a date or random crate.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC timestamp broken into its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millis: u32,
}

impl Utc {
    /// The current time.
    pub fn now() -> Utc {
        Utc::at(SystemTime::now())
    }

    /// The given time (times before 1970 are clamped to the epoch).
    pub fn at(time: SystemTime) -> Utc {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = since.as_secs() as i64;
        let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
        let rem = secs.rem_euclid(86_400);
        Utc {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            millis: since.subsec_millis(),
        }
    }

    /// `YYYYMMDDHHMMSS`, as in run and session ids.
    pub fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// ISO 8601 with milliseconds: `2026-12-01T00:31:56.123Z`.
    pub fn iso(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.millis
        )
    }
}

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) to days since 1970-01-01, after Howard Hinnant's `days_from_civil`.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = year - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An HTTP date in its standard form (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's
/// IMF-fixdate), as seconds since the epoch; anything else is `None`.
pub fn parse_http_date(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_weekday, day, month, year, time, "GMT"] = parts.as_slice() else { return None };
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = MONTHS.iter().position(|m| m == month)? as u32 + 1;
    let day: u32 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let year: i64 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some()
        || !(0..24).contains(&h)
        || !(0..60).contains(&m)
        || !(0..61).contains(&s)
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

/// Seconds since the epoch now.
pub fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// A random number, mixed from the clock, the process id and a counter (not for cryptography).
pub fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    splitmix64(
        (nanos as u64)
            ^ (u64::from(std::process::id()) << 32)
            ^ COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed),
    )
}

/// `n` random base-36 characters. Not for cryptography: ids only need to differ between runs
/// that start in the same second, so the clock, the process id and a counter are mixed.
pub fn random_base36(n: usize) -> String {
    let mut state = random_u64();
    (0..n)
        .map(|_| {
            state = splitmix64(state);
            BASE36[(state % 36) as usize] as char
        })
        .collect()
}

/// `n` base-36 characters no other process can predict, for ids that grant something
/// (approval requests): drawn from the kernel's random source, `/dev/urandom`, or where that
/// cannot be opened (a container without `/dev`), from std's hasher keys, which the kernel's
/// `getrandom` seeds, through SipHash, a keyed function nobody without the key can predict.
pub fn unpredictable_base36(n: usize) -> String {
    use std::io::Read;
    let mut source = std::fs::File::open("/dev/urandom").ok();
    base36_from(n, |bytes| {
        if source.as_mut().is_none_or(|s| s.read_exact(bytes).is_err()) {
            source = None;
            keyed_bytes(bytes);
        }
    })
}

/// `n` base-36 digits from the bytes `fill` gives, 32 at a time.
fn base36_from(n: usize, mut fill: impl FnMut(&mut [u8; 32])) -> String {
    let mut out = String::with_capacity(n);
    let mut bytes = [0u8; 32];
    while out.len() < n {
        fill(&mut bytes);
        // 252 is the largest multiple of 36 below 256: larger bytes are dropped, so every
        // digit is equally likely.
        for &b in bytes.iter().filter(|&&b| b < 252).take(n - out.len()) {
            out.push(BASE36[usize::from(b % 36)] as char);
        }
    }
    out
}

/// 32 bytes of the keyed hash of a counter that never repeats in this process.
fn keyed_bytes(bytes: &mut [u8; 32]) {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for chunk in bytes.chunks_mut(8) {
        let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        chunk.copy_from_slice(&keyed_hash(count).to_le_bytes());
    }
}

const BASE36: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";

/// `value` hashed under a key std drew from the kernel for this process.
fn keyed_hash(value: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let mut hasher = KEYS.get_or_init(Default::default).build_hasher();
    hasher.write_u64(value);
    hasher.finish()
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// `run_<YYYYMMDDHHMMSS>_<6 base36>`.
pub fn new_run_id() -> String {
    format!("run_{}_{}", Utc::now().compact(), random_base36(6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_parse_and_round_trip_with_civil_days() {
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        for bad in [
            "",
            "1e20",
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:00:00 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
        for days in [0, 59, 60, 365, 10_957, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
    use std::time::Duration;

    #[test]
    fn formats_known_instants() {
        let t = UNIX_EPOCH + Duration::from_millis(1_764_549_116_123);
        let utc = Utc::at(t);
        assert_eq!(utc.iso(), "2025-12-01T00:31:56.123Z");
        assert_eq!(utc.compact(), "20251201003156");
        assert_eq!(Utc::at(UNIX_EPOCH).iso(), "1970-01-01T00:00:00.000Z");
        // A leap day.
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(Utc::at(leap).iso(), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn run_ids_have_the_documented_shape_and_differ() {
        let a = new_run_id();
        let b = new_run_id();
        assert_ne!(a, b);
        let parts: Vec<&str> = a.split('_').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0], "run");
        assert_eq!(parts[1].len(), 14);
        assert!(parts[1].bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(parts[2].len(), 6);
        assert!(parts[2].bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()));
    }

    #[test]
    fn unpredictable_ids_are_base36_of_the_asked_length_and_differ() {
        let a = unpredictable_base36(12);
        assert_eq!(a.len(), 12);
        assert!(a.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()), "{a}");
        assert_ne!(a, unpredictable_base36(12));
        assert_eq!(unpredictable_base36(100).len(), 100);
        // Without /dev/urandom: the keyed hash of a counter, never the same twice.
        let (a, b) = (base36_from(40, keyed_bytes), base36_from(40, keyed_bytes));
        assert!(a.len() == 40 && a.bytes().all(|c| BASE36.contains(&c)), "{a}");
        assert_ne!(a, b);
    }
}
