//! The twin behind the interfaces the arm's vocabulary and the safety pipeline own: the twin
//! as an [`fakesim_arm::Arm`] ([`TwinArm`]), its preview as the pipeline's last layer
//! ([`TwinPreviewGate`]), and forward kinematics on a scratch copy for the table layer
//! ([`ScratchTwinKinematics`]).

mod arm;
mod kinematics;
mod preview_gate;

pub use arm::TwinArm;
pub use kinematics::ScratchTwinKinematics;
pub use preview_gate::{
    ASSUMED_SPEED_RAD_S, DEFAULT_PREVIEW_HORIZON_TICKS, PREVIEW_CONTACT_TOLERANCE_M, TwinPreviewGate,
};
