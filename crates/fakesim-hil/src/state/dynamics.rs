//! Each arm's dynamics profile: named by `--dynamics` (a pair's `--left-dynamics`,
//! `--right-dynamics`), else found beside the arm's calibration (`ID.dynamics.toml` beside
//! `ID.json`, the name `fakesim-hil identify` writes), else none. A profile that cannot be used
//! stops start-up with what to do about it.

use super::hardware::Follower;
use crate::config::Settings;
use anyhow::{Context, anyhow};
use fakesim_twin::dynamics::profile::{Profile, path_beside_calibration};
use fakesim_twin::sim::finer_steps;
use fakesim_twin::{Dynamics, Scene, TwinError};
use feetech::calibration::{ArmRole, calibration_path, calibration_root};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a profile was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    /// Named on the command line or in the config file.
    Named,
    /// Beside the arm's calibration file.
    Calibration,
}

impl FoundBy {
    /// `named` or `calibration`, as GetModelInfo reports it.
    pub fn name(self) -> &'static str {
        match self {
            FoundBy::Named => "named",
            FoundBy::Calibration => "calibration",
        }
    }

    /// What to do about a profile found this way that cannot be used.
    fn remedy(self) -> &'static str {
        match self {
            FoundBy::Named => "fix or remove the file, write it again with `fakesim-hil identify`, or start without it",
            FoundBy::Calibration => {
                "it was found beside the arm's calibration: fix or remove it, write it again with `fakesim-hil identify`, \
                 or start with --no-dynamics"
            }
        }
    }
}

/// A profile in force on one arm.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedProfile {
    /// The file.
    pub path: PathBuf,
    /// How it was found.
    pub found_by: FoundBy,
    /// What the file holds.
    pub profile: Profile,
    /// Its dynamics, checked.
    pub dynamics: Dynamics,
    /// The physics step its dynamics were identified at (s), checked: finite and above 0
    /// (whether it divides the model's is [`twin_physics_step`]'s to check); `None`: the
    /// model's own.
    pub physics_step_s: Option<f64>,
}

impl LoadedProfile {
    /// The overall validation RMS error (rad, every joint) before and after the fit that made
    /// the profile, when it records one.
    pub fn validation_rms(&self) -> Option<[f64; 2]> {
        let fit = self.profile.fit.as_ref()?;
        let rows = &fit.validation_rms_rad;
        if rows.is_empty() {
            return None;
        }
        let total = |i: usize| (rows.values().map(|r| r[i] * r[i]).sum::<f64>() / rows.len() as f64).sqrt();
        Some([total(0), total(1)])
    }

    /// The longest transport delay of its joints (s).
    pub fn max_delay_s(&self) -> f64 {
        self.dynamics.joints.iter().map(|j| j.delay_s).fold(0.0, f64::max)
    }
}

/// The profile of `follower`, if it has one (see the module's doc).
pub fn profile_of(settings: &Settings, follower: &Follower) -> anyhow::Result<Option<LoadedProfile>> {
    if settings.no_dynamics {
        return Ok(None);
    }
    let (path, found_by) = match (&follower.dynamics, found_beside_calibration(follower)) {
        (Some(path), _) => (path.clone(), FoundBy::Named),
        (None, Some(path)) => (path, FoundBy::Calibration),
        (None, None) => return Ok(None),
    };
    let refused = |what: String| anyhow!("{what}; {}", found_by.remedy());
    let profile = Profile::load(&path).map_err(|e| refused(said(e)))?;
    let dynamics = profile.dynamics().map_err(|e| refused(said(e)))?;
    let physics_step_s = profile.physics_step().map_err(|e| refused(said(e)))?;
    let arm = profile
        .arm_type()
        .map_err(|e| refused(format!("{}: {}", path.display(), said(e))))?;
    if arm != settings.arm {
        return Err(refused(format!(
            "dynamics profile {} is of an {arm}, but the daemon runs --arm {}",
            path.display(),
            settings.arm
        )));
    }
    if let (Some(theirs), Some(ours)) = (&profile.robot_id, &follower.robot_id)
        && theirs != ours
    {
        tracing::warn!(profile = %path.display(), profile_robot_id = %theirs, robot_id = %ours,
            "the dynamics profile was identified on another robot id");
    }
    let loaded = LoadedProfile {
        path,
        found_by,
        profile,
        dynamics,
        physics_step_s,
    };
    tracing::info!(
        profile = %loaded.path.display(),
        found_by = found_by.name(),
        side = follower.side.map_or("", |side| side.name()),
        max_delay_s = loaded.max_delay_s(),
        physics_step_s = loaded.physics_step_s,
        "dynamics profile loaded"
    );
    Ok(Some(loaded))
}

