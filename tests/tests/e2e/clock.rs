//! The client's clock in `sim`: a control period set for the session or for one tick advances
//! exactly that much twin time, fractions of a physics step carried, replays bit-identical; a
//! bad period is refused with the table's code; an episode's budget is the client's to choose;
//! `StopEpisode` returns the judgement and the validation report; frames at the quality asked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::{TestServer, assert_reason};
use fakesim_proto::errors::error_info;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use serde_json::Value;
use tonic::Code;
use tonic::transport::Channel;

/// The physics timestep of the tabletop scene (s).
const TIMESTEP: f64 = 0.005;

async fn clients(server: &TestServer) -> (SessionServiceClient<Channel>, RobotServiceClient<Channel>) {
    (server.session().await.unwrap(), server.robot().await.unwrap())
}

/// A reset of task 0, layout 2, with the budget asked for.
fn reset(max_steps: Option<u64>) -> ResetTaskRequest {
    ResetTaskRequest {
        suite: Some("so101_tabletop".into()),
        task_index: Some(0),
        init_state_index: Some(2),
        max_steps,
        ..ResetTaskRequest::default()
    }
}

/// The action of tick `i` of the scripted runs: a slow sweep of every joint.
fn action(i: u32) -> Vec<f64> {
    let k = f64::from(i);
    vec![
        0.01 * k,
        -0.8 + 0.004 * k,
        0.4 - 0.005 * k,
        1.55,
        0.02 * k,
        0.6 - 0.01 * k,
    ]
}

fn tick(i: u32, period_s: Option<f64>) -> TickRequest {
    TickRequest {
        action: action(i),
        period_s,
        ..Default::default()
    }
}

async fn set_period(robot: &mut RobotServiceClient<Channel>, period_s: f64) -> SetControlPeriodResponse {
    robot
        .set_control_period(SetControlPeriodRequest { period_s })
        .await
        .unwrap()
        .into_inner()
}

async fn time_now(robot: &mut RobotServiceClient<Channel>) -> f64 {
    robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner()
        .time_s
}

/// The journal lines of `run` whose kind is `kind`.
fn journal(server: &TestServer, run: &str, kind: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(server.runs_dir().join(run).join("events.jsonl")).unwrap();
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["kind"] == kind)
        .collect()
}

#[tokio::test]
async fn thirty_ticks_at_thirty_hertz_are_one_second_of_twin_time() {
    let server = TestServer::start().await.unwrap();
    let (mut session, mut robot) = clients(&server).await;
    let model = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    assert_eq!(model.timestep_s, TIMESTEP);
    assert!(
        (model.control_period_s - 0.05).abs() < 1e-12,
        "the model's tick by default"
    );

    let set = set_period(&mut robot, 1.0 / 30.0).await;
    assert_eq!(set.period_s, 1.0 / 30.0);
    assert!((set.physics_steps_per_tick - 200.0 / 30.0).abs() < 1e-9, "{set:?}");
    let model = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    assert_eq!(model.control_period_s, 1.0 / 30.0);

    let run = session.reset_task(reset(None)).await.unwrap().into_inner().run;
    let (start, start_steps) = {
        let state = robot
            .get_robot_state(GetRobotStateRequest::default())
            .await
            .unwrap()
            .into_inner();
        (state.time_s, state.physics_steps)
    };
    let mut last = None;
    for i in 0..30 {
        let out = robot.tick(tick(i, None)).await.unwrap().into_inner();
        let steps = out.physics_steps - last.unwrap_or(start_steps);
        assert!(steps == 6 || steps == 7, "tick {i} ran {steps} physics steps");
        last = Some(out.physics_steps);
    }
    let end = time_now(&mut robot).await;
    assert!(
        ((end - start) - 1.0).abs() < TIMESTEP,
        "30 ticks took {} s of twin time",
        end - start
    );
    assert_eq!(last.unwrap() - start_steps, 200);

    let resets = journal(&server, &run, "reset_task");
    assert_eq!(resets[0]["control_period_s"], 1.0 / 30.0, "{resets:?}");
    set_period(&mut robot, 0.02).await;
    set_period(&mut robot, 0.02).await;
    let back = set_period(&mut robot, 0.0).await;
    assert!((back.period_s - 0.05).abs() < 1e-12 && (back.physics_steps_per_tick - 10.0).abs() < 1e-9);
    // The journal is written by a task of its own: wait for the two changes, in order; a
    // journaled repeat of 0.02 would be the second line.
    let events = server.runs_dir().join(&run).join("events.jsonl");
    let changes = fakesim_e2e::journal_lines(&events, "control_period", 2).await;
    assert_eq!(changes.len(), 2, "only a change is journaled: {changes:?}");
    assert_eq!(changes[0]["period_s"], 0.02);
    assert_eq!(changes[0]["was_s"], 1.0 / 30.0);
    assert_eq!(changes[1]["period_s"], 0.05, "{changes:?}");
}

