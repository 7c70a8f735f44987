//! The run journal on disk: `events.jsonl` appended line by line, `frames/` written as produced,
//! `summary.json` at the end. Lines and the summary are handed, in order, to the run's journal
//! thread ([`writer`]); frames are written by whoever encoded them ([`frames`]), each file
//! whole under its final name. A call waits for its writes ([`Journal::flushed`]) before it
//! returns, once it has let go of its locks.

mod frames;
mod writer;

pub use frames::Frames;
pub use writer::Flushed;

use crate::tap::{JournalTap, TapEntry};
use serde::Serialize;
use serde_json::{Value, json};
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A journal file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("run journal {path}: {source}")]
pub struct JournalError {
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

/// Turns an I/O error at `path` into a journal error.
pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError {
        path: path.to_owned(),
        source,
    }
}

/// Runs blocking journal work (`what`, under `path`) on the runtime's blocking threads; a
/// panic in it is an error of the journal.
pub(crate) async fn blocking<T: Send + 'static>(
    path: &Path,
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, JournalError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| io_at(path)(std::io::Error::other(format!("{what}: {e}"))))
}

/// What one line of `events.jsonl` records: its `kind` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// An episode started.
    ResetTask,
    /// An observation was taken.
    Observe,
    /// An end-effector move ran.
    Move,
    /// A gripper action ran.
    Gripper,
    /// The episode was stopped by its client.
    StopEpisode,
    /// The episode was ended by a shutdown.
    Interrupted,
    /// The step budget ran out.
    BudgetExhausted,
    /// A robot-service call moved the robot.
    RobotCall,
    /// A safety layer fired.
    Safety,
    /// The mode switched.
    Mode,
    /// The control period of `Tick` changed.
    ControlPeriod,
    /// A call failed authentication.
    Auth,
    /// The control lease changed hands.
    Lease,
    /// A twin thread caught a panic.
    TwinFault,
    /// A twin thread ended.
    TwinThreadEnded,
}

impl Kind {
    /// The name written in the line's `kind` field.
    pub fn name(self) -> &'static str {
        match self {
            Kind::ResetTask => "reset_task",
            Kind::Observe => "observe",
            Kind::Move => "move",
            Kind::Gripper => "gripper",
            Kind::StopEpisode => "stop_episode",
            Kind::Interrupted => "interrupted",
            Kind::BudgetExhausted => "budget_exhausted",
            Kind::RobotCall => "robot_call",
            Kind::Safety => "safety",
            Kind::Mode => "mode",
            Kind::ControlPeriod => "control_period",
            Kind::Auth => "auth",
            Kind::Lease => "lease",
            Kind::TwinFault => "twin_fault",
            Kind::TwinThreadEnded => "twin_thread_ended",
        }
    }
}

/// Paths of a run's artifacts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Artifacts {
    /// `events.jsonl`.
    pub events: PathBuf,
    /// The frame directory.
    pub frames: PathBuf,
    /// `summary.json`.
    pub summary: PathBuf,
}

/// One run's journal: the queueing side of its journal thread.
#[derive(Debug)]
pub struct Journal {
    artifacts: Artifacts,
    frame_count: u64,
    tap: JournalTap,
    writer: writer::Writer,
}

