//! The daemon's arms on the wire: a tick's ordered action split over them, and the state,
//! the observation and the joints of all of them, arm after arm. With one arm every answer is
//! that arm's, as it always was; a pair's answers hold the left arm's block, then the right's.

use crate::state::{AppState, ArmUnit};
use crate::wire::convert::pose;
use crate::wire::status;
use crate::wire::tick::{observation, observation_keys};
use fakesim_arm::Side;
use fakesim_episode::ticks::Observed;
use fakesim_proto::v1;
use fakesim_twin::joints::Joint;
use fakesim_twin::values::ValueError;
use fakesim_twin::{JointValues, RobotState, TwinError};
use tonic::Status;

impl AppState {
    /// The arms a hardware request names by its `arm` field: empty names every arm; `left`
    /// or `right` one side of a pair (refused on a daemon driving one arm).
    pub fn arms_named(&self, arm: &str) -> Result<Vec<&ArmUnit>, Status> {
        if arm.is_empty() {
            return Ok(self.arms.iter().collect());
        }
        let side: Side = arm
            .parse()
            .map_err(|e: fakesim_arm::arms::UnknownSide| status::invalid_argument("arm", e.to_string()))?;
        let found: Vec<&ArmUnit> = self.arms.iter().filter(|unit| unit.side == Some(side)).collect();
        if found.is_empty() {
            return Err(status::invalid_argument(
                "arm",
                format!("this daemon drives one arm, not a pair: leave arm empty (it named {side})"),
            ));
        }
        Ok(found)
    }

    /// The arm a `Move`, `Gripper` or `GetObservation` names: `None` for empty (refused on a
    /// pair: the caller says so), else the side, which the daemon must drive.
    pub fn tool_arm(&self, arm: &str) -> Result<Option<Side>, Status> {
        if arm.is_empty() {
            return Ok(None);
        }
        Ok(self.arm_named(arm)?.side)
    }

    /// The one arm a status request names: the side asked for, else the first arm.
    pub fn arm_named(&self, arm: &str) -> Result<&ArmUnit, Status> {
        let named = self.arms_named(arm)?;
        named
            .first()
            .copied()
            .ok_or_else(|| status::invalid_argument("arm", "the daemon drives no arm"))
    }

    /// Joint values as each arm's, in the order of the arms: the values themselves for one
    /// arm (the usual checks refuse what fits no joint); on a pair, names by the side they
    /// start with (`left/…`; an arm named by none gets no values), an ordered vector six
    /// values an arm, left first.
    pub fn split_values(&self, values: JointValues) -> Result<Vec<JointValues>, Status> {
        if !self.is_pair() {
            return Ok(vec![values]);
        }
        match values {
            JointValues::Ordered(ordered) => {
                let expected = Joint::ALL.len() * self.arms.len();
                if ordered.len() != expected {
                    return Err(status::from_twin(&TwinError::Value(ValueError::WrongLength {
                        expected,
                        got: ordered.len(),
                        order: self.joint_names(),
                    })));
                }
                Ok(ordered
                    .chunks(Joint::ALL.len())
                    .map(|part| JointValues::Ordered(part.to_vec()))
                    .collect())
            }
            JointValues::Named(named) => {
                let side_of = |key: &str| {
                    let side = key.split_once('/').map(|(side, _)| side.to_ascii_lowercase());
                    self.arms
                        .iter()
                        .position(|arm| arm.side.map(Side::name) == side.as_deref())
                };
                let unknown: Vec<String> = named
                    .iter()
                    .filter(|(key, _)| side_of(key).is_none())
                    .map(|(key, _)| key.clone())
                    .collect();
                if !unknown.is_empty() {
                    return Err(status::from_twin(&TwinError::Value(ValueError::UnknownName {
                        kind: "joint (a pair's joints are named under their side, left/ or right/)",
                        unknown,
                        known: self.joint_names(),
                    })));
                }
                Ok((0..self.arms.len())
                    .map(|index| {
                        JointValues::Named(
                            named
                                .iter()
                                .filter(|(key, _)| side_of(key) == Some(index))
                                .cloned()
                                .collect(),
                        )
                    })
                    .collect())
            }
        }
    }

    /// An ordered action as each arm's targets in radians ([`AppState::split_values`]),
    /// each converted from `unit` through its arm's calibration. With `arm` named (`left`,
    /// `right`), the action is that arm's alone and every other arm is given nothing.
    pub fn split_action(&self, action: &[f64], unit: i32, arm: &str) -> Result<Vec<JointValues>, Status> {
        let values = JointValues::Ordered(action.to_vec());
        let parts = match arm {
            "" => self.split_values(values)?,
            named => {
                let side = self.arm_named(named)?.side;
                self.arms
                    .iter()
                    .map(|unit| {
                        if unit.side == side {
                            values.clone()
                        } else {
                            JointValues::Named(Vec::new())
                        }
                    })
                    .collect()
            }
        };
        self.arms
            .iter()
            .zip(parts)
            .map(|(arm, part)| arm.units.to_radians(part, unit))
            .collect()
    }

