//! The daemon under a service manager: `install-service` writes a unit `systemd-analyze verify`
//! accepts and the udev rules; the daemon sends `READY=1` to `$NOTIFY_SOCKET` once its port is
//! bound and serving, and `STOPPING=1` at SIGTERM, then exits 0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{after_marker, daemon, refused_at_start};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a datagram is waited for before the test fails (a debug daemon on a loaded machine
/// takes seconds to load the twin); only a guard against hanging for ever.
const DATAGRAM_GUARD: Duration = Duration::from_secs(600);

fn receive(socket: &UnixDatagram) -> String {
    let mut buffer = [0_u8; 256];
    let len = socket.recv(&mut buffer).expect("no datagram from the daemon");
    String::from_utf8_lossy(&buffer[..len]).into_owned()
}

#[test]
fn readiness_is_sent_once_the_port_is_bound_and_stopping_at_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let socket_path = dir.path().join("notify");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket.set_read_timeout(Some(DATAGRAM_GUARD)).unwrap();
    let runs = dir.path().join("runs");
    let mut child = daemon(&["--listen", "127.0.0.1:0", "--runs-dir", runs.to_str().unwrap()])
        .env("NOTIFY_SOCKET", &socket_path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();

    assert_eq!(receive(&socket), "READY=1");
    // Ready means bound: the announced port takes a connection now, with no retry.
    let mut announced = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut announced)
        .unwrap();
    let addr: SocketAddr = announced.trim().parse().unwrap();
    TcpStream::connect(addr).expect("the port announced ready refuses connections");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    assert_eq!(after_marker(&mut stderr, &mut child, "listening on "), addr.to_string());

    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), Signal::SIGTERM).unwrap();
    assert_eq!(receive(&socket), "STOPPING=1");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn install_service_writes_a_notify_unit_that_systemd_accepts_and_the_udev_rules() {
    let dir = tempfile::tempdir().unwrap();
    let (units, rules) = (dir.path().join("units"), dir.path().join("rules"));
    let output = daemon(&[
        "install-service",
        "--robot-id",
        "lab_arm",
        "--port",
        "/dev/ttyACM0",
        "--unit-dir",
        units.to_str().unwrap(),
        "--udev-dir",
        rules.to_str().unwrap(),
        "--",
        "--mode",
        "hil",
    ])
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let unit_path = units.join("fakesim-hil-lab_arm.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    let launcher = std::path::Path::new(env!("CARGO_BIN_EXE_fakesim-hil"))
        .canonicalize()
        .unwrap();
    let exec = format!(
        "ExecStart=\"{}\" \"--port\" \"/dev/ttyACM0\" \"--robot-id\" \"lab_arm\" \"--listen\" \"127.0.0.1:50051\" \"--mode\" \"hil\"",
        launcher.display()
    );
    for line in [
        "Type=notify",
        "Restart=on-failure",
        "WantedBy=multi-user.target",
        exec.as_str(),
    ] {
        assert!(unit.lines().any(|l| l == line), "no line {line:?} in\n{unit}");
    }
    assert_eq!(
        std::fs::read_to_string(rules.join("99-fakesim-hil-so101.rules")).unwrap(),
        include_str!("../../../udev/99-fakesim-hil-so101.rules")
    );
    // systemd's own check of the unit, where systemd is installed (Debian's systemd package).
    match Command::new("systemd-analyze").arg("verify").arg(&unit_path).output() {
        Ok(verified) => assert!(
            verified.status.success() && verified.stderr.is_empty(),
            "systemd-analyze verify: {}",
            String::from_utf8_lossy(&verified.stderr)
        ),
        Err(e) => eprintln!("systemd-analyze not run ({e}); the unit was not verified by systemd"),
    }
}

#[test]
fn install_service_refuses_a_robot_id_that_cannot_name_a_unit() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = refused_at_start(&[
        "install-service",
        "--robot-id",
        "../etc/evil",
        "--port",
        "/dev/ttyACM0",
        "--unit-dir",
        dir.path().to_str().unwrap(),
        "--udev-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(stderr.contains("cannot name a unit"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing is written");
}
