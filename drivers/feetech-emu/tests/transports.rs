//! The serve loop on the in-memory duplex and on a real pseudo-terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use feetech::control_table as ct;
use feetech::protocol::BROADCAST_ID;
use feetech::protocol::frame::Frame;
use feetech::protocol::instruction;
use feetech_emu::wire_timing::{return_delay, transfer_time};
use feetech_emu::{ServoBus, VirtualSo101, serve_pty, spawn_duplex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_serial::SerialPortBuilderExt;

use common::{NO_HANG, read_n, request};

fn state_block_request() -> Frame {
    instruction::sync_read(ct::STATE_BLOCK_ADDRESS, ct::STATE_BLOCK_LEN, &[1, 2, 3, 4, 5, 6])
}

/// Bytes in one servo's state block reply.
const STATE_REPLY: usize = ct::STATE_BLOCK_LEN as usize + 6;

#[tokio::test]
async fn duplex_serves_requests_split_across_writes() {
    let (mut host, running) = spawn_duplex(ServoBus::simulated(&VirtualSo101::config()).0);
    let bytes = instruction::ping(4).encode();
    let (head, tail) = bytes.split_at(3);
    host.write_all(head).await.unwrap();
    host.write_all(tail).await.unwrap();
    assert_eq!(read_n(&mut host, 6).await, Frame::new(4, 0, vec![]).encode());

    let reply = request(&mut host, &state_block_request(), 6 * STATE_REPLY).await;
    let ids: Vec<u8> = reply.chunks(STATE_REPLY).map(|c| c[2]).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn garbage_between_requests_is_skipped() {
    let (mut host, running) = spawn_duplex(ServoBus::simulated(&VirtualSo101::config()).0);
    let mut bytes = vec![0x00, 0xFF, 0x13, 0xFF];
    bytes.extend(instruction::ping(2).encode());
    host.write_all(&bytes).await.unwrap();
    assert_eq!(read_n(&mut host, 6).await, Frame::new(2, 0, vec![]).encode());
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn echo_returns_the_request_before_the_reply() {
    let (bus, _) = ServoBus::simulated(&VirtualSo101::config());
    let (mut host, running) = spawn_duplex(bus.clone());
    bus.update_faults(|f| f.echo = true);
    let ping = instruction::ping(1).encode();
    let mut expected = ping.clone();
    expected.extend(Frame::new(1, 0, vec![]).encode());
    assert_eq!(request(&mut host, &instruction::ping(1), 12).await, expected);

    bus.update_faults(|f| f.echo = false);
    assert_eq!(
        request(&mut host, &instruction::ping(1), 6).await,
        Frame::new(1, 0, vec![]).encode()
    );
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn unplugging_the_duplex_ends_the_stream() {
    let (bus, _) = ServoBus::simulated(&VirtualSo101::config());
    let (mut host, running) = spawn_duplex(bus.clone());
    request(&mut host, &instruction::ping(1), 6).await;
    bus.unplug();
    running.finished().await.unwrap();
    let mut buf = [0; 8];
    assert_eq!(host.read(&mut buf).await.unwrap(), 0, "end of file");
    assert!(host.write_all(&instruction::ping(1).encode()).await.is_err());
}

#[tokio::test]
async fn wire_timing_delays_replies_by_at_least_their_wire_time() {
    let (bus, _) = ServoBus::simulated(&VirtualSo101::config());
    bus.set_wire_timing(true);
    let (mut host, running) = spawn_duplex(bus.clone());
    let request_frame = state_block_request();
    let started = Instant::now();
    request(&mut host, &request_frame, 6 * STATE_REPLY).await;
    let on_wire = transfer_time(request_frame.wire_len() + 6 * STATE_REPLY, 1_000_000);
    assert!(started.elapsed() >= on_wire, "{:?} < {on_wire:?}", started.elapsed());

    // Present_Position only: 14 bytes out, 6 x 8 back, 0.62 ms at 1 Mbaud.
    let positions = instruction::sync_read(ct::PRESENT_POSITION.address, 2, &[1, 2, 3, 4, 5, 6]);
    let started = Instant::now();
    request(&mut host, &positions, 6 * 8).await;
    let positions_on_wire = transfer_time(positions.wire_len() + 6 * 8, 1_000_000);
    assert_eq!(positions_on_wire, Duration::from_micros(620));
    assert!(
        started.elapsed() >= positions_on_wire,
        "{:?} < {positions_on_wire:?}",
        started.elapsed()
    );

    for id in 1..=6 {
        let frame = instruction::write(id, ct::RETURN_DELAY_TIME.address, &[250]);
        request(&mut host, &frame, 6).await;
    }
    let started = Instant::now();
    request(&mut host, &request_frame, 6 * STATE_REPLY).await;
    let with_delays = on_wire + 6 * return_delay(250);
    assert!(
        started.elapsed() >= with_delays,
        "{:?} < {with_delays:?}",
        started.elapsed()
    );
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn pty_serves_a_driver_that_opens_the_device_path() {
    let pty = serve_pty(VirtualSo101::config()).await.unwrap();
    assert!(pty.path().starts_with("/dev/pts"), "{}", pty.path().display());
    let mut port = tokio_serial::new(pty.path().to_string_lossy(), 1_000_000)
        .open_native_async()
        .unwrap();

    let reply = request(&mut port, &instruction::read(1, 0x38, 2), 8).await;
    assert_eq!(reply, [0xFF, 0xFF, 0x01, 0x04, 0x00, 0xFF, 0x07, 0xF4]);
    let reply = request(&mut port, &state_block_request(), 6 * STATE_REPLY).await;
    assert_eq!(reply.chunks(STATE_REPLY).count(), 6);

    pty.servos().set_present_position(5, 1000).unwrap();
    let reply = request(&mut port, &instruction::read(5, 0x38, 2), 8).await;
    assert_eq!(reply[5..7], [0xE8, 0x03]);
    pty.shutdown().await.unwrap();
}

#[tokio::test]
async fn pty_can_be_reopened_by_the_driver() {
    let pty = serve_pty(VirtualSo101::config()).await.unwrap();
    for _ in 0..2 {
        let mut port = tokio_serial::new(pty.path().to_string_lossy(), 1_000_000)
            .open_native_async()
            .unwrap();
        assert_eq!(request(&mut port, &instruction::ping(6), 6).await.len(), 6);
    }
    pty.shutdown().await.unwrap();
}

#[tokio::test]
async fn unplugging_the_pty_removes_the_device() {
    let pty = serve_pty(VirtualSo101::config()).await.unwrap();
    let path = pty.path().to_path_buf();
    let mut port = tokio_serial::new(path.to_string_lossy(), 1_000_000)
        .open_native_async()
        .unwrap();
    request(&mut port, &instruction::ping(1), 6).await;

    pty.servos().unplug();
    pty.finished().await.unwrap();
    assert!(!path.exists(), "{} still exists", path.display());
    let mut buf = [0; 8];
    let read = tokio::time::timeout(NO_HANG, port.read(&mut buf))
        .await
        .expect("no hang");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    assert!(
        tokio_serial::new(path.to_string_lossy(), 1_000_000)
            .open_native_async()
            .is_err()
    );
}

#[tokio::test]
async fn pty_servos_answer_only_at_the_baud_rate_the_driver_opened() {
    let pty = serve_pty(VirtualSo101::config()).await.unwrap();
    let to_115200 = instruction::write(3, ct::BAUD_RATE.address, &[4]);
    assert_eq!(pty.servos().handle_frame(&to_115200).len(), 1);

    let mut port = tokio_serial::new(pty.path().to_string_lossy(), 115_200)
        .open_native_async()
        .unwrap();
    let reply = request(&mut port, &instruction::ping(BROADCAST_ID), 6).await;
    assert_eq!(
        reply,
        Frame::new(3, 0, vec![]).encode(),
        "only servo 3 listens at 115200"
    );
    assert_eq!(pty.servos().baud(), 115_200);
    pty.shutdown().await.unwrap();
}
