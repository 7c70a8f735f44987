//! `emulate --dynamics FILE`: a dynamics profile of a real arm translated into each virtual
//! servo's response, so the virtual arm moves as the identified one does. The emulator has a
//! trapezoidal position loop, not MuJoCo: a joint's delay becomes the servo's delay, and the
//! speed and acceleration it can reach against its torque limit become the servo's caps.

use clap::ValueEnum;
use fakesim_twin::JointDynamics;
use fakesim_twin::dynamics::profile::Profile;
use fakesim_twin::joints::Joint;
use feetech::calibration::Calibration;
use feetech_emu::{MAX_SPEED_STEPS_PER_S, Response, ServoConfig, VirtualArm};
use std::path::Path;
use std::time::Duration;

/// The velocity feedback (kv, N·m·s/rad) of the twin's position actuators, which brakes a joint
/// beside its damping: the MJCF's `sts3215` class, which a profile does not change.
const ACTUATOR_KV: f64 = 2.731;
/// Encoder steps per radian of the STS3215.
const STEPS_PER_RAD: f64 = 4096.0 / std::f64::consts::TAU;

/// The servo response of one identified joint: its delay; the speed at which its torque limit,
/// less its friction, is all spent on damping and the actuator's velocity feedback (the slew
/// rate of a large move); the acceleration that torque gives its armature (the rotor; the
/// links only add inertia, so this is an upper bound the acceleration register may undercut).
pub fn response_of(joint: &JointDynamics) -> Response {
    let torque = (joint.force_limit - joint.frictionloss).max(0.0);
    let speed_rad_s = torque / (joint.damping + ACTUATOR_KV);
    let accel_rad_s2 = if joint.armature > 0.0 {
        torque / joint.armature
    } else {
        f64::INFINITY
    };
    Response {
        delay: Duration::try_from_secs_f64(joint.delay_s).unwrap_or(Duration::ZERO),
        max_speed_steps_per_s: (speed_rad_s * STEPS_PER_RAD).min(MAX_SPEED_STEPS_PER_S),
        max_accel_steps_per_s2: accel_rad_s2 * STEPS_PER_RAD,
    }
}

/// Gives each servo of `servos` (of arm `arm`) the response of its joint in the profile `file`
/// (servos are matched to joints through `calibration`'s motor ids and LeRobot's labels).
pub fn apply(
    file: &Path,
    arm: VirtualArm,
    calibration: &Calibration,
    servos: &mut [ServoConfig],
) -> anyhow::Result<()> {
    let profile = Profile::load(file)?;
    let dynamics = profile.dynamics()?;
    let name = arm
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default();
    anyhow::ensure!(
        profile.arm == name,
        "the profile is of an {}, the emulated arm an {name} (--arm)",
        profile.arm
    );
    for servo in servos {
        let joint = (calibration.by_id().into_iter())
            .find(|(_, motor)| motor.id == servo.id)
            .and_then(|(name, _)| Joint::ALL.into_iter().find(|j| j.label() == name));
        if let Some(joint) = joint {
            servo.response = response_of(&dynamics.joints[joint.index()]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::emulate::EmulateArgs;
    use clap::Parser;
    use fakesim_twin::{ArmType, Dynamics, Scene, Sim};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: EmulateArgs,
    }

    #[test]
    fn emulate_dynamics_gives_each_servo_its_joints_response_and_refuses_another_arms_profile() {
        let dir = tempfile::tempdir().unwrap();
        let sim = Sim::load(&Scene::builtin(ArmType::So101, false), 1).unwrap();
        let mut dynamics = Dynamics::read(sim.model(), ArmType::So101.spec()).unwrap();
        dynamics.joints[Joint::ShoulderLift.index()].delay_s = 0.02;
        dynamics.joints[Joint::ShoulderLift.index()].force_limit = 1.5;
        let file = dir.path().join("arm.dynamics.toml");
        Profile::new(ArmType::So101, None, &dynamics, None, None)
            .save(&file)
            .unwrap();
        let path = file.display().to_string();
        let cli = Cli::try_parse_from(["emulate", "--dynamics", &path]).unwrap();
        let servos = cli.args.config().unwrap().servos;
        let lift = &servos[Joint::ShoulderLift.index()];
        assert_eq!(lift.id, 2);
        assert_eq!(
            lift.response,
            response_of(&dynamics.joints[Joint::ShoulderLift.index()])
        );
        assert_eq!(lift.response.delay, Duration::from_millis(20));
        assert!(servos[0].response.max_speed_steps_per_s > lift.response.max_speed_steps_per_s);
        let so100 = Cli::try_parse_from(["emulate", "--arm", "so100", "--dynamics", &path]).unwrap();
        let refused = format!("{:#}", so100.args.config().unwrap_err());
        assert!(refused.contains("--dynamics") && refused.contains("so100"), "{refused}");
    }

    #[test]
    fn the_models_own_joint_slews_near_0_87_rad_s_and_a_weaker_one_slower_and_late() {
        let own = JointDynamics {
            kp: 998.22,
            damping: 0.6,
            armature: 0.028,
            frictionloss: 0.052,
            force_limit: 2.94,
            delay_s: 0.0,
        };
        let r = response_of(&own);
        let rad_s = r.max_speed_steps_per_s / STEPS_PER_RAD;
        assert!((rad_s - 0.867).abs() < 0.001, "{rad_s}");
        assert_eq!(r.delay, Duration::ZERO);
        let weak = response_of(&JointDynamics {
            force_limit: 2.0,
            damping: 1.2,
            delay_s: 0.02,
            ..own
        });
        assert!(weak.max_speed_steps_per_s < r.max_speed_steps_per_s * 0.6);
        assert!(weak.max_accel_steps_per_s2 < r.max_accel_steps_per_s2);
        assert_eq!(weak.delay, Duration::from_millis(20));
    }
}
