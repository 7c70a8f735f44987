//! The trace of one arm's bus: every goal written, every reading taken, and the mode and torque
//! state, as fixed-size little-endian records appended to one file.
//!
//! Layout: the 8 bytes `FSTRACE1`, a `u32` length and that many bytes of JSON ([`Header`]),
//! then records of [`RECORD_BYTES`] bytes each. A crash can leave only a partial last record,
//! which [`read`] drops, so a trace stays readable up to its last whole record. Record fields:
//!
//! | bytes | field |
//! |---|---|
//! | 0 | kind: 1 goal, 2 reading, 3 state |
//! | 1 | flags: bit 0 torque on (every servo confirmed on); bits 1–2 mode (0 sim, 1 mirror, 2 hil) |
//! | 2..8 | state records: each servo's torque, 0 not known, 1 off, 2 on (zero in older files); else zero |
//! | 8..16 | time, `f64` seconds since the trace began (the bus's write or read time) |
//! | 16..40 | six `f32` joint positions, the twin's radians (goal or reading) |
//! | 40..52 | six `i16` speeds, mrad/s (readings) |
//! | 52..64 | six `i16` loads, 0.1 % of full duty, signed (readings) |
//! | 64..70 | six `u8` voltages, 0.1 V (readings) |
//! | 70..72 | zero |

pub mod recorder;

pub use recorder::{Recorder, Summary};

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"FSTRACE1";
/// Size of one record.
pub const RECORD_BYTES: usize = 72;
/// Largest header accepted when reading (bytes).
const MAX_HEADER: u32 = 64 * 1024;
/// Records buffered between flushes to the file.
const FLUSH_EVERY: u32 = 64;

/// What a trace cannot do.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Reading or writing the file failed.
    #[error("trace {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a trace of this format.
    #[error("trace {path}: {what}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        what: String,
    },
}

/// What the trace is of, written once at its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The arm (`so101` or `so100`).
    pub arm: String,
    /// LeRobot's robot id, when known.
    #[serde(default)]
    pub robot_id: Option<String>,
    /// The side of a pair (`left`, `right`), or none.
    #[serde(default)]
    pub side: Option<String>,
    /// Wall-clock start, seconds since the Unix epoch.
    pub started_unix_s: f64,
}

/// The daemon's mode when a record was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The twin alone.
    Sim,
    /// The twin follows the arm; torque off.
    Mirror,
    /// The API moves the arm.
    Hil,
}

/// One servo's extra readings besides position.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Extras {
    /// Speed (rad/s).
    pub speed_rad_s: f64,
    /// Load, signed percent of full duty.
    pub load_percent: f64,
    /// Input voltage (V).
    pub voltage_v: f64,
}

/// One record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Record {
    /// Goals written to the six servos at `t`.
    Goal {
        /// Bus write time (s since the trace began).
        t: f64,
        /// Goal positions, the twin's radians.
        rad: [f64; 6],
        /// Whether torque was on.
        torque: bool,
        /// The mode.
        mode: Mode,
    },
    /// A reading of the six servos at `t`.
    Reading {
        /// Read time (s since the trace began).
        t: f64,
        /// Present positions, the twin's radians.
        rad: [f64; 6],
        /// Speed, load and voltage per joint.
        extras: [Extras; 6],
        /// Whether torque was on.
        torque: bool,
        /// The mode.
        mode: Mode,
    },
    /// The mode or torque changed at `t`.
    State {
        /// Time (s since the trace began).
        t: f64,
        /// Whether torque is on (every servo confirmed on).
        torque: bool,
        /// Each servo's torque as it last confirmed it (`None`: not known), action-key order.
        servos: [Option<bool>; 6],
        /// The mode.
        mode: Mode,
    },
}

/// One servo's torque as a byte of a state record.
fn torque_code(torque: Option<bool>) -> u8 {
    match torque {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    }
}

fn torque_of_code(code: u8) -> Option<bool> {
    match code {
        1 => Some(false),
        2 => Some(true),
        _ => None,
    }
}

fn flags(torque: bool, mode: Mode) -> u8 {
    let mode = match mode {
        Mode::Sim => 0,
        Mode::Mirror => 1,
        Mode::Hil => 2,
    };
    u8::from(torque) | (mode << 1)
}

fn unflag(flags: u8) -> (bool, Mode) {
    let mode = match (flags >> 1) & 3 {
        1 => Mode::Mirror,
        2 => Mode::Hil,
        _ => Mode::Sim,
    };
    (flags & 1 == 1, mode)
}