/// Resets task 0 layout 2 at 30 Hz and runs 45 ticks, some with a period of their own; returns
/// every observation bit for bit.
async fn scripted_run(server: &TestServer) -> Vec<u64> {
    let (mut session, mut robot) = clients(server).await;
    set_period(&mut robot, 1.0 / 30.0).await;
    session.reset_task(reset(Some(0))).await.unwrap();
    let mut seen = Vec::new();
    for i in 0..45 {
        let own = (i % 7 == 3).then_some(0.0125);
        let out = robot.tick(tick(i, own)).await.unwrap().into_inner();
        seen.extend(out.observation.iter().map(|v| v.to_bits()));
        seen.push(out.time_s.to_bits());
    }
    session.stop_episode(StopEpisodeRequest {}).await.unwrap();
    seen
}

#[tokio::test]
async fn a_replay_at_a_fractional_period_is_bit_identical() {
    let server = TestServer::start().await.unwrap();
    let first = scripted_run(&server).await;
    let again = scripted_run(&server).await;
    let other = scripted_run(&TestServer::start().await.unwrap()).await;
    assert_eq!(first.len(), 45 * 21);
    assert!(first == again, "a second episode on the same daemon differs");
    assert!(first == other, "the same episode on a fresh daemon differs");
}

#[tokio::test]
async fn a_ticks_own_period_lasts_that_tick_only() {
    let server = TestServer::start().await.unwrap();
    let (_, mut robot) = clients(&server).await;
    let at = |r: &TickResponse| r.time_s;
    let t0 = time_now(&mut robot).await;
    let own = robot.tick(tick(0, Some(0.02))).await.unwrap().into_inner();
    assert!((at(&own) - t0 - 0.02).abs() < 1e-9, "{}", at(&own) - t0);
    let next = robot.tick(tick(1, None)).await.unwrap().into_inner();
    assert!((at(&next) - at(&own) - 0.05).abs() < 1e-9, "{}", at(&next) - at(&own));
    set_period(&mut robot, 0.0075).await;
    // 1.5 steps a tick: the fraction is carried, 1 and 2 steps in turn.
    let mut steps = Vec::new();
    let mut before = robot.tick(tick(2, None)).await.unwrap().into_inner().physics_steps;
    for i in 3..9 {
        let after = robot.tick(tick(i, None)).await.unwrap().into_inner().physics_steps;
        steps.push(after - before);
        before = after;
    }
    assert_eq!(steps.iter().sum::<u64>(), 9, "{steps:?}");
    assert!(steps.iter().all(|&n| n == 1 || n == 2), "{steps:?}");
    let model = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    assert_eq!(
        model.control_period_s, 0.0075,
        "a tick's own period changes nothing after it"
    );
}

#[tokio::test]
async fn invalid_periods_are_refused_with_the_tables_code_and_change_nothing() {
    let server = TestServer::start().await.unwrap();
    let (_, mut robot) = clients(&server).await;
    let t0 = time_now(&mut robot).await;
    for (bad, reason) in [
        (f64::NAN, "non_finite"),
        (f64::INFINITY, "non_finite"),
        (-0.01, "invalid_argument"),
        (TIMESTEP / 2.0, "invalid_argument"),
        (1.5, "invalid_argument"),
    ] {
        let set = robot
            .set_control_period(SetControlPeriodRequest { period_s: bad })
            .await
            .unwrap_err();
        assert_reason(&set, Code::InvalidArgument, reason);
        let ticked = robot.tick(tick(0, Some(bad))).await.unwrap_err();
        assert_reason(&ticked, Code::InvalidArgument, reason);
        assert_eq!(set.message(), ticked.message(), "one refusal on both routes");
    }
    let zero = robot.tick(tick(0, Some(0.0))).await.unwrap_err();
    assert_reason(&zero, Code::InvalidArgument, "invalid_argument");
    let info = error_info(&robot.tick(tick(0, Some(2.0))).await.unwrap_err()).unwrap();
    assert_eq!(info.metadata["field"], "period_s");
    assert_eq!(info.metadata["range"], format!("[{TIMESTEP}, 1]"));
    assert_eq!(time_now(&mut robot).await, t0, "no refused tick moved the twin");
    let model = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    assert!((model.control_period_s - 0.05).abs() < 1e-12);
}

#[tokio::test]
async fn a_budget_of_zero_runs_past_the_daemons_and_unset_keeps_it() {
    let server = TestServer::start_with(|s| s.max_steps = 5).await.unwrap();
    let (mut session, mut robot) = clients(&server).await;
    let started = session.reset_task(reset(Some(0))).await.unwrap().into_inner();
    assert_eq!(started.steps_left, u32::MAX);
    for i in 0..20 {
        robot.tick(tick(i, None)).await.unwrap();
    }
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!((info.step, info.max_steps, info.steps_left), (20, 0, u32::MAX));
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(stopped.artifacts.unwrap().summary).unwrap()).unwrap();
    assert_eq!(
        (summary["steps"].as_u64(), summary["max_steps"].is_null()),
        (Some(20), true)
    );
    assert_eq!(journal(&server, &started.run, "budget_exhausted").len(), 0);

    for (asked, budget) in [(None, 5), (Some(3), 3)] {
        let started = session.reset_task(reset(asked)).await.unwrap().into_inner();
        assert_eq!(started.steps_left, budget);
        for i in 0..budget {
            robot.tick(tick(i, None)).await.unwrap();
        }
        let over = robot.tick(tick(9, None)).await.unwrap_err();
        assert_reason(&over, Code::ResourceExhausted, "step_limit");
        let info = session
            .get_session_info(GetSessionInfoRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!((info.step, info.max_steps, info.steps_left), (budget, budget, 0));
        session.stop_episode(StopEpisodeRequest {}).await.unwrap();
    }
    let idle = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(idle.max_steps, 3, "the last episode's budget");
}

