//! Recording a trace while the arm runs: a [`Recorder`] handle the bus task calls without ever
//! waiting (a bounded queue; a full queue drops the record and counts it), and a thread of its
//! own that writes the queue to the file, handing the file what it holds whenever the queue
//! runs empty, so that records reach the file within moments even if the process then dies.

use crate::{Extras, Header, Mode, Record, TraceError, Writer};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Records the queue holds: about four seconds of a mirror loop's readings and goals.
pub const QUEUE_RECORDS: usize = 4096;
/// Files tried when a name is taken (two runs started in the same second).
const NAME_ATTEMPTS: u32 = 100;
/// Torque not yet reported: a value no servo torque packs to.
const TORQUE_UNREPORTED: u16 = u16::MAX;

/// Six servos' torque in two bits each: 0 not known, 1 off, 2 on.
fn pack(servos: [Option<bool>; 6]) -> u16 {
    servos.iter().enumerate().fold(0, |packed, (i, servo)| {
        let code = match servo {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        };
        packed | (code << (2 * i))
    })
}

fn unpack(packed: u16) -> [Option<bool>; 6] {
    std::array::from_fn(|i| match (packed >> (2 * i)) & 3 {
        1 => Some(false),
        2 => Some(true),
        _ => None,
    })
}

/// A record to write, or `None`: finish.
type Message = Option<Record>;

struct Shared {
    origin: Instant,
    path: PathBuf,
    mode: AtomicU8,
    /// Each servo's torque, two bits each (see [`pack`]).
    torque: AtomicU16,
    dropped: AtomicU64,
    thread: Mutex<Option<JoinHandle<u64>>>,
}

/// What a finished recording wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Records in the file.
    pub written: u64,
    /// Records dropped: the queue was full, or the file could no longer be written.
    pub dropped: u64,
}

/// A trace being recorded. Cheap to clone; every call returns at once.
#[derive(Clone)]
pub struct Recorder {
    queue: SyncSender<Message>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("path", &self.shared.path).finish()
    }
}

fn mode_code(mode: Mode) -> u8 {
    match mode {
        Mode::Sim => 0,
        Mode::Mirror => 1,
        Mode::Hil => 2,
    }
}

fn mode_of(code: u8) -> Mode {
    match code {
        1 => Mode::Mirror,
        2 => Mode::Hil,
        _ => Mode::Sim,
    }
}

