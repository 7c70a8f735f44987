//! Joint scalars gathered into columns and sent a batch at a time: one `send_columns` per
//! entity every [`FLUSH_GAP`] instead of one `log` per value, which is what kept a tick's cost
//! near that of a tick without the live view.

use crate::paths;
use rerun::{RecordingStream, RecordingStreamResult, Scalars, TimeColumn};
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Longest time a gathered value waits before it is sent.
pub(crate) const FLUSH_GAP: Duration = Duration::from_millis(50);

/// The sequence timeline a row is placed on besides wall time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clock {
    /// The twin's control tick.
    Tick = 0,
    /// The real arm's reading.
    Reading = 1,
}

impl Clock {
    const ALL: [Clock; 2] = [Clock::Tick, Clock::Reading];

    fn timeline(self) -> &'static str {
        match self {
            Clock::Tick => paths::TICK,
            Clock::Reading => paths::READING,
        }
    }
}

/// Where a value sits: its clock, the stamp on it, and the wall time.
pub(crate) type At = (Clock, u64, SystemTime);

/// One entity's rows on one clock, waiting to be sent.
#[derive(Default)]
struct Column {
    stamps: Vec<i64>,
    walls_ns: Vec<i64>,
    values: Vec<f64>,
}

/// The scalars gathered since the last send, by entity path, then clock (its index).
pub(crate) struct Columns {
    pending: HashMap<String, [Column; 2]>,
    /// When the oldest gathered value arrived, if any waits.
    oldest: Option<Instant>,
}

impl Columns {
    pub fn new() -> Self {
        Columns {
            pending: HashMap::new(),
            oldest: None,
        }
    }

    /// Gathers `value` for `path` at `stamp` of `clock` and wall time `wall`.
    pub fn push(&mut self, path: &str, (clock, stamp, wall): At, value: f64) {
        let columns = match self.pending.get_mut(path) {
            Some(columns) => columns,
            None => self.pending.entry(path.to_owned()).or_default(),
        };
        let column = &mut columns[clock as usize];
        column.stamps.push(i64::try_from(stamp).unwrap_or(i64::MAX));
        let wall_ns = wall.duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
        column.walls_ns.push(i64::try_from(wall_ns).unwrap_or(i64::MAX));
        column.values.push(value);
        self.oldest.get_or_insert_with(Instant::now);
    }

    /// How long the oldest gathered value may still wait; `None` when nothing waits.
    pub fn due_in(&self) -> Option<Duration> {
        self.oldest.map(|at| FLUSH_GAP.saturating_sub(at.elapsed()))
    }

    /// Sends what was gathered when the oldest value has waited [`FLUSH_GAP`].
    pub fn send_if_due(&mut self, rec: &RecordingStream) -> RecordingStreamResult<()> {
        match self.due_in() {
            Some(left) if left.is_zero() => self.send(rec),
            _ => Ok(()),
        }
    }

    /// Sends every gathered column (one chunk per entity and clock).
    pub fn send(&mut self, rec: &RecordingStream) -> RecordingStreamResult<()> {
        self.oldest = None;
        for (path, columns) in self.pending.iter_mut() {
            for (clock, column) in Clock::ALL.into_iter().zip(columns.iter_mut()) {
                if column.values.is_empty() {
                    continue;
                }
                let indexes = [
                    TimeColumn::new_sequence(clock.timeline(), column.stamps.drain(..)),
                    TimeColumn::new_timestamp_nanos_since_epoch(paths::WALL_TIME, column.walls_ns.drain(..)),
                ];
                let values = Scalars::new(column.values.drain(..)).columns_of_unit_batches()?;
                rec.send_columns(path.as_str(), indexes, values)?;
            }
        }
        Ok(())
    }
}
