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
    fn known_instants() {
        assert_eq!(&iso8601(0), b"1970-01-01T00:00:00Z");
        assert_eq!(&iso8601(951_782_400), b"2000-02-29T00:00:00Z");
        assert_eq!(&iso8601(1_795_340_672), b"2026-11-22T09:44:32Z");
        assert_eq!(&iso8601(4_107_542_399), b"2100-02-28T23:59:59Z");
    }
}