impl Recorder {
    /// Starts a trace in `dir` (created if missing), named `<stem>-<UTC start>.fstrace`
    /// (`-2`, `-3`… when taken), and its writer thread. Blocks on the file system: call it off
    /// an async runtime.
    pub fn start_in(dir: &Path, stem: &str, header: &Header) -> Result<Self, TraceError> {
        let io = |path: &Path| {
            let name = path.display().to_string();
            move |source| TraceError::Io { path: name, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let stem: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let stamp = utc_stamp(header.started_unix_s);
        let mut attempt = 1;
        let (file, path) = loop {
            let name = match attempt {
                1 => format!("{stem}-{stamp}.fstrace"),
                n => format!("{stem}-{stamp}-{n}.fstrace"),
            };
            let path = dir.join(name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => break (file, path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < NAME_ATTEMPTS => attempt += 1,
                Err(e) => return Err(io(&path)(e)),
            }
        };
        let writer = Writer::on(file, path.display().to_string(), header)?;
        let (recorder, inbox) = Recorder::queue(path, QUEUE_RECORDS);
        let shared = recorder.shared.clone();
        let thread = std::thread::Builder::new()
            .name("trace-writer".into())
            .spawn(move || drain(writer, &inbox, &shared))
            .map_err(io(&recorder.shared.path))?;
        *lock(&recorder.shared.thread) = Some(thread);
        Ok(recorder)
    }

    /// A recorder whose records wait in a queue of `capacity` for `inbox`'s reader.
    fn queue(path: PathBuf, capacity: usize) -> (Self, Receiver<Message>) {
        let (queue, inbox) = sync_channel(capacity);
        let shared = Arc::new(Shared {
            origin: Instant::now(),
            path,
            mode: AtomicU8::new(mode_code(Mode::Sim)),
            torque: AtomicU16::new(TORQUE_UNREPORTED),
            dropped: AtomicU64::new(0),
            thread: Mutex::new(None),
        });
        (Recorder { queue, shared }, inbox)
    }

    /// The trace file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Records dropped so far.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    fn seconds(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.shared.origin).as_secs_f64()
    }

    fn mode(&self) -> Mode {
        mode_of(self.shared.mode.load(Ordering::Relaxed))
    }

    /// Queues `record`, or drops and counts it; the first drop for a full queue is logged (a
    /// writer that stopped logged why itself, and records after a finish are expected).
    fn push(&self, record: Record) {
        let Err(refused) = self.queue.try_send(Some(record)) else {
            return;
        };
        let earlier = self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        if earlier == 0 && matches!(refused, TrySendError::Full(_)) {
            tracing::warn!(trace = %self.shared.path.display(), "trace records dropped: the writer fell behind");
        }
    }

    /// Goals written to the six servos at `at` (the twin's radians).
    pub fn goal(&self, at: Instant, rad: [f64; 6], torque: bool) {
        self.push(Record::Goal {
            t: self.seconds(at),
            rad,
            torque,
            mode: self.mode(),
        });
    }

    /// A reading of the six servos taken at `at`.
    pub fn reading(&self, at: Instant, rad: [f64; 6], extras: [Extras; 6], torque: bool) {
        self.push(Record::Reading {
            t: self.seconds(at),
            rad,
            extras,
            torque,
            mode: self.mode(),
        });
    }

    /// Each servo's torque as it stands at `at` (`None`: not known); a change is recorded.
    pub fn torque(&self, at: Instant, servos: [Option<bool>; 6]) {
        let packed = pack(servos);
        if self.shared.torque.swap(packed, Ordering::Relaxed) != packed {
            self.state(at);
        }
    }

    /// The daemon's mode as it stands at `at`; a change is recorded.
    pub fn set_mode(&self, at: Instant, mode: Mode) {
        if self.shared.mode.swap(mode_code(mode), Ordering::Relaxed) != mode_code(mode) {
            self.state(at);
        }
    }

    fn state(&self, at: Instant) {
        let servos = unpack(self.shared.torque.load(Ordering::Relaxed));
        self.push(Record::State {
            t: self.seconds(at),
            torque: servos.iter().all(|servo| *servo == Some(true)),
            servos,
            mode: self.mode(),
        });
    }

    /// Ends the recording: what is queued is written and the file flushed. Blocks until the
    /// writer thread is done; records after it are dropped.
    pub fn finish(&self) -> Summary {
        let thread = lock(&self.shared.thread).take();
        let written = thread.map_or(0, |thread| {
            // The writer may be gone after a write error; it ended then.
            let _ = self.queue.send(None);
            thread.join().unwrap_or(0)
        });
        Summary {
            written,
            dropped: self.dropped(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes queued records until told to finish or every handle is gone, flushing whenever the
/// queue runs empty; says how many it wrote. A write error ends it (later records count as
/// dropped).
fn drain(mut writer: Writer, inbox: &Receiver<Message>, shared: &Shared) -> u64 {
    let mut written = 0;
    let trace = shared.path.display();
    let mut next = inbox.recv().ok();
    while let Some(Some(record)) = next {
        let mut outcome = writer.write(&record);
        written += u64::from(outcome.is_ok());
        next = loop {
            match inbox.try_recv() {
                Ok(Some(record)) if outcome.is_ok() => {
                    outcome = writer.write(&record);
                    written += u64::from(outcome.is_ok());
                }
                Ok(message) => break Some(message),
                Err(TryRecvError::Disconnected) => break None,
                Err(TryRecvError::Empty) => {
                    outcome = outcome.and_then(|()| writer.flush());
                    break inbox.recv().ok();
                }
            }
        };
        if let Err(error) = outcome.and_then(|()| writer.flush()) {
            tracing::error!(%trace, %error, "the trace cannot be written; recording stops");
            return written;
        }
    }
    if let Err(error) = writer.flush() {
        tracing::error!(%trace, %error, "the trace's last records cannot be written");
    }
    tracing::info!(%trace, written, dropped = shared.dropped.load(Ordering::Relaxed), "trace closed");
    written
}

/// Seconds since the Unix epoch now.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A Unix time as a compact UTC stamp, `YYYYMMDDTHHMMSSZ` (proleptic Gregorian calendar).
pub fn utc_stamp(unix_s: f64) -> String {
    // Saturating conversion; times before 1970 or beyond any real clock are not expected.
    let secs = unix_s.max(0.0) as i64;
    let (days, day_s) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date, counting in 400-year eras from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        day_s / 3600,
        day_s % 3600 / 60,
        day_s % 60
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn header() -> Header {
        Header {
            arm: "so101".into(),
            robot_id: Some("my arm/1".into()),
            side: None,
            started_unix_s: 1_764_801_000.0,
        }
    }

    #[test]
    fn utc_stamps_are_civil_dates() {
        assert_eq!(utc_stamp(0.0), "19700101T000000Z");
        assert_eq!(utc_stamp(951_782_400.0), "20000229T000000Z");
        assert_eq!(utc_stamp(1_764_801_000.5), "20251203T223000Z");
    }

    #[test]
    fn a_recording_is_read_back_in_order_under_a_name_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let first = Recorder::start_in(dir.path(), "my arm/1", &header()).unwrap();
        let second = Recorder::start_in(dir.path(), "my arm/1", &header()).unwrap();
        let name = |r: &Recorder| r.path().file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(name(&first), "my_arm_1-20251203T223000Z.fstrace");
        assert_eq!(name(&second), "my_arm_1-20251203T223000Z-2.fstrace");
        let t0 = Instant::now();
        let later = |ms| t0 + std::time::Duration::from_millis(ms);
        first.set_mode(later(0), Mode::Mirror);
        first.reading(later(1), [0.1; 6], [Extras::default(); 6], false);
        first.torque(later(2), [Some(true); 6]);
        first.torque(later(3), [Some(true); 6]);
        first.set_mode(later(3), Mode::Hil);
        first.goal(later(4), [0.2; 6], true);
        let summary = first.finish();
        assert_eq!(summary, Summary { written: 5, dropped: 0 });
        first.goal(later(5), [0.3; 6], true);
        assert_eq!(first.dropped(), 1, "a record after the finish is dropped and counted");
        let trace = crate::read(first.path()).unwrap();
        assert_eq!(trace.header, header());
        let kinds: Vec<_> = trace
            .records
            .iter()
            .map(|r| match r {
                Record::Goal { mode, torque, .. } => ("goal", *mode, *torque),
                Record::Reading { mode, torque, .. } => ("reading", *mode, *torque),
                Record::State { mode, torque, .. } => ("state", *mode, *torque),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("state", Mode::Mirror, false),
                ("reading", Mode::Mirror, false),
                ("state", Mode::Mirror, true),
                ("state", Mode::Hil, true),
                ("goal", Mode::Hil, true),
            ]
        );
        drop(second);
    }

    #[test]
    fn a_full_queue_drops_records_and_counts_them() {
        let (recorder, inbox) = Recorder::queue(PathBuf::from("unwritten"), 2);
        for _ in 0..5 {
            recorder.goal(Instant::now(), [0.0; 6], true);
        }
        assert_eq!(recorder.dropped(), 3);
        assert_eq!(inbox.try_iter().count(), 2);
    }
}
