//! Time sources driving the servo motion model.
//!
//! The model only ever asks "how much time has passed since the start"; tests inject a
//! [`ManualClock`] and advance it explicitly, a served bus uses the [`SystemClock`].

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A monotonic source of elapsed time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Time elapsed since the clock's origin.
    fn elapsed(&self) -> Duration;
}

/// Wall-clock time, measured from the moment the clock was created.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// Starts a clock at the current instant.
    pub fn new() -> Self {
        Self { origin: Instant::now() }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// Simulated time that only moves when [`ManualClock::advance`] is called; clones share
/// the same time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Arc<Mutex<Duration>>,
}

impl ManualClock {
    /// Creates a clock standing at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves simulated time forward by `dt`.
    pub fn advance(&self, dt: Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now.saturating_add(dt);
    }
}

impl Clock for ManualClock {
    fn elapsed(&self) -> Duration {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced_and_clones_share_time() {
        let clock = ManualClock::new();
        let other = clock.clone();
        assert_eq!(clock.elapsed(), Duration::ZERO);
        other.advance(Duration::from_millis(250));
        assert_eq!(clock.elapsed(), Duration::from_millis(250));
    }
}
