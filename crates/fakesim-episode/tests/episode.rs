//! Whole episodes on the twin: every stop reason, the budget, the journal on disk, and a
//! scripted solution of the lift task over several layouts, on the SO-101 and the SO-100.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_episode::session::{CAMERAS, Images, ResetOutcome};
use fakesim_episode::tasks::{self, TaskError, TaskRef};
use fakesim_episode::{
    Engine, EngineConfig, EpisodeError, GripperCommand, GripperStop, MoveStop, ResetRequest, Status,
};
use fakesim_twin::{ArmType, Scene, TwinConfig, TwinHandle};
use std::path::Path;

fn engine_with_cap(runs: &Path, max_steps: u64, cap: u32, locked: Option<TaskRef>) -> Engine {
    engine_on(ArmType::So101, runs, max_steps, cap, locked)
}

/// An engine on `arm`'s tabletop, starting episodes from the arm's home.
fn engine_on(arm: ArmType, runs: &Path, max_steps: u64, cap: u32, locked: Option<TaskRef>) -> Engine {
    let twin = TwinHandle::spawn(TwinConfig {
        scene: Scene::builtin(arm, true),
        ..TwinConfig::default()
    })
    .unwrap();
    Engine::new(
        twin,
        EngineConfig {
            max_steps,
            max_steps_per_call: cap,
            runs_dir: runs.to_owned(),
            image_size: 64,
            locked_task: locked,
            home_pose: arm.spec().home,
        },
    )
}

fn engine(runs: &Path, max_steps: u64, locked: Option<TaskRef>) -> Engine {
    engine_with_cap(runs, max_steps, 30, locked)
}

fn task(task_index: u32, init_state_index: u32) -> ResetRequest {
    ResetRequest {
        suite: Some(tasks::SUITE.into()),
        task_index: Some(task_index),
        init_state_index: Some(init_state_index),
        cameras: CAMERAS.map(str::to_owned).to_vec(),
        ..ResetRequest::default()
    }
}

#[tokio::test]
async fn a_five_centimetre_move_is_reached_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300, None);
    let reset: ResetOutcome = e.reset_task(ResetRequest::default()).await.unwrap();
    assert_eq!(reset.task.task_index, 0);
    let start = reset.observation.state.eef_pos_m;
    let out = e.move_tcp(0, [0.0, 0.05, 0.0], None).await.unwrap();
    assert_eq!(out.report.stop, MoveStop::Reached, "{:?}", out.report);
    assert!(out.report.remaining_distance_m < 0.008);
    let moved = out.observation.state.eef_pos_m;
    assert!((moved[1] - start[1] - 0.05).abs() < 0.008, "{start:?} -> {moved:?}");
    assert!((out.report.achieved_delta_xyz[1] - (moved[1] - start[1])).abs() < 1e-9);
    assert_eq!(out.observation.step, u64::from(out.report.executed_steps));
    assert_eq!(out.observation.steps_left, 300 - out.observation.step);
    assert!(out.observation.images.unwrap().agentview.starts_with(b"\x89PNG"));
}

#[tokio::test]
async fn pushing_into_the_table_stalls_and_a_long_move_hits_the_step_cap() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300, None);
    e.reset_task(task(0, 1)).await.unwrap();
    let out = e.move_tcp(0, [0.0, 0.0, -0.3], None).await.unwrap();
    assert_eq!(out.report.stop, MoveStop::Stalled, "{:?}", out.report);
    assert!(out.observation.state.eef_pos_m[2] > 0.78, "the table holds the TCP up");
    assert!(out.report.remaining_distance_m > 0.008);

    let e = engine_with_cap(dir.path(), 300, 3, None);
    e.reset_task(task(0, 1)).await.unwrap();
    let out = e.move_tcp(0, [0.0, 0.1, 0.0], None).await.unwrap();
    assert_eq!(out.report.stop, MoveStop::StepCap, "{:?}", out.report);
    assert_eq!(out.report.executed_steps, 3);
    let again = e
        .move_tcp(0, [0.0, 0.1 - out.report.achieved_delta_xyz[1], 0.0], None)
        .await
        .unwrap();
    assert_ne!(
        again.report.stop,
        MoveStop::Stalled,
        "continuing a capped move makes progress"
    );
}

