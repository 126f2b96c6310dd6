//! Calendar windows in unix time (UTC). No slot-rate assumptions anywhere.

pub const SECONDS_PER_DAY: i64 = 86_400;

/// Days since 1970-01-01 UTC.
pub fn day_index(now: i64) -> i64 {
    floor_div(now, SECONDS_PER_DAY as u64)
}

/// Weeks that start on Monday 00:00 UTC. 1970-01-01 was a Thursday, so day 0 belongs to the
/// week that began three days earlier; shifting by 3 makes every Monday a boundary.
pub fn week_index(now: i64) -> i64 {
    // A day index is at most |i64::MIN| / 86 400, so adding 3 cannot overflow.
    floor_div(day_index(now) + 3, 7)
}

/// Calendar months (UTC) since January 1970: `(year - 1970) * 12 + month - 1`, from the
/// civil date of `now`'s day (H. Hinnant's days-to-civil algorithm, in eras of 400 years
/// that start on 1 March, written with unsigned division only, see [`floor_div`]).
pub fn month_index(now: i64) -> i64 {
    // Days since 0000-03-01; a day index is within ±1.1e14, so the shift cannot overflow.
    let z = day_index(now) + 719_468;
    let era = floor_div(z, 146_097);
    // 0..=146_096, so the casts are exact.
    let day_of_era = (z - era * 146_097) as u64;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months counted from March: 0 March .. 11 February.
    let month_from_march = (5 * day_of_year + 2) / 153;
    // Months since March of year 0, then shifted to January 1970 (0000-03 is 23 638
    // months before 1970-01).
    era * 4_800 + (year_of_era * 12 + month_from_march) as i64 - 23_638
}

/// `n.div_euclid(d)` for a positive divisor, with unsigned division only: SBPF v0 has no
/// signed division instruction, and LLVM refuses to lower one for it. For negative `n`,
/// `!n == -n - 1` is non-negative, and `floor(n / d) == !((!n) / d)`.
fn floor_div(n: i64, d: u64) -> i64 {
    if n >= 0 {
        (n as u64 / d) as i64
    } else {
        !(((!n) as u64 / d) as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_boundaries() {
        assert_eq!(day_index(0), 0);
        assert_eq!(day_index(SECONDS_PER_DAY - 1), 0);
        assert_eq!(day_index(SECONDS_PER_DAY), 1);
        assert_eq!(day_index(-1), -1);
    }

    #[test]
    fn floor_div_matches_div_euclid() {
        let samples = [
            i64::MIN,
            i64::MIN + 1,
            -86_401,
            -86_400,
            -86_399,
            -8,
            -7,
            -6,
            -1,
            0,
            1,
            6,
            7,
            86_399,
            86_400,
            i64::MAX,
        ];
        for n in samples {
            for d in [1u64, 7, 86_400] {
                assert_eq!(floor_div(n, d), n.div_euclid(d as i64), "{n} / {d}");
            }
        }
    }

    /// Months since 1970-01 of a civil date, the slow and obvious way.
    fn civil_month(year: i64, month: i64) -> i64 {
        (year - 1970) * 12 + month - 1
    }

    /// Unix time of `year-month-01 00:00:00 UTC`, by counting days.
    fn month_start(year: i64, month: i64) -> i64 {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let month_days = |y: i64, m: i64| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut days = 0;
        if year >= 1970 {
            for y in 1970..year {
                days += if leap(y) { 366 } else { 365 };
            }
        } else {
            for y in year..1970 {
                days -= if leap(y) { 366 } else { 365 };
            }
        }
        for m in 1..month {
            days += month_days(year, m);
        }
        days * SECONDS_PER_DAY
    }

    #[test]
    fn months_turn_at_the_first_second_of_each_month() {
        for year in [1600, 1899, 1900, 1969, 1970, 2000, 2024, 2026, 2100, 2400] {
            for month in 1..=12 {
                let start = month_start(year, month);
                assert_eq!(
                    month_index(start),
                    civil_month(year, month),
                    "{year}-{month}"
                );
                assert_eq!(
                    month_index(start - 1),
                    civil_month(year, month) - 1,
                    "the last second before {year}-{month}"
                );
            }
        }
        // The last second of 2026 and the first of 2027.
        assert_eq!(month_index(1_798_761_599), civil_month(2026, 12));
        assert_eq!(month_index(1_798_761_600), civil_month(2027, 1));
        // 2028-02-29 23:59:59 is still February of a leap year.
        assert_eq!(month_index(1_835_481_599), civil_month(2028, 2));
        assert_eq!(month_index(1_835_481_600), civil_month(2028, 3));
        assert_eq!(month_index(0), 0);
        assert_eq!(month_index(-1), -1);
        // The extremes do not overflow.
        month_index(i64::MIN);
        month_index(i64::MAX);
    }

    #[test]
    fn weeks_start_on_monday_utc() {
        // 2026-11-16 00:00:00 UTC is a Monday.
        let monday = 1_794_787_200;
        assert_eq!(
            week_index(monday),
            week_index(monday + 7 * SECONDS_PER_DAY - 1)
        );
        assert_eq!(week_index(monday - 1) + 1, week_index(monday));
        assert_eq!(
            week_index(monday + 7 * SECONDS_PER_DAY),
            week_index(monday) + 1
        );
        // 1970-01-05 was the first Monday.
        assert_eq!(week_index(4 * SECONDS_PER_DAY - 1), 0);
        assert_eq!(week_index(4 * SECONDS_PER_DAY), 1);
    }
}
