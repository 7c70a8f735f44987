//! Why a command or a torque switch did not happen, and the check that a servo's fault flags
//! let the arm move.

use crate::{FaultAction, FaultPolicy, SafetyError, SafetyEvent};
use fakesim_arm::{ArmError, ArmState, Joint};
use feetech::protocol::status::ServoError;

/// Why a command or a torque switch did not happen.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// A layer refused the targets; nothing was sent.
    #[error(transparent)]
    Refused(#[from] SafetyError),
    /// The arm failed.
    #[error(transparent)]
    Arm(#[from] ArmError),
    /// A goal broke the last check before the bus: a defect of the layers; nothing was written.
    #[error(
        "defect: a goal that passed the safety layers failed the last check before the bus ({0}); nothing was written"
    )]
    Invariant(SafetyError),
    /// A servo reports a fault that holds the arm or switched its torque off: the arm cannot
    /// carry out motion while it lasts.
    #[error("{joint} (servo {id}) reports {flags}; motion is refused until the fault clears")]
    ServoFault {
        /// The joint.
        joint: Joint,
        /// Its servo.
        id: u8,
        /// The flags it reports.
        flags: ServoError,
    },
    /// Torque is off on the arm (a fault switched it off, since cleared): nothing it was
    /// asked would move it.
    #[error("torque is off ({cause}); the arm cannot move until SetMode(hil) switches it back on")]
    TorqueOff {
        /// Why it went off.
        cause: String,
    },
}

impl GuardError {
    /// The journal record of a refusal by a layer.
    pub fn event(&self) -> Option<SafetyEvent> {
        match self {
            GuardError::Refused(refusal) => Some(refusal.event()),
            GuardError::Invariant(broken) => Some(SafetyEvent::InvariantViolated {
                detail: broken.to_string(),
            }),
            _ => None,
        }
    }
}

/// Refuses when a servo of `state` reports a fault the fault policy holds the arm or switches
/// torque off for.
pub fn check_servo_faults(state: &ArmState) -> Result<(), GuardError> {
    check_fault_flags(Joint::ALL.into_iter().filter_map(|joint| {
        state
            .joint(joint)
            .servo
            .map(|servo| (joint, servo.id, servo.error_flags))
    }))
}

/// Refuses on the first `(joint, id, flags)` whose flags hold the arm or switch torque off.
pub(super) fn check_fault_flags(servos: impl IntoIterator<Item = (Joint, u8, ServoError)>) -> Result<(), GuardError> {
    match servos
        .into_iter()
        .find(|(_, _, flags)| FaultPolicy::action_for(*flags) != FaultAction::Continue)
    {
        Some((joint, id, flags)) => Err(GuardError::ServoFault { joint, id, flags }),
        None => Ok(()),
    }
}
