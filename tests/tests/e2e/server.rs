//! The server as a whole: health, reflection, graceful shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::TestServer;
use tokio_stream::StreamExt;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

const SERVICES: [&str; 4] = [
    "fakesim.v1.SessionService",
    "fakesim.v1.RobotService",
    "fakesim.v1.HardwareService",
    "fakesim.v1.PreviewService",
];

fn check(service: &str) -> HealthCheckRequest {
    HealthCheckRequest {
        service: service.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn health_reports_serving_for_the_server_and_every_service() {
    let server = TestServer::start().await.unwrap();
    let mut health = HealthClient::new(server.channel().await.unwrap());
    for service in std::iter::once("").chain(SERVICES) {
        let status = health.check(check(service)).await.unwrap().into_inner().status;
        assert_eq!(status, ServingStatus::Serving as i32, "service {service:?}");
    }
    let unknown = health.check(check("fakesim.v1.NoSuchService")).await.unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    server.stop().await.unwrap();
}

/// The service names a reflection client of protocol version `$version` (`v1` or `v1alpha`)
/// lists, through tonic-reflection's generated client of that version.
macro_rules! list_services {
    ($version:ident, $channel:expr) => {{
        use tonic_reflection::pb::$version::ServerReflectionRequest;
        use tonic_reflection::pb::$version::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::$version::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::$version::server_reflection_response::MessageResponse;
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut answers = ServerReflectionClient::new($channel)
            .server_reflection_info(tokio_stream::iter([request]))
            .await
            .unwrap()
            .into_inner();
        let answer = answers.next().await.unwrap().unwrap();
        let Some(MessageResponse::ListServicesResponse(list)) = answer.message_response else {
            panic!("unexpected reflection answer {answer:?}");
        };
        list.service.into_iter().map(|s| s.name).collect::<Vec<String>>()
    }};
}

#[tokio::test(flavor = "multi_thread")]
async fn reflection_v1_and_v1alpha_list_the_four_services_and_health() {
    let server = TestServer::start().await.unwrap();
    let by_v1 = list_services!(v1, server.channel().await.unwrap());
    let by_v1alpha = list_services!(v1alpha, server.channel().await.unwrap());
    for (version, names) in [("v1", &by_v1), ("v1alpha", &by_v1alpha)] {
        for service in SERVICES.iter().chain(&["grpc.health.v1.Health"]) {
            assert!(
                names.iter().any(|n| n == service),
                "{version}: {service} missing from {names:?}"
            );
        }
    }
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_reports_not_serving_and_waits_for_the_open_call() {
    let mut server = TestServer::start().await.unwrap();
    let mut health = HealthClient::new(server.channel().await.unwrap());
    let mut watch = health
        .watch(check("fakesim.v1.RobotService"))
        .await
        .unwrap()
        .into_inner();
    let first: HealthCheckResponse = watch.next().await.unwrap().unwrap();
    assert_eq!(first.status, ServingStatus::Serving as i32);

    server.request_stop();
    let draining = watch.next().await.unwrap().unwrap();
    assert_eq!(draining.status, ServingStatus::NotServing as i32);
    assert!(!server.is_finished(), "the server returned while a call was still open");

    drop(watch);
    drop(health);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_default_image_size_beyond_the_renderer_stops_the_server_at_start() {
    let server = TestServer::start_with(|s| s.image_size = 5000).await.unwrap();
    let error = server.stop().await.unwrap_err();
    assert!(
        format!("{error:#}").contains("image-size 5000 exceeds the largest image"),
        "{error:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panic_on_the_physics_thread_is_answered_journaled_and_survived() {
    use fakesim_episode::ResetRequest;
    use fakesim_hil::{AppState, Settings, status};
    let runs = tempfile::tempdir().unwrap();
    let state = AppState::start(Settings {
        runs_dir: runs.path().to_path_buf(),
        image_size: 16,
        ..Settings::default()
    })
    .await
    .unwrap();
    state.engine.reset_task(ResetRequest::default()).await.unwrap();
    let events = std::fs::read_dir(runs.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("events.jsonl");

    // Not reachable by a client: a job only this test can hand the physics thread.
    let error = state
        .twin
        .with_sim(|_| -> () { panic!("injected by the test") })
        .await
        .unwrap_err();
    let status = status::from_twin(&error);
    assert_eq!(status.code(), tonic::Code::Internal);
    assert_eq!(
        fakesim_proto::errors::error_reason(&status).as_deref(),
        Some("twin_fault")
    );
    state.twin.with_sim(|sim| sim.step(1)).await.unwrap().unwrap();
    let journaled = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let text = std::fs::read_to_string(&events).unwrap();
            if text.contains("\"kind\":\"twin_fault\"") {
                return text;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the fault reaches the run's journal");
    assert!(journaled.contains("injected by the test"), "{journaled}");
    state.twin.shutdown();
}
