//! Hand-overs between a policy and a person in `hil` on the virtual SO-101: whoever sends the
//! ticks, each goal written to a servo lies within the delta cap of the one before it, at the
//! switches too (the person's leader pose far from where the policy left the arm, and back);
//! only a hold, a goal where the servo stands, may lie further, and holds are few.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::hil::Rig;
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::*;
use feetech::control_table::GOAL_POSITION;
use feetech_emu::VirtualSo101;

/// The daemon's delta cap in hil, rad per command (fakesim-bridge's hil configuration).
const CAP_RAD: f64 = 0.35;
/// How far from where a servo stands a goal may lie and still be a hold, in steps.
const HOLD_STEPS: i32 = 25;
/// Ticks each driver sends before the other takes over.
const TURN: u32 = 12;

fn tick(action: [f64; 6]) -> TickRequest {
    TickRequest {
        action: action.to_vec(),
        ..TickRequest::default()
    }
}

/// The policy's targets at its `i`-th tick: it sweeps the arm one way, faster than the cap lets
/// the goals follow, so the arm lags its goals when the person takes over.
fn policy(i: u32) -> [f64; 6] {
    let sweep = (0.4 * f64::from(i)).min(0.6);
    [sweep, -0.5 * sweep, 0.5 * sweep, 0.3, 0.0, 0.2]
}

/// Where the person holds the leader: the other side of the policy's sweep.
const PERSON: [f64; 6] = [-0.6, 0.3, -0.3, -0.4, 0.6, 0.2];

#[tokio::test]
async fn switching_between_policy_and_person_never_writes_a_goal_past_the_delta_cap_from_the_last() {
    let arm = VirtualArmServer::start(VirtualSo101::config(), StartMode::Hil, |_| {})
        .await
        .unwrap();
    let rig = Rig::on(arm).await;
    let mut robot = rig.robot().await;
    rig.arm.bus.servos().clear_write_log();
    for turn in 0..4 {
        for i in 0..TURN {
            let targets = if turn % 2 == 0 { policy(i) } else { PERSON };
            robot.tick(tick(targets)).await.unwrap();
        }
    }

    let cap_steps = CAP_RAD * 4096.0 / std::f64::consts::TAU + 1.0;
    let log = rig.arm.bus.servos().write_log();
    let mut checked = 0;
    for id in 1..=6u8 {
        let writes: Vec<(i32, i32)> = log
            .iter()
            .filter(|w| w.id == id)
            .filter_map(|w| Some((w.value(&GOAL_POSITION)?, w.present_before)))
            .collect();
        assert!(writes.len() >= 4 * TURN as usize, "servo {id}: {} goals", writes.len());
        let mut holds = 0;
        for pair in writes.windows(2) {
            let ((last, _), (goal, present)) = (pair[0], pair[1]);
            let jump = f64::from((goal - last).abs());
            // The shadow's hold writes where the servo stands: a goal that asks for no motion,
            // however far it lies from the last one. Every other goal, the first after a hold
            // included, is held to the cap.
            if jump > cap_steps && (goal - present).abs() <= HOLD_STEPS {
                holds += 1;
                continue;
            }
            assert!(
                jump <= cap_steps,
                "servo {id}: goal {goal} after {last} ({jump} steps, the cap is {cap_steps:.0}; \
                 the servo stood at {present})"
            );
            checked += 1;
        }
        assert!(
            holds * 10 <= writes.len(),
            "servo {id}: {holds} of {} goals were holds",
            writes.len()
        );
    }
    assert!(checked > 0);
    rig.arm.server.stop().await.unwrap();
}
