//! How long a bus waits for a reply: the round trips it measured, not a fixed grace. A healthy
//! bus on a busy machine answers late now and then; the timeout follows a high percentile of
//! what it measured (replies that came after their timeout included, once they turn up), with
//! the configured timeout as the floor, so a silent servo is seen within a few of its healthy
//! round trips while a slow adapter or a loaded machine does not look like a silent servo.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// Round trips kept (the latest).
const WINDOW: usize = 256;
/// Rank of the round trip the timeout follows: the 99th percentile of the window.
const PERCENTILE: f64 = 0.99;
/// The timeout is this many times that round trip.
const FACTOR: u32 = 2;
/// The longest any attempt waits, however slow the round trips were.
pub const CEILING: Duration = Duration::from_secs(1);

/// The latest round trips of one bus.
#[derive(Debug, Default)]
pub(super) struct RoundTrips {
    window: VecDeque<Duration>,
    /// When the last attempt that got no reply in time was sent, until a late reply to it turns up
    /// or another attempt answers.
    unanswered: Option<Instant>,
}

impl RoundTrips {
    /// An attempt sent at `sent` was answered now.
    pub(super) fn answered(&mut self, sent: Instant) {
        self.unanswered = None;
        self.push(sent.elapsed());
    }

    /// An attempt sent at `sent` got no complete reply by its deadline.
    pub(super) fn timed_out(&mut self, sent: Instant) {
        self.unanswered = Some(sent);
    }

    /// Bytes turned up before the next attempt: a late reply to the attempt that timed out, if
    /// one did. Its round trip is counted as at most twice the timeout it missed, so one stray
    /// byte long after cannot stretch the timeout to the ceiling.
    pub(super) fn late_bytes(&mut self, floor: Duration) {
        if let Some(sent) = self.unanswered.take() {
            let missed = self.timeout(floor);
            self.push(sent.elapsed().min(missed * 2));
        }
    }

    fn push(&mut self, round_trip: Duration) {
        if self.window.len() == WINDOW {
            self.window.pop_front();
        }
        self.window.push_back(round_trip);
    }

    /// How long the next attempt waits: [`FACTOR`] times the 99th percentile of the window, at
    /// least `floor`, at most [`CEILING`] (and never below `floor`).
    pub(super) fn timeout(&self, floor: Duration) -> Duration {
        let mut sorted: Vec<Duration> = self.window.iter().copied().collect();
        sorted.sort_unstable();
        let rank = (sorted.len() as f64 * PERCENTILE).ceil() as usize;
        let percentile = rank
            .checked_sub(1)
            .and_then(|index| sorted.get(index))
            .copied()
            .unwrap_or_default();
        (percentile * FACTOR).min(CEILING).max(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOOR: Duration = Duration::from_millis(10);

    fn with(round_trips_ms: &[u64]) -> RoundTrips {
        let mut trips = RoundTrips::default();
        for ms in round_trips_ms {
            trips.push(Duration::from_millis(*ms));
        }
        trips
    }

    #[test]
    fn a_fast_bus_waits_the_floor() {
        assert_eq!(RoundTrips::default().timeout(FLOOR), FLOOR);
        assert_eq!(with(&[1; 300]).timeout(FLOOR), FLOOR);
    }

    #[test]
    fn the_timeout_follows_the_99th_percentile_not_the_worst_round_trip() {
        // 3 slow round trips of 256 are above the 99th percentile (rank 254): a lone stall
        // does not set the timeout, a recurring one does.
        let mut trips: Vec<u64> = vec![2; 253];
        trips.extend([20, 20, 20]);
        assert_eq!(with(&trips).timeout(FLOOR), Duration::from_millis(40));
        let mut trips: Vec<u64> = vec![2; 254];
        trips.extend([400, 400]);
        assert_eq!(with(&trips).timeout(FLOOR), FLOOR);
        assert_eq!(with(&[900; 10]).timeout(FLOOR), CEILING);
    }

    #[test]
    fn the_window_forgets_old_round_trips() {
        let mut trips = with(&[30; WINDOW]);
        assert_eq!(trips.timeout(FLOOR), Duration::from_millis(60));
        for _ in 0..WINDOW {
            trips.push(Duration::from_millis(1));
        }
        assert_eq!(trips.timeout(FLOOR), FLOOR);
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_reply_counts_at_most_twice_the_timeout_it_missed() {
        let mut trips = RoundTrips::default();
        let sent = Instant::now();
        tokio::time::advance(FLOOR).await;
        trips.timed_out(sent);
        tokio::time::advance(Duration::from_secs(5)).await;
        trips.late_bytes(FLOOR);
        assert_eq!(trips.window, [FLOOR * 2]);
        trips.late_bytes(FLOOR);
        assert_eq!(trips.window.len(), 1, "one late reply per timed-out attempt");
    }
}
