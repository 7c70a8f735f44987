//! The hostile suite: generated requests for every RPC of the three services, with NUL bytes,
//! long strings (1 MB in the second test), NaN and infinities, huge counts and unknown enum
//! values. Every answer is a success or a typed refusal (never UNKNOWN, never a caught panic,
//! always an `ErrorInfo`), its status trailers stay under 8 KiB, a refusal leaves the robot,
//! the session and the hardware state as they were, and the twin answers afterwards.
//! `PROPTEST_CASES` sets the number of requests (512).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Requests end in `..Default::default()` so fields added to them later keep their defaults here.
#![allow(clippy::needless_update)]

use fakesim_e2e::TestServer;
use fakesim_proto::errors::error_info;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::joint_values::Form;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::time::Duration;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Code, Status};

/// Largest status trailers (message and details as they go on the wire) a refusal may carry.
const MAX_TRAILERS: usize = 8 * 1024;

/// Strings with NUL bytes, known names and noise; `long` adds a 1 MB and a 20 000-character one.
fn hostile_string(long: bool) -> impl Strategy<Value = String> {
    let (bytes, chars) = if long { (1 << 20, 20_000) } else { (300, 100) };
    prop_oneof![
        Just(String::new()),
        Just("tcp\0".to_owned()),
        Just("\0".to_owned()),
        Just("x".repeat(bytes)),
        Just("é".repeat(chars)),
        prop::sample::select(vec![
            "tcp",
            "1",
            "shoulder_pan",
            "so101/gripper",
            "agentview",
            "robot0_eye_in_hand",
            "so101_tabletop",
            "world",
            "left",
            "right",
        ])
        .prop_map(str::to_owned),
        "[a-z0-9_/\\\\%\"]{0,24}",
        any::<String>(),
    ]
}

fn hostile_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::MAX),
        Just(-f64::MAX),
        Just(f64::MIN_POSITIVE),
        Just(0.0),
        -2.0..2.0,
        any::<f64>(),
    ]
}

fn hostile_u32() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), Just(1), Just(u32::MAX), 0..1100_u32, any::<u32>()]
}

fn hostile_i32() -> impl Strategy<Value = i32> {
    prop_oneof![-1..5_i32, any::<i32>()]
}

fn joint_values(long: bool) -> impl Strategy<Value = Option<JointValues>> {
    let named = prop::collection::btree_map(hostile_string(long), hostile_f64(), 0..8).prop_map(|values| {
        Form::Named(NamedJointValues {
            values: values.into_iter().collect(),
        })
    });
    let ordered =
        prop::collection::vec(hostile_f64(), 0..9).prop_map(|values| Form::Ordered(OrderedJointValues { values }));
    prop::option::of(prop_oneof![named, ordered].prop_map(|form| JointValues { form: Some(form) }))
}

fn vec3() -> impl Strategy<Value = Option<Vec3>> {
    prop::option::of(
        (hostile_f64(), hostile_f64(), hostile_f64()).prop_map(|(x, y, z)| Vec3 {
            x: x / 20.0,
            y: y / 20.0,
            z: z / 20.0,
        }),
    )
}

/// One request to one RPC, shown shortened (a 1 MB string would flood a failure report).
#[derive(Clone)]
struct Call(Request);

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let full = format!("{:?}", self.0);
        let mut shown: String = full.chars().take(400).collect();
        if shown.len() < full.len() {
            shown.push_str(&format!("... ({} bytes)", full.len()));
        }
        f.write_str(&shown)
    }
}

/// One request to one RPC.
#[derive(Debug, Clone)]
enum Request {
    ListTasks(ListTasksRequest),
    ResetTask(ResetTaskRequest),
    GetObservation(GetObservationRequest),
    Move(MoveRequest),
    Gripper(GripperRequest),
    StopEpisode,
    GetSessionInfo,
    GetModelInfo,
    GetRobotState,
    SendAction(SendActionRequest),
    Step(StepRequest),
    SetJointPositions(SetJointPositionsRequest),
    SetJointVelocities(SetJointVelocitiesRequest),
    ForwardKinematics(ForwardKinematicsRequest),
    GetJacobian(GetJacobianRequest),
    GetContacts,
    SaveState(SaveStateRequest),
    LoadState(LoadStateRequest),
    Tick(TickRequest),
    SetControlPeriod(SetControlPeriodRequest),
    SetMode(SetModeRequest),
    GetHardwareStatus,
    StreamJointStates(StreamJointStatesRequest),
    EmergencyStop(EmergencyStopRequest),
    ResetEmergencyStop,
}