#[tokio::test]
async fn the_budget_ends_motion_and_then_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 4, None);
    e.reset_task(ResetRequest::default()).await.unwrap();
    let out = e.move_tcp(0, [0.0, 0.1, 0.0], None).await.unwrap();
    assert_eq!(out.report.stop, MoveStop::Budget);
    assert_eq!(out.report.executed_steps, 4);
    assert_eq!(out.observation.steps_left, 0);
    let err = e.move_tcp(0, [0.0, 0.01, 0.0], None).await.unwrap_err();
    assert!(matches!(err, EpisodeError::StepLimit { .. }));
    let err = e.gripper(0, GripperCommand::Close).await.unwrap_err();
    assert!(matches!(err, EpisodeError::StepLimit { .. }));
    let info = e.session_info().await.unwrap();
    assert_eq!(
        info.state.unwrap().gripper_command,
        GripperCommand::Open,
        "gripper target unchanged"
    );
    e.stop_episode().await.unwrap();
}

#[tokio::test]
async fn gripper_settles_then_repeats_are_no_ops() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300, None);
    e.reset_task(ResetRequest::default()).await.unwrap();
    let no_op = e.gripper(0, GripperCommand::Open).await.unwrap();
    assert_eq!(no_op.report.stop, GripperStop::NoOp);
    assert_eq!(no_op.report.executed_steps, 0);
    assert_eq!(no_op.observation.step, 0);
    let close = e.gripper(0, GripperCommand::Close).await.unwrap();
    assert_eq!(close.report.stop, GripperStop::Settled, "{:?}", close.report);
    assert!(close.report.executed_steps >= 10);
    assert!(
        close.report.opening_after_m() < close.report.opening_before_m - 0.02,
        "{:?}",
        close.report
    );
    assert_eq!(
        e.gripper(0, GripperCommand::Close).await.unwrap().report.stop,
        GripperStop::NoOp
    );
    let open = e.gripper(0, GripperCommand::Open).await.unwrap();
    assert_eq!(open.report.stop, GripperStop::Settled);
    assert!(open.report.opening_after_m() > close.report.opening_after_m() + 0.02);
}

#[tokio::test]
async fn states_and_refusals_follow_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300, None);
    let info = e.session_info().await.unwrap();
    assert_eq!(info.status, Status::Idle);
    assert!(info.task.is_none() && info.state.is_none());
    assert_eq!(info.default_scene.unwrap().task_index, 0);
    assert!(matches!(
        e.move_tcp(0, [0.0; 3], None).await.unwrap_err(),
        EpisodeError::NotRunning { .. }
    ));
    assert!(matches!(
        e.observation(0, None, None).await.unwrap_err(),
        EpisodeError::NotRunning { .. }
    ));
    assert!(matches!(
        e.stop_episode().await.unwrap_err(),
        EpisodeError::NotRunning { .. }
    ));
    assert!(matches!(
        e.reset_task(task(9, 0)).await.unwrap_err(),
        EpisodeError::Task(TaskError::UnknownTask { .. })
    ));
    assert!(matches!(
        e.reset_task(task(0, 99)).await.unwrap_err(),
        EpisodeError::Task(TaskError::UnknownInitState { .. })
    ));
    let bad_suite = ResetRequest {
        suite: Some("libero_10".into()),
        ..ResetRequest::default()
    };
    assert!(matches!(
        e.reset_task(bad_suite).await.unwrap_err(),
        EpisodeError::Task(TaskError::UnknownSuite { .. })
    ));
    e.reset_task(task(1, 2)).await.unwrap();
    assert!(matches!(
        e.reset_task(ResetRequest::default()).await,
        Err(EpisodeError::AlreadyRunning { .. })
    ));
    for bad in [[f64::NAN, 0.0, 0.0], [0.0, 0.0, 50.0]] {
        assert!(matches!(
            e.move_tcp(0, bad, None).await.unwrap_err(),
            EpisodeError::BadRequest(_)
        ));
    }
    let err = e.move_tcp(0, [0.0; 3], Some([0.0, 0.0, 90.0])).await.unwrap_err();
    assert!(err.to_string().contains("radians, not degrees"), "{err}");
    let info = e.session_info().await.unwrap();
    assert_eq!(
        (info.status, info.step),
        (Status::Running, 0),
        "refusals used no budget"
    );
    let listing = e.list_tasks(None).unwrap();
    assert_eq!(listing.total_tasks, 5);
    assert!(listing.tasks.is_empty());
    let listing = e.list_tasks(Some(tasks::SUITE)).unwrap();
    assert_eq!(listing.tasks.len(), 5);
    assert!(listing.tasks.iter().all(|t| t.n_init_states >= 10));
}

