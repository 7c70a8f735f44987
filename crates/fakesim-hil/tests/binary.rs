//! The real `fakesim-hil` binary: runs without `LD_LIBRARY_PATH` (rpath), announces its
//! address (log and stdout), serves, and exits 0 on SIGTERM; refuses hardware mode for now.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, ChildStderr, Command, Stdio};
use tonic::transport::Endpoint;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// The binary with the given arguments, without `LD_LIBRARY_PATH` so only its rpath can find
/// libmujoco.
fn daemon(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fakesim-hil"));
    command
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("RUST_LOG")
        .stderr(Stdio::piped());
    command
}

/// Reads stderr up to the `listening on ADDR` line and returns the address.
fn listening_address(stderr: &mut BufReader<ChildStderr>, child: &mut Child) -> SocketAddr {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!(
                "the daemon ended ({:?}) before listening; stderr:\n{seen}",
                child.wait()
            );
        }
        if let Some((_, addr)) = line.trim_end().split_once("listening on ") {
            return addr.parse().unwrap();
        }
        seen.push_str(&line);
    }
}

async fn health(addr: SocketAddr) -> i32 {
    let channel = Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = HealthClient::new(channel);
    client
        .check(HealthCheckRequest { service: String::new() })
        .await
        .unwrap()
        .into_inner()
        .status
}

#[test]
fn sigterm_stops_the_serving_daemon_with_exit_code_0() {
    let runs = tempfile::tempdir().unwrap();
    let mut child = daemon(&["--listen", "127.0.0.1:0", "--runs-dir", runs.path().to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let addr = listening_address(&mut stderr, &mut child);
    let mut announced = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut announced)
        .unwrap();
    assert_eq!(
        announced,
        format!("{addr}\n"),
        "stdout's first line is the bound address alone"
    );
    assert_eq!(addr.ip().to_string(), "127.0.0.1");
    assert_ne!(addr.port(), 0);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    assert_eq!(runtime.block_on(health(addr)), ServingStatus::Serving as i32);

    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), Signal::SIGTERM).unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stderr after SIGTERM:\n{rest}");
    assert!(rest.contains("SIGTERM received"), "{rest}");
    assert!(rest.contains("stopped"), "{rest}");
}

#[test]
fn a_port_without_calibration_is_refused_saying_how_to_make_one() {
    let output = daemon(&["--listen", "127.0.0.1:0", "--port", "/dev/ttyACM0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--port needs the arm's calibration"), "{stderr}");
    assert!(
        stderr.contains("fakesim-hil calibrate --port DEVICE --role follower"),
        "{stderr}"
    );
}

#[test]
fn a_calibration_missing_a_motor_is_refused_naming_the_joint() {
    let dir = tempfile::tempdir().unwrap();
    let calibration = dir.path().join("arm.json");
    std::fs::write(&calibration, "{}").unwrap();
    let port = dir.path().join("ttyACM9");
    let output = daemon(&[
        "--listen",
        "127.0.0.1:0",
        "--port",
        port.to_str().unwrap(),
        "--calibration",
        calibration.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("arm.json cannot drive the arm"), "{stderr}");
    assert!(stderr.contains("joint shoulder_pan (id 1) is missing"), "{stderr}");
}

#[test]
fn unknown_config_key_stops_the_daemon_before_it_listens() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("fakesim.toml");
    std::fs::write(&config, "listen = \"127.0.0.1:0\"\nmax-step = 10\n").unwrap();
    let output = daemon(&["--config", config.to_str().unwrap()]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown field `max-step`"), "{stderr}");
    assert!(!stderr.contains("listening on"), "{stderr}");
}
