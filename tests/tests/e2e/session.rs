//! The session service end to end: a whole episode with its artifacts on disk, every error
//! with its code and reason, many concurrent clients, and a scripted solution over gRPC.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::{TestServer, move_by};
use fakesim_episode::session::CAMERAS;
use fakesim_episode::tasks;
use fakesim_proto::errors::error_reason;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use std::collections::HashMap;
use tonic::Code;
use tonic::transport::Channel;

fn reset(task_index: u32, init_state_index: u32) -> ResetTaskRequest {
    ResetTaskRequest {
        suite: Some(tasks::SUITE.into()),
        task_index: Some(task_index),
        init_state_index: Some(init_state_index),
        cameras: CAMERAS.map(str::to_owned).to_vec(),
        ..ResetTaskRequest::default()
    }
}

fn gripper(command: GripperCommand) -> GripperRequest {
    GripperRequest {
        command: command.into(),
        ..Default::default()
    }
}

fn assert_error(status: tonic::Status, code: Code, reason: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    assert_eq!(error_reason(&status).as_deref(), Some(reason), "{status:?}");
}

fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x89PNG\r\n\x1a\n")
}

/// Asserts the answer says how long its images took to draw and to encode.
fn assert_timed(images: &Images) {
    let timing = images.timing.unwrap();
    assert!(timing.render_s > 0.0 && timing.encode_s > 0.0, "{timing:?}");
    assert!(timing.render_s < 60.0 && timing.encode_s < 60.0, "{timing:?}");
}

