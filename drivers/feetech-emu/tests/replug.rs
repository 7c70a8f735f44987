//! Unplugging the adapter and plugging it in again: the servos keep their state, a new
//! transport serves them, the old one stays gone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use feetech::bus::{Bus, BusConfig, BusError};
use feetech::control_table::{self as ct, DEFAULT_BAUD_RATE};
use feetech::protocol::instruction;
use feetech_emu::cli::{FaultArgs, PlugArgs, ResetAt, UnplugAt};
use feetech_emu::timeline::Timeline;
use feetech_emu::{EmuError, ServoBus, VirtualSo101, serve_pty_linked, spawn_duplex};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use tokio_serial::SerialPortBuilderExt;

use common::{NO_HANG, request};

/// Reads Acceleration of servo `id` over `stream`.
async fn read_acceleration<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S, id: u8) -> u8 {
    let reply = request(stream, &instruction::read(id, ct::ACCELERATION.address, 1), 7).await;
    reply[5]
}

#[tokio::test]
async fn a_replugged_bus_serves_the_same_servos_on_a_new_transport() {
    let (bus, _) = ServoBus::simulated(&VirtualSo101::config());
    let (mut host, running) = spawn_duplex(bus.clone());
    request(&mut host, &instruction::write(2, ct::ACCELERATION.address, &[77]), 6).await;

    bus.unplug();
    assert!(bus.is_unplugged());
    running.finished().await.unwrap();
    let mut buf = [0; 8];
    assert_eq!(host.read(&mut buf).await.unwrap(), 0, "the old port is gone");

    bus.replug();
    assert!(!bus.is_unplugged());
    let (mut again, running) = spawn_duplex(bus.clone());
    assert_eq!(read_acceleration(&mut again, 2).await, 77, "the servos kept power");
    bus.replug();
    assert!(!bus.is_unplugged(), "a replug while plugged in changes nothing");
    assert_eq!(read_acceleration(&mut again, 2).await, 77);

    bus.unplug();
    running.finished().await.unwrap();
    assert!(bus.is_unplugged(), "the second unplug ends the second transport");
}

#[tokio::test]
async fn a_transport_served_before_an_unplug_stays_gone_after_a_quick_replug() {
    let (bus, _) = ServoBus::simulated(&VirtualSo101::config());
    let (mut old, old_running) = spawn_duplex(bus.clone());
    request(&mut old, &instruction::ping(1), 6).await;
    bus.unplug();
    bus.replug();
    let (mut new, new_running) = spawn_duplex(bus.clone());
    old_running.finished().await.unwrap();
    let mut buf = [0; 8];
    assert_eq!(old.read(&mut buf).await.unwrap(), 0, "the old port is gone");
    assert_eq!(request(&mut new, &instruction::ping(1), 6).await.len(), 6);
    assert!(!new_running.is_finished());
    new_running.shutdown().await.unwrap();
}

/// Opens `path` like a serial adapter at 1 Mbaud.
fn open_port(path: &Path) -> tokio_serial::SerialStream {
    tokio_serial::new(path.to_string_lossy(), 1_000_000)
        .open_native_async()
        .unwrap()
}

#[tokio::test]
async fn a_linked_pty_comes_back_at_the_same_link_with_the_same_servos() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("ttyARM");
    std::os::unix::fs::symlink("/dev/pts/stale-from-an-earlier-run", &link).unwrap();
    let mut pty = serve_pty_linked(ServoBus::real_time(&VirtualSo101::config()), &link).unwrap();
    assert_eq!(pty.link(), Some(link.as_path()));
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        pty.path(),
        "the stale link is replaced"
    );
    let mut port = open_port(&link);
    request(&mut port, &instruction::write(2, ct::ACCELERATION.address, &[77]), 6).await;

    let old_device = pty.path().to_path_buf();
    pty.unplug();
    pty.wait_finished().await.unwrap();
    assert!(pty.is_finished() && pty.servos().is_unplugged());
    assert!(!old_device.exists(), "{} still exists", old_device.display());
    assert!(
        std::fs::symlink_metadata(&link).is_err(),
        "the link went with the device"
    );
    let mut buf = [0; 8];
    let read = tokio::time::timeout(NO_HANG, port.read(&mut buf))
        .await
        .expect("no hang");
    assert!(matches!(read, Ok(0) | Err(_)), "the held port vanished: {read:?}");
    assert!(
        tokio_serial::new(link.to_string_lossy(), 1_000_000)
            .open_native_async()
            .is_err()
    );

    pty.replug().await.unwrap();
    assert!(!pty.is_finished() && !pty.servos().is_unplugged());
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        pty.path(),
        "the link points to the new device"
    );
    let mut again = open_port(&link);
    assert_eq!(read_acceleration(&mut again, 2).await, 77, "the servos kept power");
    pty.shutdown().await.unwrap();
    assert!(
        std::fs::symlink_metadata(&link).is_err(),
        "shutting down removes the link"
    );
}

