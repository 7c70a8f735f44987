//! `TickChunk`: a chunk of ticks in one call gives, tick for tick, the states the same ticks
//! sent one by one give (bit for bit, frames included); a chunk with one bad tick runs none;
//! an episode's budget ends a chunk where it runs out, with the ticks run answered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::TestServer;
use fakesim_proto::errors::error_reason;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use tonic::Code;
use tonic::transport::Channel;

/// Ticks in each chunk of the runs.
const CHUNK: u32 = 8;

fn reset(max_steps: Option<u64>) -> ResetTaskRequest {
    ResetTaskRequest {
        suite: Some("so101_tabletop".into()),
        task_index: Some(0),
        init_state_index: Some(1),
        max_steps,
        ..ResetTaskRequest::default()
    }
}

/// Tick `i` of the runs: a sweep of every joint at 30 Hz; frames on every fourth tick.
fn tick(i: u32) -> TickRequest {
    let k = f64::from(i);
    TickRequest {
        action: vec![0.02 * k, -0.8 + 0.01 * k, 0.4 - 0.01 * k, 1.5, 0.03 * k, 0.6 - 0.01 * k],
        period_s: Some(1.0 / 30.0),
        want_images: i.is_multiple_of(4),
        cameras: vec!["robot0_eye_in_hand".into()],
        width: 32,
        height: 32,
        ..TickRequest::default()
    }
}

async fn started(server: &TestServer, max_steps: Option<u64>) -> RobotServiceClient<Channel> {
    let mut session: SessionServiceClient<Channel> = server.session().await.unwrap();
    session.reset_task(reset(max_steps)).await.unwrap();
    server.robot().await.unwrap()
}

#[tokio::test]
async fn a_chunk_gives_the_states_the_same_ticks_one_by_one_give() {
    let (one_by_one, chunked) = (TestServer::start().await.unwrap(), TestServer::start().await.unwrap());
    let (mut single, mut chunks) = (started(&one_by_one, Some(0)).await, started(&chunked, Some(0)).await);
    let mut by_tick = Vec::new();
    for i in 0..3 * CHUNK {
        by_tick.push(single.tick(tick(i)).await.unwrap().into_inner());
    }
    let mut by_chunk = Vec::new();
    for c in 0..3 {
        let request = TickChunkRequest {
            ticks: (c * CHUNK..(c + 1) * CHUNK).map(tick).collect(),
        };
        let answer = chunks.tick_chunk(request).await.unwrap().into_inner();
        assert_eq!(answer.stopped, None);
        by_chunk.extend(answer.ticks);
    }
    assert_eq!(by_tick.len(), by_chunk.len());
    for (i, (a, b)) in by_tick.iter().zip(&by_chunk).enumerate() {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.observation), bits(&b.observation), "tick {i}");
        assert_eq!(
            (a.time_s.to_bits(), a.physics_steps),
            (b.time_s.to_bits(), b.physics_steps),
            "tick {i}"
        );
        let pixels = |r: &TickResponse| r.frames.iter().map(|f| f.color_png.clone()).collect::<Vec<_>>();
        assert_eq!(pixels(a), pixels(b), "tick {i}'s frames");
        assert_eq!(a.frames.is_empty(), !i.is_multiple_of(4), "tick {i}");
    }
    let elapsed = by_chunk.last().unwrap().time_s - by_chunk[0].time_s;
    assert!((elapsed - 23.0 / 30.0).abs() < 0.005, "{elapsed} s of twin time");
    one_by_one.stop().await.unwrap();
    chunked.stop().await.unwrap();
}

#[tokio::test]
async fn a_chunk_with_a_bad_tick_runs_none_and_a_budget_ends_a_chunk_where_it_runs_out() {
    let server = TestServer::start().await.unwrap();
    let mut robot = started(&server, Some(5)).await;
    let before = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut bad = TickRequest {
        action: vec![0.0; 5],
        ..TickRequest::default()
    };
    let mut ticks: Vec<TickRequest> = (0..CHUNK).map(tick).collect();
    std::mem::swap(&mut ticks[3], &mut bad);
    let refused = robot.tick_chunk(TickChunkRequest { ticks }).await.unwrap_err();
    assert_eq!(
        (refused.code(), error_reason(&refused).as_deref()),
        (Code::InvalidArgument, Some("wrong_length"))
    );
    assert!(refused.message().contains("ticks[3]"), "{}", refused.message());
    let after = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(before.time_s.to_bits(), after.time_s.to_bits(), "nothing ran");

    let empty = robot
        .tick_chunk(TickChunkRequest { ticks: Vec::new() })
        .await
        .unwrap_err();
    assert_eq!(error_reason(&empty).as_deref(), Some("count_out_of_range"));

    let request = TickChunkRequest {
        ticks: (0..CHUNK).map(tick).collect(),
    };
    let answer = robot.tick_chunk(request).await.unwrap().into_inner();
    assert_eq!(answer.ticks.len(), 5, "the budget of 5 ticks");
    let stopped = answer.stopped.unwrap();
    assert_eq!(
        (stopped.tick_index, stopped.code, stopped.reason.as_str()),
        (5, Code::ResourceExhausted as i32, "step_limit")
    );
    let again = robot
        .tick_chunk(TickChunkRequest { ticks: vec![tick(0)] })
        .await
        .unwrap_err();
    assert_eq!(
        error_reason(&again).as_deref(),
        Some("step_limit"),
        "a first tick's refusal is the call's"
    );
    // Each tick the chunk ran is its own journal line, charged one tick, in chunk order.
    let run = std::fs::read_dir(server.runs_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.join("events.jsonl").is_file())
        .expect("the episode's run");
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    let ticks: Vec<(String, u64, u64, u64)> = events
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["kind"] == "robot_call")
        .map(|event| {
            let number = |key: &str| event[key].as_u64().unwrap();
            let call = event["call"].as_str().unwrap().to_owned();
            (
                call,
                number("ticks"),
                number("step"),
                event["request"]["chunk_index"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<_> = (0..5).map(|i| ("tick".to_owned(), 1, i + 1, i)).collect();
    assert_eq!(ticks, expected);
    server.stop().await.unwrap();
}
