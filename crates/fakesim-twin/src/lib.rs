//! The MuJoCo twin of the SO-101 (or the SO-100): the arms' model files, scene loading, physics verbs, rendering, images.
//!
//! [`Sim`] is the twin used on one thread; [`TwinHandle`] owns a `Sim` on its own thread and is
//! what async callers hold. Rendering runs on a separate thread because MuJoCo's GL renderer
//! cannot move between threads.

pub mod backlog;
pub mod board;
pub mod cameras;
pub mod clock;
pub mod colors;
pub mod dynamics;
pub mod error;
pub mod handle;
pub mod image;
mod lifeline;
pub mod look;
mod models;
pub mod preview;
pub mod quality;
pub mod render;
pub mod scene;
pub mod sim;
pub mod tap;
pub mod watch;
mod worker;

pub use backlog::{Admission, FrameRoom, RenderCounts};
pub use board::Board;
pub use cameras::{BadProfile, CameraProfile};
pub use clock::TickClock;
pub use colors::{BadColor, PartColors, Rgb};
pub use dynamics::{Dynamics, JointDynamics};
pub use error::TwinError;
/// The arm's vocabulary the twin speaks: the arm registry, joints, names quoted back, joint
/// values and ranges.
pub use fakesim_arm::{ArmSpec, ArmType, arms, joints, quote, values};
pub use handle::{CameraSnapshot, TwinConfig, TwinFault, TwinHandle};
pub use look::Look;
pub use look::backdrop::Backdrop;
pub use look::variations::Variations;
pub use preview::{PreviewReport, PreviewRequest, StartState};
pub use quality::RenderQuality;
pub use render::Frame;
pub use scene::Scene;
pub use sim::{ModelInfo, Pose, RenderSnapshot, RobotState, Sim};
pub use tap::{ArmJoints, TickObserver, TickSnapshot};
pub use values::JointValues;
pub use watch::Watch;

/// MuJoCo's version and the directory it was linked from, for diagnostics.
pub use fakesim_mujoco_runtime::{LIBRARY_DIR as MUJOCO_LIBRARY_DIR, MUJOCO_VERSION};
