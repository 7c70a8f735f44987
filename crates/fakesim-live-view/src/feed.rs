//! The one queue from the sources to the logger thread: bounded, and a full queue drops the
//! update (counted) instead of making the physics thread or a task wait.

use fakesim_bridge::hil::{Mode, Sample};
use fakesim_safety::SafetyEvent;
use fakesim_twin::TickSnapshot;
use fakesim_twin::arms::Side;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::time::SystemTime;

/// Updates queued for the logger at most: about a second of ticks when a client ticks the
/// twin as fast as it runs (a tick is about 0.25 ms), 200 s at the 20 Hz control rate.
pub(crate) const CAPACITY: usize = 4096;

/// Something to log.
pub(crate) enum Update {
    /// The twin after a physics advance.
    Tick(Box<TickSnapshot>),
    /// A reading of a real arm, with the goals in force on it (in `hil`).
    Sample {
        /// Which of the twin's arms it is paired with.
        arm: usize,
        /// The reading, the twin mirroring it, the shadow's prediction.
        sample: Box<Sample>,
        /// The goals in force on the real arm, in `hil`.
        goals: Option<[f64; 6]>,
    },
    /// The mode switched.
    Mode(Mode),
    /// A safety layer fired.
    Safety {
        /// The arm whose layer it was, on a pair.
        arm: Option<Side>,
        /// What it did.
        event: Box<SafetyEvent>,
    },
    /// A line of the episode's journal.
    Journal(Arc<Value>),
    /// A camera frame the daemon drew (PNG).
    Frame {
        /// Camera name.
        camera: String,
        /// PNG bytes.
        png: Arc<[u8]>,
    },
    /// A move began towards this TCP position.
    MoveTarget([f64; 3]),
}

/// An update and when it happened.
pub(crate) struct Stamped {
    /// Wall-clock time the source handed it on.
    pub wall: SystemTime,
    /// The update; `None` tells the logger to flush and end.
    pub update: Option<Update>,
}

/// The sending side; cheap to clone.
#[derive(Clone)]
pub(crate) struct Feed {
    tx: SyncSender<Stamped>,
    dropped: Arc<AtomicU64>,
}

impl Feed {
    /// A feed and the logger's end of it.
    pub fn new() -> (Self, Receiver<Stamped>) {
        let (tx, rx) = sync_channel(CAPACITY);
        let feed = Feed {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        };
        (feed, rx)
    }

    /// Queues an update stamped now, or drops it when the queue is full (or the logger gone).
    pub fn offer(&self, update: Update) {
        let stamped = Stamped {
            wall: SystemTime::now(),
            update: Some(update),
        };
        match self.tx.try_send(stamped) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Tells the logger to end once it has logged what is queued before; waits for room.
    pub fn finish(&self) {
        // A logger already gone has nothing left to flush.
        let _ = self.tx.send(Stamped {
            wall: SystemTime::now(),
            update: None,
        });
    }

    /// Counts updates a source lost before they reached the feed.
    pub fn count_dropped(&self, n: u64) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
    }

    /// Updates dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let (feed, rx) = Feed::new();
        for _ in 0..CAPACITY + 3 {
            feed.offer(Update::MoveTarget([0.0; 3]));
        }
        assert_eq!(feed.dropped(), 3);
        assert_eq!(rx.try_iter().count(), CAPACITY);
        drop(rx);
        feed.offer(Update::MoveTarget([1.0; 3]));
        assert_eq!(feed.dropped(), 3, "a logger that is gone is not a drop");
    }
}