#[tokio::test]
async fn stop_episode_returns_the_judgement_and_the_report_summary_json_holds() {
    let server = TestServer::start().await.unwrap();
    let (mut session, mut robot) = clients(&server).await;
    session.reset_task(reset(None)).await.unwrap();
    for i in 0..5 {
        robot.tick(tick(i, None)).await.unwrap();
    }
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let report: Value = serde_json::from_str(&stopped.validation_json).unwrap();
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(stopped.artifacts.unwrap().summary).unwrap()).unwrap();
    assert_eq!(report, summary["validation"]);
    assert_eq!(Some(stopped.success), summary["success"].as_bool());
    assert_eq!(report["success"].as_bool(), Some(stopped.success));
    assert!(!stopped.success, "five ticks of a sweep lift no cube");
    assert_eq!(report["stop_reasons"]["tick"]["robot_service"], 5);
    assert!(report["min_table_clearance_m"].as_f64().unwrap() > 0.0, "{report}");
}

/// The raw colour of both cameras after one tick of a fresh daemon, at `quality` (unset: the
/// daemon's own).
async fn frames(server: &TestServer, quality: Option<RenderQuality>) -> Vec<Vec<u8>> {
    let (_, mut robot) = clients(server).await;
    let out = robot
        .tick(TickRequest {
            want_images: true,
            cameras: vec!["agentview".into(), "robot0_eye_in_hand".into()],
            width: 64,
            height: 48,
            color_encoding: ColorEncoding::Raw.into(),
            render_quality: quality.map(Into::into),
            ..tick(0, None)
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(out.frames.len(), 2);
    out.frames.into_iter().map(|f| f.color_raw).collect()
}

#[tokio::test]
async fn each_request_draws_at_the_quality_it_asks_for() {
    let full = TestServer::start().await.unwrap();
    let fast = TestServer::start_with(|s| s.render_quality = fakesim_twin::RenderQuality::Fast)
        .await
        .unwrap();
    let fast_asked = frames(&full, Some(RenderQuality::Fast)).await;
    assert_eq!(fast_asked, frames(&fast, None).await, "fast asked of a full daemon");
    let full_asked = frames(&fast, Some(RenderQuality::Full)).await;
    assert_eq!(full_asked, frames(&full, Some(RenderQuality::Unspecified)).await);
    assert_ne!(fast_asked, full_asked, "the levels draw differently");

    let (mut session, _) = clients(&full).await;
    session.reset_task(reset(None)).await.unwrap();
    let observe = |render_quality| GetObservationRequest {
        render_quality,
        ..Default::default()
    };
    let fast_png = session
        .get_observation(observe(Some(RenderQuality::Fast.into())))
        .await
        .unwrap();
    let full_png = session.get_observation(observe(None)).await.unwrap();
    assert_ne!(fast_png.into_inner().images, full_png.into_inner().images);
    let bad = session.get_observation(observe(Some(9))).await.unwrap_err();
    assert_reason(&bad, Code::InvalidArgument, "invalid_argument");
}

#[tokio::test]
async fn a_saved_state_keeps_the_fraction_of_a_step_owed() {
    let server = TestServer::start().await.unwrap();
    let (_, mut robot) = clients(&server).await;
    set_period(&mut robot, 1.0 / 30.0).await;
    for i in 0..4 {
        robot.tick(tick(i, None)).await.unwrap();
    }
    robot.save_state(SaveStateRequest { name: "mid".into() }).await.unwrap();
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mut seen = Vec::new();
        for i in 4..14 {
            let out = robot.tick(tick(i, None)).await.unwrap().into_inner();
            seen.push((
                out.physics_steps,
                out.observation.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            ));
        }
        runs.push(seen);
        robot.load_state(LoadStateRequest { name: "mid".into() }).await.unwrap();
    }
    assert!(runs[0] == runs[1], "ticks after a restore run other steps");
}

#[tokio::test]
async fn setting_the_period_needs_the_lease_as_motion_does() {
    let server = TestServer::start_with(|s| s.lease_in_sim = true).await.unwrap();
    let (_, mut anyone) = clients(&server).await;
    let refused = anyone
        .set_control_period(SetControlPeriodRequest { period_s: 0.02 })
        .await
        .unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "lease_required");
    let mut holder = RobotServiceClient::new(server.leased().await.unwrap());
    let set = holder
        .set_control_period(SetControlPeriodRequest { period_s: 0.02 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(set.period_s, 0.02);
    let model = anyone
        .get_model_info(GetModelInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(model.control_period_s, 0.02, "reads need no lease");
}
