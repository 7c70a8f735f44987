//! The daemon on a virtual SO-101 moved by a scripted hand (`fakesim-hil emulate --script`,
//! `--push`): in mirror the twin follows a sweeping arm over the whole sweep; in hil a hand
//! pushing a joint is held by the shadow, which names the joint.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use fakesim_arm::Joint;
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping};
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use feetech::control_table::{GOAL_POSITION, PRESENT_POSITION};
use feetech_emu::{EmuConfig, Push, Script, VirtualSo101};
use tokio_stream::StreamExt;

/// The virtual arm's calibration bound to the twin's joint ranges.
fn mapping() -> CalibratedMapping {
    let ranges = fakesim_twin::Sim::load(&fakesim_twin::Scene::Tabletop, 10)
        .unwrap()
        .joint_ranges();
    JointMapping::so101()
        .bind(&VirtualSo101::calibration(), &ranges)
        .unwrap()
}

/// Steps the twin may lie off the script at the moment of a reading: the reading's rounding
/// to a whole step, the search grid below (0.7 steps at the sweep's top speed) and the
/// conversion to radians and back.
const TRACKING_STEPS: f64 = 2.0;

/// Script time after the first sample from which residuals count: the shadow predicts a
/// passive arm at the twin's starting pose until it sees the arm move (a few milliseconds into
/// the sweep; a loaded machine may stream the first readings), and by this much later every
/// joint of the sweep has moved well past that.
const SEEN_MOVING: Duration = Duration::from_millis(200);

/// Grid on which a sample's moment is searched along the script.
const SEARCH_STEP: Duration = Duration::from_micros(500);

