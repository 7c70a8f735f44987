//! Hardware in the loop at run time: the modes (sim, mirror, hil), the bridge that mirrors the
//! real arm into the twin and sends commands through the safety layers, and the actuations the
//! episode engine uses in each mode.
//!
//! Timing differs by mode: in `sim` a tick is lock-step (as fast as physics runs); in `hil` a
//! tick lasts one control period of real time, and stop reasons are judged on the measured
//! joints mirrored into the twin.

mod actuation;
mod bridge;
mod config;
mod error;
mod mode;
mod shadow;
mod stall;
mod ticks;

pub use actuation::{BridgeActuation, episode_error, run_action};
pub use bridge::{BridgeParts, HardwareBridge, ModeSwitch, Route, Sample};
pub use config::BridgeConfig;
pub use error::BridgeError;
pub use mode::{Mode, SyncOption, UnknownMode, VerbKind};
pub use shadow::{Finding, JointResidual, Shadow, ShadowConfig, ShadowInput, ShadowModel};
pub use stall::{StallConfig, StallGuard, StallLimit, Stalled};
