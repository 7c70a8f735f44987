//! Robot-service calls made during an episode count their control ticks against its step
//! budget, are journaled, and are refused with `step_limit` once the budget is used up.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::{TestServer, named};
use fakesim_proto::errors::error_reason;
use fakesim_proto::v1::*;
use tonic::Code;

#[tokio::test]
async fn robot_calls_during_an_episode_count_against_the_budget_and_are_journaled() {
    let runs = tempfile::tempdir().unwrap();
    let runs_dir = runs.path().to_owned();
    let server = TestServer::start_with(|s| {
        s.max_steps = 3;
        s.image_size = 32;
        s.runs_dir = runs_dir;
    })
    .await
    .unwrap();
    let mut session = server.session().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let model = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    let run = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner()
        .run;
    let hold = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    let tick = TickRequest {
        action: hold.ctrl_targets.clone(),
        ..TickRequest::default()
    };
    robot.tick(tick.clone()).await.unwrap();
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!((info.step, info.steps_left), (1, 2), "a tick is one step of the budget");

    robot
        .set_joint_positions(SetJointPositionsRequest {
            positions: Some(named(&[("1", 0.1)])),
            hold: true,
        })
        .await
        .unwrap();
    robot
        .send_action(SendActionRequest {
            action: Some(named(&[("1", 0.1)])),
            n_substeps: Some(model.substeps_per_tick + 1),
            ..SendActionRequest::default()
        })
        .await
        .unwrap();
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        info.step, 3,
        "a teleport takes no tick; a tick and a bit round up to two"
    );

    let refused = robot.tick(tick).await.unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert_eq!(error_reason(&refused).as_deref(), Some("step_limit"));

    session.stop_episode(StopEpisodeRequest {}).await.unwrap();
    server.stop().await.unwrap();
    let events = std::fs::read_to_string(runs.path().join(&run).join("events.jsonl")).unwrap();
    let calls: Vec<(String, u64)> = events
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["kind"] == "robot_call")
        .map(|event| {
            (
                event["call"].as_str().unwrap().to_owned(),
                event["ticks"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [("tick", 1), ("set_joint_positions", 0), ("send_action", 2)].map(|(c, t)| (c.to_owned(), t));
    assert_eq!(calls, expected);
}

#[tokio::test]
async fn outside_an_episode_robot_calls_are_not_counted() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let mut session = server.session().await.unwrap();
    robot.step(StepRequest { n_steps: 50 }).await.unwrap();
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.step, 0);
    server.stop().await.unwrap();
}