#[tokio::test]
async fn locked_task_refuses_scene_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let locked = TaskRef {
        suite: tasks::SUITE.into(),
        task_index: 2,
        init_state_index: 5,
    };
    let e = engine(dir.path(), 300, Some(locked));
    assert!(e.session_info().await.unwrap().task_locked);
    assert!(matches!(
        e.reset_task(task(0, 0)).await.unwrap_err(),
        EpisodeError::TaskLocked { .. }
    ));
    let reset = e.reset_task(ResetRequest::default()).await.unwrap();
    assert_eq!((reset.task.task_index, reset.task.init_state_index), (2, 5));
}

#[tokio::test]
async fn stop_writes_events_frames_and_a_summary_without_leaking_success() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300, None);
    let reset = e.reset_task(task(0, 0)).await.unwrap();
    e.move_tcp(0, [0.02, 0.0, 0.0], None).await.unwrap();
    e.gripper(0, GripperCommand::Close).await.unwrap();
    e.observation(0, None, None).await.unwrap();
    let stop = e.stop_episode().await.unwrap();
    assert_eq!(stop.run, reset.run);
    let events = std::fs::read_to_string(&stop.artifacts.events).unwrap();
    let kinds: Vec<String> = events
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(kinds, ["reset_task", "move", "gripper", "observe", "stop_episode"]);
    let frames = std::fs::read_dir(&stop.artifacts.frames).unwrap().count();
    assert_eq!(frames, 8, "two PNGs for each of reset, move, gripper, observe");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stop.artifacts.summary).unwrap()).unwrap();
    assert_eq!(summary["status"], "stopped");
    assert_eq!(summary["calls"]["by_stop_reason"]["gripper"]["settled"], 1);
    assert!(summary["success"].is_boolean());
    assert!(
        !events.contains("success"),
        "success never reaches the event log the client could read"
    );
    assert_eq!(e.session_info().await.unwrap().status, Status::Stopped);
    e.reset_task(ResetRequest::default()).await.unwrap();
}

#[tokio::test]
async fn interrupt_finalises_a_live_episode() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300, None);
    let reset = e.reset_task(ResetRequest::default()).await.unwrap();
    e.interrupt().await.unwrap();
    let summary = dir.path().join(&reset.run).join("summary.json");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(summary).unwrap()).unwrap();
    assert_eq!(summary["status"], "interrupted");
}

#[tokio::test]
async fn same_layout_same_scene_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let a = engine(dir.path(), 300, None);
    let b = engine(dir.path(), 300, None);
    let ra = a.reset_task(task(3, 7)).await.unwrap();
    let rb = b.reset_task(task(3, 7)).await.unwrap();
    assert_eq!(ra.observation.state, rb.observation.state);
    let pngs = |images: Option<Images>| images.map(|i| (i.agentview, i.robot0_eye_in_hand));
    let (a_pngs, b_pngs) = (pngs(ra.observation.images), pngs(rb.observation.images));
    assert!(a_pngs.is_some(), "the reset named both cameras");
    assert_eq!(a_pngs, b_pngs);
}

#[tokio::test]
async fn a_reset_naming_no_camera_draws_none_and_a_named_one_alone() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300, None);
    let plain = e.reset_task(ResetRequest::default()).await.unwrap();
    assert_eq!(plain.observation.images, None);
    let frames = dir.path().join(&plain.run).join("frames");
    assert_eq!(std::fs::read_dir(&frames).unwrap().count(), 0, "no frame written");
    e.stop_episode().await.unwrap();

    let wrist = ResetRequest {
        cameras: vec!["robot0_eye_in_hand".into(), "robot0_eye_in_hand".into()],
        ..ResetRequest::default()
    };
    let one = e.reset_task(wrist).await.unwrap();
    let images = one.observation.images.unwrap();
    assert!(images.agentview.is_empty());
    assert!(images.robot0_eye_in_hand.starts_with(b"\x89PNG"));
    let frames = dir.path().join(&one.run).join("frames");
    assert_eq!(
        std::fs::read_dir(&frames).unwrap().count(),
        1,
        "one frame for the one camera"
    );
    e.stop_episode().await.unwrap();

    let unknown = ResetRequest {
        cameras: vec!["front".into()],
        ..ResetRequest::default()
    };
    let refused = e.reset_task(unknown).await.unwrap_err();
    assert!(refused.to_string().contains("front"), "{refused}");
    assert_eq!(
        e.session_info().await.unwrap().status,
        Status::Stopped,
        "nothing started"
    );
}

