//! Calendar arithmetic for log timestamps and /etc/shadow's day counts: no time zones,
//! UTC only, as the kernel's clock gives it.

pub const SECONDS_PER_DAY: u64 = 86_400;

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch.
pub fn iso8601(epoch_seconds: u64) -> [u8; 20] {
    let days = epoch_seconds / SECONDS_PER_DAY;
    let second_of_day = epoch_seconds % SECONDS_PER_DAY;
    let (year, month, day) = civil_from_days(days);
    let mut out = *b"0000-00-00T00:00:00Z";
    put_digits(&mut out[0..4], year);
    put_digits(&mut out[5..7], month);
    put_digits(&mut out[8..10], day);
    put_digits(&mut out[11..13], second_of_day / 3600);
    put_digits(&mut out[14..16], second_of_day / 60 % 60);
    put_digits(&mut out[17..19], second_of_day % 60);
    out
}

/// Seconds since the epoch for `YYYY-MM-DDTHH:MM:SS` followed by `Z`, `+hhmm` or
/// `+hh:mm` (GCP's `expireOn`); `None` for anything else.
pub fn parse_iso8601(text: &[u8]) -> Option<u64> {
    // Each field's digits, all of them (its width is the range's).
    let number = |range: core::ops::Range<usize>| crate::text::decimal(text.get(range)?, 4);
    if text.get(4) != Some(&b'-') || text.get(7) != Some(&b'-') || text.get(10) != Some(&b'T') || text.get(13) != Some(&b':') || text.get(16) != Some(&b':') {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let offset = match &text[19..] {
        b"Z" | b"" => 0i64,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let rest: &[u8] = rest;
            let (hh, mm) = match rest.len() {
                4 => (&rest[..2], &rest[2..]),
                5 if rest[2] == b':' => (&rest[..2], &rest[3..]),
                _ => return None,
            };
            let value = |d: &[u8]| crate::text::decimal(d, 2).map(|n| n as i64);
            let minutes = value(hh)? * 60 + value(mm)?;
            if *sign == b'+' { minutes * 60 } else { -minutes * 60 }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day)?;
    let local = days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second;
    u64::try_from(local as i64 - offset).ok()
}

/// Days since 1970-01-01 for `YYYY-MM-DD` (a real day of 1970 or later), as useradd's
/// `--expiredate` and Python's `date.fromisoformat` read it; `None` for anything else.
pub fn days_from_date(text: &[u8]) -> Option<u64> {
    if text.len() != 10 || text[4] != b'-' || text[7] != b'-' {
        return None;
    }
    let number = |digits: &[u8]| crate::text::decimal(digits, 4);
    let (year, month, day) = (number(&text[..4])?, number(&text[5..7])?, number(&text[8..])?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let last = match month {
        2 => 28 + u64::from(leap),
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month) || !(1..=last).contains(&day) {
        return None;
    }
    days_from_civil(year, month, day)
}

/// Days since 1970-01-01 for a date from 1970 on (the inverse of `civil_from_days`).
fn days_from_civil(year: u64, month: u64, day: u64) -> Option<u64> {
    let year = if month <= 2 { year.checked_sub(1)? } else { year };
    let era = year / 400;
    let year_of_era = year - era * 400;
    let month_index = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    (era * 146_097 + day_of_era).checked_sub(719_468)
}

/// Howard Hinnant's days-to-civil algorithm, for days since 1970-01-01 (the proleptic
/// Gregorian calendar, shifted to start years in March so leap days come last).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

fn put_digits(out: &mut [u8], mut value: u64) {
    for slot in out.iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_as_useradd_reads_them() {
        assert_eq!(days_from_date(b"1970-01-01"), Some(0));
        assert_eq!(days_from_date(b"2031-01-01"), Some(22_280));
        assert_eq!(days_from_date(b"2024-02-29"), Some(19_782));
        for bad in [&b"2023-02-29"[..], b"2030-13-01", b"2030-00-10", b"2030-01-00", b"2030-01-32", b"0000-01-01", b"1969-12-31", b"2030-1-01", b"2030/01/01", b"20300101", b"2030-01-01T00"] {
            assert_eq!(days_from_date(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn known_instants() {
        assert_eq!(&iso8601(0), b"1970-01-01T00:00:00Z");
        assert_eq!(&iso8601(951_782_400), b"2000-02-29T00:00:00Z");
        assert_eq!(&iso8601(1_795_340_672), b"2026-11-22T09:44:32Z");
        assert_eq!(&iso8601(4_107_542_399), b"2100-02-28T23:59:59Z");
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_iso8601(b"1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_iso8601(b"2026-11-22T09:44:32+0000"), Some(1_795_340_672));
        assert_eq!(parse_iso8601(b"2026-11-22T10:44:32+01:00"), Some(1_795_340_672));
        assert_eq!(parse_iso8601(b"2026-11-22T04:44:32-0500"), Some(1_795_340_672));
        assert_eq!(parse_iso8601(b"2000-02-29T00:00:00"), Some(951_782_400));
        for bad in [&b"2026-13-01T00:00:00Z"[..], b"2026-11-22 09:44:32Z", b"2026-11-22T09:44:32+1", b"2026-1a-22T09:44:32Z", b"2026-11-22T09:44:32+0a:00", b"soon", b""] {
            assert_eq!(parse_iso8601(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
