//! Conversions between the protobuf messages and the twin's types.

use crate::wire::status;
use fakesim_arm::{LinkHealth, LinkState, Torque};
use fakesim_proto::v1;
use fakesim_twin::image::ImageTiming;
use fakesim_twin::joints::Joint;
use fakesim_twin::sim::{FrameKind, FramePose};
use fakesim_twin::{ArmSpec, JointValues, Pose, RenderQuality};
use tonic::Status;

/// How long a call's images took, as sent.
pub fn image_timing(timing: ImageTiming) -> v1::ImageTiming {
    v1::ImageTiming {
        render_s: timing.render_s,
        encode_s: timing.encode_s,
    }
}

/// A request's render quality: unset is `None` (the daemon's `--render-quality`); a number that
/// is no `RenderQuality` value is refused.
pub fn render_quality(value: Option<i32>) -> Result<Option<RenderQuality>, Status> {
    let Some(value) = value else {
        return Ok(None);
    };
    match v1::RenderQuality::try_from(value) {
        Ok(v1::RenderQuality::Unspecified) => Ok(None),
        Ok(v1::RenderQuality::Fast) => Ok(Some(RenderQuality::Fast)),
        Ok(v1::RenderQuality::Full) => Ok(Some(RenderQuality::Full)),
        Err(_) => Err(status::invalid_argument(
            "render_quality",
            format!("render_quality={value} is not a RenderQuality value"),
        )),
    }
}

/// The twin's joint values from a request's `JointValues`; refuses a missing one.
///
/// Named values are sorted by key, so refusals and answers do not depend on map order.
pub fn joint_values(values: Option<v1::JointValues>, field: &str) -> Result<JointValues, Status> {
    match values.and_then(|v| v.form) {
        Some(v1::joint_values::Form::Named(named)) => {
            let mut pairs: Vec<(String, f64)> = named.values.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(JointValues::Named(pairs))
        }
        Some(v1::joint_values::Form::Ordered(ordered)) => Ok(JointValues::Ordered(ordered.values)),
        None => Err(status::invalid_argument(
            field,
            format!("{field} is required: give `named` values or an `ordered` vector"),
        )),
    }
}

/// The model's names of the joints a successful write on `arm` touched, in action-key order.
pub fn written_ids(arm: &ArmSpec, values: &JointValues) -> Vec<String> {
    let mut joints: Vec<Joint> = match values {
        JointValues::Ordered(_) => Joint::ALL.to_vec(),
        JointValues::Named(pairs) => pairs.iter().filter_map(|(key, _)| arm.resolve_joint(key)).collect(),
    };
    joints.sort_unstable();
    joints.into_iter().map(|joint| arm.model_name(joint)).collect()
}

/// A world pose as the proto message.
pub fn pose(pose: &Pose) -> v1::Pose {
    let [x, y, z] = pose.pos;
    let [w, qx, qy, qz] = pose.quat;
    v1::Pose {
        position_m: Some(v1::Vec3 { x, y, z }),
        orientation: Some(v1::Quaternion { w, x: qx, y: qy, z: qz }),
    }
}

/// A named frame's pose as the proto message.
pub fn frame_pose(frame: FramePose) -> v1::FramePose {
    let kind = match frame.kind {
        FrameKind::Body => v1::FrameKind::Body,
        FrameKind::Site => v1::FrameKind::Site,
    };
    v1::FramePose {
        pose: Some(pose(&frame.pose)),
        name: frame.name,
        kind: kind.into(),
    }
}

/// Torque as status and telemetry report it.
pub fn torque(torque: Torque) -> v1::TorqueState {
    match torque {
        Torque::On => v1::TorqueState::On,
        Torque::Off => v1::TorqueState::Off,
        Torque::Mixed => v1::TorqueState::Mixed,
        Torque::Unknown => v1::TorqueState::Unknown,
    }
}

/// The link to an arm's bus as the hardware status reports it, with the arm's latest error.
pub fn bus_link(link: &LinkHealth, last_error: Option<String>) -> v1::BusLink {
    let state = match link.state {
        LinkState::Connected => v1::LinkState::Connected,
        LinkState::Lost => v1::LinkState::Lost,
        LinkState::Reconnecting => v1::LinkState::Reconnecting,
        LinkState::Verifying => v1::LinkState::Verifying,
    };
    v1::BusLink {
        state: state.into(),
        attempts: link.attempts,
        losses: link.losses,
        recoveries: link.recoveries,
        time_lost_s: link.time_lost_at(std::time::Instant::now()).as_secs_f64(),
        last_error,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use fakesim_twin::arms::{SO100, SO101};
    use std::collections::HashMap;

    #[test]
    fn named_values_are_sorted_and_ordered_values_kept() {
        let named = v1::JointValues {
            form: Some(v1::joint_values::Form::Named(v1::NamedJointValues {
                values: HashMap::from([("gripper".to_owned(), 0.2), ("1".to_owned(), 0.1)]),
            })),
        };
        let values = joint_values(Some(named), "action").unwrap();
        assert_eq!(
            values,
            JointValues::Named(vec![("1".into(), 0.1), ("gripper".into(), 0.2)])
        );
        assert_eq!(written_ids(&SO101, &values), ["1", "6"]);
        assert_eq!(written_ids(&SO100, &values), ["Jaw"]);
        let ordered = v1::JointValues {
            form: Some(v1::joint_values::Form::Ordered(v1::OrderedJointValues {
                values: vec![0.5; 6],
            })),
        };
        let values = joint_values(Some(ordered), "action").unwrap();
        assert_eq!(written_ids(&SO101, &values), ["1", "2", "3", "4", "5", "6"]);
    }

    #[test]
    fn missing_values_are_refused_naming_the_field() {
        let status = joint_values(Some(v1::JointValues { form: None }), "positions").unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(status.message().contains("positions is required"));
        assert!(joint_values(None, "positions").is_err());
    }
}
