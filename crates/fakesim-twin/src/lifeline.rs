//! Reports the end of a twin thread, however it ends (returned, unwound, or told to stop), so
//! the daemon never goes on serving with a dead twin.

use std::sync::Arc;
use tokio::sync::watch;

/// The first twin thread that ended, once one has.
pub(crate) type Ended = Arc<watch::Sender<Option<&'static str>>>;

/// Held by a twin thread for its whole life; dropping it reports that the thread ended.
pub(crate) struct Lifeline {
    thread: &'static str,
    ended: Ended,
}

impl Lifeline {
    /// A lifeline for `thread`, reporting to `ended`.
    pub(crate) fn new(thread: &'static str, ended: &Ended) -> Self {
        Lifeline {
            thread,
            ended: ended.clone(),
        }
    }
}

impl Drop for Lifeline {
    fn drop(&mut self) {
        self.ended.send_if_modified(|first| {
            let report = first.is_none();
            if report {
                *first = Some(self.thread);
            }
            report
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_thread_that_unwinds_is_reported_and_the_first_end_is_kept() {
        let ended: Ended = Arc::new(watch::channel(None).0);
        let watcher = ended.subscribe();
        let line = Lifeline::new("physics", &ended);
        let unwound = std::thread::spawn(move || {
            let _line = line;
            panic!("outside any guarded job");
        })
        .join();
        assert!(unwound.is_err());
        assert_eq!(*watcher.borrow(), Some("physics"));
        drop(Lifeline::new("render", &ended));
        assert_eq!(*watcher.borrow(), Some("physics"), "the first end is the one reported");
    }
}