fn call(long: bool) -> impl Strategy<Value = Call> {
    let session = prop_oneof![
        prop::option::of(hostile_string(long)).prop_map(|suite| Request::ListTasks(ListTasksRequest { suite })),
        (
            prop::option::of(hostile_string(long)),
            prop::option::of(hostile_u32()),
            prop::option::of(hostile_u32()),
            prop::option::of(prop_oneof![Just(0_u64), 1..400_u64, any::<u64>()]),
            prop::collection::vec(hostile_string(long), 0..3),
            prop::option::of(hostile_i32()),
            prop::option::of(any::<u64>()),
        )
            .prop_map(
                |(suite, task_index, init_state_index, max_steps, cameras, render_quality, seed)| Request::ResetTask(
                    ResetTaskRequest {
                        suite,
                        task_index,
                        init_state_index,
                        max_steps,
                        cameras,
                        render_quality,
                        seed,
                    }
                )
            ),
        (prop::option::of(hostile_i32()), hostile_string(long)).prop_map(|(render_quality, arm)| {
            Request::GetObservation(GetObservationRequest { render_quality, arm })
        }),
        (
            vec3(),
            prop::option::of((hostile_f64(), hostile_f64(), hostile_f64())),
            hostile_string(long)
        )
            .prop_map(|(delta_xyz, rpy, arm)| {
                Request::Move(MoveRequest {
                    delta_xyz,
                    delta_rpy: rpy.map(|(roll_x, pitch_y, yaw_z)| Rpy { roll_x, pitch_y, yaw_z }),
                    arm,
                })
            }),
        (hostile_i32(), hostile_string(long))
            .prop_map(|(command, arm)| Request::Gripper(GripperRequest { command, arm })),
        Just(Request::StopEpisode),
        Just(Request::GetSessionInfo),
    ];
    let robot = prop_oneof![
        Just(Request::GetModelInfo),
        Just(Request::GetRobotState),
        (joint_values(long), prop::option::of(hostile_u32())).prop_map(|(action, n_substeps)| {
            Request::SendAction(SendActionRequest {
                action,
                n_substeps,
                ..Default::default()
            })
        }),
        prop_oneof![Just(100_001), Just(u32::MAX), 0..500_u32]
            .prop_map(|n_steps| Request::Step(StepRequest { n_steps })),
        (joint_values(long), any::<bool>()).prop_map(|(positions, hold)| {
            Request::SetJointPositions(SetJointPositionsRequest {
                positions,
                hold,
                ..Default::default()
            })
        }),
        joint_values(long).prop_map(|velocities| {
            Request::SetJointVelocities(SetJointVelocitiesRequest {
                velocities,
                ..Default::default()
            })
        }),
        prop::option::of(hostile_string(long))
            .prop_map(|name| Request::ForwardKinematics(ForwardKinematicsRequest { name })),
        hostile_string(long).prop_map(|name| Request::GetJacobian(GetJacobianRequest { name })),
        Just(Request::GetContacts),
        hostile_string(long).prop_map(|name| Request::SaveState(SaveStateRequest { name })),
        hostile_string(long).prop_map(|name| Request::LoadState(LoadStateRequest { name })),
        (
            prop::collection::vec(hostile_f64(), 0..9),
            any::<bool>(),
            prop::collection::vec(hostile_string(long), 0..3),
            prop_oneof![Just(0_u32), 1..40_u32, any::<u32>()],
            prop_oneof![Just(0_u32), 1..40_u32, any::<u32>()],
            any::<bool>(),
            hostile_i32(),
            hostile_i32(),
            prop::option::of(hostile_f64()),
            prop::option::of(hostile_i32()),
        )
            .prop_map(
                |(
                    action,
                    want_images,
                    cameras,
                    width,
                    height,
                    want_depth,
                    depth_encoding,
                    color_encoding,
                    period_s,
                    render_quality,
                )| {
                    Request::Tick(TickRequest {
                        action,
                        want_images,
                        cameras,
                        width,
                        height,
                        want_depth,
                        depth_encoding,
                        color_encoding,
                        period_s,
                        render_quality,
                        ..Default::default()
                    })
                }
            ),
        hostile_f64().prop_map(|period_s| Request::SetControlPeriod(SetControlPeriodRequest { period_s })),
    ];
    let hardware = prop_oneof![
        (hostile_i32(), hostile_i32(), prop::option::of(hostile_f64())).prop_map(|(mode, sync, speed)| {
            Request::SetMode(SetModeRequest {
                mode,
                sync,
                sync_max_speed_rad_s: speed,
            })
        }),
        Just(Request::GetHardwareStatus),
        hostile_f64().prop_map(|rate_hz| Request::StreamJointStates(StreamJointStatesRequest {
            rate_hz,
            ..Default::default()
        })),
        (hostile_string(long), hostile_string(false))
            .prop_map(|(reason, arm)| Request::EmergencyStop(EmergencyStopRequest { reason, arm })),
        Just(Request::ResetEmergencyStop),
    ];
    prop_oneof![session, robot, hardware].prop_map(Call)
}

