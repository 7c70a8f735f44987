//! Reading recordings: the daemon's traces, LeRobotDataset episodes, and plain tables (CSV or
//! NPY) of time, goals and measured positions. [`load`] tells them apart.

pub mod lerobot;
pub mod table;
pub mod trace;

use crate::error::IdentifyError;
use crate::recording::Recording;
use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping, LeRobotUnit};
use fakesim_twin::joints::Joint;
use fakesim_twin::values::Bounds;
use fakesim_twin::{ArmType, Scene, Sim};
use feetech::calibration::{Calibration, so100, so101};
use std::path::Path;

/// A read failure naming the file.
pub(crate) fn read_error(path: &Path, what: String) -> IdentifyError {
    IdentifyError::Read {
        path: path.display().to_string(),
        what,
    }
}

/// LeRobot's joint values to the twin's radians, through the arm's calibration.
#[derive(Debug, Clone)]
pub struct Units {
    arm: ArmType,
    mapping: CalibratedMapping,
    unit: LeRobotUnit,
}

impl Units {
    /// Conversions for `arm` through `calibration` (LeRobot's file; the nominal arm's without
    /// one), values in `unit` (degrees or ±100; the gripper 0..100 either way).
    pub fn new(arm: ArmType, calibration: Option<&Path>, unit: LeRobotUnit) -> Result<Self, IdentifyError> {
        let calibration_of = match (calibration, arm) {
            (Some(file), _) => Calibration::load(file).map_err(|e| read_error(file, e.to_string()))?,
            (None, ArmType::So101) => so101::nominal(),
            (None, ArmType::So100) => so100::nominal(),
        };
        let ranges: [Bounds; 6] = Sim::load(&Scene::builtin(arm, false), 1)?.joint_ranges();
        let mapping = JointMapping::for_arm(arm)
            .bind(&calibration_of, &ranges)
            .map_err(|e| read_error(calibration.unwrap_or(Path::new("(nominal calibration)")), e.to_string()))?;
        Ok(Units { arm, mapping, unit })
    }

    /// The arm.
    pub fn arm(&self) -> ArmType {
        self.arm
    }

    /// Six LeRobot values as radians.
    pub fn to_rad(&self, values: &[f64; 6]) -> [f64; 6] {
        std::array::from_fn(|j| self.mapping.lerobot_to_rad(Joint::ALL[j], values[j], self.unit))
    }
}

/// Which recordings of a file or directory to read.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Dataset episodes (all when empty).
    pub episodes: Vec<u64>,
}

/// Reads the recording(s) at `path`: a LeRobotDataset (a directory with `meta/info.json`), a
/// trace (`FSTRACE1` at its start), or a `.csv` / `.npy` table in radians.
pub fn load(path: &Path, units: &Units, selection: &Selection) -> Result<Vec<Recording>, IdentifyError> {
    if path.join("meta").join("info.json").is_file() {
        return lerobot::read(path, &selection.episodes, units);
    }
    if path.is_dir() {
        return Err(read_error(
            path,
            "a directory without meta/info.json is no LeRobotDataset".into(),
        ));
    }
    let mut magic = [0u8; 8];
    let head = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut magic))
        .map_err(|e| read_error(path, e.to_string()))?;
    if head == 8 && &magic == fakesim_trace::MAGIC {
        return trace::read(path).map(|r| vec![r]);
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("csv") => table::read_csv(path, units.arm()).map(|r| vec![r]),
        Some("npy") => table::read_npy(path, units.arm()).map(|r| vec![r]),
        _ => Err(read_error(
            path,
            "not a trace, a LeRobotDataset directory, a .csv or a .npy table".into(),
        )),
    }
}
