//! The real `fakesim-hil` binary: runs without `LD_LIBRARY_PATH` (rpath), announces its
//! address (log and stdout), serves, exits 0 on SIGTERM (every time, over many start/stop
//! cycles, with and without a virtual arm), refuses a port it cannot use, and refuses listening
//! off loopback without TLS and credentials.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{after_marker, daemon, refused_at_start};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, ChildStderr, Stdio};
use tonic::transport::Endpoint;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// Reads stderr up to the `listening on ADDR` line and returns the address.
fn listening_address(stderr: &mut BufReader<ChildStderr>, child: &mut Child) -> SocketAddr {
    after_marker(stderr, child, "listening on ").parse().unwrap()
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

/// Start/stop cycles per variant: `FAKESIM_CYCLES`, 200 for the full run, 10 by default.
fn cycles() -> usize {
    std::env::var("FAKESIM_CYCLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10)
}

/// A virtual SO-101 served by `fakesim-hil emulate` on a pty, with its calibration file.
struct VirtualArm {
    emulator: Child,
    _stdout: BufReader<std::process::ChildStdout>,
    device: String,
    calibration: String,
}

impl VirtualArm {
    fn start(dir: &std::path::Path) -> Self {
        let calibration = dir.join("virtual.json").to_str().unwrap().to_owned();
        let mut emulator = daemon(&["emulate", "--write-calibration", &calibration])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        // Kept open: the emulator prints more and must not see a closed pipe.
        let mut stdout = BufReader::new(emulator.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
        let device = first
            .split_whitespace()
            .find(|word| word.starts_with("/dev/"))
            .map(|path| path.trim_end_matches(':').to_owned())
            .unwrap_or_else(|| panic!("no device path in {first:?}"));
        VirtualArm {
            emulator,
            _stdout: stdout,
            device,
            calibration,
        }
    }
}

impl Drop for VirtualArm {
    fn drop(&mut self) {
        let _ = kill(
            Pid::from_raw(i32::try_from(self.emulator.id()).unwrap()),
            Signal::SIGINT,
        );
        let _ = self.emulator.wait();
    }
}

/// Starts an episode, which draws both cameras: the cycle has GL contexts to tear down and an
/// episode to finalise.
async fn start_episode(addr: SocketAddr) {
    use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
    use fakesim_proto::v1::session_service_client::SessionServiceClient;
    use fakesim_proto::v1::{AcquireLeaseRequest, ResetTaskRequest};
    let channel = Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    // With an arm the daemon starts in mirror, where starting an episode needs the lease.
    let lease = HardwareServiceClient::new(channel.clone())
        .acquire_lease(AcquireLeaseRequest {
            holder: "cycle".into(),
            ttl_ms: 0,
            takeover: false,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    let mut request = tonic::Request::new(ResetTaskRequest {
        cameras: vec!["agentview".into()],
        ..ResetTaskRequest::default()
    });
    request
        .metadata_mut()
        .insert("x-fakesim-lease", lease.lease_id.parse().unwrap());
    let started = SessionServiceClient::new(channel)
        .reset_task(request)
        .await
        .unwrap()
        .into_inner();
    assert!(!started.images.unwrap().agentview.is_empty());
}

/// Starts the daemon, starts an episode, sends SIGTERM, and returns its exit code and stderr.
fn start_work_stop(runtime: &tokio::runtime::Runtime, extra: &[&str], runs: &str) -> (Option<i32>, String) {
    let mut args = vec!["--listen", "127.0.0.1:0", "--runs-dir", runs, "--image-size", "16"];
    args.extend_from_slice(extra);
    let mut child = daemon(&args).stdout(Stdio::null()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let addr = listening_address(&mut stderr, &mut child);
    runtime.block_on(start_episode(addr));
    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), Signal::SIGTERM).unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    (child.wait().unwrap().code(), rest)
}

#[test]
fn every_start_stop_cycle_exits_0_with_and_without_a_virtual_arm() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let runs = runs.to_str().unwrap();
    let arm = VirtualArm::start(dir.path());
    let with_arm = ["--port", arm.device.as_str(), "--calibration", arm.calibration.as_str()];
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let n = cycles();
    for (variant, extra) in [("sim only", &[][..]), ("virtual arm", &with_arm[..])] {
        for cycle in 0..n {
            let (code, stderr) = start_work_stop(&runtime, extra, runs);
            assert_eq!(code, Some(0), "{variant}, cycle {cycle} of {n}; stderr:\n{stderr}");
        }
    }
}

#[test]
fn listening_off_loopback_without_tls_and_credentials_is_refused_saying_how_to_set_them() {
    let stderr = refused_at_start(&["--listen", "0.0.0.0:0"]);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without TLS"),
        "{stderr}"
    );
    assert!(stderr.contains("--tls-cert FILE --tls-key FILE"), "{stderr}");
    assert!(!stderr.contains("listening on"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let tls = [
        "--listen",
        "0.0.0.0:0",
        "--tls-cert",
        cert_path.to_str().unwrap(),
        "--tls-key",
        key_path.to_str().unwrap(),
    ];
    let stderr = refused_at_start(&tls);
    assert!(stderr.contains("without authentication"), "{stderr}");
    assert!(stderr.contains("--token-file FILE (or FAKESIM_HIL_TOKEN)"), "{stderr}");

    let output = daemon(&tls).env("FAKESIM_HIL_TOKEN", "short").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("FAKESIM_HIL_TOKEN") && stderr.contains("at least 16"),
        "{stderr}"
    );
}
