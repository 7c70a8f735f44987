//! Unplugging the adapter and plugging it in again: the servos keep their state, a new
//! transport serves them, the old one stays gone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use feetech::control_table as ct;
use feetech::protocol::instruction;
use feetech_emu::{ServoBus, VirtualSo101, spawn_duplex};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use common::request;

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
