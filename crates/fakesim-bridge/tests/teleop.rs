//! The teleop loop, one cycle at a time, over two virtual SO-101 buses on in-memory pipes: the
//! leader is moved by scripted hand motion, the follower's goal registers show at once what
//! was commanded (its servos only move when the simulated clock is advanced), and the twin's
//! joints show what it was given.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{TWIN_RANGES, VirtualArm, virtual_arm, virtual_arm_with, virtual_calibration};
use fakesim_arm::Joint;
use fakesim_arm::{Arm, ArmError};
use fakesim_bridge::teleop::{CycleOutcome, Role, SkipReason, Teleop, TeleopArms, TeleopConfig, TeleopError};
use fakesim_bridge::twin::ScratchTwinKinematics;
use fakesim_feetech_arm::FeetechArmConfig;
use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping};
use fakesim_safety::{
    DeltaCap, EstopLatch, FaultAction, Layers, LimitSource, RangeGuard, SafetyError, SafetyEvent, TableGuard,
};
use fakesim_twin::{Scene, TwinConfig, TwinHandle};
use feetech::control_table::{GOAL_POSITION, TORQUE_ENABLE};
use feetech::protocol::status::ServoError;
use tokio_util::sync::CancellationToken;
use uom::si::angle::radian;
use uom::si::f64::Angle;

/// A pose inside every range used here, with the TCP well above the table.
const POSE: [f64; 6] = [0.3, -0.3, 0.4, -0.2, 0.5, 0.6];

/// A cap large enough never to fire for [`POSE`] from the rest pose.
const NO_CAP: f64 = 1.0;

/// One encoder step is about 0.0015 rad on every joint.
const ONE_STEP_RAD: f64 = 0.0016;

struct Rig {
    leader: VirtualArm,
    follower: Option<VirtualArm>,
    follower_mapping: CalibratedMapping,
    twin: TwinHandle,
    estop: EstopLatch,
    teleop: Teleop,
}

fn config() -> FeetechArmConfig {
    FeetechArmConfig::new("virtual")
}

fn twin() -> TwinHandle {
    TwinHandle::spawn(TwinConfig {
        scene: Scene::EmptyTable,
        ..TwinConfig::default()
    })
    .unwrap()
}

/// The virtual calibration with the shoulder pan narrowed to 1647..2447 steps (about ±35°
/// about the same middle).
fn narrow_pan_mapping() -> CalibratedMapping {
    let mut calibration = virtual_calibration();
    let pan = calibration.motors.get_mut("shoulder_pan").unwrap();
    (pan.range_min, pan.range_max) = (1647, 2447);
    JointMapping::so101().bind(&calibration, &TWIN_RANGES).unwrap()
}

/// Leader, follower (with `follower_mapping`, or none) and twin, with a cap of `max_step`.
async fn rig_with(follower_mapping: Option<CalibratedMapping>, max_step: f64) -> Rig {
    // No ramp here: these tests look at the other layers; the ramp has its own test.
    let teleop_config = TeleopConfig {
        ramp_speed_rad_s: f64::INFINITY,
        ..TeleopConfig::default()
    };
    rig_configured(follower_mapping, max_step, teleop_config).await
}

async fn rig_configured(
    follower_mapping: Option<CalibratedMapping>,
    max_step: f64,
    teleop_config: TeleopConfig,
) -> Rig {
    let leader = virtual_arm(config());
    let follower = follower_mapping
        .clone()
        .map(|mapping| virtual_arm_with(config(), mapping));
    let twin = twin();
    let estop = EstopLatch::new();
    let range = match &follower_mapping {
        Some(mapping) => RangeGuard::with_calibration(TWIN_RANGES, mapping.calibrated_ranges()),
        None => RangeGuard::model_only(TWIN_RANGES),
    };
    let arms = TeleopArms {
        leader: Arc::new(leader.arm.clone()),
        follower: follower.as_ref().map(|f| Arc::new(f.arm.clone()) as Arc<dyn Arm>),
        twin: Some(twin.clone()),
    };
    let safety = Layers {
        range,
        table: TableGuard::default(),
        kinematics: Arc::new(ScratchTwinKinematics::load(&Scene::EmptyTable).unwrap()),
        delta: DeltaCap::uniform(max_step).unwrap(),
        preview: None,
        estop: estop.clone(),
    };
    let teleop = Teleop::start(arms, safety, teleop_config).await.unwrap();
    Rig {
        leader,
        follower,
        follower_mapping: follower_mapping.unwrap_or_else(common::mapping),
        twin,
        estop,
        teleop,
    }
}