#[tokio::test]
async fn replugging_a_served_pty_unplugs_it_first() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("ttyARM");
    let mut pty = serve_pty_linked(ServoBus::real_time(&VirtualSo101::config()), &link).unwrap();
    let mut port = open_port(pty.path());
    request(&mut port, &instruction::ping(1), 6).await;
    pty.replug().await.unwrap();
    let mut buf = [0; 8];
    let read = tokio::time::timeout(NO_HANG, port.read(&mut buf))
        .await
        .expect("no hang");
    assert!(matches!(read, Ok(0) | Err(_)), "the old port vanished: {read:?}");
    let mut again = open_port(&link);
    assert_eq!(request(&mut again, &instruction::ping(1), 6).await.len(), 6);
    pty.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_link_is_never_put_over_a_file_that_is_not_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "keep me").unwrap();
    let refused = serve_pty_linked(ServoBus::real_time(&VirtualSo101::config()), &file);
    assert!(matches!(refused, Err(EmuError::Link { .. })), "{refused:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary link left"
    );
}

/// The project's driver on `path` at 1 Mbaud, one retry.
fn driver(path: &Path) -> Bus<tokio_serial::SerialStream> {
    let config = BusConfig {
        timeout: Duration::from_millis(300),
        retries: 1,
        echo: false,
    };
    Bus::open(path, DEFAULT_BAUD_RATE, config).unwrap()
}

/// Present positions of the six servos, read by the driver.
async fn positions(bus: &mut Bus<tokio_serial::SerialStream>) -> Vec<i32> {
    let mut read = Vec::new();
    for id in 1..=6 {
        read.push(bus.read_register(id, &ct::PRESENT_POSITION).await.unwrap().value);
    }
    read
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_loses_the_port_at_an_unplug_and_reopens_the_link_after_the_replug() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("usb-serial-arm");
    let mut pty = serve_pty_linked(ServoBus::real_time(&VirtualSo101::config()), &link).unwrap();
    let mut bus = driver(&link);
    let before = positions(&mut bus).await;
    assert_eq!(
        before,
        VirtualSo101::config()
            .servos
            .iter()
            .map(|s| i32::from(s.raw_position) - i32::from(s.homing_offset))
            .collect::<Vec<_>>()
    );

    pty.unplug();
    pty.wait_finished().await.unwrap();
    let gone = bus.read_register(1, &ct::PRESENT_POSITION).await;
    assert!(matches!(gone, Err(BusError::PortGone(_))), "{gone:?}");
    assert!(matches!(
        Bus::open(&link, DEFAULT_BAUD_RATE, BusConfig::default()),
        Err(BusError::PortGone(_))
    ));

    pty.replug().await.unwrap();
    let mut again = driver(&link);
    assert_eq!(positions(&mut again).await, before);
    pty.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_timeline_unplugs_resets_and_replugs_the_served_bus() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("ttyARM");
    let plug = PlugArgs {
        link: Some(link.clone()),
        unplug_at: Some(UnplugAt::parse("0..0.001").unwrap()),
    };
    let faults = FaultArgs {
        reset_at: vec![ResetAt::parse("2@0").unwrap()],
        ..FaultArgs::default()
    };
    let servos = ServoBus::real_time(&VirtualSo101::config());
    let timeline = Timeline::new(&plug, &faults, &servos.ids()).unwrap();
    let mut pty = plug.serve(servos).unwrap();
    let mut port = open_port(&link);
    request(&mut port, &instruction::write(2, ct::TORQUE_ENABLE.address, &[1]), 6).await;
    assert_eq!(pty.servos().register(2, &ct::TORQUE_ENABLE).unwrap(), 1);

    timeline.run(&mut pty).await.unwrap();
    let mut buf = [0; 8];
    let read = tokio::time::timeout(NO_HANG, port.read(&mut buf))
        .await
        .expect("no hang");
    assert!(matches!(read, Ok(0) | Err(_)), "the old port vanished: {read:?}");
    assert_eq!(std::fs::read_link(&link).unwrap(), pty.path());
    let mut again = open_port(&link);
    let torque = request(&mut again, &instruction::read(2, ct::TORQUE_ENABLE.address, 1), 7).await;
    assert_eq!(torque[5], 0, "servo 2 reset: torque off");
    pty.shutdown().await.unwrap();
}
