//! PreviewActions through the generated client: unsafe chunks show their contacts in sim, a
//! safe chunk shows none, nothing moves (not the twin, not the real arm), and bad
//! chunks are refused with the reasons SendAction uses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_e2e::{TestServer, named, ordered};
use fakesim_hil::Mode as StartMode;
use fakesim_proto::errors::{error_info, error_reason};
use fakesim_proto::v1::preview_service_client::PreviewServiceClient;
use fakesim_proto::v1::*;
use feetech_emu::VirtualSo101;
use tonic::Code;
use tonic::transport::Channel;

/// Shoulder down: the gripper reaches into the table in front of the arm.
const INTO_TABLE: [f64; 6] = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
/// Upper arm back, elbow folded: the forearm swings into the shoulder above the base.
const INTO_BASE: [f64; 6] = [0.0, -1.5, 1.6, 0.0, 0.0, 0.0];
/// A modest move in free space.
const SAFE: [f64; 6] = [0.3, -0.3, 0.3, 0.2, 0.5, 0.5];

/// 20 actions from the initial pose (all zero) to `to`, and a 20-tick horizon.
fn chunk(to: [f64; 6]) -> PreviewActionsRequest {
    PreviewActionsRequest {
        actions: (1..=20)
            .map(|k| ordered(&to.map(|v| v * f64::from(k) / 20.0)))
            .collect(),
        horizon_ticks: 20,
        ..PreviewActionsRequest::default()
    }
}

async fn preview(client: &mut PreviewServiceClient<Channel>, request: PreviewActionsRequest) -> PreviewActionsResponse {
    client.preview_actions(request).await.unwrap().into_inner()
}

#[tokio::test(flavor = "multi_thread")]
async fn unsafe_chunks_show_their_contacts_and_the_twin_does_not_move() {
    let server = TestServer::start().await.unwrap();
    let mut client = PreviewServiceClient::new(server.channel().await.unwrap());
    let mut robot = server.robot().await.unwrap();
    let before = robot.get_robot_state(GetRobotStateRequest::default()).await.unwrap();

    let table = preview(&mut client, chunk(INTO_TABLE)).await;
    assert!(!table.safe);
    let contact = table.contacts.iter().find(|c| c.contact_class == "table").unwrap();
    assert_eq!(contact.other_geom, "table_top");
    assert!(contact.violation && contact.max_depth_m > 0.0, "{contact:?}");
    assert_eq!(table.violations[0].kind, "table_contact");
    assert!(table.summary.contains(&contact.link), "{}", table.summary);
    assert!(table.table_clearance.unwrap().clearance_m < 0.0);

    let base = preview(&mut client, chunk(INTO_BASE)).await;
    assert!(!base.safe);
    assert!(
        base.contacts
            .iter()
            .any(|c| ["base", "self"].contains(&c.contact_class.as_str())
                && [&c.link, &c.other_body].contains(&&"lower_arm".to_owned())),
        "{:?}",
        base.contacts
    );
    assert!(base.violations.iter().any(|v| v.message.contains("lower_arm")));

    let after = robot.get_robot_state(GetRobotStateRequest::default()).await.unwrap();
    assert_eq!(after.into_inner(), before.into_inner());
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_safe_chunk_passes_with_its_motion_reported() {
    let server = TestServer::start().await.unwrap();
    let mut client = PreviewServiceClient::new(server.channel().await.unwrap());
    let report = preview(&mut client, chunk(SAFE)).await;
    assert!(report.safe, "{}", report.summary);
    assert!(report.contacts.is_empty() && report.violations.is_empty() && report.summary.is_empty());
    assert_eq!((report.ticks, report.substeps_per_tick), (40, 10));
    let ids: Vec<&str> = report.joints.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6"]);
    for (joint, target) in report.joints.iter().zip(SAFE) {
        assert!((joint.final_position - target).abs() < 0.05, "{joint:?}");
    }
    // A named subset moves only those joints; a start state replaces the twin's.
    let subset = PreviewActionsRequest {
        actions: vec![named(&[("elbow_flex", 0.4)]); 10],
        start: Some(PreviewStart {
            positions: vec![0.2, 0.0, 0.0, 0.0, 0.0, 0.0],
            ..PreviewStart::default()
        }),
        ..PreviewActionsRequest::default()
    };
    let subset = preview(&mut client, subset).await;
    assert!(
        (subset.joints[0].final_position - 0.2).abs() < 0.02,
        "{:?}",
        subset.joints[0]
    );
    assert!(
        (subset.joints[2].final_position - 0.4).abs() < 0.05,
        "{:?}",
        subset.joints[2]
    );
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_chunks_are_refused_with_the_usual_reasons() {
    let server = TestServer::start().await.unwrap();
    let mut client = PreviewServiceClient::new(server.channel().await.unwrap());
    let mut nan = chunk(SAFE);
    nan.actions[3] = ordered(&[0.0, f64::NAN, 0.0, 0.0, 0.0, 0.0]);
    let mut short = chunk(SAFE);
    short.actions[0] = ordered(&[0.0; 5]);
    let mut far = chunk(SAFE);
    far.actions[1] = named(&[("shoulder_pan", 90.0)]);
    let empty = PreviewActionsRequest::default();
    let mut long = chunk(SAFE);
    long.horizon_ticks = 100_000;
    let mut bad_start = chunk(SAFE);
    bad_start.start = Some(PreviewStart {
        positions: vec![0.0; 4],
        ..PreviewStart::default()
    });
    let mut bad_speed = chunk(SAFE);
    bad_speed.max_joint_speed_rad_s = Some(f64::NAN);
    let cases = [
        (nan, Code::InvalidArgument, "non_finite"),
        (short, Code::InvalidArgument, "wrong_length"),
        (far, Code::OutOfRange, "out_of_range"),
        (empty, Code::InvalidArgument, "count_out_of_range"),
        (long, Code::InvalidArgument, "count_out_of_range"),
        (bad_start, Code::InvalidArgument, "wrong_length"),
        (bad_speed, Code::InvalidArgument, "invalid_argument"),
    ];
    for (request, code, reason) in cases {
        let status = client.preview_actions(request).await.unwrap_err();
        assert_eq!(
            (status.code(), error_reason(&status).as_deref()),
            (code, Some(reason)),
            "{status:?}"
        );
    }
    // A refused action is named by its index, in the message and the metadata.
    let mut late = chunk(SAFE);
    late.actions[17] = named(&[("elbow_flex", 9.0)]);
    let status = client.preview_actions(late).await.unwrap_err();
    assert!(
        status.message().starts_with("actions[17]: elbow_flex=9 outside"),
        "{}",
        status.message()
    );
    let meta = error_info(&status).unwrap().metadata;
    assert_eq!((meta["index"].as_str(), meta["joint"].as_str()), ("17", "elbow_flex"));
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_real_arm_a_preview_needs_no_lease_and_writes_no_goal() {
    let arm = VirtualArmServer::start(VirtualSo101::config(), StartMode::Mirror, |_| {})
        .await
        .unwrap();
    arm.bus.servos().clear_write_log();
    // No lease: a preview moves nothing, so it needs none.
    let mut client = PreviewServiceClient::new(arm.server.channel().await.unwrap());
    let report = preview(&mut client, chunk(INTO_TABLE)).await;
    assert!(
        report.violations.iter().any(|v| v.kind == "table_contact"),
        "{}",
        report.summary
    );
    assert_eq!(arm.goal_writes(), 0);
    arm.server.stop().await.unwrap();
}
