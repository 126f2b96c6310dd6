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
