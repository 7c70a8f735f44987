//! A dynamics profile in the shadow and the preview: on a recording the twin made of itself under
//! a perturbed profile (slower, softer, heavier, 20 ms late), the shadow predicting with that
//! profile misses the measured joints by at least three times less than its hand-set lag, and the
//! preview of a 50-tick chunk ends nearer the recorded pose on the twin loaded with the profile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_bridge::hil::{Shadow, ShadowConfig, ShadowInput, ShadowModel};
use fakesim_identify::Recording;
use fakesim_identify::synth::{self, SynthOptions};
use fakesim_twin::preview::PreviewRequest;
use fakesim_twin::{ArmType, Dynamics, JointValues, Scene, Sim, StartState, TwinConfig, TwinHandle};
use std::time::{Duration, Instant};

const ARM: ArmType = ArmType::So101;

/// The model's own dynamics.
fn defaults() -> Dynamics {
    let sim = Sim::load(&Scene::builtin(ARM, false), 1).unwrap();
    Dynamics::read(sim.model(), ARM.spec()).unwrap()
}

/// The arm the recording is made of: every parameter well off the model's, and a 20 ms delay.
fn truth() -> Dynamics {
    let mut d = defaults();
    for j in &mut d.joints {
        j.kp *= 0.6;
        j.damping *= 1.5;
        j.armature *= 1.4;
        j.frictionloss *= 1.3;
        j.force_limit *= 0.7;
        j.delay_s = 0.02;
    }
    d
}

/// The physics step the recording is made at, as `fakesim-hil identify` writes it in a profile.
fn synth_step() -> f64 {
    fakesim_identify::replay::PHYSICS_STEP_S
}

fn recording() -> Recording {
    let opts = SynthOptions {
        seconds: 12.0,
        ..SynthOptions::default()
    };
    synth::record(ARM, &truth(), &opts).unwrap()
}

/// The goals written last before `t` (`start` before the first).
fn goals_before(rec: &Recording, t: f64, start: [f64; 6]) -> [f64; 6] {
    let n = rec.goals.partition_point(|g| g.0 < t);
    n.checked_sub(1).map_or(start, |i| rec.goals[i].1)
}

/// RMS over every reading and joint of what `shadow` calls the residual, fed `rec` as the
/// bridge feeds it: each reading with the goals written before it.
fn shadow_rms(mut shadow: Shadow, rec: &Recording) -> f64 {
    let base = Instant::now();
    let start = rec.readings[0].1;
    let (mut sum, mut n) = (0.0, 0.0);
    for &(t, measured) in &rec.readings {
        let goals = goals_before(rec, t, start);
        let input = ShadowInput {
            at: base + Duration::from_secs_f64(t),
            measured,
            load_percent: [0.0; 6],
            goals: Some(goals),
        };
        let (residuals, _) = shadow.observe(&input);
        for r in residuals {
            sum += r.residual_rad * r.residual_rad;
            n += 1.0;
        }
    }
    (sum / n).sqrt()
}

#[test]
fn the_shadow_with_the_profile_misses_the_arm_three_times_less_than_its_lag() {
    let rec = recording();
    let period = Duration::from_millis(50);
    let pose = rec.readings[0].1;
    let lag = shadow_rms(Shadow::new(ShadowConfig::default(), period, pose), &rec);
    let model = ShadowModel::new(ARM, &truth(), Some(synth_step())).unwrap();
    let shadow = Shadow::new(ShadowConfig::default(), period, pose).identified(Some(model));
    let identified = shadow_rms(shadow, &rec);
    println!("shadow residual RMS: hand-set lag {lag:.4} rad, identified model {identified:.4} rad");
    assert!(identified * 3.0 <= lag, "lag {lag} rad, identified {identified} rad");
}

/// Where the preview of the 50 goals from reading `k` on, each held `period_s`, ends on `twin`.
async fn preview_end(twin: &TwinHandle, rec: &Recording, k: usize, goals: &[[f64; 6]], period_s: f64) -> [f64; 6] {
    let (t0, qpos) = rec.readings[k];
    let (t1, before) = rec.readings[k - 1];
    let qvel = std::array::from_fn(|j| (qpos[j] - before[j]) / (t0 - t1));
    let ctrl = goals_before(rec, t0, qpos);
    let timestep = twin.with_sim(|sim| sim.model_info().timestep).await.unwrap();
    // A whole number of the twin's steps: 4 of 5 ms, 8 of 2.5 ms.
    let steps_per_goal = (period_s / timestep).round() as u32;
    let request = PreviewRequest {
        start: Some(StartState {
            qpos,
            qvel,
            ctrl: Some(ctrl),
        }),
        actions: goals.iter().map(|g| JointValues::Ordered(g.to_vec())).collect(),
        substeps_per_action: Some(steps_per_goal),
        ..PreviewRequest::new(Vec::new(), 0)
    };
    let report = twin.preview(request).await.unwrap();
    report.joints.map(|j| j.final_qpos)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_preview_with_the_profile_ends_nearer_the_recorded_pose() {
    let rec = recording();
    let spawn = |dynamics: Option<Dynamics>| {
        TwinHandle::spawn(TwinConfig {
            scene: Scene::builtin(ARM, false),
            physics_step_s: dynamics.map(|_| synth_step()),
            dynamics: vec![dynamics],
            render_threads: 1,
            ..TwinConfig::default()
        })
        .unwrap()
    };
    let (plain, loaded) = (spawn(None), spawn(Some(truth())));
    let goal_period = 0.02;
    let chunk = 50;
    for from_s in [2.0, 5.0, 8.0] {
        let k = rec.readings.partition_point(|r| r.0 < from_s);
        let t0 = rec.readings[k].0;
        // The goals the recording wrote every 20 ms from there: 50 ticks of 20 ms.
        let goals: Vec<[f64; 6]> = (0..chunk)
            .map(|i| goals_before(&rec, t0 + goal_period * f64::from(i) + 1e-9, [0.0; 6]))
            .collect();
        let end = t0 + goal_period * f64::from(chunk);
        let recorded = rec.readings[rec.readings.partition_point(|r| r.0 < end - 1e-9)].1;
        let miss = |pose: [f64; 6]| (pose.iter().zip(recorded).map(|(p, r)| (p - r) * (p - r)).sum::<f64>()).sqrt();
        let without = miss(preview_end(&plain, &rec, k, &goals, goal_period).await);
        let with = miss(preview_end(&loaded, &rec, k, &goals, goal_period).await);
        println!("chunk from {t0:.2} s: end pose off by {without:.4} rad without the profile, {with:.4} rad with");
        assert!(with < without, "from {t0} s: with {with} rad, without {without} rad");
    }
}
