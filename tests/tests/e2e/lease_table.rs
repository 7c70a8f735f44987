//! The lease table: every call of the API made without a lease while another client holds it,
//! in `hil` on the virtual SO-101; the calls refused `lease_held` are exactly those the
//! manual's table (`docs/src/access.md`) says need the lease, and the daemon's own table says the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_e2e::{CallMetadata, ordered};
use fakesim_hil::Mode as StartMode;
use fakesim_hil::{Call, Need};
use fakesim_proto::errors::error_reason;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::preview_service_client::PreviewServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use feetech_emu::VirtualSo101;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};
use tokio_stream::StreamExt;

/// The calls the manual's lease table says need the lease with a real arm in `hil`, and the
/// calls it names as never needing it.
fn readme_table() -> (BTreeSet<String>, BTreeSet<String>) {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/access.md")).unwrap();
    let start = readme
        .find("| call | needs the lease |")
        .expect("the manual's access page has the lease table");
    let (mut needed, mut never) = (BTreeSet::new(), BTreeSet::new());
    for row in readme[start..].lines().skip(2).take_while(|l| l.starts_with('|')) {
        let mut cells = row.split('|').skip(1);
        let (calls, when) = (cells.next().unwrap(), cells.next().unwrap().trim());
        let names = calls.split('`').skip(1).step_by(2).map(str::to_owned);
        if when.starts_with("never") {
            never.extend(names);
        } else {
            needed.extend(names);
        }
    }
    (needed, never)
}

/// Every RPC of the daemon's services, from the descriptors it serves by reflection.
fn every_rpc() -> BTreeSet<String> {
    let set = prost_types::FileDescriptorSet::decode(fakesim_proto::FILE_DESCRIPTOR_SET).unwrap();
    set.file
        .iter()
        .flat_map(|file| &file.service)
        .flat_map(|service| &service.method)
        .filter_map(|method| method.name.clone())
        .collect()
}

#[test]
fn the_daemons_lease_table_covers_every_rpc_and_says_what_the_readme_says() {
    let named: BTreeSet<String> = Call::ALL.iter().map(|c| c.name().to_owned()).collect();
    assert_eq!(named, every_rpc(), "the daemon's table names every RPC, and only those");
    let (needed, never) = readme_table();
    let needs: BTreeSet<String> = Call::ALL
        .iter()
        .filter(|c| c.need() != Need::Never)
        .map(|c| c.name().to_owned())
        .collect();
    assert_eq!(needs, needed);
    assert!(never.iter().all(|name| !needs.contains(name)), "{never:?}");
}

fn refused_for_the_lease<T>(outcome: Result<T, tonic::Status>) -> bool {
    outcome.is_err_and(|status| error_reason(&status).as_deref() == Some("lease_held"))
}

