//! The dynamics profile file: one arm's identified dynamics, with the figures of the fit and
//! the recordings it came from, in TOML beside LeRobot's calibration of that robot id
//! (`<robot_id>.dynamics.toml`). The manual's "Identifying your arm" documents the format.

use super::{Dynamics, JointDynamics};
use crate::error::TwinError;
use fakesim_arm::ArmType;
use fakesim_arm::joints::Joint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The only format version this build reads and writes.
pub const FORMAT: u32 = 1;
/// Largest profile file read (bytes); a profile is a few kilobytes.
const MAX_BYTES: u64 = 1 << 20;

/// One arm's dynamics profile as the file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Format version ([`FORMAT`]).
    pub format: u32,
    /// The arm (`so101` or `so100`).
    pub arm: String,
    /// LeRobot's robot id of the arm, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robot_id: Option<String>,
    /// The physics step (s) the dynamics were identified at, which the twin steps at while the
    /// profile is in force; `None`: the model's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physics_step_s: Option<f64>,
    /// The figures of the fit that made the profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitRecord>,
    /// Each joint's dynamics by LeRobot label (all six).
    pub joints: BTreeMap<String, JointDynamics>,
}

/// What a profile keeps of its fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitRecord {
    /// The recordings fitted, as given on the command line.
    pub recordings: Vec<String>,
    /// Seconds of recording in the training and in the validation part.
    pub seconds: [f64; 2],
    /// Per joint RMS position error (rad) before and after the fit, on the training part.
    pub train_rms_rad: BTreeMap<String, [f64; 2]>,
    /// Per joint RMS position error (rad) before and after the fit, on the validation part.
    pub validation_rms_rad: BTreeMap<String, [f64; 2]>,
}

impl Profile {
    /// A profile of `dynamics` for `arm`, identified at a physics step of `physics_step_s`
    /// seconds (`None`: the model's own).
    pub fn new(
        arm: ArmType,
        robot_id: Option<String>,
        dynamics: &Dynamics,
        physics_step_s: Option<f64>,
        fit: Option<FitRecord>,
    ) -> Self {
        Profile {
            format: FORMAT,
            arm: arm.name().to_owned(),
            robot_id,
            physics_step_s,
            fit,
            joints: Joint::ALL
                .into_iter()
                .map(|j| (j.label().to_owned(), dynamics.joints[j.index()]))
                .collect(),
        }
    }

    /// The arm the profile is for.
    pub fn arm_type(&self) -> Result<ArmType, TwinError> {
        self.arm
            .parse()
            .map_err(|e| TwinError::Scene(format!("dynamics profile: {e}")))
    }

    /// The dynamics the profile holds, every joint present and every value in its domain.
    pub fn dynamics(&self) -> Result<Dynamics, TwinError> {
        let bad = |what: String| TwinError::Scene(format!("dynamics profile: {what}"));
        if self.format != FORMAT {
            return Err(bad(format!("format {} (this build reads {FORMAT})", self.format)));
        }
        if let Some(extra) = self
            .joints
            .keys()
            .find(|k| !Joint::ALL.iter().any(|j| j.label() == k.as_str()))
        {
            return Err(bad(format!("unknown joint {:?}", fakesim_arm::quote::Quoted(extra))));
        }
        let mut joints = [JointDynamics::from_values([0.0; 6]); 6];
        for joint in Joint::ALL {
            let d = self
                .joints
                .get(joint.label())
                .ok_or_else(|| bad(format!("no entry for joint {}", joint.label())))?;
            if let Some(name) = d.invalid() {
                return Err(bad(format!("{}.{name} is not a valid value", joint.label())));
            }
            joints[joint.index()] = *d;
        }
        Ok(Dynamics { joints })
    }

