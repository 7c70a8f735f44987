//! The safety pipeline against a scripted arm: the order of the layers, what reaches the arm,
//! the ramp after torque on, the fault reaction, the watchdog, and running without an arm.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use fakesim_arm::Arm;
use fakesim_arm::Joint;
use fakesim_safety::{FaultAction, GuardError, Layers, Pace, PipelineTiming, SafetyError, SafetyEvent, SafetyPipeline};
use feetech::protocol::status::ServoError;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn the_layers_refuse_in_order_and_a_refused_command_reaches_no_arm() {
    let arm = ScriptedArm::at([0.0; 6]);
    let guard = pipeline(Some(arm.clone()));
    let out_of_range_and_below_table = [0.0, 1.6, 0.0, 0.0, 0.0, 0.0];
    let below_table = [0.0, 1.2, 0.0, 0.0, 0.0, 0.0];

    let r = refusal(
        guard
            .command(out_of_range_and_below_table, Some([0.0; 6]), Pace::Ramped)
            .await,
    );
    assert!(
        matches!(
            r,
            SafetyError::OutOfRange {
                joint: Joint::ShoulderLift,
                ..
            }
        ),
        "{r:?}"
    );
    let r = refusal(guard.command(below_table, Some([0.0; 6]), Pace::Ramped).await);
    assert!(matches!(r, SafetyError::BelowTable { .. }), "{r:?}");
    guard.layers().estop.trip("test");
    let r = refusal(
        guard
            .command(out_of_range_and_below_table, Some([0.0; 6]), Pace::Ramped)
            .await,
    );
    assert!(matches!(r, SafetyError::EstopLatched { .. }), "{r:?}");

    assert_eq!(arm.calls(), [], "nothing reached the arm");
    assert_eq!(guard.last_goals(), None);
}

#[tokio::test]
async fn a_command_is_capped_from_the_measured_pose_and_the_cap_is_reported() {
    let arm = ScriptedArm::at([0.0; 6]);
    let guard = pipeline(Some(arm.clone()));
    let targets = [0.5, 0.1, 0.0, 0.0, 0.0, 0.0];
    let sent = guard.command(targets, Some([0.0; 6]), Pace::Ramped).await.unwrap();
    assert_eq!(sent.goals, [MAX_DELTA, 0.1, 0.0, 0.0, 0.0, 0.0]);
    assert!(sent.capped);
    assert!(matches!(sent.events.as_slice(), [SafetyEvent::DeltaCapped { joints }] if joints.len() == 1));
    assert_eq!(arm.commands(), [sent.goals]);
    assert_eq!(guard.last_goals(), Some(sent.goals));
}

#[tokio::test]
async fn after_torque_on_goals_start_at_the_held_pose_and_ramp_at_the_speed_limit() {
    let held = [0.3, -0.2, 0.1, 0.0, 0.0, 0.4];
    let arm = ScriptedArm::at(held);
    let guard = pipeline(Some(arm.clone()));
    guard.switch_torque_on().await.unwrap();
    assert_eq!(arm.calls(), [Call::Read, Call::Torque(true)]);
    assert!(guard.torque_on());

    let targets = [0.0; 6];
    let first = guard.command(targets, Some(held), Pace::Ramped).await.unwrap();
    assert_eq!(first.goals, held, "no jump: the first goals hold the pose");
    advance(PERIOD);
    let second = guard.command(targets, Some(held), Pace::Ramped).await.unwrap();
    let step = RAMP_SPEED * PERIOD.as_secs_f64();
    assert!((second.goals[0] - (held[0] - step)).abs() < 1e-12, "{:?}", second.goals);
    assert_eq!(second.goals[3], 0.0, "a joint already there stays");

    // A direct command (a sync's own slow path) bypasses the ramp.
    let direct = guard.command(targets, Some(held), Pace::Direct).await.unwrap();
    let capped = [0.1, 0.0, 0.0, 0.0, 0.0, 0.2];
    for (goal, want) in direct.goals.iter().zip(capped) {
        assert!(
            (goal - want).abs() < 1e-12,
            "only the delta cap limits it: {:?}",
            direct.goals
        );
    }
}

#[tokio::test]
async fn a_servo_fault_still_present_keeps_torque_off() {
    let arm = ScriptedArm::at([0.0; 6]);
    arm.raise(ServoError::OVERLOAD);
    let guard = pipeline(Some(arm.clone()));
    let refused = guard.switch_torque_on().await;
    assert!(
        matches!(
            refused,
            Err(GuardError::ServoFault {
                joint: Joint::ElbowFlex,
                id: 3,
                ..
            })
        ),
        "{refused:?}"
    );
    assert_eq!(arm.calls(), [Call::Read], "torque was never switched on");
    assert!(!guard.torque_on());
}

#[tokio::test]
async fn the_fault_reaction_acts_once_per_condition_and_a_lost_bus_latches() {
    let arm = ScriptedArm::at([0.0; 6]);
    let guard = pipeline(Some(arm.clone()));
    guard.switch_torque_on().await.unwrap();
    arm.calls();

    let mut events = Vec::new();
    assert_eq!(
        guard.react_to_faults(|e| events.push(e)).await.action,
        FaultAction::Continue
    );
    assert_eq!(events, []);
    arm.raise(ServoError::OVERLOAD);
    assert_eq!(
        guard.react_to_faults(|e| events.push(e)).await.action,
        FaultAction::TorqueOff
    );
    assert!(
        matches!(events.as_slice(), [SafetyEvent::ServoFault { .. }]),
        "{events:?}"
    );
    assert_eq!(arm.calls(), [Call::Torque(false)]);
    assert!(!guard.torque_on());
    events.clear();
    assert_eq!(
        guard.react_to_faults(|e| events.push(e)).await.action,
        FaultAction::TorqueOff
    );
    assert_eq!(
        (events.len(), arm.calls()),
        (0, vec![]),
        "a lasting fault is not acted on again"
    );

    arm.raise(ServoError::VOLTAGE);
    assert_eq!(
        guard.react_to_faults(|e| events.push(e)).await.action,
        FaultAction::Hold
    );
    assert_eq!(arm.calls(), [Call::Read, Call::Command([0.0; 6])], "held where it is");

    *arm.bus_lost.lock().unwrap() = true;
    events.clear();
    guard.react_to_faults(|e| events.push(e)).await;
    assert!(guard.layers().estop.is_latched());
    assert!(
        matches!(events.last(), Some(SafetyEvent::EstopLatched { .. })),
        "{events:?}"
    );
}

