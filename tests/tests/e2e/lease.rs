//! The control lease in sim: off by default, and with `--lease-in-sim` the same rules as with
//! the arm (one holder; others refused with the holder named; renewal keeps it; release ends it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::{CallMetadata, TestServer, assert_reason};
use fakesim_proto::errors::error_info;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use tokio_stream::StreamExt;
use tonic::Code;

async fn status(hw: &mut HardwareServiceClient<tonic::transport::Channel>) -> GetHardwareStatusResponse {
    hw.get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner()
}

async fn acquire(hw: &mut HardwareServiceClient<tonic::transport::Channel>, ttl_ms: u32) -> Lease {
    let request = AcquireLeaseRequest {
        holder: "notebook".into(),
        ttl_ms,
        takeover: false,
        ..Default::default()
    };
    hw.acquire_lease(request).await.unwrap().into_inner().lease.unwrap()
}

#[tokio::test]
async fn in_sim_the_lease_is_off_unless_asked_for() {
    let server = TestServer::start_with(|s| s.image_size = 16).await.unwrap();
    let mut robot = server.robot().await.unwrap();
    robot.step(StepRequest { n_steps: 1 }).await.unwrap();
    let mut hw = HardwareServiceClient::new(server.channel().await.unwrap());
    assert!(!status(&mut hw).await.lease_required);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn with_lease_in_sim_one_client_drives_and_renewal_keeps_the_lease() {
    let server = TestServer::start_with(|s| {
        s.image_size = 16;
        s.lease_in_sim = true;
    })
    .await
    .unwrap();
    let mut hw = HardwareServiceClient::new(server.channel().await.unwrap());
    let mut anyone = SessionServiceClient::new(server.channel().await.unwrap());
    let refused = anyone.reset_task(ResetTaskRequest::default()).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "lease_required");
    assert!(refused.message().contains("x-fakesim-lease"), "{}", refused.message());
    let bad_ttl = AcquireLeaseRequest {
        holder: "notebook".into(),
        ttl_ms: 10,
        takeover: false,
        ..Default::default()
    };
    assert_reason(
        &hw.acquire_lease(bad_ttl).await.unwrap_err(),
        Code::InvalidArgument,
        "invalid_argument",
    );

    let long = acquire(&mut hw, 60_000).await;
    let leased = server
        .with_metadata(CallMetadata::lease(&long.lease_id).unwrap())
        .await
        .unwrap();
    SessionServiceClient::new(leased)
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap();
    let nudge = MoveRequest {
        delta_xyz: Some(Vec3 {
            x: 0.0,
            y: 0.01,
            z: 0.0,
        }),
        delta_rpy: None,
        ..Default::default()
    };
    let refused = anyone.r#move(nudge).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "lease_held");
    assert_eq!(error_info(&refused).unwrap().metadata["holder"], "\"notebook\"");
    let now = status(&mut hw).await;
    assert_eq!(now.lease_holder.as_deref(), Some("notebook"));
    assert!(now.lease_required);
    let release = ReleaseLeaseRequest {
        lease_id: long.lease_id.clone(),
    };
    hw.release_lease(release).await.unwrap();

    let lease = acquire(&mut hw, 400).await;
    assert_eq!((lease.holder.as_str(), lease.ttl_ms), ("notebook", 400));
    let leased = server
        .with_metadata(CallMetadata::lease(&lease.lease_id).unwrap())
        .await
        .unwrap();
    let mut robot = RobotServiceClient::new(leased);

    // Renew every 100 ms of stream time for three times the time to live.
    let mut samples = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 100.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut renewer = HardwareServiceClient::new(server.channel().await.unwrap());
    let (mut renewed_at, mut renewals) = (0.0, 0);
    while let Some(sample) = samples.next().await {
        let elapsed = sample.unwrap().elapsed_s;
        if elapsed >= 1.2 {
            break;
        }
        if elapsed - renewed_at >= 0.1 {
            let renew = RenewLeaseRequest {
                lease_id: lease.lease_id.clone(),
            };
            let renewed = renewer.renew_lease(renew).await.unwrap().into_inner().lease.unwrap();
            assert_eq!(renewed.lease_id, lease.lease_id);
            (renewed_at, renewals) = (elapsed, renewals + 1);
        }
    }
    assert!(renewals >= 10, "{renewals} renewals");
    robot.step(StepRequest { n_steps: 1 }).await.unwrap();

    hw.release_lease(ReleaseLeaseRequest {
        lease_id: lease.lease_id.clone(),
    })
    .await
    .unwrap();
    assert_eq!(status(&mut hw).await.lease_holder, None);
    assert_reason(
        &robot.step(StepRequest { n_steps: 1 }).await.unwrap_err(),
        Code::FailedPrecondition,
        "lease_expired",
    );
    assert_reason(
        &hw.renew_lease(RenewLeaseRequest {
            lease_id: lease.lease_id.clone(),
        })
        .await
        .unwrap_err(),
        Code::FailedPrecondition,
        "lease_expired",
    );
    server.stop().await.unwrap();
}
