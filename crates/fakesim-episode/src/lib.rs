//! The episode engine of fakesim-hil: SO-101 tabletop tasks, end-effector moves solved by
//! damped least-squares IK on the twin, gripper actions, their stop reasons, the step budget,
//! and the run journal.

pub mod actuation;
pub mod budget;
pub mod error;
pub mod gripper;
pub mod ik;
pub mod journal;
pub mod motion;
pub mod names;
pub mod session;
pub mod tap;
pub mod tasks;
pub mod ticks;

pub use actuation::{Actuation, SimActuation};
pub use error::EpisodeError;
pub use gripper::{GripperCommand, GripperStop};
pub use motion::MoveStop;
pub use session::{ArmActuation, Engine, EngineConfig, ResetRequest, Status};