#[tokio::test]
async fn a_whole_episode_with_artifacts_on_disk() {
    let server = TestServer::start_with(|s| s.image_size = 64).await.unwrap();
    let mut session = server.session().await.unwrap();
    let listing = session
        .list_tasks(ListTasksRequest { suite: None })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listing.total_tasks as usize, tasks::TASKS.len());
    assert_eq!(listing.suites[0].name, tasks::SUITE);
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.status(), EpisodeStatus::Idle);
    assert_eq!(info.default_scene.unwrap().task_index, 0);

    let started = session
        .reset_task(ResetTaskRequest {
            cameras: CAMERAS.map(str::to_owned).to_vec(),
            ..ResetTaskRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    let images = started.images.unwrap();
    assert!(is_png(&images.agentview) && is_png(&images.robot0_eye_in_hand));
    assert_timed(&images);
    assert_eq!(started.steps_left, 300);
    let before = started.state.unwrap().eef_pos_m.unwrap();

    let moved = session.r#move(move_by(0.0, 0.05, 0.0)).await.unwrap().into_inner();
    let action = moved.action.unwrap();
    assert_eq!(action.stop_reason(), MoveStopReason::Reached);
    let after = moved.state.unwrap().eef_pos_m.unwrap();
    assert!((after.y - before.y - 0.05).abs() < 0.008);
    assert_eq!(moved.step, action.executed_steps);
    assert_eq!(moved.status(), EpisodeStatus::Running);

    let closed = session
        .gripper(gripper(GripperCommand::Close))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(closed.action.unwrap().stop_reason(), GripperStopReason::Settled);
    let observed = session
        .get_observation(GetObservationRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(observed.step, closed.step, "observing uses no budget");
    assert_timed(&observed.images.unwrap());

    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    assert_eq!(stopped.run, started.run);
    let artifacts = stopped.artifacts.unwrap();
    let events = std::fs::read_to_string(&artifacts.events).unwrap();
    assert_eq!(events.lines().count(), 5);
    let frames = std::fs::read_dir(&artifacts.frames).unwrap().count();
    assert_eq!(frames, 8);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&artifacts.summary).unwrap()).unwrap();
    assert_eq!(summary["steps"], u64::from(closed.step));
    assert_eq!(summary["calls"]["by_stop_reason"]["move"]["reached"], 1);
    assert!(artifacts.events.starts_with(server.runs_dir().to_str().unwrap()));
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.status(), EpisodeStatus::Stopped);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn every_session_error_has_its_code_and_reason() {
    let server = TestServer::start_with(|s| {
        s.image_size = 32;
        s.max_steps = 3;
    })
    .await
    .unwrap();
    let mut session = server.session().await.unwrap();
    assert_error(
        session.r#move(move_by(0.0, 0.0, 0.01)).await.unwrap_err(),
        Code::FailedPrecondition,
        "not_running",
    );
    assert_error(
        session
            .get_observation(GetObservationRequest::default())
            .await
            .unwrap_err(),
        Code::FailedPrecondition,
        "not_running",
    );
    assert_error(
        session.stop_episode(StopEpisodeRequest {}).await.unwrap_err(),
        Code::FailedPrecondition,
        "not_running",
    );
    let bad_suite = ResetTaskRequest {
        suite: Some("libero_90".into()),
        ..ResetTaskRequest::default()
    };
    assert_error(
        session.reset_task(bad_suite).await.unwrap_err(),
        Code::NotFound,
        "unknown_suite",
    );
    assert_error(
        session
            .list_tasks(ListTasksRequest {
                suite: Some("x".into()),
            })
            .await
            .unwrap_err(),
        Code::NotFound,
        "unknown_suite",
    );
    assert_error(
        session
            .reset_task(reset(tasks::TASKS.len() as u32, 0))
            .await
            .unwrap_err(),
        Code::OutOfRange,
        "unknown_task",
    );
    assert_error(
        session.reset_task(reset(0, 12)).await.unwrap_err(),
        Code::OutOfRange,
        "unknown_init_state",
    );

    session.reset_task(reset(1, 3)).await.unwrap();
    assert_error(
        session.reset_task(ResetTaskRequest::default()).await.unwrap_err(),
        Code::FailedPrecondition,
        "already_running",
    );
    assert_error(
        session.r#move(move_by(f64::NAN, 0.0, 0.0)).await.unwrap_err(),
        Code::InvalidArgument,
        "invalid_argument",
    );
    let missing = MoveRequest {
        delta_xyz: None,
        delta_rpy: None,
        ..Default::default()
    };
    assert_error(
        session.r#move(missing).await.unwrap_err(),
        Code::InvalidArgument,
        "invalid_argument",
    );
    let degrees = MoveRequest {
        delta_xyz: Some(Vec3::default()),
        delta_rpy: Some(Rpy {
            roll_x: 0.0,
            pitch_y: 0.0,
            yaw_z: 45.0,
        }),
        ..Default::default()
    };
    let err = session.r#move(degrees).await.unwrap_err();
    assert_error(err.clone(), Code::InvalidArgument, "invalid_argument");
    assert!(err.message().contains("radians, not degrees"), "{}", err.message());
    let unspecified = GripperRequest {
        command: GripperCommand::Unspecified.into(),
        ..Default::default()
    };
    assert_error(
        session.gripper(unspecified).await.unwrap_err(),
        Code::InvalidArgument,
        "invalid_argument",
    );
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.step, 0, "refused calls used no budget");

    let spent = session.r#move(move_by(0.0, 0.1, 0.0)).await.unwrap().into_inner();
    assert_eq!(spent.action.unwrap().stop_reason(), MoveStopReason::Budget);
    assert_eq!(spent.steps_left, 0);
    assert_error(
        session.r#move(move_by(0.0, 0.01, 0.0)).await.unwrap_err(),
        Code::ResourceExhausted,
        "step_limit",
    );
    assert_error(
        session.gripper(gripper(GripperCommand::Close)).await.unwrap_err(),
        Code::ResourceExhausted,
        "step_limit",
    );
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.state.unwrap().gripper.unwrap().command(), GripperCommand::Open);
    session.stop_episode(StopEpisodeRequest {}).await.unwrap();
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_locked_task_refuses_scene_arguments() {
    let server = TestServer::start_with(|s| {
        s.image_size = 32;
        s.lock_task = Some(fakesim_episode::tasks::TaskRef {
            suite: tasks::SUITE.into(),
            task_index: 3,
            init_state_index: 4,
        });
    })
    .await
    .unwrap();
    let mut session = server.session().await.unwrap();
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(info.task_locked);
    assert_error(
        session.reset_task(reset(0, 0)).await.unwrap_err(),
        Code::FailedPrecondition,
        "task_locked",
    );
    let started = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner();
    let task = started.task.unwrap();
    assert_eq!((task.task_index, task.init_state_index), (3, 4));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn shutdown_finalises_an_open_episode_as_interrupted() {
    let runs = tempfile::tempdir().unwrap();
    let runs_dir = runs.path().to_owned();
    let server = TestServer::start_with(|s| {
        s.image_size = 32;
        s.runs_dir = runs_dir;
    })
    .await
    .unwrap();
    let mut session = server.session().await.unwrap();
    let started = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner();
    session.r#move(move_by(0.01, 0.0, 0.0)).await.unwrap();
    server.stop().await.unwrap();
    let run_dir = runs.path().join(&started.run);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "interrupted");
    let events = std::fs::read_to_string(run_dir.join("events.jsonl")).unwrap();
    let kinds: Vec<serde_json::Value> = events
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].clone())
        .collect();
    assert_eq!(kinds, ["reset_task", "move", "interrupted", "stop_episode"]);
}

