//! A refusal by any layer changes nothing: the next accepted command writes the goals it
//! would have written had the refused command never been sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use fakesim_arm::{Arm, BoxFuture};
use fakesim_safety::{
    CommandPreview, EstopLatch, GuardError, Layers, Pace, PipelineTiming, SafetyError, SafetyPipeline,
};
use std::sync::Arc;

/// Where both arms stand when torque comes on: the pan just short of where the preview refuses.
const HELD: [f64; 6] = [0.295, 0.0, 0.0, 0.0, 0.0, 0.4];

/// A pipeline with the ramp, the cap and the pan-refusing preview, torque on holding `HELD`.
async fn ramping(arm: &Arc<ScriptedArm>) -> SafetyPipeline {
    let timing = PipelineTiming {
        ramp_speed_rad_s: RAMP_SPEED,
        period: PERIOD,
        watchdog_timeout: WATCHDOG * 100,
    };
    let layers = Layers {
        preview: Some(Arc::new(PanPreview::default())),
        ..layers()
    };
    let guard = SafetyPipeline::new(Some(arm.clone() as Arc<dyn Arm>), layers, timing, clock);
    guard.switch_torque_on().await.unwrap();
    guard
}

/// One refused command of each layer, and how to provoke it.
fn refusals() -> Vec<(&'static str, [f64; 6])> {
    let mut out_of_range = HELD;
    out_of_range[1] = 1.6;
    let mut below_table = HELD;
    below_table[1] = 1.2;
    let mut non_finite = HELD;
    non_finite[2] = f64::NAN;
    // The ramp moves the pan 0.01 rad towards 1.4 this period: 0.305, past the preview's 0.3.
    let mut previewed_into_contact = HELD;
    previewed_into_contact[0] = 1.4;
    vec![
        ("range", out_of_range),
        ("table", below_table),
        ("non-finite", non_finite),
        ("preview", previewed_into_contact),
    ]
}

/// Right after torque came on (the ramp's first targets still to come), runs a refused
/// command (with `refuse`), then safe ones; returns every goal vector the arm received.
async fn run(refuse: Option<[f64; 6]>, trip_estop: bool) -> Vec<[f64; 6]> {
    let arm = ScriptedArm::at(HELD);
    let guard = ramping(&arm).await;
    let safe = [0.0, 0.1, -0.1, 0.05, 0.0, 0.4];
    advance(PERIOD);
    if trip_estop {
        guard.layers().estop.trip("test");
    }
    if let Some(targets) = refuse {
        let refused = guard.command(targets, Some(HELD), Pace::Ramped).await;
        assert!(matches!(refused, Err(GuardError::Refused(_))), "{refused:?}");
    }
    if trip_estop {
        guard.layers().estop.reset();
    }
    for _ in 0..3 {
        guard.command(safe, Some(HELD), Pace::Ramped).await.unwrap();
        advance(PERIOD);
    }
    arm.commands()
}

#[tokio::test]
async fn after_a_refusal_by_each_layer_the_next_command_writes_what_it_would_have_without_it() {
    let undisturbed = run(None, false).await;
    assert_eq!(undisturbed.len(), 3, "{undisturbed:?}");
    let step = RAMP_SPEED * PERIOD.as_secs_f64();
    assert!(
        (undisturbed[0][0] - (HELD[0] - step)).abs() < 1e-12
            && (undisturbed[1][0] - (HELD[0] - 2.0 * step)).abs() < 1e-12,
        "the ramp leaves the held pose one step a period: {undisturbed:?}"
    );
    for (layer, targets) in refusals() {
        assert_eq!(
            run(Some(targets), false).await,
            undisturbed,
            "after a refusal by the {layer} layer"
        );
    }
    let mut anything = HELD;
    anything[0] = 0.0;
    assert_eq!(
        run(Some(anything), true).await,
        undisturbed,
        "after a refusal while the stop was latched"
    );
}

/// A preview during which somebody latches the emergency stop.
struct StopDuringPreview {
    estop: EstopLatch,
}

impl CommandPreview for StopDuringPreview {
    fn check(&self, _goals: [f64; 6], _measured: [f64; 6]) -> BoxFuture<'_, Result<(), SafetyError>> {
        self.estop.trip("pressed while the command was previewed");
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn a_stop_latched_while_a_command_is_previewed_is_caught_before_the_bus() {
    let arm = ScriptedArm::at(HELD);
    let estop = EstopLatch::new();
    let layers = Layers {
        estop: estop.clone(),
        preview: Some(Arc::new(StopDuringPreview { estop: estop.clone() })),
        ..layers()
    };
    let timing = PipelineTiming {
        ramp_speed_rad_s: f64::INFINITY,
        period: PERIOD,
        watchdog_timeout: WATCHDOG,
    };
    let guard = SafetyPipeline::new(Some(arm.clone() as Arc<dyn Arm>), layers, timing, clock);
    let refused = guard.command(HELD, Some(HELD), Pace::Ramped).await;
    assert!(
        matches!(refused, Err(GuardError::Refused(SafetyError::EstopLatched { .. }))),
        "{refused:?}"
    );
    assert_eq!(arm.commands(), Vec::<[f64; 6]>::new(), "nothing reached the arm");
    assert_eq!(guard.last_goals(), None, "nothing changed");
}