/// Saturating conversion of a scaled value to `i16`.
fn to_i16(x: f64) -> i16 {
    // `as` saturates and maps NaN to 0.
    x.round() as i16
}

impl Record {
    fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        let (kind, t, torque, mode) = match *self {
            Record::Goal { t, torque, mode, .. } => (1, t, torque, mode),
            Record::Reading { t, torque, mode, .. } => (2, t, torque, mode),
            Record::State { t, torque, mode, .. } => (3, t, torque, mode),
        };
        b[0] = kind;
        b[1] = flags(torque, mode);
        if let Record::State { servos, .. } = self {
            for (i, servo) in servos.iter().enumerate() {
                b[2 + i] = torque_code(*servo);
            }
        }
        b[8..16].copy_from_slice(&t.to_le_bytes());
        if let Record::Goal { rad, .. } | Record::Reading { rad, .. } = self {
            for (i, r) in rad.iter().enumerate() {
                b[16 + 4 * i..20 + 4 * i].copy_from_slice(&(*r as f32).to_le_bytes());
            }
        }
        if let Record::Reading { extras, .. } = self {
            for (i, e) in extras.iter().enumerate() {
                b[40 + 2 * i..42 + 2 * i].copy_from_slice(&to_i16(e.speed_rad_s * 1000.0).to_le_bytes());
                b[52 + 2 * i..54 + 2 * i].copy_from_slice(&to_i16(e.load_percent * 10.0).to_le_bytes());
                // `as` saturates into 0..=255.
                b[64 + i] = (e.voltage_v * 10.0).round() as u8;
            }
        }
        b
    }

    fn decode(b: &[u8]) -> Option<Record> {
        let f64_at = |at: usize| {
            b.get(at..at + 8)
                .and_then(|s| s.try_into().ok())
                .map(f64::from_le_bytes)
        };
        let f32_at = |at: usize| {
            b.get(at..at + 4)
                .and_then(|s| s.try_into().ok())
                .map(f32::from_le_bytes)
        };
        let i16_at = |at: usize| {
            b.get(at..at + 2)
                .and_then(|s| s.try_into().ok())
                .map(i16::from_le_bytes)
        };
        let t = f64_at(8)?;
        let (torque, mode) = unflag(*b.get(1)?);
        let mut rad = [0.0; 6];
        for (i, r) in rad.iter_mut().enumerate() {
            *r = f64::from(f32_at(16 + 4 * i)?);
        }
        match b.first()? {
            1 => Some(Record::Goal { t, rad, torque, mode }),
            2 => {
                let mut extras = [Extras::default(); 6];
                for (i, e) in extras.iter_mut().enumerate() {
                    e.speed_rad_s = f64::from(i16_at(40 + 2 * i)?) / 1000.0;
                    e.load_percent = f64::from(i16_at(52 + 2 * i)?) / 10.0;
                    e.voltage_v = f64::from(*b.get(64 + i)?) / 10.0;
                }
                Some(Record::Reading {
                    t,
                    rad,
                    extras,
                    torque,
                    mode,
                })
            }
            3 => {
                let mut servos = [None; 6];
                for (i, servo) in servos.iter_mut().enumerate() {
                    *servo = torque_of_code(*b.get(2 + i)?);
                }
                Some(Record::State {
                    t,
                    torque,
                    servos,
                    mode,
                })
            }
            _ => None,
        }
    }
}

/// Appends records to a new trace file, flushing every few records so a crash loses little.
#[derive(Debug)]
pub struct Writer {
    out: BufWriter<File>,
    path: String,
    unflushed: u32,
}

impl Writer {
    /// Creates (or truncates) `path` and writes the header.
    pub fn create(path: &Path, header: &Header) -> Result<Self, TraceError> {
        let name = path.display().to_string();
        let io = |source| TraceError::Io {
            path: name.clone(),
            source,
        };
        let file = File::create(path).map_err(io)?;
        Writer::on(file, name, header)
    }

    /// Writes the header to `file` (new and empty), named `name` in errors.
    pub(crate) fn on(file: File, name: String, header: &Header) -> Result<Self, TraceError> {
        let io = |source| TraceError::Io {
            path: name.clone(),
            source,
        };
        let json = serde_json::to_vec(header).map_err(|e| TraceError::Format {
            path: name.clone(),
            what: e.to_string(),
        })?;
        let mut out = BufWriter::new(file);
        out.write_all(MAGIC).map_err(io)?;
        // A header is a few hundred bytes; the length always fits.
        out.write_all(&(json.len() as u32).to_le_bytes()).map_err(io)?;
        out.write_all(&json).map_err(io)?;
        out.flush().map_err(io)?;
        Ok(Writer {
            out,
            path: name,
            unflushed: 0,
        })
    }