async fn rig(max_step: f64) -> Rig {
    rig_with(Some(common::mapping()), max_step).await
}

impl Rig {
    fn follower(&self) -> &VirtualArm {
        self.follower.as_ref().unwrap()
    }

    /// Hand motion of the leader to `pose` (twin radians).
    fn move_leader(&self, pose: [f64; 6]) {
        let mapping = common::mapping();
        for joint in Joint::ALL {
            let steps = mapping
                .twin_to_servo(joint, Angle::new::<radian>(pose[joint.index()]))
                .unwrap();
            self.leader
                .servos
                .set_present_position(joint.default_servo_id(), steps)
                .unwrap();
        }
    }

    /// The follower's goal registers.
    fn follower_goals(&self) -> [i32; 6] {
        Joint::ALL.map(|joint| {
            self.follower()
                .servos
                .register(joint.default_servo_id(), &GOAL_POSITION)
                .unwrap()
        })
    }

    /// The follower goal registers `goals` (rad) should give.
    fn expected_steps(&self, goals: [f64; 6]) -> [i32; 6] {
        Joint::ALL.map(|joint| {
            self.follower_mapping
                .twin_to_servo(joint, Angle::new::<radian>(goals[joint.index()]))
                .unwrap()
        })
    }

    fn follower_torque(&self) -> [i32; 6] {
        Joint::ALL.map(|joint| {
            self.follower()
                .servos
                .register(joint.default_servo_id(), &TORQUE_ENABLE)
                .unwrap()
        })
    }

    async fn twin_pose(&self) -> ([f64; 6], [f64; 6]) {
        self.twin
            .with_sim(|sim| (sim.arm_qpos(), sim.arm_ctrl()))
            .await
            .unwrap()
    }
}

fn assert_near(got: [f64; 6], want: [f64; 6], tolerance: f64) {
    for (joint, (g, w)) in Joint::ALL.iter().zip(got.iter().zip(want)) {
        assert!(
            (g - w).abs() <= tolerance,
            "{joint}: {g} vs {w} (got {got:?}, want {want:?})"
        );
    }
}

fn commanded(outcome: &CycleOutcome) -> ([f64; 6], bool) {
    match outcome {
        CycleOutcome::Commanded { goals, capped } => (*goals, *capped),
        other => panic!("expected a commanded cycle, got {other:?}"),
    }
}

#[tokio::test]
async fn one_cycle_drives_the_follower_and_the_twin_to_the_leader_pose() {
    let mut rig = rig(NO_CAP).await;
    // Leader torque off; follower torque on, holding its rest pose.
    for id in 1..=6 {
        assert_eq!(rig.leader.servos.register(id, &TORQUE_ENABLE).unwrap(), 0);
    }
    assert_eq!(rig.follower_torque(), [1; 6]);
    let rest = rig.follower_goals();

    rig.move_leader(POSE);
    let cycle = rig.teleop.step_once().await;
    let (goals, capped) = commanded(&cycle.outcome);
    assert!(!capped);
    assert!(cycle.events.is_empty(), "{:?}", cycle.events);
    assert_near(goals, POSE, ONE_STEP_RAD);
    let sent = rig.follower_goals();
    assert_ne!(sent, rest);
    assert_eq!(sent, rig.expected_steps(goals));
    let (qpos, ctrl) = rig.twin_pose().await;
    assert_near(qpos, goals, 1e-12);
    assert_near(ctrl, goals, 1e-12);
    // The leader was only read.
    for id in 1..=6 {
        assert_eq!(rig.leader.servos.register(id, &TORQUE_ENABLE).unwrap(), 0);
    }

    let stats = rig.teleop.stats();
    assert_eq!((stats.cycles, stats.commanded), (1, 1));
    assert_eq!(stats.skipped + stats.refused + stats.errors + stats.capped, 0);
}