impl Journal {
    /// Creates `<runs_dir>/<run_id>/` with an empty event log and frame directory, and starts
    /// the run's journal thread. Blocking file work: call it off the async runtime.
    /// A run id that is not one safe path component is refused before anything is created.
    pub fn create(runs_dir: &Path, run_id: &str) -> Result<Self, JournalError> {
        crate::names::check_path_name("run id", run_id)
            .map_err(|e| io_at(runs_dir)(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
        let dir = runs_dir.join(run_id);
        let frames = dir.join("frames");
        fs::create_dir_all(&frames).map_err(io_at(&frames))?;
        let events_path = dir.join("events.jsonl");
        let events = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&events_path)
            .map_err(io_at(&events_path))?;
        let artifacts = Artifacts {
            events: events_path,
            frames,
            summary: dir.join("summary.json"),
        };
        Ok(Journal {
            writer: writer::Writer::spawn(events, &artifacts)?,
            artifacts,
            frame_count: 0,
            tap: JournalTap::default(),
        })
    }

    /// Hands every line and frame journaled from now on to `tap` as well.
    pub fn with_tap(mut self, tap: JournalTap) -> Self {
        self.tap = tap;
        self
    }

    /// Where this run's files are.
    pub fn artifacts(&self) -> &Artifacts {
        &self.artifacts
    }

    /// Queues one event line `{"t": unix seconds, "kind": kind, ...fields}` (the fields of an
    /// object; anything else adds none) for the journal thread, stamped now.
    pub fn event(&self, kind: Kind, fields: &impl Serialize) -> Result<(), JournalError> {
        let fields = serde_json::to_value(fields).map_err(|e| io_at(&self.artifacts.events)(e.into()))?;
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let mut line = json!({ "t": t, "kind": kind.name() });
        if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        self.writer.line(bytes)?;
        self.tap.offer(|| TapEntry::Line(Arc::new(line)));
        Ok(())
    }

    /// The next frames' files, one per camera, named `<n>_<label>_<camera>.png` in order.
    pub fn frames(&mut self, label: &str, cameras: &[&str]) -> Frames {
        let files = cameras
            .iter()
            .map(|camera| {
                self.frame_count += 1;
                (
                    camera.to_string(),
                    format!("{:05}_{label}_{camera}.png", self.frame_count),
                )
            })
            .collect();
        Frames::new(self.artifacts.frames.clone(), files, self.tap.clone())
    }

    /// Queues `summary.json`, written whole (through a temporary file, so a reader never sees
    /// half) after every line queued before it.
    pub fn summary(&self, summary: &impl Serialize) -> Result<(), JournalError> {
        let path = &self.artifacts.summary;
        let text = serde_json::to_string_pretty(summary).map_err(|e| io_at(path)(e.into()))?;
        self.writer.summary(text)
    }

    /// Resolves once everything queued so far is written, with the first write that failed
    /// since the last time this was asked.
    pub fn flushed(&self) -> Flushed {
        self.writer.flushed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the files in `dir`.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[tokio::test]
    async fn events_are_on_disk_once_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::create(dir.path(), "r1").unwrap();
        j.event(Kind::ResetTask, &json!({"task_index": 0})).unwrap();
        j.event(Kind::Move, &json!({"stop_reason": "reached"})).unwrap();
        j.flushed().written().await.unwrap();
        let text = fs::read_to_string(&j.artifacts().events).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["kind"], "move");
        assert_eq!(lines[1]["stop_reason"], "reached");
        j.frames("move", &["agentview"]).write(&[b"\x89PNG".to_vec()]).unwrap();
        assert_eq!(names(&j.artifacts().frames), ["00001_move_agentview.png"]);
        j.summary(&json!({"steps": 3})).unwrap();
        j.flushed().written().await.unwrap();
        assert!(j.artifacts().summary.is_file());
        assert_eq!(
            names(dir.path().join("r1").as_path()),
            ["events.jsonl", "frames", "summary.json"]
        );
        assert!(
            Journal::create(dir.path(), "r1").is_err(),
            "a run directory is never reused"
        );
    }

    #[tokio::test]
    async fn a_failed_write_is_reported_by_the_next_flush_only() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::create(dir.path(), "r1").unwrap();
        fs::create_dir(&j.artifacts().summary).unwrap();
        j.summary(&json!({"steps": 3})).unwrap();
        j.event(Kind::Move, &json!({})).unwrap();
        let error = j.flushed().written().await.unwrap_err();
        assert!(error.to_string().contains("summary.json"), "{error}");
        j.flushed().written().await.unwrap();
        let text = fs::read_to_string(&j.artifacts().events).unwrap();
        assert_eq!(text.lines().count(), 1, "the line after the failure is written");
    }

    #[tokio::test]
    async fn a_tap_gets_each_line_and_frame_as_journaled_and_nothing_is_made_while_nobody_listens() {
        let dir = tempfile::tempdir().unwrap();
        let tap = JournalTap::default();
        let mut j = Journal::create(dir.path(), "r1").unwrap().with_tap(tap.clone());
        j.event(Kind::Observe, &json!({})).unwrap();
        assert!(!tap.is_watched());
        let mut entries = tap.subscribe();
        j.event(Kind::Move, &json!({"stop_reason": "stalled"})).unwrap();
        j.frames("move", &["agentview"]).write(&[b"\x89PNG".to_vec()]).unwrap();
        j.flushed().written().await.unwrap();
        let text = fs::read_to_string(&j.artifacts().events).unwrap();
        let written: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        let Ok(TapEntry::Line(line)) = entries.try_recv() else {
            panic!("the line first");
        };
        assert_eq!(*line, written);
        let Ok(TapEntry::Frame { camera, png }) = entries.try_recv() else {
            panic!("then the frame");
        };
        assert_eq!((camera.as_str(), &png[..]), ("agentview", &b"\x89PNG"[..]));
        assert!(entries.try_recv().is_err(), "nothing from before the subscription");
    }

    #[test]
    fn run_ids_cannot_leave_the_runs_directory() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        fs::create_dir(&runs).unwrap();
        for id in ["..", "../escape", "a/b", "nul\0", &"r".repeat(1 << 20)] {
            let error = Journal::create(&runs, id).unwrap_err();
            assert!(error.to_string().contains("run id"), "{error}");
        }
        let entries = |p: &Path| fs::read_dir(p).unwrap().count();
        assert_eq!(
            (entries(dir.path()), entries(&runs)),
            (1, 0),
            "nothing was created anywhere"
        );
    }
}
