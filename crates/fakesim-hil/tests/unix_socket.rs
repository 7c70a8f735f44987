//! The daemon on a Unix domain socket (`--listen unix:PATH`): serves the same API as on TCP,
//! and removes its socket file when it stops.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_hil::{ListenAddr, Listener};
use fakesim_hil::{Settings, serve};
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::{GetRobotStateRequest, TickRequest};
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::Endpoint;

#[tokio::test(flavor = "multi_thread")]
async fn a_tick_over_a_unix_socket_and_the_socket_file_is_removed_at_stop() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("fakesim.sock");
    let listen: ListenAddr = format!("unix:{}", socket.display()).parse().unwrap();
    let listener = Listener::bind(&listen).await.unwrap();
    assert_eq!(listener.local_addr().unwrap(), listen);
    let settings = Settings {
        listen,
        runs_dir: dir.path().join("runs"),
        ..Settings::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(settings, listener, async {
        let _ = stopped.await;
    }));

    let path = socket.clone();
    let connector = tower::service_fn(move |_| {
        let path = path.clone();
        async move { UnixStream::connect(path).await.map(TokioIo::new) }
    });
    let channel = Endpoint::try_from("http://[::1]:50051")
        .unwrap()
        .connect_with_connector(connector)
        .await
        .unwrap();
    let mut robot = RobotServiceClient::new(channel);
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    let tick = robot
        .tick(TickRequest {
            action: state.ctrl_targets,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(tick.physics_steps, state.physics_steps + 10, "one tick of 10 steps");

    drop(robot);
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    assert!(!socket.exists(), "the socket file is gone after stop");
}

#[tokio::test]
async fn a_socket_path_that_cannot_be_bound_is_named() {
    let listen: ListenAddr = "unix:/nonexistent/dir/fakesim.sock".parse().unwrap();
    let err = Listener::bind(&listen).await.unwrap_err();
    assert!(format!("{err:#}").contains("/nonexistent/dir/fakesim.sock"), "{err:#}");
}