#[tokio::test]
async fn a_pose_outside_the_follower_calibrated_range_is_skipped_and_reported_once() {
    let mut rig = rig_with(Some(narrow_pan_mapping()), NO_CAP).await;
    let held = rig.follower_goals();
    let mut outside = POSE;
    // Inside the leader's calibration and the model (±1.92 rad), beyond the follower's ±0.61.
    outside[0] = 1.2;
    rig.move_leader(outside);

    let first = rig.teleop.step_once().await;
    let CycleOutcome::Skipped(SkipReason::OutOfRange(refusal)) = &first.outcome else {
        panic!("unexpected {:?}", first.outcome);
    };
    assert!(
        matches!(
            refusal,
            SafetyError::OutOfRange {
                joint: Joint::ShoulderPan,
                limit: LimitSource::Calibrated,
                ..
            }
        ),
        "{refusal}"
    );
    assert!(matches!(
        first.events.as_slice(),
        [SafetyEvent::RangeRefused {
            joint: Joint::ShoulderPan,
            limit: LimitSource::Calibrated,
            ..
        }]
    ));
    let second = rig.teleop.step_once().await;
    assert!(matches!(
        second.outcome,
        CycleOutcome::Skipped(SkipReason::OutOfRange(_))
    ));
    assert!(second.events.is_empty(), "a lasting refusal is reported once");
    assert_eq!(rig.follower_goals(), held, "nothing was commanded");
    assert_eq!(rig.follower_torque(), [1; 6], "the follower holds");

    // Back inside: the loop carries on.
    rig.move_leader(POSE);
    let (goals, _) = commanded(&rig.teleop.step_once().await.outcome);
    assert_eq!(rig.follower_goals(), rig.expected_steps(goals));
    let stats = rig.teleop.stats();
    assert_eq!((stats.cycles, stats.skipped, stats.commanded), (3, 2, 1));
}

#[tokio::test]
async fn a_large_jump_is_capped_from_the_follower_measured_position() {
    let mut rig = rig(0.1).await;
    let mut far = [0.0; 6];
    far[0] = 0.5;
    far[2] = -0.45;
    rig.move_leader(far);

    let cycle = rig.teleop.step_once().await;
    let (goals, capped) = commanded(&cycle.outcome);
    assert!(capped);
    // The follower rests at about zero: the goals are a step of 0.1 rad from there.
    assert_near(goals, [0.1, 0.0, -0.1, 0.0, 0.0, 0.0], 2.0 * ONE_STEP_RAD);
    assert_eq!(rig.follower_goals(), rig.expected_steps(goals));
    let [SafetyEvent::DeltaCapped { joints }] = cycle.events.as_slice() else {
        panic!("unexpected {:?}", cycle.events);
    };
    let limited: Vec<Joint> = joints.iter().map(|j| j.joint).collect();
    assert_eq!(limited, [Joint::ShoulderPan, Joint::ElbowFlex]);

    // The follower gets there; the next goals are another step on, without a new report.
    rig.follower().clock.advance(Duration::from_secs(1));
    let cycle = rig.teleop.step_once().await;
    let (next, capped) = commanded(&cycle.outcome);
    assert!(capped && cycle.events.is_empty());
    assert_near(next, [0.2, 0.0, -0.2, 0.0, 0.0, 0.0], 3.0 * ONE_STEP_RAD);
    assert_eq!(rig.follower_goals(), rig.expected_steps(next));
    assert_eq!(rig.teleop.stats().capped, 2);
}

