//! The dynamics profile at start-up: GetModelInfo names the profile in force with its fit's
//! figures and the physics step it runs the twin at; a profile that cannot be used stops
//! start-up saying what to do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::robot::RobotService;
use crate::config::Settings;
use crate::state::AppState;
use fakesim_proto::v1;
use fakesim_proto::v1::robot_service_server::RobotService as _;
use fakesim_twin::dynamics::profile::{FitRecord, Profile};
use fakesim_twin::{ArmType, Dynamics, Scene, Sim};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tonic::Request;

/// A profile of the SO-101 with every joint 30 % stiffer and a 20 ms delay, with a fit record.
fn write_profile(dir: &Path) -> PathBuf {
    write_profile_at(dir, "arm7.dynamics.toml", None)
}

/// [`write_profile`] as `name`, identified at a physics step of `step` (s; `None`: the model's).
fn write_profile_at(dir: &Path, name: &str, step: Option<f64>) -> PathBuf {
    let sim = Sim::load(&Scene::builtin(ArmType::So101, false), 1).unwrap();
    let mut dynamics = Dynamics::read(sim.model(), ArmType::So101.spec()).unwrap();
    for joint in &mut dynamics.joints {
        joint.kp *= 1.3;
        joint.delay_s = 0.02;
    }
    let rms: BTreeMap<String, [f64; 2]> = fakesim_twin::joints::Joint::ALL
        .iter()
        .map(|j| (j.label().to_owned(), [0.04, 0.01]))
        .collect();
    let fit = FitRecord {
        recordings: vec!["sweep.trace".into()],
        seconds: [40.0, 10.0],
        train_rms_rad: rms.clone(),
        validation_rms_rad: rms,
    };
    let profile = Profile::new(ArmType::So101, Some("arm7".into()), &dynamics, step, Some(fit));
    let path = dir.join(name);
    profile.save(&path).unwrap();
    path
}

async fn start(runs: &Path, dynamics: Option<PathBuf>) -> anyhow::Result<AppState> {
    AppState::start(Settings {
        runs_dir: runs.to_owned(),
        image_size: 32,
        dynamics,
        ..Settings::default()
    })
    .await
}

/// A pair whose arms take `left` and `right`.
async fn start_pair(runs: &Path, left: PathBuf, right: PathBuf) -> anyhow::Result<AppState> {
    AppState::start(Settings {
        runs_dir: runs.to_owned(),
        image_size: 32,
        pair: true,
        pair_dynamics: [Some(left), Some(right)],
        ..Settings::default()
    })
    .await
}

async fn model_info(state: AppState) -> v1::GetModelInfoResponse {
    let info = RobotService::new(state.clone())
        .get_model_info(Request::new(v1::GetModelInfoRequest {}))
        .await
        .unwrap()
        .into_inner();
    state.twin.shutdown();
    info
}

