//! The daemon's own traces (`--trace`, see `fakesim_trace`): goals at their bus write time,
//! readings at their read time, each with the torque state.

use super::read_error;
use crate::error::IdentifyError;
use crate::recording::Recording;
use fakesim_trace::Record;
use fakesim_twin::ArmType;
use std::path::Path;

/// Reads one trace file as a recording.
pub fn read(path: &Path) -> Result<Recording, IdentifyError> {
    let trace = fakesim_trace::read(path).map_err(|e| read_error(path, e.to_string()))?;
    let arm: ArmType = trace
        .header
        .arm
        .parse()
        .map_err(|e: fakesim_twin::arms::UnknownArm| read_error(path, e.to_string()))?;
    if trace.torn_bytes > 0 {
        tracing::info!(path = %path.display(), bytes = trace.torn_bytes, "a partial last record (a crash mid-write) is dropped");
    }
    let mut rec = Recording {
        name: path.display().to_string(),
        arm,
        goals: Vec::new(),
        readings: Vec::new(),
        torque: Some(Vec::new()),
        load: Some(Vec::new()),
    };
    for record in trace.records {
        match record {
            Record::Goal { t, rad, .. } => rec.goals.push((t, rad)),
            Record::Reading {
                t, rad, extras, torque, ..
            } => {
                rec.readings.push((t, rad));
                rec.torque.get_or_insert_default().push(torque);
                rec.load.get_or_insert_default().push(extras.map(|e| e.load_percent));
            }
            Record::State { .. } => {}
        }
    }
    Ok(rec)
}