#[tokio::test]
async fn a_pose_that_puts_the_tcp_into_the_table_is_refused() {
    let mut rig = rig(NO_CAP).await;
    rig.move_leader(POSE);
    let (goals, _) = commanded(&rig.teleop.step_once().await.outcome);
    let before = rig.twin_pose().await;
    let sent = rig.follower_goals();

    // Shoulder lift +1 rad from the zero pose reaches below the table top.
    rig.move_leader([0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
    let cycle = rig.teleop.step_once().await;
    let CycleOutcome::Refused(SafetyError::BelowTable { tcp, .. }) = cycle.outcome else {
        panic!("unexpected {:?}", cycle.outcome);
    };
    assert!(tcp[2] < TableGuard::default().min_z(), "{tcp:?}");
    assert!(matches!(cycle.events.as_slice(), [SafetyEvent::TableRefused { .. }]));
    assert_eq!(rig.follower_goals(), sent);
    assert_eq!(rig.twin_pose().await, before);
    assert_near(before.0, goals, 1e-12);
    assert_eq!(rig.teleop.stats().refused, 1);
}

#[tokio::test]
async fn an_overload_bit_switches_the_follower_torque_off_until_it_clears() {
    let mut rig = rig(NO_CAP).await;
    let held = rig.follower_goals();
    rig.move_leader(POSE);
    rig.follower().servos.update_faults(|f| {
        f.forced_errors.insert(2, ServoError::OVERLOAD);
    });

    let cycle = rig.teleop.step_once().await;
    assert!(matches!(
        cycle.outcome,
        CycleOutcome::Skipped(SkipReason::Fault(FaultAction::TorqueOff))
    ));
    assert_eq!(
        cycle.events,
        [SafetyEvent::ServoFault {
            joint: Joint::ShoulderLift,
            id: 2,
            flags: vec!["OVERLOAD".into()],
            action: FaultAction::TorqueOff
        }]
    );
    assert_eq!(rig.follower_torque(), [0; 6]);
    assert_eq!(rig.follower_goals(), held, "nothing was commanded");
    assert!(!rig.estop.is_latched(), "an overload does not latch");

    rig.follower().servos.update_faults(|f| {
        f.forced_errors.remove(&2);
    });
    let cycle = rig.teleop.step_once().await;
    let (goals, _) = commanded(&cycle.outcome);
    assert_eq!(
        cycle.events,
        [SafetyEvent::ServoFaultCleared {
            joint: Joint::ShoulderLift,
            id: 2
        }]
    );
    assert_eq!(rig.follower_torque(), [1; 6]);
    assert_eq!(rig.follower_goals(), rig.expected_steps(goals));
}

#[tokio::test]
async fn a_latched_estop_commands_nothing_and_switches_torque_off_until_reset() {
    let mut rig = rig(NO_CAP).await;
    let held = rig.follower_goals();
    let twin_before = rig.twin_pose().await;
    rig.move_leader(POSE);
    rig.estop.trip("operator pressed stop");

    for round in 0..2 {
        let cycle = rig.teleop.step_once().await;
        assert!(
            matches!(cycle.outcome, CycleOutcome::Refused(SafetyError::EstopLatched { .. })),
            "{:?}",
            cycle.outcome
        );
        let expected = if round == 0 {
            vec![SafetyEvent::RefusedWhileLatched {
                reason: "operator pressed stop".into(),
            }]
        } else {
            Vec::new()
        };
        assert_eq!(cycle.events, expected);
        assert_eq!(rig.follower_torque(), [0; 6]);
        assert_eq!(rig.follower_goals(), held);
        assert_eq!(rig.twin_pose().await, twin_before);
    }

    rig.estop.reset();
    let (goals, _) = commanded(&rig.teleop.step_once().await.outcome);
    assert_eq!(rig.follower_torque(), [1; 6]);
    assert_eq!(rig.follower_goals(), rig.expected_steps(goals));
    let stats = rig.teleop.stats();
    assert_eq!((stats.refused, stats.commanded), (2, 1));
}

#[tokio::test]
async fn a_lost_follower_bus_latches_the_estop() {
    let mut rig = rig(NO_CAP).await;
    let VirtualArm { servos, running, .. } = rig.follower.take().unwrap();
    servos.unplug();
    running.finished().await.unwrap();

    let cycle = rig.teleop.step_once().await;
    assert!(
        matches!(
            cycle.outcome,
            CycleOutcome::Failed(TeleopError::Arm {
                role: Role::Follower,
                source: ArmError::PortGone { .. }
            })
        ),
        "{:?}",
        cycle.outcome
    );
    assert!(rig.estop.is_latched());
    assert!(
        matches!(
            cycle.events.as_slice(),
            [
                SafetyEvent::BusLost { .. },
                SafetyEvent::EstopLatched { .. },
                SafetyEvent::RefusedWhileLatched { .. }
            ]
        ),
        "{:?}",
        cycle.events
    );
    assert_eq!(rig.teleop.stats().errors, 1);
}

#[tokio::test]
async fn without_a_follower_the_twin_follows_the_leader_capped_from_its_last_pose() {
    let mut rig = rig_with(None, 0.1).await;
    let (start, _) = rig.twin_pose().await;
    let mut far = start;
    far[0] += 0.5;
    rig.move_leader(far);

    let (first, capped) = commanded(&rig.teleop.step_once().await.outcome);
    assert!(capped);
    let mut want = start;
    want[0] += 0.1;
    // Joints other than the pan are where the leader is (its reading of the twin's start).
    assert_near(first, want, ONE_STEP_RAD);
    assert_near(rig.twin_pose().await.0, first, 1e-12);
    let (second, _) = commanded(&rig.teleop.step_once().await.outcome);
    assert!((second[0] - first[0] - 0.1).abs() < 1e-9, "{second:?}");
    assert_near(rig.twin_pose().await.0, second, 1e-12);
}

#[tokio::test(start_paused = true)]
async fn run_paces_cycles_at_the_rate_and_switches_torque_off_when_cancelled() {
    let mut rig = rig(NO_CAP).await;
    rig.move_leader(POSE);
    let cancel = CancellationToken::new();
    let mut progress = rig.teleop.watch_stats();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        progress.wait_for(|stats| stats.cycles >= 30).await.unwrap();
        stopper.cancel();
    });
    assert_eq!(rig.teleop.period(), Duration::from_secs_f64(1.0 / 60.0));
    let stats = rig.teleop.run(cancel).await.unwrap();
    assert!((30..=31).contains(&stats.cycles), "{stats:?}");
    assert_eq!(stats.commanded, stats.cycles);
    // Time is simulated: the cycles are one period apart, give or take the timer's
    // millisecond granularity.
    assert!((stats.achieved_hz() - 60.0).abs() < 0.5, "{stats}");
    assert_eq!(rig.follower_torque(), [0; 6], "torque off on stop");
    // Same calibration on both arms: the follower was told the leader's steps.
    let leader_steps = Joint::ALL.map(|joint| rig.leader.servos.present_position(joint.default_servo_id()).unwrap());
    assert_eq!(rig.follower_goals(), leader_steps);
}

