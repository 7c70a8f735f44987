//! A request's checks before anything moves: a reset's scene against the task lock, a move's
//! deltas against units and reach.

use super::config::EngineConfig;
use super::images::CAMERAS;
use crate::budget::Budget;
use crate::error::EpisodeError;
use crate::tasks::TaskRef;
use fakesim_twin::values::ValueError;
use fakesim_twin::{RenderQuality, TwinError};

/// Largest translation one move may ask for (m).
pub const MAX_MOVE_M: f64 = 0.5;

/// Arguments of a reset; all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResetRequest {
    /// Suite name.
    pub suite: Option<String>,
    /// Task index.
    pub task_index: Option<u32>,
    /// Layout index.
    pub init_state_index: Option<u32>,
    /// Step budget: unset the daemon's, 0 none, N that many ticks (see [`Budget::asked`]).
    pub max_steps: Option<u64>,
    /// Cameras to draw once the scene is laid out, names of [`CAMERAS`]; empty draws none.
    pub cameras: Vec<String>,
    /// How they are drawn; `None`: the twin's own level.
    pub quality: Option<RenderQuality>,
    /// The episode's seed, which draws its look when the twin has variations; `None`: a fresh
    /// one, recorded in `summary.json`.
    pub seed: Option<u64>,
}

impl ResetRequest {
    /// The budget and the scene this reset asks for under `config`, or `task_locked` when it
    /// names a scene the server fixed. The scene is not checked to exist.
    pub(super) fn resolve(self, config: &EngineConfig) -> Result<(Budget, TaskRef), EpisodeError> {
        let budget = Budget::asked(self.max_steps, config.max_steps);
        let given = self.suite.is_some() || self.task_index.is_some() || self.init_state_index.is_some();
        if let (true, Some(locked)) = (given, &config.locked_task) {
            return Err(EpisodeError::TaskLocked {
                suite: locked.suite.clone(),
                task_index: locked.task_index,
                init_state_index: locked.init_state_index,
            });
        }
        let default = config.default_task();
        let task_ref = TaskRef {
            suite: self.suite.unwrap_or(default.suite),
            task_index: self.task_index.unwrap_or(default.task_index),
            init_state_index: self.init_state_index.unwrap_or(default.init_state_index),
        };
        Ok((budget, task_ref))
    }
}

/// The cameras of [`CAMERAS`] that `names` names, in [`CAMERAS`]' order (a name given twice is
/// drawn once), or `unknown_name` naming the others.
pub(super) fn session_cameras(names: &[String]) -> Result<Vec<&'static str>, EpisodeError> {
    let unknown: Vec<String> = names
        .iter()
        .filter(|name| !CAMERAS.contains(&name.as_str()))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(TwinError::Value(ValueError::UnknownName {
            kind: "camera",
            unknown,
            known: CAMERAS.map(str::to_owned).to_vec(),
        })
        .into());
    }
    Ok(CAMERAS
        .into_iter()
        .filter(|camera| names.iter().any(|name| name == camera))
        .collect())
}

/// Refuses a move whose deltas are not finite, too long (metres, not millimetres) or beyond
/// half a turn (radians, not degrees).
pub(super) fn check_delta(delta_xyz: [f64; 3], delta_rpy: Option<[f64; 3]>) -> Result<(), EpisodeError> {
    if let Some((axis, v)) = ["x", "y", "z"].iter().zip(delta_xyz).find(|(_, v)| !v.is_finite()) {
        return Err(EpisodeError::BadRequest(format!(
            "delta_xyz.{axis}={v} is not a finite number"
        )));
    }
    let norm = delta_xyz.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > MAX_MOVE_M {
        return Err(EpisodeError::BadRequest(format!(
            "delta_xyz is {norm:.3} m long; one move goes at most {MAX_MOVE_M} m (delta_xyz is in metres, not millimetres)"
        )));
    }
    if let Some(rpy) = delta_rpy {
        let names = ["roll_x", "pitch_y", "yaw_z"];
        if let Some((axis, v)) = names
            .iter()
            .zip(rpy)
            .find(|(_, v)| !v.is_finite() || v.abs() > std::f64::consts::PI)
        {
            return Err(EpisodeError::BadRequest(format!(
                "delta_rpy.{axis}={v} must be a finite angle within [-pi, pi] rad (radians, not degrees: {v} deg = {:.3} rad)",
                v.to_radians()
            )));
        }
    }
    Ok(())
}
