//! What the episode and tick routes draw, read from the twin's frame counter: nothing unless a
//! request names cameras, then exactly the cameras named.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::robot::RobotService;
use super::session::SessionService;
use crate::config::Settings;
use crate::state::AppState;
use fakesim_proto::v1;
use fakesim_proto::v1::robot_service_server::RobotService as _;
use fakesim_proto::v1::session_service_server::SessionService as _;
use tonic::{Code, Request};

async fn daemon(runs: &std::path::Path) -> (AppState, SessionService, RobotService) {
    let settings = Settings {
        runs_dir: runs.to_owned(),
        image_size: 32,
        ..Settings::default()
    };
    let state = AppState::start(settings).await.unwrap();
    (
        state.clone(),
        SessionService::new(state.clone()),
        RobotService::new(state),
    )
}

/// A tick holding the targets in force, its frames as `cameras` asks.
async fn hold(robot: &RobotService, cameras: &[&str]) -> Result<v1::TickResponse, tonic::Status> {
    let request = v1::TickRequest {
        action: targets_in_force(robot).await,
        want_images: !cameras.is_empty(),
        cameras: cameras.iter().map(|&c| c.to_owned()).collect(),
        ..v1::TickRequest::default()
    };
    Ok(robot.tick(Request::new(request)).await?.into_inner())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_and_ticks_naming_no_camera_draw_nothing() {
    let runs = tempfile::tempdir().unwrap();
    let (state, session, robot) = daemon(runs.path()).await;
    let started = session
        .reset_task(Request::new(v1::ResetTaskRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(started.images, None);
    for _ in 0..3 {
        assert!(hold(&robot, &[]).await.unwrap().frames.is_empty());
    }
    let chunk = v1::TickChunkRequest {
        ticks: vec![v1::TickRequest {
            action: targets_in_force(&robot).await,
            ..v1::TickRequest::default()
        }],
    };
    robot.tick_chunk(Request::new(chunk)).await.unwrap();
    assert_eq!(state.twin.render_counts().drawn, 0, "no request named a camera");
    let frames = runs.path().join(&started.run).join("frames");
    assert_eq!(
        std::fs::read_dir(frames).unwrap().count(),
        0,
        "the journal holds no frame"
    );
}

/// The servo targets in force: an action that keeps the arm where it is.
async fn targets_in_force(robot: &RobotService) -> Vec<f64> {
    robot
        .get_robot_state(Request::new(v1::GetRobotStateRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .ctrl_targets
}

#[tokio::test(flavor = "multi_thread")]
async fn each_route_draws_the_cameras_it_names_and_no_more() {
    let runs = tempfile::tempdir().unwrap();
    let (state, session, robot) = daemon(runs.path()).await;
    let wrist = v1::ResetTaskRequest {
        cameras: vec!["robot0_eye_in_hand".into()],
        render_quality: Some(v1::RenderQuality::Fast.into()),
        ..v1::ResetTaskRequest::default()
    };
    let images = session
        .reset_task(Request::new(wrist))
        .await
        .unwrap()
        .into_inner()
        .images
        .unwrap();
    assert!(images.agentview.is_empty() && !images.robot0_eye_in_hand.is_empty());
    assert_eq!(state.twin.render_counts().drawn, 1);

    let tick = hold(&robot, &["agentview"]).await.unwrap();
    assert_eq!(tick.frames.len(), 1);
    assert_eq!(state.twin.render_counts().drawn, 2);

    // Asking for images without naming a camera once meant every camera: now refused, unrun.
    let before = state.twin.with_sim(|sim| sim.time()).await.unwrap();
    let refused = robot
        .tick(Request::new(v1::TickRequest {
            action: targets_in_force(&robot).await,
            want_images: true,
            ..v1::TickRequest::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(
        refused.message().contains("agentview"),
        "names the cameras: {refused:?}"
    );
    assert_eq!(
        state.twin.with_sim(|sim| sim.time()).await.unwrap(),
        before,
        "the refused tick did not run"
    );
    assert_eq!(state.twin.render_counts().drawn, 2);

    let moved = v1::MoveRequest {
        delta_xyz: Some(v1::Vec3 {
            x: 0.0,
            y: 0.01,
            z: 0.0,
        }),
        ..v1::MoveRequest::default()
    };
    let images = session
        .r#move(Request::new(moved))
        .await
        .unwrap()
        .into_inner()
        .images
        .unwrap();
    assert!(!images.agentview.is_empty() && !images.robot0_eye_in_hand.is_empty());
    assert_eq!(
        state.twin.render_counts().drawn,
        4,
        "a move keeps the contract's two images"
    );
}