/// Picks the red cube using the layout the test knows (a client would use the images).
async fn scripted_lift(e: &Engine, init_state_index: u32) -> bool {
    let reset = e.reset_task(task(0, init_state_index)).await.unwrap();
    let cube = tasks::layout(0, init_state_index).cube_red;
    let mut tcp = reset.observation.state.eef_pos_m;
    for target in [[cube[0], cube[1], 0.87], [cube[0], cube[1], 0.818]] {
        for _ in 0..4 {
            let delta = [target[0] - tcp[0], target[1] - tcp[1], target[2] - tcp[2]];
            let out = e.move_tcp(0, delta, None).await.unwrap();
            tcp = out.observation.state.eef_pos_m;
            if out.report.stop != MoveStop::StepCap {
                break;
            }
        }
    }
    e.gripper(0, GripperCommand::Close).await.unwrap();
    e.move_tcp(0, [0.0, 0.0, 0.08], None).await.unwrap();
    let stop = e.stop_episode().await.unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stop.artifacts.summary).unwrap()).unwrap();
    summary["success"] == true
}

#[tokio::test]
async fn a_scripted_pick_lifts_the_cube_in_several_layouts_on_both_arms() {
    for arm in ArmType::ALL {
        let dir = tempfile::tempdir().unwrap();
        let e = engine_on(arm, dir.path(), 300, 30, None);
        let mut results = Vec::new();
        for layout in 0..4 {
            results.push(scripted_lift(&e, layout).await);
        }
        assert!(
            results.iter().filter(|ok| **ok).count() >= 3,
            "{arm}: lift succeeded in {results:?}"
        );
    }
}

#[tokio::test]
async fn a_rotation_the_arm_cannot_make_stalls_without_diverging() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300, None);
    e.reset_task(ResetRequest::default()).await.unwrap();
    let out = e.move_tcp(0, [0.0, 0.0, 0.0], Some([0.6, 0.0, 0.0])).await.unwrap();
    assert_eq!(out.report.stop, MoveStop::Stalled, "{:?}", out.report);
    let state = &out.observation.state;
    assert!(
        state
            .eef_pos_m
            .iter()
            .chain(state.eef_rpy_rad.iter())
            .all(|v| v.is_finite())
    );
    assert!(
        out.report.remaining_distance_m < 0.008,
        "position comes first: {:?}",
        out.report
    );
    let after = e.move_tcp(0, [0.0, 0.03, 0.0], None).await.unwrap();
    assert_eq!(
        after.report.stop,
        MoveStop::Reached,
        "the arm still moves afterwards: {:?}",
        after.report
    );
}

#[tokio::test]
async fn session_info_judges_the_reach_task_live_as_the_run_end_does() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 0, None);
    assert_eq!(e.session_info().await.unwrap().success, None, "idle: nothing to judge");
    let reach = tasks::TASKS.iter().position(|t| t.name == "reach_target").unwrap() as u32;
    let reset = e.reset_task(task(reach, 3)).await.unwrap();
    assert_eq!(e.session_info().await.unwrap().success, Some(false), "the arm at home");
    let target = tasks::layout(reach, 3).target;
    let tcp = reset.observation.state.eef_pos_m;
    let point = [target[0], target[1], tasks::TABLE_Z + tasks::REACH_HEIGHT];
    for _ in 0..4 {
        let now = e.session_info().await.unwrap().state.unwrap().eef_pos_m;
        let delta = [point[0] - now[0], point[1] - now[1], point[2] - now[2]];
        if e.move_tcp(0, delta, None).await.unwrap().report.stop != MoveStop::StepCap {
            break;
        }
    }
    assert_ne!(e.session_info().await.unwrap().state.unwrap().eef_pos_m, tcp);
    assert_eq!(e.session_info().await.unwrap().success, Some(true), "over the target");
    assert!(
        e.stop_episode().await.unwrap().success,
        "the run's end judges it the same"
    );
    assert_eq!(
        e.session_info().await.unwrap().success,
        None,
        "stopped: judged in the run's summary"
    );
}