#[tokio::test]
async fn the_watchdog_holds_after_a_silence_and_the_next_command_resumes() {
    let arm = ScriptedArm::at([0.0; 6]);
    let guard = pipeline(Some(arm.clone()));
    guard.switch_torque_on().await.unwrap();
    guard.command([0.0; 6], Some([0.0; 6]), Pace::Ramped).await.unwrap();
    arm.calls();

    advance(WATCHDOG);
    assert_eq!(guard.check_watchdog([0.05; 6]).await, None, "not yet");
    advance(Duration::from_millis(1));
    let hold = guard.check_watchdog([0.05; 6]).await;
    assert!(matches!(hold, Some(SafetyEvent::WatchdogHold { .. })), "{hold:?}");
    assert_eq!(arm.commands(), [[0.05; 6]], "held at the measured pose");
    assert_eq!(guard.check_watchdog([0.05; 6]).await, None, "one event per hold");

    let resumed = guard.command([0.05; 6], Some([0.05; 6]), Pace::Ramped).await.unwrap();
    assert_eq!(resumed.events, [SafetyEvent::WatchdogResumed]);
}

#[tokio::test]
async fn a_switch_to_targets_behind_a_lagging_arm_moves_the_goals_one_cap_from_the_last() {
    // A policy's targets far ahead: the goals lead the arm, still at 0, by a cap. A person's
    // pose the other way then moves them one cap back, not two.
    let guard = pipeline(None);
    let led = guard.command([1.0; 6], Some([0.0; 6]), Pace::Ramped).await.unwrap();
    assert_eq!(led.goals, [MAX_DELTA; 6]);
    let switched = guard.command([-1.0; 6], Some([0.0; 6]), Pace::Ramped).await.unwrap();
    assert_eq!(switched.goals, [0.0; 6]);
    assert!(switched.capped);
}

#[tokio::test]
async fn without_an_arm_the_layers_run_and_the_cap_starts_from_the_given_pose() {
    let guard = pipeline(None);
    guard.start_from([0.4; 6]);
    let sent = guard.command([1.0; 6], None, Pace::Ramped).await.unwrap();
    assert_eq!(sent.goals, [0.4 + MAX_DELTA; 6]);
    let next = guard.command([1.0; 6], None, Pace::Ramped).await.unwrap();
    assert_eq!(next.goals, [0.4 + 2.0 * MAX_DELTA; 6], "from the last goals");
    guard.switch_torque_on().await.unwrap();
    assert!(!guard.torque_on(), "no arm, no torque");
}

#[tokio::test]
async fn the_preview_judges_the_goals_that_will_be_written_and_where_they_lead() {
    let arm = ScriptedArm::at([0.2; 6]);
    let preview = Arc::new(PanPreview::default());
    let timing = PipelineTiming {
        ramp_speed_rad_s: f64::INFINITY,
        period: PERIOD,
        watchdog_timeout: WATCHDOG,
    };
    let layers = Layers {
        preview: Some(preview.clone()),
        ..layers()
    };
    let guard = SafetyPipeline::new(Some(arm.clone() as Arc<dyn Arm>), layers, timing, clock);

    let sent = guard.command([0.25; 6], Some([0.2; 6]), Pace::Ramped).await.unwrap();
    assert_eq!(arm.commands(), [sent.goals]);
    let seen = std::mem::take(&mut *preview.seen.lock().unwrap());
    assert_eq!(seen, [[0.25; 6]], "goals equal to the targets are previewed once");

    // From a pan at 0.2 the cap writes 0.4, past the preview's 0.3: refused on the goals.
    let far = [1.4, 0.2, 0.2, 0.2, 0.2, 0.2];
    let refused = guard.command(far, Some([0.2; 6]), Pace::Ramped).await;
    let event = refused.as_ref().err().and_then(GuardError::event);
    assert!(
        matches!(&event, Some(SafetyEvent::PreviewRefused { violations }) if violations.contains("upper_arm")),
        "{refused:?}"
    );
    let seen = std::mem::take(&mut *preview.seen.lock().unwrap());
    assert_eq!(
        seen,
        [[0.2 + MAX_DELTA, 0.2, 0.2, 0.2, 0.2, 0.2]],
        "the goals the cap would write"
    );

    // From a pan at 0 the capped step (0.2) passes, but the target it leads to is refused.
    let from_zero = [0.0, 0.2, 0.2, 0.2, 0.2, 0.2];
    let refused = guard.command(far, Some(from_zero), Pace::Ramped).await;
    assert!(matches!(refused, Err(GuardError::Refused(_))), "{refused:?}");
    let seen = std::mem::take(&mut *preview.seen.lock().unwrap());
    assert_eq!(
        seen,
        [[MAX_DELTA, 0.2, 0.2, 0.2, 0.2, 0.2], far],
        "the goals, then where they lead"
    );
    assert_eq!(arm.calls(), [], "the refused goals never reached the arm");
}