/// Clients of the three services on one connection.
#[derive(Clone)]
struct Clients {
    session: SessionServiceClient<Channel>,
    robot: RobotServiceClient<Channel>,
    hardware: HardwareServiceClient<Channel>,
}

/// Sends a call; `Ok` carries nothing, since only the status matters here.
async fn send(c: &mut Clients, Call(request): Call) -> Result<(), Status> {
    match request {
        Request::ListTasks(r) => c.session.list_tasks(r).await.map(drop),
        Request::ResetTask(r) => c.session.reset_task(r).await.map(drop),
        Request::GetObservation(r) => c.session.get_observation(r).await.map(drop),
        Request::Move(r) => c.session.r#move(r).await.map(drop),
        Request::Gripper(r) => c.session.gripper(r).await.map(drop),
        Request::StopEpisode => c.session.stop_episode(StopEpisodeRequest {}).await.map(drop),
        Request::GetSessionInfo => c.session.get_session_info(GetSessionInfoRequest {}).await.map(drop),
        Request::GetModelInfo => c.robot.get_model_info(GetModelInfoRequest {}).await.map(drop),
        Request::GetRobotState => c.robot.get_robot_state(GetRobotStateRequest::default()).await.map(drop),
        Request::SendAction(r) => c.robot.send_action(r).await.map(drop),
        Request::Step(r) => c.robot.step(r).await.map(drop),
        Request::SetJointPositions(r) => c.robot.set_joint_positions(r).await.map(drop),
        Request::SetJointVelocities(r) => c.robot.set_joint_velocities(r).await.map(drop),
        Request::ForwardKinematics(r) => c.robot.forward_kinematics(r).await.map(drop),
        Request::GetJacobian(r) => c.robot.get_jacobian(r).await.map(drop),
        Request::GetContacts => c.robot.get_contacts(GetContactsRequest {}).await.map(drop),
        Request::SaveState(r) => c.robot.save_state(r).await.map(drop),
        Request::LoadState(r) => c.robot.load_state(r).await.map(drop),
        Request::Tick(r) => c.robot.tick(r).await.map(drop),
        Request::SetControlPeriod(r) => c.robot.set_control_period(r).await.map(drop),
        Request::SetMode(r) => c.hardware.set_mode(r).await.map(drop),
        Request::GetHardwareStatus => c
            .hardware
            .get_hardware_status(GetHardwareStatusRequest::default())
            .await
            .map(drop),
        Request::StreamJointStates(r) => {
            let mut stream = c.hardware.stream_joint_states(r).await?.into_inner();
            match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
                Ok(Some(sample)) => sample.map(drop),
                Ok(None) => Ok(()),
                Err(_) => Err(Status::deadline_exceeded("no sample within 5 s")),
            }
        }
        Request::EmergencyStop(r) => c.hardware.emergency_stop(r).await.map(drop),
        Request::ResetEmergencyStop => c
            .hardware
            .reset_emergency_stop(ResetEmergencyStopRequest::default())
            .await
            .map(drop),
    }
}

/// Bytes of a status's trailers on the wire: `grpc-message` percent-encoded and
/// `grpc-status-details-bin` in base64.
fn trailer_bytes(status: &Status) -> usize {
    let message: usize = status
        .message()
        .bytes()
        .map(|b| if (0x20..0x7f).contains(&b) && b != b'%' { 1 } else { 3 })
        .sum();
    message + status.details().len().div_ceil(3) * 4
}