#[tokio::test(flavor = "multi_thread")]
async fn the_twin_steps_at_the_profiles_physics_step_with_the_same_tick() {
    let dir = tempfile::tempdir().unwrap();
    let fine = write_profile_at(dir.path(), "fine.dynamics.toml", Some(0.0025));
    let state = start(dir.path(), Some(fine.clone())).await.unwrap();
    let profile = state.arms[0].dynamics.clone().unwrap();
    assert_eq!(profile.physics_step_s, Some(0.0025));
    let info = model_info(state).await;
    assert_eq!((info.timestep_s, info.substeps_per_tick), (0.0025, 20));
    assert!((info.control_rate_hz - 20.0).abs() < 1e-9, "{}", info.control_rate_hz);
    assert!(
        (info.control_period_s - 0.05).abs() < 1e-12,
        "{}",
        info.control_period_s
    );

    // A profile without a step (an older one) runs at the model's own.
    let own = write_profile(dir.path());
    assert!(!std::fs::read_to_string(&own).unwrap().contains("physics_step_s"));
    let info = model_info(start(dir.path(), Some(own.clone())).await.unwrap()).await;
    assert_eq!((info.timestep_s, info.substeps_per_tick), (0.005, 10));

    // A pair runs at the finest of its profiles' steps.
    let finer = write_profile_at(dir.path(), "finer.dynamics.toml", Some(0.001));
    let info = model_info(start_pair(dir.path(), fine.clone(), finer).await.unwrap()).await;
    assert_eq!((info.timestep_s, info.substeps_per_tick), (0.001, 50));
    let info = model_info(start_pair(dir.path(), own, fine).await.unwrap()).await;
    assert_eq!((info.timestep_s, info.substeps_per_tick), (0.0025, 20));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_physics_step_the_twin_cannot_take_stops_start_up_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let fine = write_profile_at(dir.path(), "fine.dynamics.toml", Some(0.0025));
    for (name, step, said) in [
        ("odd.dynamics.toml", 0.003, "does not divide the model's step 0.005 s"),
        ("coarse.dynamics.toml", 0.01, "larger than the model's step"),
    ] {
        let bad = write_profile_at(dir.path(), name, Some(step));
        // Alone, and beside a profile whose finer step the twin could take.
        for started in [
            start(dir.path(), Some(bad.clone())).await,
            start_pair(dir.path(), fine.clone(), bad.clone()).await,
        ] {
            let error = format!("{:#}", started.err().unwrap());
            assert!(error.contains(said) && error.contains(name), "{error}");
            assert!(error.contains("`fakesim-hil identify`"), "{error}");
        }
    }
    let text = std::fs::read_to_string(&fine).unwrap();
    for bad_step in ["0.0", "-0.0025", "nan"] {
        let bad = dir.path().join("bad.dynamics.toml");
        std::fs::write(
            &bad,
            text.replace("physics_step_s = 0.0025", &format!("physics_step_s = {bad_step}")),
        )
        .unwrap();
        let error = format!("{:#}", start(dir.path(), Some(bad)).await.err().unwrap());
        assert!(
            error.contains("physics_step_s")
                && error.contains("is not a physics step")
                && error.contains("bad.dynamics.toml"),
            "{error}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn model_info_names_the_profile_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_profile(dir.path());
    let state = start(dir.path(), Some(path.clone())).await.unwrap();
    let robot = RobotService::new(state);
    let info = robot
        .get_model_info(Request::new(v1::GetModelInfoRequest {}))
        .await
        .unwrap()
        .into_inner();
    let [named] = info.dynamics.as_slice() else {
        panic!("{:?}", info.dynamics);
    };
    assert_eq!(named.path, path.display().to_string());
    assert_eq!(
        (named.found_by.as_str(), named.robot_id.as_str(), named.side.as_str()),
        ("named", "arm7", "")
    );
    assert_eq!(named.recordings, ["sweep.trace"]);
    assert_eq!((named.train_seconds, named.validation_seconds), (40.0, 10.0));
    assert!((named.validation_rms_before_rad.unwrap() - 0.04).abs() < 1e-12);
    assert!((named.validation_rms_after_rad.unwrap() - 0.01).abs() < 1e-12);
    assert!((named.max_delay_s - 0.02).abs() < 1e-12);

    let plain = RobotService::new(start(dir.path(), None).await.unwrap());
    let info = plain
        .get_model_info(Request::new(v1::GetModelInfoRequest {}))
        .await
        .unwrap()
        .into_inner();
    assert!(info.dynamics.is_empty(), "{:?}", info.dynamics);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_that_cannot_be_used_stops_start_up_saying_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_profile(dir.path());
    let text = std::fs::read_to_string(&path).unwrap();
    let cases = [
        ("damping = ", "damping = -", "wrist_flex.damping is not a valid value"),
        (
            "arm = \"so101\"",
            "arm = \"so100\"",
            "is of an so100, but the daemon runs --arm so101",
        ),
        ("format = 1", "format = 9", "format 9"),
        ("[joints.gripper]", "[joints.grip]", "unknown joint"),
    ];
    for (from, to, said) in cases {
        let bad = dir.path().join("bad.dynamics.toml");
        let broken = match from {
            "damping = " => {
                // Only the wrist flex's damping goes negative.
                let at = text.find("[joints.wrist_flex]").unwrap();
                let (head, tail) = text.split_at(at);
                format!("{head}{}", tail.replacen(from, to, 1))
            }
            _ => text.replacen(from, to, 1),
        };
        assert_ne!(broken, text, "{from}");
        std::fs::write(&bad, broken).unwrap();
        let error = format!("{:#}", start(dir.path(), Some(bad.clone())).await.err().unwrap());
        assert!(error.contains(said), "{error}");
        assert!(error.contains("bad.dynamics.toml"), "{error}");
        assert!(error.contains("`fakesim-hil identify`"), "{error}");
    }
    let missing = dir.path().join("none.dynamics.toml");
    let error = format!("{:#}", start(dir.path(), Some(missing)).await.err().unwrap());
    assert!(
        error.contains("none.dynamics.toml") && error.contains("start without it"),
        "{error}"
    );
}