#[tokio::test]
async fn without_the_lease_exactly_the_calls_the_readme_names_are_refused() {
    let arm = VirtualArmServer::start(VirtualSo101::config(), StartMode::Hil, |_| {})
        .await
        .unwrap();
    let server = &arm.server;
    let mut holder = HardwareServiceClient::new(server.channel().await.unwrap());
    let request = AcquireLeaseRequest {
        holder: "the other client".into(),
        ttl_ms: 60_000,
        takeover: false,
        ..Default::default()
    };
    holder.acquire_lease(request).await.unwrap();
    let conn = || async { server.with_metadata(CallMetadata::none()).await.unwrap() };
    let mut session = SessionServiceClient::new(conn().await);
    let mut robot = RobotServiceClient::new(conn().await);
    let mut hardware = HardwareServiceClient::new(conn().await);
    let mut preview = PreviewServiceClient::new(conn().await);
    let home = ordered(&[0.0; 6]);
    let mut refused = BTreeMap::new();
    let mut outcome = |call: &str, lease_held: bool| refused.insert(call.to_owned(), lease_held);

    outcome(
        "ListTasks",
        refused_for_the_lease(session.list_tasks(ListTasksRequest::default()).await),
    );
    outcome(
        "ResetTask",
        refused_for_the_lease(session.reset_task(ResetTaskRequest::default()).await),
    );
    outcome(
        "GetObservation",
        refused_for_the_lease(session.get_observation(GetObservationRequest::default()).await),
    );
    let r#move = MoveRequest {
        delta_xyz: Some(Vec3 {
            x: 0.0,
            y: 0.0,
            z: 0.01,
        }),
        delta_rpy: None,
        ..Default::default()
    };
    outcome("Move", refused_for_the_lease(session.r#move(r#move).await));
    let close = GripperRequest {
        command: GripperCommand::Close.into(),
        ..Default::default()
    };
    outcome("Gripper", refused_for_the_lease(session.gripper(close).await));
    outcome(
        "StopEpisode",
        refused_for_the_lease(session.stop_episode(StopEpisodeRequest::default()).await),
    );
    outcome(
        "GetSessionInfo",
        refused_for_the_lease(session.get_session_info(GetSessionInfoRequest::default()).await),
    );
    outcome(
        "GetModelInfo",
        refused_for_the_lease(robot.get_model_info(GetModelInfoRequest::default()).await),
    );
    outcome(
        "GetRobotState",
        refused_for_the_lease(robot.get_robot_state(GetRobotStateRequest::default()).await),
    );
    let action = SendActionRequest {
        action: Some(home.clone()),
        ..SendActionRequest::default()
    };
    outcome("SendAction", refused_for_the_lease(robot.send_action(action).await));
    outcome(
        "Step",
        refused_for_the_lease(robot.step(StepRequest { n_steps: 1 }).await),
    );
    let positions = SetJointPositionsRequest {
        positions: Some(home.clone()),
        hold: true,
    };
    outcome(
        "SetJointPositions",
        refused_for_the_lease(robot.set_joint_positions(positions).await),
    );
    let velocities = SetJointVelocitiesRequest {
        velocities: Some(home.clone()),
    };
    outcome(
        "SetJointVelocities",
        refused_for_the_lease(robot.set_joint_velocities(velocities).await),
    );
    let fk = ForwardKinematicsRequest::default();
    outcome(
        "ForwardKinematics",
        refused_for_the_lease(robot.forward_kinematics(fk).await),
    );
    let jacobian = GetJacobianRequest { name: "tcp".into() };
    outcome("GetJacobian", refused_for_the_lease(robot.get_jacobian(jacobian).await));
    outcome(
        "GetContacts",
        refused_for_the_lease(robot.get_contacts(GetContactsRequest::default()).await),
    );
    let save = SaveStateRequest { name: "here".into() };
    outcome("SaveState", refused_for_the_lease(robot.save_state(save).await));
    let load = LoadStateRequest { name: "here".into() };
    outcome("LoadState", refused_for_the_lease(robot.load_state(load).await));
    let tick = TickRequest {
        action: vec![0.0; 6],
        ..TickRequest::default()
    };
    outcome("Tick", refused_for_the_lease(robot.tick(tick).await));
    let chunk = TickChunkRequest {
        ticks: vec![TickRequest {
            action: vec![0.0; 6],
            ..TickRequest::default()
        }],
    };
    outcome("TickChunk", refused_for_the_lease(robot.tick_chunk(chunk).await));
    let period = SetControlPeriodRequest { period_s: 1.0 / 30.0 };
    outcome(
        "SetControlPeriod",
        refused_for_the_lease(robot.set_control_period(period).await),
    );
    let chunk = PreviewActionsRequest {
        actions: vec![home.clone()],
        ..PreviewActionsRequest::default()
    };
    outcome(
        "PreviewActions",
        refused_for_the_lease(preview.preview_actions(chunk).await),
    );
    let mirror = SetModeRequest {
        mode: Mode::Mirror.into(),
        ..SetModeRequest::default()
    };
    outcome("SetMode", refused_for_the_lease(hardware.set_mode(mirror).await));
    outcome(
        "GetHardwareStatus",
        refused_for_the_lease(hardware.get_hardware_status(GetHardwareStatusRequest::default()).await),
    );
    let stream = hardware
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 10.0,
            ..Default::default()
        })
        .await;
    let first = match stream {
        Ok(stream) => stream.into_inner().next().await.unwrap().map(drop),
        Err(status) => Err(status),
    };
    outcome("StreamJointStates", refused_for_the_lease(first));
    // The stop last: it latches, and resetting it is a control call.
    let stop = EmergencyStopRequest {
        reason: "lease table test".into(),
        ..Default::default()
    };
    outcome(
        "EmergencyStop",
        refused_for_the_lease(hardware.emergency_stop(stop).await),
    );
    let reset = ResetEmergencyStopRequest::default();
    outcome(
        "ResetEmergencyStop",
        refused_for_the_lease(hardware.reset_emergency_stop(reset).await),
    );

    // The lease calls answer about the lease itself (taking, renewing or giving back one that
    // another client holds is refused lease_held by their nature); that they need none is
    // checked against the table above, so they are left out here.
    let (needed, _) = readme_table();
    let expected: BTreeMap<String, bool> = every_rpc()
        .into_iter()
        .filter(|rpc| !rpc.ends_with("Lease"))
        .map(|rpc| {
            let needs = needed.contains(&rpc);
            (rpc, needs)
        })
        .collect();
    assert_eq!(refused, expected);
}