    /// Appends one record.
    pub fn write(&mut self, record: &Record) -> Result<(), TraceError> {
        let io = |source| TraceError::Io {
            path: self.path.clone(),
            source,
        };
        self.out.write_all(&record.encode()).map_err(io)?;
        self.unflushed += 1;
        if self.unflushed >= FLUSH_EVERY {
            self.unflushed = 0;
            self.out.flush().map_err(|source| TraceError::Io {
                path: self.path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// Writes out every record appended so far.
    pub fn flush(&mut self) -> Result<(), TraceError> {
        self.unflushed = 0;
        self.out.flush().map_err(|source| TraceError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// A trace as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// What it is of.
    pub header: Header,
    /// The whole records, in file order.
    pub records: Vec<Record>,
    /// Bytes at the end that did not make a whole record (a crash mid-write), dropped.
    pub torn_bytes: usize,
}

/// Reads a trace file, dropping a partial last record and records of unknown kind.
pub fn read(path: &Path) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    let format = |what: &str| TraceError::Format {
        path: name.clone(),
        what: what.to_owned(),
    };
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|source| TraceError::Io {
            path: name.clone(),
            source,
        })?;
    if bytes.get(..8) != Some(MAGIC.as_slice()) {
        return Err(format("not a fakesim-hil trace (no FSTRACE1 at its start)"));
    }
    let len = bytes.get(8..12).and_then(|s| s.try_into().ok()).map(u32::from_le_bytes);
    let len = len
        .filter(|l| *l <= MAX_HEADER)
        .ok_or_else(|| format("header length missing or too large"))?;
    let body_at = 12 + len as usize;
    let json = bytes.get(12..body_at).ok_or_else(|| format("header cut short"))?;
    let header: Header = serde_json::from_slice(json).map_err(|e| format(&format!("header: {e}")))?;
    let body = &bytes[body_at..];
    let chunks = body.chunks_exact(RECORD_BYTES);
    let torn_bytes = chunks.remainder().len();
    Ok(Trace {
        header,
        records: chunks.filter_map(Record::decode).collect(),
        torn_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            arm: "so101".into(),
            robot_id: Some("arm".into()),
            side: None,
            started_unix_s: 1.0,
        }
    }

    #[test]
    fn records_round_trip_and_a_torn_tail_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.trace");
        let goal = Record::Goal {
            t: 0.5,
            rad: [0.1, -0.2, 0.3, 0.0, 1.0, -0.1],
            torque: true,
            mode: Mode::Hil,
        };
        let extras = [Extras {
            speed_rad_s: -1.234,
            load_percent: 12.3,
            voltage_v: 12.1,
        }; 6];
        let reading = Record::Reading {
            t: 0.501,
            rad: [0.25; 6],
            extras,
            torque: true,
            mode: Mode::Hil,
        };
        let state = Record::State {
            t: 0.6,
            torque: false,
            servos: [Some(false), None, Some(true), Some(false), Some(false), Some(false)],
            mode: Mode::Mirror,
        };
        let mut w = Writer::create(&path, &header()).unwrap();
        for r in [goal, reading, state] {
            w.write(&r).unwrap();
        }
        w.flush().unwrap();
        drop(w);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[2, 0, 0]);
        std::fs::write(&path, bytes).unwrap();
        let trace = read(&path).unwrap();
        assert_eq!(trace.header, header());
        assert_eq!(trace.torn_bytes, 3);
        assert_eq!(trace.records.len(), 3);
        assert_eq!(trace.records[2], state);
        let Record::Reading { rad, extras, .. } = trace.records[1] else {
            panic!("not a reading")
        };
        assert!((rad[0] - 0.25).abs() < 1e-6);
        assert!((extras[0].speed_rad_s + 1.234).abs() < 1e-3 && (extras[0].voltage_v - 12.1).abs() < 1e-9);
        let Record::Goal { rad, .. } = trace.records[0] else {
            panic!("not a goal")
        };
        assert!((rad[1] + 0.2).abs() < 1e-6);
    }

    #[test]
    fn a_file_of_another_kind_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"not a trace at all").unwrap();
        assert!(matches!(read(&path), Err(TraceError::Format { .. })));
    }
}
