//! Calendar windows in unix time (UTC). No slot-rate assumptions anywhere.

pub const SECONDS_PER_DAY: i64 = 86_400;

/// Days since 1970-01-01 UTC.
pub fn day_index(now: i64) -> i64 {
    now.div_euclid(SECONDS_PER_DAY)
}

/// Weeks that start on Monday 00:00 UTC. 1970-01-01 was a Thursday, so day 0 belongs to the
/// week that began three days earlier; shifting by 3 makes every Monday a boundary.
pub fn week_index(now: i64) -> i64 {
    (day_index(now) + 3).div_euclid(7)
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
