//! How the engine runs episodes: its settings, the home pose brought into range and the
//! per-call cap.

use crate::tasks::TaskRef;
use fakesim_twin::values::Bounds;
use std::path::PathBuf;

/// How far inside a range's end a pose brought into it stays (rad).
const RANGE_INSET_RAD: f64 = 0.01;
/// Control ticks one move or gripper call may run, by default (a cap, not a quota).
pub const MAX_STEPS_PER_CALL: u32 = 30;

/// `pose` brought inside `limits` (an arm's effective range): each joint past an end stops
/// [`RANGE_INSET_RAD`] short of it (at the middle of a narrower range).
pub fn within_limits(pose: [f64; 6], limits: &[Bounds; 6]) -> [f64; 6] {
    std::array::from_fn(|i| {
        let Bounds { lo, hi } = limits[i];
        let inset = RANGE_INSET_RAD.min((hi - lo) / 2.0).max(0.0);
        pose[i].clamp(lo + inset, (hi - inset).max(lo + inset))
    })
}

/// How the engine runs episodes.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Step budget of an episode (control ticks).
    pub max_steps: u64,
    /// Ticks one move or gripper call may run.
    pub max_steps_per_call: u32,
    /// Where run directories go.
    pub runs_dir: PathBuf,
    /// Side of the square camera images (pixels).
    pub image_size: u32,
    /// The task every reset uses when the server was started with `--lock-task`.
    pub locked_task: Option<TaskRef>,
    /// The pose every episode starts from: the twin's arm's home (`ArmSpec::home`) brought
    /// inside the arm's effective range ([`within_limits`]).
    pub home_pose: [f64; 6],
}

impl EngineConfig {
    /// The scene a reset without scene arguments starts.
    pub(super) fn default_task(&self) -> TaskRef {
        self.locked_task.clone().unwrap_or_default()
    }
}