async fn client_work(
    mut session: SessionServiceClient<Channel>,
    i: usize,
) -> Result<HashMap<&'static str, u32>, tonic::Status> {
    let mut calls = HashMap::new();
    for round in 0..3 {
        let write = (i + round).is_multiple_of(3);
        if write {
            let dy = if i.is_multiple_of(2) { 0.01 } else { -0.01 };
            match session.r#move(move_by(0.0, dy, 0.0)).await {
                Ok(_) => *calls.entry("move").or_default() += 1,
                Err(e) if e.code() == Code::ResourceExhausted => {}
                Err(e) => return Err(e),
            }
        } else if round.is_multiple_of(2) {
            session.get_session_info(GetSessionInfoRequest {}).await?;
        } else {
            session
                .list_tasks(ListTasksRequest {
                    suite: Some(tasks::SUITE.into()),
                })
                .await?;
        }
    }
    Ok(calls)
}

#[tokio::test]
async fn thirty_two_clients_mixing_reads_and_moves_lose_no_event() {
    let server = TestServer::start_with(|s| {
        s.image_size = 16;
        s.max_steps = 100_000;
    })
    .await
    .unwrap();
    let mut session = server.session().await.unwrap();
    let started = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut tasks_ = Vec::new();
    for i in 0..32 {
        let client = server.session().await.unwrap();
        tasks_.push(tokio::spawn(client_work(client, i)));
    }
    let mut moves = 0;
    for t in tasks_ {
        moves += t.await.unwrap().unwrap().get("move").copied().unwrap_or(0);
    }
    assert!(moves >= 32, "{moves} moves ran");
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    assert_eq!(stopped.run, started.run);
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    let logged_moves = events.lines().filter(|l| l.contains("\"kind\":\"move\"")).count();
    assert_eq!(logged_moves, moves as usize, "every move has its event line");
    for line in events.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("every line is whole JSON");
    }
    server.stop().await.unwrap();
}

/// Picks the red cube over gRPC, using the layout the test knows in place of vision.
async fn scripted_lift(session: &mut SessionServiceClient<Channel>, layout: u32) -> serde_json::Value {
    let started = session.reset_task(reset(0, layout)).await.unwrap().into_inner();
    let cube = tasks::layout(0, layout).cube_red;
    let mut tcp = started.state.unwrap().eef_pos_m.unwrap();
    for target in [[cube[0], cube[1], 0.87], [cube[0], cube[1], 0.818]] {
        for _ in 0..4 {
            let out = session
                .r#move(move_by(target[0] - tcp.x, target[1] - tcp.y, target[2] - tcp.z))
                .await
                .unwrap()
                .into_inner();
            tcp = out.state.unwrap().eef_pos_m.unwrap();
            if out.action.unwrap().stop_reason() != MoveStopReason::StepCap {
                break;
            }
        }
    }
    session.gripper(gripper(GripperCommand::Close)).await.unwrap();
    session.r#move(move_by(0.0, 0.0, 0.08)).await.unwrap();
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    serde_json::from_str(&std::fs::read_to_string(stopped.artifacts.unwrap().summary).unwrap()).unwrap()
}

#[tokio::test]
async fn a_scripted_client_lifts_the_cube_over_grpc_in_several_layouts() {
    let server = TestServer::start_with(|s| s.image_size = 16).await.unwrap();
    let mut session = server.session().await.unwrap();
    let mut successes = 0;
    for layout in [0, 2, 5] {
        let summary = scripted_lift(&mut session, layout).await;
        if summary["success"] == true {
            successes += 1;
        }
    }
    assert!(successes >= 2, "{successes} of 3 layouts lifted");
    server.stop().await.unwrap();
}
