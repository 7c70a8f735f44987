//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use feetech::control_table as ct;
use feetech::protocol::frame::{Frame, FrameDecoder};
use feetech::protocol::instruction;
use feetech_emu::{EmuConfig, ManualClock, ServoBus, ServoConfig, VirtualSo101};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Generous bound so a broken emulator fails the test instead of hanging it.
pub const NO_HANG: Duration = Duration::from_secs(10);

/// Reads exactly `n` bytes, failing the test instead of hanging.
pub async fn read_n<R: AsyncRead + Unpin>(reader: &mut R, n: usize) -> Vec<u8> {
    let mut bytes = vec![0; n];
    tokio::time::timeout(NO_HANG, reader.read_exact(&mut bytes))
        .await
        .expect("reply within the time bound")
        .unwrap();
    bytes
}

/// Sends `frame` and reads `reply_len` bytes back.
pub async fn request<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S, frame: &Frame, reply_len: usize) -> Vec<u8> {
    stream.write_all(&frame.encode()).await.unwrap();
    read_n(stream, reply_len).await
}

/// Feeds raw request bytes to the bus and returns every reply byte, in order.
pub fn exchange(bus: &ServoBus, request: &[u8]) -> Vec<u8> {
    let mut decoder = FrameDecoder::new();
    decoder.push(request);
    let mut out = Vec::new();
    while let Some(frame) = decoder.next_frame() {
        for reply in bus.handle_frame(&frame.expect("test requests are well formed")) {
            out.extend(reply.bytes);
        }
    }
    out
}

/// Sends a frame and returns the reply bytes.
pub fn send(bus: &ServoBus, frame: &Frame) -> Vec<u8> {
    exchange(bus, &frame.encode())
}

/// Decodes reply bytes into frames, panicking on corruption.
pub fn frames(bytes: &[u8]) -> Vec<Frame> {
    let mut decoder = FrameDecoder::new();
    decoder.push(bytes);
    std::iter::from_fn(|| decoder.next_frame())
        .map(|f| f.expect("reply frames are intact"))
        .collect()
}

/// One factory servo per id, on a simulated clock.
pub fn bus_with(ids: &[u8]) -> (ServoBus, ManualClock) {
    ServoBus::simulated(&EmuConfig::new(ids.iter().copied().map(ServoConfig::new).collect()))
}

/// The virtual SO-101 arm on a simulated clock.
pub fn so101() -> (ServoBus, ManualClock) {
    ServoBus::simulated(&VirtualSo101::config())
}

/// Writes a register of servo `id` with a WRITE instruction.
pub fn write(bus: &ServoBus, id: u8, register: &ct::Register, value: i32) {
    send(bus, &instruction::write(id, register.address, &register.encode(value)));
}

/// A register of servo `id` as the host would read it now.
pub fn read(bus: &ServoBus, id: u8, register: &ct::Register) -> i32 {
    bus.register(id, register).unwrap()
}
