//! Limits how far each joint's goal may be from its measured position in one tick.

use serde::Serialize;

use super::{InvalidSetting, SafetyError, SafetyEvent, require_finite};
use fakesim_arm::Joint;

/// The per-tick delta cap: each goal is brought to within `max_delta_rad` of the joint's
/// measured position and, where the arm lags them by less than two caps, of the goals last
/// sent, so a change of driver (a policy, then a person's leader) never jumps a goal further
/// than the cap. Unlike the other layers it limits (and reports what it limited).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeltaCap {
    max_delta_rad: [f64; 6],
}

/// One joint whose goal was limited.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CappedJoint {
    /// The joint.
    pub joint: Joint,
    /// Measured position (rad).
    pub measured_rad: f64,
    /// Goal asked for (rad).
    pub requested_rad: f64,
    /// Goal sent (rad).
    pub sent_rad: f64,
}

/// The goals to send, and which joints were limited.
#[derive(Debug, Clone, PartialEq)]
pub struct Capped {
    /// Goals after the cap (rad, action-key order).
    pub goals: [f64; 6],
    /// Joints whose goal was changed; empty when the cap did not fire.
    pub capped: Vec<CappedJoint>,
}

impl Capped {
    /// The journal record, when the cap fired.
    pub fn event(&self) -> Option<SafetyEvent> {
        (!self.capped.is_empty()).then(|| SafetyEvent::DeltaCapped {
            joints: self.capped.clone(),
        })
    }
}

impl DeltaCap {
    /// A cap per joint (rad per tick, each finite and above zero).
    pub fn new(max_delta_rad: [f64; 6]) -> Result<Self, InvalidSetting> {
        if let Some(&value) = max_delta_rad.iter().find(|d| !(d.is_finite() && **d > 0.0)) {
            return Err(InvalidSetting {
                setting: "max_delta_rad",
                value,
            });
        }
        Ok(Self { max_delta_rad })
    }

    /// The same cap for every joint.
    pub fn uniform(max_delta_rad: f64) -> Result<Self, InvalidSetting> {
        Self::new([max_delta_rad; 6])
    }

    /// The cap of one joint (rad per tick).
    pub fn max_delta(&self, joint: Joint) -> f64 {
        self.max_delta_rad[joint.index()]
    }

    /// Limits `target` to within the cap of `measured`; refuses non-finite inputs.
    pub fn limit(&self, measured: &[f64; 6], target: &[f64; 6]) -> Result<Capped, SafetyError> {
        self.limit_from(measured, None, target)
    }

    /// Limits `target` to within the cap of `measured` and, for each joint where the two
    /// windows overlap, of `last` (the goals last sent): a target on the other side of a
    /// lagging arm moves the goal back one cap, not two. Where they do not overlap (the arm
    /// more than two caps from its last goal: pushed, or blocked) the measured window rules, as
    /// the servo's effort is what the cap bounds. Refuses non-finite inputs.
    pub fn limit_from(
        &self,
        measured: &[f64; 6],
        last: Option<&[f64; 6]>,
        target: &[f64; 6],
    ) -> Result<Capped, SafetyError> {
        require_finite(measured)?;
        require_finite(target)?;
        if let Some(last) = last {
            require_finite(last)?;
        }
        let mut goals = *target;
        let mut capped = Vec::new();
        for joint in Joint::ALL {
            let i = joint.index();
            let (from, to, cap) = (measured[i], target[i], self.max_delta_rad[i]);
            let (mut low, mut high) = (from - cap, from + cap);
            if let Some(last) = last {
                let (after_low, after_high) = (low.max(last[i] - cap), high.min(last[i] + cap));
                if after_low <= after_high {
                    (low, high) = (after_low, after_high);
                }
            }
            let sent = to.min(high).max(low);
            if sent != to {
                goals[i] = sent;
                capped.push(CappedJoint {
                    joint,
                    measured_rad: from,
                    requested_rad: to,
                    sent_rad: sent,
                });
            }
        }
        Ok(Capped { goals, capped })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn small_steps_pass_unchanged_without_an_event() {
        let cap = DeltaCap::uniform(0.1).unwrap();
        let measured = [0.0, 0.5, -0.5, 0.0, 1.0, 0.2];
        let target = [0.05, 0.6, -0.45, -0.1, 1.0, 0.2];
        let out = cap.limit(&measured, &target).unwrap();
        assert_eq!(out.goals, target);
        assert!(out.capped.is_empty());
        assert_eq!(out.event(), None);
    }

    #[test]
    fn large_steps_are_limited_both_ways_and_reported() {
        let cap = DeltaCap::new([0.1, 0.1, 0.2, 0.1, 0.1, 0.5]).unwrap();
        let measured = [0.0; 6];
        let target = [0.5, -0.5, 0.15, 0.0, 0.0, 1.0];
        let out = cap.limit(&measured, &target).unwrap();
        assert_eq!(out.goals, [0.1, -0.1, 0.15, 0.0, 0.0, 0.5]);
        let joints: Vec<Joint> = out.capped.iter().map(|c| c.joint).collect();
        assert_eq!(joints, [Joint::ShoulderPan, Joint::ShoulderLift, Joint::Gripper]);
        assert_eq!(
            out.capped[1],
            CappedJoint {
                joint: Joint::ShoulderLift,
                measured_rad: 0.0,
                requested_rad: -0.5,
                sent_rad: -0.1
            }
        );
        let json = serde_json::to_value(out.event().unwrap()).unwrap();
        assert_eq!(json["event"], "delta_capped");
        assert_eq!(json["joints"][2]["joint"], "gripper");
        assert_eq!(json["joints"][2]["sent_rad"], 0.5);
    }

    #[test]
    fn the_last_goals_bound_a_reversal_unless_the_arm_is_two_caps_away() {
        let cap = DeltaCap::uniform(0.1).unwrap();
        let measured = [0.0; 6];
        // The last goals led the arm by a cap; the target lies the other way.
        let out = cap.limit_from(&measured, Some(&[0.1; 6]), &[-1.0; 6]).unwrap();
        assert_eq!(out.goals, [0.0; 6], "one cap back from the last goals, not two");
        // Towards the last goals the measured window still rules.
        let out = cap.limit_from(&measured, Some(&[0.1; 6]), &[1.0; 6]).unwrap();
        assert_eq!(out.goals, [0.1; 6]);
        // An arm pushed three caps off its last goals: the cap from where it stands.
        let out = cap.limit_from(&measured, Some(&[0.3; 6]), &[-1.0; 6]).unwrap();
        assert_eq!(out.goals, [-0.1; 6]);
        assert!(cap.limit_from(&measured, Some(&[f64::NAN; 6]), &[0.0; 6]).is_err());
    }

    #[test]
    fn bad_settings_and_non_finite_inputs_are_refused() {
        assert!(DeltaCap::uniform(0.0).is_err());
        assert!(DeltaCap::uniform(f64::NAN).is_err());
        assert!(DeltaCap::new([0.1, 0.1, -0.1, 0.1, 0.1, 0.1]).is_err());
        let cap = DeltaCap::uniform(0.1).unwrap();
        let mut measured = [0.0; 6];
        measured[3] = f64::NAN;
        assert!(matches!(
            cap.limit(&measured, &[0.0; 6]),
            Err(SafetyError::NonFinite {
                joint: Joint::WristFlex,
                ..
            })
        ));
        assert!(cap.limit(&[0.0; 6], &[f64::INFINITY; 6]).is_err());
    }
}