#[tokio::test(start_paused = true)]
async fn starting_teleop_holds_the_follower_then_ramps_to_the_leader() {
    let mut rig = rig_configured(Some(common::mapping()), NO_CAP, TeleopConfig::default()).await;
    rig.follower().servos.clear_write_log();
    rig.move_leader(POSE);
    let cancel = CancellationToken::new();
    let mut progress = rig.teleop.watch_stats();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        progress.wait_for(|stats| stats.cycles >= 30).await.unwrap();
        stopper.cancel();
    });
    rig.teleop.run(cancel).await.unwrap();
    // 0.5 rad/s at 60 Hz: at most about 5.4 steps per cycle, after a first goal at the pose held.
    let log = rig.follower().servos.write_log();
    for id in 1..=6u8 {
        let goals: Vec<(i32, i32)> = log
            .iter()
            .filter(|r| r.id == id)
            .filter_map(|r| r.value(&GOAL_POSITION).map(|goal| (goal, r.present_before)))
            .collect();
        let (first, present) = goals[0];
        assert!(
            (first - present).abs() <= 1,
            "servo {id}: first goal {first}, present {present}"
        );
        for pair in goals.windows(2) {
            assert!((pair[1].0 - pair[0].0).abs() <= 7, "servo {id}: {pair:?}");
        }
        assert!(goals.len() >= 29, "servo {id}: {} goals", goals.len());
    }
    // The pan has not reached the leader yet: 0.3 rad takes 36 cycles.
    let pan = rig.follower_goals()[0];
    assert!(pan < rig.expected_steps(POSE)[0] - 5, "{pan}");
}

#[tokio::test]
async fn a_rate_outside_1_to_1000_hz_is_refused() {
    let leader = virtual_arm(config());
    for rate_hz in [0.0, 1500.0, f64::NAN] {
        let arms = TeleopArms {
            leader: Arc::new(leader.arm.clone()),
            follower: None,
            twin: None,
        };
        let safety = Layers {
            range: RangeGuard::model_only(TWIN_RANGES),
            table: TableGuard::default(),
            kinematics: Arc::new(|_: &[f64; 6]| -> Result<[f64; 3], String> { Ok([0.0, 0.0, 1.0]) }),
            delta: DeltaCap::uniform(0.1).unwrap(),
            preview: None,
            estop: EstopLatch::new(),
        };
        let error = Teleop::start(
            arms,
            safety,
            TeleopConfig {
                rate_hz,
                ..TeleopConfig::default()
            },
        )
        .await
        .err()
        .unwrap();
        assert!(matches!(error, TeleopError::InvalidRate(_)), "{error}");
    }
}