/// Everything a refusal must leave as it was, as text (so NaN equals NaN).
async fn observable(c: &mut Clients) -> Result<String, TestCaseError> {
    let robot = c.robot.get_robot_state(GetRobotStateRequest::default()).await;
    let session = c.session.get_session_info(GetSessionInfoRequest {}).await;
    let hardware = c
        .hardware
        .get_hardware_status(GetHardwareStatusRequest::default())
        .await;
    match (robot, session, hardware) {
        (Ok(robot), Ok(session), Ok(hardware)) => {
            let hardware = hardware.into_inner();
            Ok(format!(
                "{:?}\n{:?}\nmode {} estop {}",
                robot.into_inner(),
                session.into_inner(),
                hardware.mode,
                hardware.estop_latched
            ))
        }
        (robot, session, hardware) => Err(TestCaseError::fail(format!(
            "the twin stopped answering: {:?} {:?} {:?}",
            robot.err(),
            session.err(),
            hardware.err()
        ))),
    }
}

/// Checks one call; returns its RPC and how it was answered (`ok` or the refusal's reason).
async fn check(c: &mut Clients, call: Call) -> Result<(String, String), TestCaseError> {
    let before = observable(c).await?;
    let name = format!("{call:?}");
    let rpc = name.split('(').next().unwrap_or_default().to_owned();
    let Err(status) = send(c, call).await else {
        return Ok((rpc, "ok".to_owned()));
    };
    prop_assert_ne!(status.code(), Code::Unknown, "{}: {:?}", name, status);
    prop_assert!(
        trailer_bytes(&status) < MAX_TRAILERS,
        "{}: {} bytes of trailers ({:?}: {})",
        name,
        trailer_bytes(&status),
        status.code(),
        status.message().chars().take(200).collect::<String>()
    );
    let info = error_info(&status);
    prop_assert!(info.is_some(), "{}: a refusal without ErrorInfo: {:?}", name, status);
    let reason = info.map(|i| i.reason).unwrap_or_default();
    prop_assert_ne!(
        reason.as_str(),
        "twin_fault",
        "{}: a twin thread panicked: {}",
        name,
        status.message()
    );
    let after = observable(c).await?;
    prop_assert_eq!(before, after, "{} ({}) changed the state", name, reason);
    Ok((rpc, reason))
}

#[test]
fn no_request_kills_the_twin_or_escapes_the_error_table() {
    on_a_deep_stack(|| suite(false));
}

#[test]
fn one_megabyte_client_strings_keep_refusals_under_8_kib() {
    on_a_deep_stack(|| suite(true));
}

/// Stack of the thread the suite runs on: the strategy for one request of every RPC nests
/// unions of tuples of unions, and in a debug build generating from it takes more than the
/// 2 MiB a test thread has (it overflowed once `Move`, `Gripper` and `GetObservation` took
/// hostile arm names).
const SUITE_STACK: usize = 16 << 20;

/// Runs `run` on a thread with [`SUITE_STACK`], passing its panic on.
fn on_a_deep_stack(run: impl FnOnce() + Send + 'static) {
    let thread = std::thread::Builder::new()
        .name("hostile-suite".into())
        .stack_size(SUITE_STACK)
        .spawn(run)
        .unwrap();
    if let Err(panic) = thread.join() {
        std::panic::resume_unwind(panic);
    }
}

/// Runs the generated requests against one server, with or without the longest strings.
fn suite(long_strings: bool) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(TestServer::start_with(|s| {
            s.image_size = 16;
            s.max_steps = 1_000_000;
        }))
        .unwrap();
    let channel = runtime.block_on(server.channel()).unwrap();
    let mut clients = Clients {
        session: SessionServiceClient::new(channel.clone()).max_decoding_message_size(64 << 20),
        robot: RobotServiceClient::new(channel.clone()).max_decoding_message_size(64 << 20),
        hardware: HardwareServiceClient::new(channel),
    };
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(512);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let answers = std::sync::Mutex::new(std::collections::BTreeMap::<(String, String), u32>::new());
    let result = runner.run(&call(long_strings), |call| {
        let answer = runtime.block_on(check(&mut clients.clone(), call))?;
        *answers.lock().unwrap().entry(answer).or_default() += 1;
        Ok(())
    });
    // What the generated requests exercised, for the log of a passing run.
    for ((rpc, answer), n) in answers.into_inner().unwrap() {
        eprintln!("{rpc:<20} {answer:<24} {n}");
    }
    if let Err(failure) = result {
        panic!("{failure}");
    }
    runtime.block_on(async {
        clients.robot.step(StepRequest { n_steps: 1 }).await.unwrap();
        server.stop().await.unwrap();
    });
}