    /// The physics step the profile runs at (s; `None`: the model's own), checked: a finite
    /// number of seconds above 0. Whether it divides the model's step is the twin's to check
    /// ([`crate::sim::finer_steps`]).
    pub fn physics_step(&self) -> Result<Option<f64>, TwinError> {
        match self.physics_step_s {
            Some(step) if !(step.is_finite() && step > 0.0) => Err(TwinError::Scene(format!(
                "dynamics profile: physics_step_s = {step} is not a physics step (a finite number of seconds \
                 above 0, as `fakesim-hil identify` writes it; without it the model's own step is used)"
            ))),
            step => Ok(step),
        }
    }

    /// Reads and checks a profile file.
    pub fn load(path: &Path) -> Result<Self, TwinError> {
        let bad = |what: String| TwinError::Scene(format!("dynamics profile {}: {what}", path.display()));
        let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
        if meta.len() > MAX_BYTES {
            return Err(bad(format!(
                "{} bytes, more than a profile holds ({MAX_BYTES})",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let profile: Profile = toml::from_str(&text).map_err(|e| bad(e.message().to_owned()))?;
        profile.dynamics().map_err(|e| bad(e.to_string()))?;
        profile.physics_step().map_err(|e| bad(e.to_string()))?;
        Ok(profile)
    }

    /// Writes the profile as TOML with a header comment.
    pub fn save(&self, path: &Path) -> Result<(), TwinError> {
        let bad = |what: String| TwinError::Scene(format!("dynamics profile {}: {what}", path.display()));
        let body = toml::to_string_pretty(self).map_err(|e| bad(e.to_string()))?;
        let text = format!(
            "# fakesim-hil dynamics profile: each joint's identified dynamics (SI units: kp N·m/rad,\n\
             # damping N·m·s/rad, armature kg·m², frictionloss and force_limit N·m, delay_s s).\n\
             # Written by `fakesim-hil identify`; see the manual's \"Identifying your arm\".\n{body}"
        );
        std::fs::write(path, text).map_err(|e| bad(e.to_string()))
    }
}

/// Where the profile of robot `robot_id` is kept: beside its calibration file
/// (`<dir>/<robot_id>.json` → `<dir>/<robot_id>.dynamics.toml`).
pub fn path_beside_calibration(calibration: &Path) -> PathBuf {
    calibration.with_extension("dynamics.toml")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::{Scene, Sim};

    /// The SO-101's own dynamics.
    fn defaults() -> Dynamics {
        let sim = Sim::load(&Scene::builtin(ArmType::So101, false), 1).unwrap();
        Dynamics::read(sim.model(), ArmType::So101.spec()).unwrap()
    }

    #[test]
    fn a_profile_with_or_without_a_physics_step_is_saved_and_loaded_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        for step in [Some(0.0025), None] {
            let profile = Profile::new(ArmType::So101, Some("arm7".into()), &defaults(), step, None);
            let path = dir.path().join("arm7.dynamics.toml");
            profile.save(&path).unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(text.contains("physics_step_s = 0.0025"), step.is_some(), "{text}");
            assert_eq!(text.contains("physics_step_s"), step.is_some(), "{text}");
            let loaded = Profile::load(&path).unwrap();
            assert_eq!(loaded, profile);
            assert_eq!(loaded.physics_step().unwrap(), step);
        }
    }

    #[test]
    fn a_physics_step_that_is_not_finite_and_above_zero_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arm7.dynamics.toml");
        Profile::new(ArmType::So101, None, &defaults(), Some(0.0025), None)
            .save(&path)
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        for bad in ["0.0", "-0.0025", "nan", "inf"] {
            std::fs::write(
                &path,
                text.replace("physics_step_s = 0.0025", &format!("physics_step_s = {bad}")),
            )
            .unwrap();
            let said = Profile::load(&path).unwrap_err().to_string();
            assert!(
                said.contains(&format!("physics_step_s = {}", bad.parse::<f64>().unwrap()))
                    && said.contains("not a physics step")
                    && said.contains("arm7.dynamics.toml"),
                "{bad}: {said}"
            );
        }
        std::fs::write(
            &path,
            text.replace("physics_step_s = 0.0025", "physics_step_s = \"fine\""),
        )
        .unwrap();
        assert!(Profile::load(&path).is_err());
    }
}
