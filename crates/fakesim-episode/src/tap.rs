//! A tap on the engine for an observer such as the live view: every journal line and frame as
//! it is written, and each move's target as the move begins. Handing an entry over never waits
//! (an observer that falls behind loses the oldest ones), and costs nothing while nobody listens.

use serde_json::Value;
use std::sync::Arc;
use tokio::sync::broadcast;

/// Entries kept for an observer that has not read them yet.
const KEPT: usize = 256;

/// What the tap hands on.
#[derive(Debug, Clone)]
pub enum TapEntry {
    /// A journal line as written to `events.jsonl` (`{"t", "kind", ...}`).
    Line(Arc<Value>),
    /// A camera frame as written to `frames/`.
    Frame {
        /// The camera's name.
        camera: String,
        /// The PNG file's bytes.
        png: Arc<[u8]>,
    },
    /// A move began towards this TCP position (m, world frame).
    MoveTarget([f64; 3]),
}

/// The sending side of the tap; cheap to clone.
#[derive(Debug, Clone)]
pub struct JournalTap(broadcast::Sender<TapEntry>);

impl Default for JournalTap {
    fn default() -> Self {
        JournalTap(broadcast::channel(KEPT).0)
    }
}

impl JournalTap {
    /// Every entry from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<TapEntry> {
        self.0.subscribe()
    }

    /// Whether anybody listens (entries are only made then).
    pub fn is_watched(&self) -> bool {
        self.0.receiver_count() > 0
    }

    /// Makes and hands on an entry if anybody listens.
    pub(crate) fn offer(&self, entry: impl FnOnce() -> TapEntry) {
        if self.is_watched() {
            // A listener that went away in between is no error.
            let _ = self.0.send(entry());
        }
    }
}