/// The profile's errors are the twin's scene errors; their message alone says it.
fn said(e: TwinError) -> String {
    match e {
        TwinError::Scene(what) => what,
        other => other.to_string(),
    }
}

/// The physics step the twin of `scene` runs at under `profiles` (one arm's, or a pair's two):
/// the finest of their steps, each of which must divide the model's (a profile's that does not
/// stops start-up naming the file); `None` when no profile gives one: the model's own. Compiles
/// the scene to read its step only when a profile gives one.
pub fn twin_physics_step(scene: &Scene, profiles: &[Option<Arc<LoadedProfile>>]) -> anyhow::Result<Option<f64>> {
    let stepped: Vec<(&LoadedProfile, f64)> = (profiles.iter().flatten())
        .filter_map(|loaded| Some((loaded.as_ref(), loaded.physics_step_s?)))
        .collect();
    if stepped.is_empty() {
        return Ok(None);
    }
    let model_step_s = scene.compile().context("cannot load the twin's scene")?.opt().timestep;
    for (loaded, step) in &stepped {
        finer_steps(model_step_s, *step).map_err(|e| {
            anyhow!(
                "dynamics profile {}: {}; {}",
                loaded.path.display(),
                said(e),
                loaded.found_by.remedy()
            )
        })?;
    }
    Ok(stepped.iter().map(|(_, step)| *step).reduce(f64::min))
}

/// The profile file beside the follower's calibration: the one named directly, else each of
/// LeRobot's directories for its robot id (current first), whether the calibration is there or not.
fn found_beside_calibration(follower: &Follower) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = follower
        .calibration
        .iter()
        .map(|c| path_beside_calibration(c))
        .collect();
    if let (Some(id), Ok(root)) = (&follower.robot_id, calibration_root()) {
        candidates.extend(beside_robot_id(&root, id));
    }
    candidates.into_iter().find(|path| path.is_file())
}

/// Where the profile of `robot_id` would lie under the calibration root `root`.
fn beside_robot_id(root: &Path, robot_id: &str) -> impl Iterator<Item = PathBuf> {
    ArmRole::Follower
        .kinds()
        .into_iter()
        .map(move |kind| path_beside_calibration(&calibration_path(root, kind, robot_id)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_profile_lies_beside_each_of_lerobots_calibration_directories() {
        let found: Vec<PathBuf> = beside_robot_id(Path::new("/c"), "arm7").collect();
        assert_eq!(
            found,
            [
                PathBuf::from("/c/robots/so_follower/arm7.dynamics.toml"),
                PathBuf::from("/c/robots/so101_follower/arm7.dynamics.toml")
            ]
        );
    }

    #[test]
    fn a_profile_beside_a_named_calibration_is_found_and_none_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let follower = Follower {
            side: None,
            port: None,
            calibration: Some(dir.path().join("arm7.json")),
            robot_id: None,
            dynamics: None,
        };
        assert_eq!(found_beside_calibration(&follower), None);
        let beside = dir.path().join("arm7.dynamics.toml");
        std::fs::write(&beside, "").unwrap();
        assert_eq!(found_beside_calibration(&follower), Some(beside));
    }
}
