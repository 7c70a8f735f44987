//! The server's own bounds, answered like any refusal: past `--max-calls` calls at once a call
//! is refused `server_busy` with a retry hint, and a request message over 4 MiB is refused
//! `message_too_large`, each with its `ErrorInfo`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_hil::{Settings, serve};
use fakesim_proto::errors::{error_reason, retry_delay};
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::{GetRobotStateRequest, TickRequest};
use http_body_util::StreamBody;
use hyper::body::{Bytes, Frame};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic::transport::Channel;

/// A daemon in this process on 127.0.0.1:0 working on at most `max_calls` calls at once.
async fn daemon(max_calls: u32, runs: &std::path::Path) -> SocketAddr {
    let settings = Settings {
        runs_dir: runs.to_owned(),
        max_calls,
        ..Settings::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { serve(settings, listener, std::future::pending()).await });
    addr
}

async fn robot(addr: SocketAddr) -> RobotServiceClient<Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(30))
        .connect_lazy();
    RobotServiceClient::new(channel)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_max_calls_is_refused_server_busy_with_a_hint_until_one_ends() {
    let runs = tempfile::tempdir().unwrap();
    let addr = daemon(1, runs.path()).await;
    let mut robot = robot(addr).await;
    robot.get_robot_state(GetRobotStateRequest::default()).await.unwrap();

    // A call whose request never ends: the daemon works on it (waits for its message) for as
    // long as the client keeps its stream open. It may itself be refused if it arrives while one
    // of the calls below holds the only place; then it is sent again.
    let http = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    let hold = || {
        let (body, chunks) = mpsc::channel::<Result<Frame<Bytes>, Infallible>>(1);
        let request = hyper::Request::post(format!("http://{addr}/fakesim.v1.RobotService/GetRobotState"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(StreamBody::new(ReceiverStream::new(chunks)))
            .unwrap();
        (body, tokio::spawn(http.request(request)))
    };
    let (mut body, mut held) = hold();

    // Once the daemon has let it in, every other call is refused at once (the calls before that
    // are answered: nothing to wait for but the daemon's own answers).
    let refusal = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if held.is_finished() {
                (body, held) = hold();
            }
            match robot.get_robot_state(GetRobotStateRequest::default()).await {
                Ok(_) => continue,
                Err(status) => return status,
            }
        }
    })
    .await
    .expect("a second call refused while the first is held");
    assert_eq!(refusal.code(), Code::ResourceExhausted, "{refusal:?}");
    assert_eq!(error_reason(&refusal).as_deref(), Some("server_busy"), "{refusal:?}");
    assert!(retry_delay(&refusal).is_some_and(|d| d > Duration::ZERO), "{refusal:?}");

    // The held call ends (its stream closed without a message): the place is free again.
    drop(body);
    let _ = held.await.unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match robot.get_robot_state(GetRobotStateRequest::default()).await {
                Ok(_) => return,
                Err(status) if error_reason(&status).as_deref() == Some("server_busy") => {
                    tokio::time::sleep(retry_delay(&status).unwrap()).await;
                }
                Err(status) => panic!("{status:?}"),
            }
        }
    })
    .await;
    assert!(answered.is_ok(), "a call is answered once the held one ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_four_mib_is_refused_message_too_large_with_its_error_info() {
    let runs = tempfile::tempdir().unwrap();
    let addr = daemon(128, runs.path()).await;
    let mut robot = robot(addr).await;
    let oversize = TickRequest {
        action: vec![0.0; 600_000],
        ..Default::default()
    };
    let refusal = robot.tick(oversize).await.unwrap_err();
    assert_eq!(refusal.code(), Code::ResourceExhausted, "{refusal:?}");
    assert_eq!(
        error_reason(&refusal).as_deref(),
        Some("message_too_large"),
        "{refusal:?}"
    );
    // The daemon still serves.
    robot.get_robot_state(GetRobotStateRequest::default()).await.unwrap();
}
