//! A physics step finer than the model's (a dynamics profile's): the twin steps at it with as
//! many more steps a tick, so a tick lasts as long; its preview steps at it too; a step that does
//! not divide the model's into a whole number, or is larger, is refused saying what to give.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::preview::PreviewRequest;
use fakesim_twin::sim::{DEFAULT_SUBSTEPS_PER_TICK, MAX_FINER_STEPS, finer_steps};
use fakesim_twin::{ArmType, JointValues, Scene, Sim, TwinConfig, TwinError, TwinHandle};

/// The SO-101 alone on its table, the model's step or `step`.
fn sim(step: Option<f64>) -> Sim {
    Sim::load_each(
        &Scene::builtin(ArmType::So101, false),
        DEFAULT_SUBSTEPS_PER_TICK,
        &[],
        step,
    )
    .unwrap()
}

/// A goal away from the initial pose, so the ticks below move the arm.
const GOAL: [f64; 6] = [0.4, -0.3, 0.3, 0.2, 0.5, 0.5];

#[test]
fn a_half_step_doubles_the_steps_of_a_tick_and_keeps_its_period() {
    let (mut own, mut fine) = (sim(None), sim(Some(0.0025)));
    let (own_info, fine_info) = (own.model_info(), fine.model_info());
    assert_eq!((own_info.timestep, own_info.substeps_per_tick), (0.005, 10));
    assert_eq!((fine_info.timestep, fine_info.substeps_per_tick), (0.0025, 20));
    assert_eq!(
        fine.model().opt().timestep,
        0.0025,
        "the model the preview shares steps finer"
    );
    // The same tick, within the rounding of 0.0025 × 20 against 0.005 × 10.
    assert!((fine_info.control_rate_hz() - 20.0).abs() < 1e-12 && (own_info.control_rate_hz() - 20.0).abs() < 1e-12);
    assert!((fine.clock().period_s() - own.clock().period_s()).abs() < 1e-15);
    assert!((fine.clock().steps_per_tick() - 20.0).abs() < 1e-12);

    for twin in [&mut own, &mut fine] {
        twin.set_arm_ctrl(&GOAL);
        twin.step_tick();
    }
    assert!((fine.time() - 0.05).abs() < 1e-12 && (own.time() - 0.05).abs() < 1e-12);
    assert_eq!(fine.tick_snapshot().tick, 1);
    // A client tick of the period in force runs twice the steps for the same twin time, and so
    // does one of its own period.
    assert_eq!((own.step_period(None), fine.step_period(None)), (10, 20));
    assert_eq!((own.step_period(Some(0.02)), fine.step_period(Some(0.02))), (4, 8));
    // 30 ticks at 30 Hz: one second of twin time either way.
    for twin in [&mut own, &mut fine] {
        twin.set_control_period(1.0 / 30.0).unwrap();
        (0..30).for_each(|_| {
            twin.step_period(None);
        });
    }
    let (t_own, t_fine) = (own.time(), fine.time());
    assert!((t_own - t_fine).abs() < 1e-9, "{t_own} s against {t_fine} s");
    assert!((t_fine - 1.12).abs() < 1e-6, "{t_fine}");
    // The arm moved to the goal either way (the finer steps are the same physics, closer).
    let (q_own, q_fine) = (own.arm_qpos(), fine.arm_qpos());
    for i in 0..6 {
        assert!((q_fine[i] - q_own[i]).abs() < 0.05, "{q_fine:?} against {q_own:?}");
    }
}

#[test]
fn the_preview_steps_at_the_finer_step_over_the_same_ticks() {
    let actions = || vec![JointValues::Ordered(GOAL.to_vec()); 10];
    let (mut own, mut fine) = (sim(None), sim(Some(0.0025)));
    let (own_report, fine_report) = (
        own.preview(&PreviewRequest::new(actions(), 10)).unwrap(),
        fine.preview(&PreviewRequest::new(actions(), 10)).unwrap(),
    );
    assert_eq!((own_report.ticks, own_report.substeps_per_tick), (20, 10));
    assert_eq!((fine_report.ticks, fine_report.substeps_per_tick), (20, 20));
    // Twenty ticks of 50 ms either way: the arm ends at the goal in both.
    for (a, b) in own_report.joints.iter().zip(&fine_report.joints) {
        assert!((a.final_qpos - b.final_qpos).abs() < 0.05, "{a:?} against {b:?}");
    }
    // The live twin, ticked through the same actions, ends where its preview said.
    fine.set_arm_ctrl(&GOAL);
    (0..20).for_each(|_| fine.step_tick());
    for (i, joint) in fine_report.joints.iter().enumerate() {
        assert!((fine.arm_qpos()[i] - joint.final_qpos).abs() < 1e-9, "{joint:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_handle_reports_the_finer_step_and_refuses_one_that_does_not_divide() {
    let config = |step| TwinConfig {
        scene: Scene::builtin(ArmType::So101, false),
        physics_step_s: Some(step),
        ..TwinConfig::default()
    };
    let twin = TwinHandle::spawn(config(0.0025)).unwrap();
    let info = twin.with_sim(|sim| sim.model_info()).await.unwrap();
    assert_eq!((info.timestep, info.substeps_per_tick), (0.0025, 20));
    twin.shutdown();
    let Err(TwinError::Scene(said)) = TwinHandle::spawn(config(0.003)) else {
        panic!("a 3 ms step is refused");
    };
    assert!(said.contains("whole number") && said.contains("0.005"), "{said}");
}

#[test]
fn steps_that_do_not_divide_the_models_are_refused_saying_what_to_give() {
    let refused = |step: f64| match Sim::load_each(&Scene::builtin(ArmType::So101, false), 10, &[], Some(step)) {
        Err(TwinError::Scene(said)) => said,
        Err(other) => panic!("{step}: {other}"),
        Ok(_) => panic!("{step} s was taken"),
    };
    for (step, why) in [
        (0.003, "does not divide the model's step 0.005 s into a whole number"),
        (0.0049, "does not divide"),
        (0.01, "is larger than the model's step 0.005 s"),
        (0.0, "is not a finite number of seconds above 0"),
        (-0.0025, "above 0"),
        (f64::NAN, "above 0"),
        (0.005 / 101.0, "into 101 steps"),
    ] {
        let said = refused(step);
        assert!(said.contains(why), "{step}: {said}");
        assert!(said.contains("divided by a whole number"), "{step}: {said}");
    }
    // A step written in decimal or as the model's over a whole number is taken, the model's own
    // too.
    assert_eq!(finer_steps(0.005, 0.005 / 3.0).unwrap(), 3);
    assert_eq!(finer_steps(0.005, 0.001).unwrap(), 5);
    assert_eq!(finer_steps(0.005, 0.005).unwrap(), 1);
    assert_eq!(
        finer_steps(0.005, 0.005 / f64::from(MAX_FINER_STEPS)).unwrap(),
        MAX_FINER_STEPS
    );
    assert_eq!(sim(Some(0.005 / 3.0)).substeps_per_tick(), 30);
    assert_eq!(sim(Some(0.005)).substeps_per_tick(), 10);
}
