//! A twin thread that owns its state and serves the jobs sent to it, in order, until stopped.

use crate::error::TwinError;
use crate::lifeline::Lifeline;
use std::sync::{Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;

/// Sends jobs to one thread; [`Worker::stop`] ends it after the jobs already queued.
pub(crate) struct Worker<J> {
    jobs: mpsc::Sender<Option<J>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The jobs a worker's thread receives, in order, until it is told to stop.
pub(crate) struct Jobs<J>(mpsc::Receiver<Option<J>>);

impl<J> Iterator for Jobs<J> {
    type Item = J;

    fn next(&mut self) -> Option<J> {
        self.0.recv().ok().flatten()
    }
}

impl<J: Send + 'static> Worker<J> {
    /// Starts thread `twin-{name}` running `body` on the jobs sent; the thread holds `lifeline`.
    pub fn spawn(
        name: &str,
        lifeline: Lifeline,
        body: impl FnOnce(Jobs<J>) + Send + 'static,
    ) -> Result<Self, std::io::Error> {
        let (jobs, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("twin-{name}"))
            .spawn(move || {
                let _lifeline = lifeline;
                body(Jobs(rx));
            })?;
        Ok(Worker {
            jobs,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues a job; refused once the thread has stopped.
    pub fn send(&self, job: J) -> Result<(), TwinError> {
        self.jobs.send(Some(job)).map_err(|_| TwinError::Stopped)
    }

    /// Ends the thread after the jobs already queued and waits for it (idempotent; from the
    /// thread itself it does not wait).
    pub fn stop(&self) {
        let thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(thread) = thread {
            let _ = self.jobs.send(None);
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}