/// The first moment in `from..=until` at which the script holds every joint within
/// [`TRACKING_STEPS`] of `steps` (servo positions in joint order), with the error there.
fn moment_on_script(
    script: &Script,
    ids: &[u8; 6],
    steps: &[i32; 6],
    from: Duration,
    until: Duration,
) -> Option<Duration> {
    let mut at = from;
    while at <= until {
        let off = ids
            .iter()
            .zip(steps)
            .map(|(id, step)| (script.position(*id, at).unwrap() - f64::from(*step)).abs())
            .fold(0.0, f64::max);
        if off <= TRACKING_STEPS {
            return Some(at);
        }
        at += SEARCH_STEP;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_mirror_the_twin_follows_a_sweeping_arm_over_the_whole_sweep() {
    // Every joint through 30 % of its range at up to 120 deg/s: the slowest pass (the wrist
    // roll's full turn) takes 2.8 s.
    let script = Script::sweep(&VirtualSo101::calibration(), 0.3, 120.0).unwrap();
    let bus = EmuConfig {
        script: Some(script.clone()),
        ..VirtualSo101::config()
    };
    let arm = VirtualArmServer::start(bus, StartMode::Mirror, |_| {}).await.unwrap();
    let mapping = mapping();
    let ids = mapping.servo_ids();
    let servos = arm.bus.servos().clone();
    let mut hw = HardwareServiceClient::new(arm.server.channel().await.unwrap());
    let mut stream = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 200.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let pass = script.duration();
    // Each joint's ends of the sweep, 30 % of its range about the middle (5 % of that slack).
    let ends: Vec<(i32, i32)> = VirtualSo101::calibration()
        .by_id()
        .into_iter()
        .map(|(_, motor)| {
            let middle = (motor.range_min + motor.range_max) / 2;
            let reach = (motor.range_max - motor.range_min) * 3 / 20;
            let slack = reach / 20 + 2;
            (middle - reach + slack, middle + reach - slack)
        })
        .collect();
    let (mut first, mut last) = (None, Duration::ZERO);
    let mut lows = [i32::MAX; 6];
    let mut highs = [i32::MIN; 6];
    let mut samples = 0;
    let mut worst_residual: f64 = 0.0;
    let covered = |lows: &[i32; 6], highs: &[i32; 6]| {
        ends.iter()
            .enumerate()
            .all(|(index, (low, high))| lows[index] <= *low && highs[index] >= *high)
    };
    // Until the twin has followed a whole pass and every joint through both ends of its sweep.
    while last.saturating_sub(first.unwrap_or(last)) < pass || !covered(&lows, &highs) {
        assert!(
            last.saturating_sub(first.unwrap_or(last)) < pass * 5,
            "after five passes the twin went from {lows:?} to {highs:?}, not to the ends {ends:?}"
        );
        let sample = stream.next().await.unwrap().unwrap();
        // Bus time now: the reading this sample carries was taken before.
        let now = servos.elapsed();
        if sample.reading_seq.is_none() {
            continue;
        }
        assert_eq!(sample.mode(), Mode::Mirror);
        let mut steps = [0; 6];
        let mut residual: f64 = 0.0;
        for joint in Joint::ALL {
            let sampled = &sample.joints[joint.index()];
            let real = sampled.real_rad.unwrap();
            assert!(
                (sampled.twin_rad - real).abs() < 1e-3,
                "{joint:?}: twin {} real {real}",
                sampled.twin_rad
            );
            steps[joint.index()] = mapping.rad_to_servo(joint, sampled.twin_rad).unwrap();
            residual = residual.max(sampled.residual_rad.unwrap().abs());
        }
        // The twin holds the arm's pose at one moment of the script, not before the last one.
        let at = moment_on_script(&script, &ids, &steps, last, now)
            .unwrap_or_else(|| panic!("twin at {steps:?} is off the script between {last:?} and {now:?}"));
        let since_first = at - *first.get_or_insert(at);
        if since_first >= SEEN_MOVING {
            worst_residual = worst_residual.max(residual);
        }
        last = at;
        for (index, step) in steps.iter().enumerate() {
            lows[index] = lows[index].min(*step);
            highs[index] = highs[index].max(*step);
        }
        samples += 1;
    }
    // Sampled along the way, not only at the ends (at 200 Hz a quiet machine gives hundreds; a
    // loaded one reads the bus less often, which is not what this test is about).
    assert!(samples > 20, "{samples} readings over the pass");
    // A passive arm moved by hand is nothing the shadow flags: its prediction follows the arm.
    let step = std::f64::consts::TAU / 4096.0;
    assert!(worst_residual <= step, "residual {worst_residual} rad");
    arm.server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_hil_the_shadow_holds_an_arm_a_hand_pushes_and_names_the_joint() {
    let arm = VirtualArmServer::start(VirtualSo101::config(), StartMode::Mirror, |_| {})
        .await
        .unwrap();
    let conn = arm.server.leased().await.unwrap();
    let mut session = SessionServiceClient::new(conn.clone());
    let started = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut hw = HardwareServiceClient::new(conn.clone());
    hw.set_mode(SetModeRequest {
        mode: Mode::Hil.into(),
        sync: SyncOption::MoveTwinToArm.into(),
        sync_max_speed_rad_s: None,
    })
    .await
    .unwrap();
    let mut robot = RobotServiceClient::new(conn);
    let tick = TickRequest {
        action: robot
            .get_robot_state(GetRobotStateRequest::default())
            .await
            .unwrap()
            .into_inner()
            .ctrl_targets,
        ..TickRequest::default()
    };
    // A policy holding the pose ticks; a hand pushes the elbow 10 degrees (114 steps) off it.
    assert!(!robot.tick(tick.clone()).await.unwrap().into_inner().blocked);
    let servos = arm.bus.servos().clone();
    let before = servos.register(3, &PRESENT_POSITION).unwrap();
    let now = servos.elapsed();
    servos.push(Push {
        id: 3,
        steps: 114.0,
        from: now,
        until: now + Duration::from_secs(30),
    });
    let mut ticks = 0;
    while !robot.tick(tick.clone()).await.unwrap().into_inner().blocked {
        ticks += 1;
        assert!(ticks < 100, "no tick reported the pushed elbow");
    }
    // Held where the hand has it: the goal is the pushed pose, so the servo no longer strains.
    let present = servos.register(3, &PRESENT_POSITION).unwrap();
    let goal = servos.register(3, &GOAL_POSITION).unwrap();
    assert_eq!(present, before + 114, "the hand holds the elbow pushed");
    assert!((goal - present).abs() <= 2, "goal {goal} present {present}");
    for id in [1, 2, 4, 5, 6] {
        let (goal, present) = (
            servos.register(id, &GOAL_POSITION).unwrap(),
            servos.register(id, &PRESENT_POSITION).unwrap(),
        );
        assert!((goal - present).abs() <= 2, "servo {id}: goal {goal} present {present}");
    }
    let status = hw
        .get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.mode(), Mode::Hil);
    assert!(!status.estop_latched, "a held joint holds the arm, it does not stop it");
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    assert_eq!(stopped.run, started.run);
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    let blocked: Vec<&str> = events.lines().filter(|l| l.contains("joint_blocked")).collect();
    assert!(!blocked.is_empty(), "{events}");
    assert!(
        blocked.iter().all(|l| l.contains("elbow_flex blocked at")),
        "{blocked:?}"
    );
    arm.server.stop().await.unwrap();
}
