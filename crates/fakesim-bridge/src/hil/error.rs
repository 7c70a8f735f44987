//! Why the hardware bridge refused a call or failed.

use fakesim_arm::ArmError;
use fakesim_safety::{GuardError, SafetyError};
use fakesim_twin::TwinError;
use std::time::Duration;

/// Why the bridge refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// A mode or verb that needs the real arm, without one.
    #[error("no real arm is connected; start fakesim-hil with --port DEVICE to use {0} mode")]
    NoHardware(&'static str),
    /// The real arm and the twin disagree too much to enter `hil` without a sync.
    #[error(
        "the real arm and the twin disagree by {error_rad:.3} rad at {joint} (more than {threshold_rad} rad); \
         ask for sync MOVE_ARM_TO_TWIN or MOVE_TWIN_TO_ARM"
    )]
    Disagree {
        /// The joint that differs most.
        joint: &'static str,
        /// By how much (rad).
        error_rad: f64,
        /// The threshold (rad).
        threshold_rad: f64,
    },
    /// Motion asked for while the arm is in mirror mode.
    #[error(
        "the arm is in mirror mode (moved by hand or a leader arm); switch to hil or sim with SetMode to command it"
    )]
    MirrorMode,
    /// A simulation-only verb asked for in `hil`.
    #[error(
        "this verb only exists in simulation (the real arm cannot be stepped, teleported or restored); switch to sim \
         with SetMode first"
    )]
    SimOnlyVerb,
    /// The mode changed away from `hil` while a call was moving the real arm.
    #[error("the mode changed to {0} during the call; the call ended where the arm was")]
    ModeChanged(&'static str),
    /// A configured setting the bridge cannot run with.
    #[error("invalid setting: {0}")]
    InvalidSetting(String),
    /// A setting or request value the bridge cannot use.
    #[error("{0}")]
    InvalidArgument(String),
    /// The slow move to the twin's pose ended with the arm elsewhere (blocked, or too slow).
    #[error(
        "the real arm did not arrive at the twin's pose: {joint} is {error_rad:.3} rad away (more than \
         {threshold_rad} rad); check what blocks it, then ask for the sync again"
    )]
    NotArrived {
        /// The joint farthest from the target.
        joint: &'static str,
        /// How far (rad).
        error_rad: f64,
        /// The threshold (rad).
        threshold_rad: f64,
    },
    /// A servo reports a fault that holds the arm or switched its torque off.
    #[error(
        "{joint} (servo {id}) reports {flags}: the arm cannot carry out motion while it lasts (overload, \
         overheat, overcurrent and angle-sensor faults switch torque off; a voltage fault holds the arm). Let it \
         cool down, free the joint or check the supply (see GetHardwareStatus), then reset the stop if latched and \
         SetMode(hil)"
    )]
    ServoFault {
        /// The joint.
        joint: &'static str,
        /// Its servo.
        id: u8,
        /// The flags it reports.
        flags: feetech::protocol::status::ServoError,
    },
    /// The real arm's bus is lost or on its way back; nothing can reach the arm.
    #[error(
        "the real arm's bus on {port} is {state} ({last_error}); nothing reaches the arm until it is back. The \
         daemon reopens the port and verifies the servos, then returns in mirror with torque off \
         (GetHardwareStatus shows the link); the twin alone runs in sim meanwhile"
    )]
    BusLost {
        /// The port.
        port: String,
        /// Where the link stands (`lost`, `reconnecting`, `verifying`).
        state: &'static str,
        /// The arm's last error.
        last_error: String,
    },
    /// Torque is off after a servo fault that has cleared: the arm cannot move yet.
    #[error("{0}; reset the stop if it is latched, then SetMode(hil)")]
    TorqueOff(String),
    /// The mirror loop produced no reading of the arm in time.
    #[error("no reading of the real arm for {0:?}; check the bus (GetHardwareStatus)")]
    NoReading(Duration),
    /// A safety layer refused the command.
    #[error(transparent)]
    Safety(#[from] SafetyError),
    /// Goals that passed the layers failed the last check before the bus: a defect; nothing
    /// was written.
    #[error(
        "defect: goals that passed the safety layers failed the last check before the bus ({0}); nothing was \
         written. Please report this with the run's events.jsonl"
    )]
    Defect(SafetyError),
    /// The real arm failed.
    #[error(transparent)]
    Arm(#[from] ArmError),
    /// The twin refused or failed.
    #[error(transparent)]
    Twin(#[from] TwinError),
}

impl From<GuardError> for BridgeError {
    fn from(error: GuardError) -> Self {
        match error {
            GuardError::Refused(refusal) => BridgeError::Safety(refusal),
            GuardError::Arm(failure) => BridgeError::Arm(failure),
            GuardError::Invariant(broken) => BridgeError::Defect(broken),
            GuardError::ServoFault { joint, id, flags } => BridgeError::ServoFault {
                joint: joint.label(),
                id,
                flags,
            },
            GuardError::TorqueOff { cause } => BridgeError::TorqueOff(format!("torque is off since {cause}")),
        }
    }
}
