//! Who may call: TLS with a certificate generated here, bearer tokens and client certificates;
//! every refusal is UNAUTHENTICATED with its reason and lands in the run's journal. And names a
//! client chooses cannot reach outside the runs directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::pki::TestPki;
use fakesim_e2e::{CallMetadata, TestServer, journal_lines};
use fakesim_hil::BearerToken;
use fakesim_proto::errors::{error_info, error_reason};
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use tonic::Code;
use tonic::service::interceptor::InterceptedService;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

const TOKEN: &str = "lab-token-7c1e58a2f0d94b3e";

fn assert_unauthenticated(status: tonic::Status, reason: &str) {
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(error_reason(&status).as_deref(), Some(reason), "{status:?}");
    assert!(!status.message().is_empty());
}

async fn tls_server(pki: &TestPki, client_certs: bool) -> TestServer {
    let files = pki.daemon_files(client_certs);
    TestServer::start_with(move |s| {
        s.tls = Some(files);
        s.token = Some(BearerToken::new(TOKEN).unwrap());
        s.image_size = 16;
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn over_tls_the_right_token_is_served_and_anything_else_is_refused_with_a_reason() {
    let pki = TestPki::generate().unwrap();
    let server = tls_server(&pki, false).await;
    let tls = server.tls_channel(pki.client(false)).await.unwrap();
    let with = |metadata: CallMetadata| InterceptedService::new(tls.clone(), metadata);

    let mut robot = RobotServiceClient::new(with(CallMetadata::token(TOKEN).unwrap()));
    let info = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    assert_eq!(info.joints.len(), 6);
    let mut health = HealthClient::new(with(CallMetadata::token(TOKEN).unwrap()));
    health
        .check(HealthCheckRequest { service: String::new() })
        .await
        .unwrap();
    let mut session = SessionServiceClient::new(with(CallMetadata::token(TOKEN).unwrap()));
    let run = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner()
        .run;

    let mut anonymous = RobotServiceClient::new(with(CallMetadata::none()));
    let refused = anonymous.get_model_info(GetModelInfoRequest {}).await.unwrap_err();
    assert_unauthenticated(refused.clone(), "token_required");
    assert!(
        refused.message().contains("authorization: Bearer"),
        "{}",
        refused.message()
    );
    let mut wrong = RobotServiceClient::new(with(CallMetadata::token("lab-token-7c1e58a2f0d94b3f").unwrap()));
    assert_unauthenticated(
        wrong.get_model_info(GetModelInfoRequest {}).await.unwrap_err(),
        "token_invalid",
    );
    let mut not_bearer = HealthClient::new(with(CallMetadata::none().with("authorization", TOKEN).unwrap()));
    assert_unauthenticated(
        not_bearer
            .check(HealthCheckRequest { service: String::new() })
            .await
            .unwrap_err(),
        "token_invalid",
    );

    // The right token over plaintext is still refused, with a reason rather than a dropped line.
    let plain = server.with_metadata(CallMetadata::token(TOKEN).unwrap()).await.unwrap();
    let refused = RobotServiceClient::new(plain)
        .get_model_info(GetModelInfoRequest {})
        .await
        .unwrap_err();
    assert_unauthenticated(refused.clone(), "tls_required");
    assert!(refused.message().contains("--tls-ca"), "{}", refused.message());

    let events_path = server.runs_dir().join(&run).join("events.jsonl");
    let auth = journal_lines(&events_path, "auth", 4).await;
    let events = std::fs::read_to_string(&events_path).unwrap();
    let reasons: Vec<&str> = auth.iter().map(|e| e["auth"]["reason"].as_str().unwrap()).collect();
    assert_eq!(
        reasons,
        ["token_required", "token_invalid", "token_invalid", "tls_required"],
        "{events}"
    );
    assert!(
        auth.iter()
            .all(|e| e["auth"]["peer"].as_str().unwrap().starts_with("127.0.0.1:"))
    );
    assert!(!events.contains(TOKEN), "the token never reaches the journal");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_client_certificate_from_the_trusted_ca_stands_in_for_the_token() {
    let pki = TestPki::generate().unwrap();
    let server = tls_server(&pki, true).await;
    let with_cert = server.tls_channel(pki.client(true)).await.unwrap();
    let info = RobotServiceClient::new(with_cert)
        .get_model_info(GetModelInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.joints.len(), 6);

    let without = server.tls_channel(pki.client(false)).await.unwrap();
    let refused = RobotServiceClient::new(without)
        .get_model_info(GetModelInfoRequest {})
        .await
        .unwrap_err();
    assert_unauthenticated(refused.clone(), "token_required");
    assert!(
        refused.message().contains("client certificate"),
        "{}",
        refused.message()
    );

    // A certificate from another CA does not get past the handshake.
    let stranger = TestPki::generate().unwrap();
    let refused = match server.tls_channel(pki.client_showing_certificate_of(&stranger)).await {
        Err(_) => true,
        Ok(channel) => RobotServiceClient::new(channel)
            .get_model_info(GetModelInfoRequest {})
            .await
            .is_err(),
    };
    assert!(refused, "a client certificate from an untrusted CA is refused");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn names_used_in_paths_cannot_leave_the_runs_directory() {
    let server = TestServer::start_with(|s| s.image_size = 16).await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let megabyte = "s".repeat(1 << 20);
    for name in ["..", "../outside", "a/b", "/etc/passwd", "nul\0byte", megabyte.as_str()] {
        let refused = robot
            .save_state(SaveStateRequest { name: name.to_owned() })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{name:?}: {refused:?}");
        assert_eq!(error_reason(&refused).as_deref(), Some("invalid_name"), "{name:?}");
        assert!(
            refused.message().len() < 300,
            "bounded quote: {} bytes",
            refused.message().len()
        );
        assert_eq!(error_info(&refused).unwrap().metadata["what"], "state name");
        let refused = robot
            .load_state(LoadStateRequest { name: name.to_owned() })
            .await
            .unwrap_err();
        assert_eq!(error_reason(&refused).as_deref(), Some("invalid_name"), "{name:?}");
    }
    robot
        .save_state(SaveStateRequest {
            name: "before-grasp_1".into(),
        })
        .await
        .unwrap();
    let entries: Vec<_> = std::fs::read_dir(server.runs_dir()).unwrap().collect();
    assert!(
        entries.is_empty(),
        "nothing written under the runs directory: {entries:?}"
    );
    server.stop().await.unwrap();
}