    /// The observation of every arm after a tick, positions in `unit`, laid out as
    /// [`AppState::observation_keys`].
    pub fn observation(&self, after: &[Observed], unit: i32) -> Result<Vec<f64>, Status> {
        let mut all = Vec::new();
        for (arm, observed) in self.arms.iter().zip(after) {
            let mut part = observation(&observed.robot);
            let positions = arm.units.positions_in(&observed.robot.qpos, unit)?;
            part[..positions.len()].copy_from_slice(&positions);
            all.extend(part);
        }
        Ok(all)
    }

    /// Names of the observation entries: one arm's, or each side's prefixed `left/`, `right/`.
    pub fn observation_keys(&self) -> Vec<String> {
        self.arms
            .iter()
            .flat_map(|arm| {
                observation_keys()
                    .into_iter()
                    .map(|key| format!("{}{key}", arm.twin.arm().prefix))
            })
            .collect()
    }

    /// The joints of every arm, as GetModelInfo lists them (with the calibrated ranges in
    /// force where a real arm is attached).
    pub fn joint_infos(&self) -> Vec<v1::JointInfo> {
        self.arms.iter().flat_map(joint_infos).collect()
    }

    /// The dynamics profile in force on each arm that has one, as GetModelInfo names them.
    pub fn dynamics_profiles(&self) -> Vec<v1::DynamicsProfile> {
        (self.arms.iter())
            .filter_map(|arm| {
                let loaded = arm.dynamics.as_deref()?;
                let fit = loaded.profile.fit.as_ref();
                let rms = loaded.validation_rms();
                Some(v1::DynamicsProfile {
                    side: arm.side.map(|side| side.name().to_owned()).unwrap_or_default(),
                    path: loaded.path.display().to_string(),
                    found_by: loaded.found_by.name().to_owned(),
                    robot_id: loaded.profile.robot_id.clone().unwrap_or_default(),
                    recordings: fit.map(|f| f.recordings.clone()).unwrap_or_default(),
                    train_seconds: fit.map_or(0.0, |f| f.seconds[0]),
                    validation_seconds: fit.map_or(0.0, |f| f.seconds[1]),
                    validation_rms_before_rad: rms.map(|r| r[0]),
                    validation_rms_after_rad: rms.map(|r| r[1]),
                    max_delay_s: loaded.max_delay_s(),
                })
            })
            .collect()
    }

    /// Every arm's joints as model name and label: `left/1 (left/shoulder_pan)`.
    pub fn joint_names(&self) -> Vec<String> {
        self.arms
            .iter()
            .flat_map(|arm| arm.twin.arm().known_joint_names())
            .collect()
    }

    /// The state of every arm: joints arm after arm, the TCP and gripper of the first.
    pub fn robot_state(&self, states: &[RobotState], unit: i32) -> Result<v1::GetRobotStateResponse, Status> {
        let mut answer = v1::GetRobotStateResponse {
            unit,
            joint_names: self.joint_names(),
            ..Default::default()
        };
        for (arm, robot) in self.arms.iter().zip(states) {
            answer.joint_ids.extend(arm.model.joints.iter().map(|j| j.id.clone()));
            answer.positions.extend(arm.units.positions_in(&robot.qpos, unit)?);
            answer.velocities.extend(robot.qvel);
            answer.ctrl_targets.extend(arm.units.positions_in(&robot.ctrl, unit)?);
            answer.arms.push(v1::ArmPose {
                arm: arm.side.map(|side| side.name().to_owned()).unwrap_or_default(),
                tcp: Some(pose(&robot.tcp)),
                gripper_opening_m: robot.gripper_opening_m,
            });
        }
        if let Some(first) = states.first() {
            answer.time_s = first.time;
            answer.physics_steps = self.physics_steps(first.time);
            answer.tcp = Some(pose(&first.tcp));
            answer.gripper_opening_m = first.gripper_opening_m;
        }
        Ok(answer)
    }

    /// Reads every arm's state now, in one twin job.
    pub async fn robot_states(&self) -> Result<Vec<RobotState>, Status> {
        self.twin
            .try_with_sim(|sim| {
                let mut states = Vec::new();
                sim.every_arm(|sim| {
                    states.push(sim.robot_state());
                    Ok(())
                })?;
                Ok(states)
            })
            .await
            .map_err(|e| status::from_twin(&e))
    }
}

/// One arm's joints as GetModelInfo lists them.
fn joint_infos(arm: &ArmUnit) -> Vec<v1::JointInfo> {
    let effective = arm.bridge.port().map(|_| arm.bridge.limits());
    arm.model
        .joints
        .iter()
        .enumerate()
        .map(|(index, j)| {
            let effective = effective.and_then(|limits| limits.get(index).copied());
            v1::JointInfo {
                id: j.id.clone(),
                name: j.id.clone(),
                label: j.label.clone(),
                range_min: j.range.lo,
                range_max: j.range.hi,
                unit: j.unit.to_owned(),
                effective_min: effective.map(|b| b.lo),
                effective_max: effective.map(|b| b.hi),
            }
        })
        .collect()
}
