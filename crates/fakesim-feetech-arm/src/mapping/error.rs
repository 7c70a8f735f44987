//! Why a mapping table does not fit a calibration or the twin; every variant names the joint.

/// A mapping table that cannot be used with this calibration and twin.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MappingError {
    /// Row `row` is not for the twin joint at that position.
    #[error("mapping row {row} is for twin joint {got:?}, expected {expected:?} (rows follow the twin's joint order)")]
    WrongTwinJoint {
        /// Row index.
        row: usize,
        /// The twin joint that row must map.
        expected: &'static str,
        /// The twin joint it names.
        got: String,
    },
    /// A row with an impossible sign, offset or conversion.
    #[error("joint {joint}: {reason}")]
    InvalidRow {
        /// Joint label.
        joint: String,
        /// What is wrong.
        reason: String,
    },
    /// A mapping table file cannot be read.
    #[error("mapping file {path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// Two joints are mapped to one servo.
    #[error("servo {id} is mapped to both {first} and {second}")]
    DuplicateServoId {
        /// The servo id.
        id: u8,
        /// The first joint using it.
        first: String,
        /// The second joint using it.
        second: String,
    },
    /// The calibration file has no motor for the joint.
    #[error("joint {joint} (servo {servo_id}): the calibration has no motor named {joint:?}")]
    MissingMotor {
        /// Joint label (the motor name looked up).
        joint: String,
        /// Servo id the mapping expects.
        servo_id: u8,
    },
    /// The calibration gives the joint's motor another servo id.
    #[error("joint {joint}: the mapping drives servo {mapping_id}, the calibration says servo {calibration_id}")]
    IdMismatch {
        /// Joint label.
        joint: String,
        /// Id in the mapping table.
        mapping_id: u8,
        /// Id in the calibration file.
        calibration_id: u8,
    },
    /// The calibration values of the joint's motor are unusable (e.g. an empty range).
    #[error("joint {joint}: invalid calibration: {reason}")]
    InvalidCalibration {
        /// Joint label.
        joint: String,
        /// What is wrong.
        reason: String,
    },
    /// The calibrated range, mapped to the twin's radians, does not overlap the twin's range.
    #[error(
        "joint {joint}: calibrated range maps to [{calibrated_lo:.4}, {calibrated_hi:.4}] rad \
         ({lo_deg:.1}..{hi_deg:.1} deg), which does not overlap the twin's [{twin_lo:.4}, {twin_hi:.4}] rad \
         ({twin_lo_deg:.1}..{twin_hi_deg:.1} deg); re-run `fakesim-hil calibrate` with the joint in the \
         middle of its travel, or fix the joint's sign and offset in the mapping (`fakesim-hil align`)",
        lo_deg = calibrated_lo.to_degrees(),
        hi_deg = calibrated_hi.to_degrees(),
        twin_lo_deg = twin_lo.to_degrees(),
        twin_hi_deg = twin_hi.to_degrees(),
    )]
    NoOverlap {
        /// Joint label.
        joint: String,
        /// Lower end of the calibrated range (rad).
        calibrated_lo: f64,
        /// Upper end of the calibrated range (rad).
        calibrated_hi: f64,
        /// Lower end of the twin's range (rad).
        twin_lo: f64,
        /// Upper end of the twin's range (rad).
        twin_hi: f64,
    },
}
