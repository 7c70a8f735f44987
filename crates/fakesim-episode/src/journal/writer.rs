//! A run's journal thread: the one owner of `events.jsonl`, writing the lines and the summary
//! it is handed in order, so no file work runs on the async runtime or under a caller's lock.
//! It ends once its run's journal is dropped and the queue is drained.

use super::{Artifacts, JournalError, io_at};
use std::fs::{self, File};
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use tokio::sync::oneshot;

/// What the journal thread is handed.
enum Job {
    /// One event line, newline included.
    Line(Vec<u8>),
    /// The text of `summary.json`.
    Summary(String),
    /// Answer with the first failure since the last flush once everything before is written.
    Flush(oneshot::Sender<Result<(), JournalError>>),
}

/// The queueing side of a run's journal thread.
#[derive(Debug)]
pub(super) struct Writer {
    jobs: mpsc::Sender<Job>,
    events: PathBuf,
}

impl Writer {
    /// Starts the journal thread of a run whose event log is `events` (open for appending).
    pub(super) fn spawn(events: File, artifacts: &Artifacts) -> Result<Self, JournalError> {
        let (jobs, queue) = mpsc::channel();
        let thread = Thread {
            events,
            events_path: artifacts.events.clone(),
            summary_path: artifacts.summary.clone(),
            failed: None,
        };
        std::thread::Builder::new()
            .name("journal".into())
            .spawn(move || thread.serve(queue))
            .map_err(io_at(&artifacts.events))?;
        Ok(Writer {
            jobs,
            events: artifacts.events.clone(),
        })
    }

    /// Queues an event line.
    pub(super) fn line(&self, bytes: Vec<u8>) -> Result<(), JournalError> {
        self.send(Job::Line(bytes))
    }

    /// Queues the summary.
    pub(super) fn summary(&self, text: String) -> Result<(), JournalError> {
        self.send(Job::Summary(text))
    }

    /// A barrier behind everything queued so far.
    pub(super) fn flushed(&self) -> Flushed {
        let (done, answer) = oneshot::channel();
        // A thread that is gone drops the answer's sender: the wait reports it.
        let _ = self.jobs.send(Job::Flush(done));
        Flushed {
            answer,
            events: self.events.clone(),
        }
    }

    fn send(&self, job: Job) -> Result<(), JournalError> {
        self.jobs.send(job).map_err(|_| ended(self.events.clone()))
    }
}

/// Everything a run's journal was handed up to a point, written (or the first failure).
#[derive(Debug)]
pub struct Flushed {
    answer: oneshot::Receiver<Result<(), JournalError>>,
    events: PathBuf,
}

impl Flushed {
    /// Waits until the journal thread got this far.
    pub async fn written(self) -> Result<(), JournalError> {
        self.answer.await.unwrap_or_else(|_| Err(ended(self.events)))
    }
}

/// The error of a journal whose thread is gone.
fn ended(events: PathBuf) -> JournalError {
    io_at(&events)(std::io::Error::other("the run's journal thread has ended"))
}

/// The journal thread's own state.
struct Thread {
    events: File,
    events_path: PathBuf,
    summary_path: PathBuf,
    failed: Option<JournalError>,
}

impl Thread {
    fn serve(mut self, queue: mpsc::Receiver<Job>) {
        for job in queue {
            let written = match job {
                Job::Line(bytes) => self.append(&bytes),
                Job::Summary(text) => self.summary(&text),
                Job::Flush(done) => {
                    // A caller that stopped waiting is no error.
                    let _ = done.send(self.failed.take().map_or(Ok(()), Err));
                    continue;
                }
            };
            if let Err(e) = written {
                tracing::error!(error = %e, "run journal write failed");
                self.failed.get_or_insert(e);
            }
        }
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(), JournalError> {
        let path = &self.events_path;
        self.events.write_all(bytes).map_err(io_at(path))?;
        self.events.flush().map_err(io_at(path))
    }

    fn summary(&self, text: &str) -> Result<(), JournalError> {
        let path = &self.summary_path;
        let partial = path.with_extension("json.partial");
        fs::write(&partial, text).map_err(io_at(&partial))?;
        fs::rename(&partial, path).map_err(io_at(path))
    }
}
