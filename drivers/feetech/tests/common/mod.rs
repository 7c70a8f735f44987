//! A tiny scripted servo bus for tests: answers over a `tokio::io::duplex` pipe using the
//! crate's own protocol core, with switchable faults and a log of every request.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use feetech::bus::{BaudControl, Bus, BusConfig};
use feetech::control_table::{self, BAUD_RATES, Register};
use feetech::protocol::BROADCAST_ID;
use feetech::protocol::frame::{Frame, FrameDecoder};
use feetech::protocol::instruction::Request;
use feetech::protocol::status::{ServoError, StatusPacket};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadBuf};

/// One fake servo's control table.
#[derive(Debug, Clone)]
pub struct FakeServo {
    pub memory: [u8; 100],
    pub pending: Option<(u8, Vec<u8>)>,
}

impl FakeServo {
    pub fn new(id: u8) -> Self {
        let mut servo = Self {
            memory: [0; 100],
            pending: None,
        };
        servo.set(&control_table::FIRMWARE_MAJOR_VERSION, 3);
        servo.set(&control_table::FIRMWARE_MINOR_VERSION, 10);
        servo.set(&control_table::MODEL_NUMBER, 777);
        servo.set(&control_table::ID, i32::from(id));
        servo.set(&control_table::MAX_POSITION_LIMIT, 4095);
        servo.set(&control_table::LOCK, 1);
        servo.set(&control_table::PRESENT_POSITION, 2048);
        servo.set(&control_table::PRESENT_VOLTAGE, 120);
        servo
    }

    pub fn get(&self, register: &Register) -> i32 {
        let at = usize::from(register.address);
        register.decode(&self.memory[at..at + usize::from(register.size)])
    }

    pub fn set(&mut self, register: &Register, value: i32) {
        let at = usize::from(register.address);
        let bytes = register.encode(value);
        self.memory[at..at + bytes.len()].copy_from_slice(&bytes);
    }

    fn id(&self) -> u8 {
        self.memory[usize::from(control_table::ID.address)]
    }

    fn baud(&self) -> u32 {
        BAUD_RATES[usize::from(self.memory[usize::from(control_table::BAUD_RATE.address)])]
    }

    fn write(&mut self, addr: u8, data: &[u8]) {
        let at = usize::from(addr);
        self.memory[at..at + data.len()].copy_from_slice(data);
    }

    fn read(&self, addr: u8, len: u8) -> Vec<u8> {
        self.memory[usize::from(addr)..usize::from(addr) + usize::from(len)].to_vec()
    }
}

/// Faults and knobs, switchable while the bus runs.
#[derive(Debug, Default)]
pub struct Script {
    /// Servos by their current id.
    pub servos: BTreeMap<u8, FakeServo>,
    /// Every request received, in order: (id, request).
    pub log: Vec<(u8, Request)>,
    /// Drop the next N replies.
    pub drop_replies: u32,
    /// Corrupt the checksum of the next N replies.
    pub corrupt_replies: u32,
    /// Servos that never answer.
    pub silent: HashSet<u8>,
    /// Error flags each servo reports.
    pub flags: BTreeMap<u8, ServoError>,
    /// Echo every received byte before answering.
    pub echo: bool,
    /// Bytes sent before every reply (line noise).
    pub noise: Vec<u8>,
    /// Answer SYNC_READ in reverse id order.
    pub reverse_sync_read: bool,
    /// Host-side baud rate (set through [`BaudPort`]).
    pub host_baud: u32,
    /// Stale bytes to emit right before the next request is answered... once.
    pub stale_before_next_request: Vec<u8>,
}

pub type Shared = Arc<Mutex<Script>>;

impl Script {
    fn answer(&mut self, frame: &Frame) -> Vec<u8> {
        let Ok(request) = Request::parse(frame) else {
            return Vec::new();
        };
        self.log.push((frame.id, request.clone()));
        let host_baud = self.host_baud;
        let targets: Vec<u8> = match &request {
            Request::SyncRead { ids, .. } => ids.clone(),
            Request::SyncWrite { entries, .. } => entries.iter().map(|(id, _)| *id).collect(),
            _ if frame.id == BROADCAST_ID => self.servos.keys().copied().collect(),
            _ => vec![frame.id],
        };
        let mut replies: Vec<StatusPacket> = Vec::new();
        for id in targets {
            let flags = self.flags.get(&id).copied().unwrap_or_default();
            let Some(servo) = self.servos.get_mut(&id) else {
                continue;
            };
            if servo.baud() != host_baud {
                continue;
            }
            let params = match &request {
                Request::Ping => Some(Vec::new()),
                Request::Read { addr, len } => Some(servo.read(*addr, *len)),
                Request::Write { addr, data } => {
                    servo.write(*addr, data);
                    Some(Vec::new())
                }
                Request::RegWrite { addr, data } => {
                    servo.pending = Some((*addr, data.clone()));
                    Some(Vec::new())
                }
                Request::Action => {
                    if let Some((addr, data)) = servo.pending.take() {
                        servo.write(addr, &data);
                    }
                    None
                }
                Request::Reset => Some(Vec::new()),
                Request::SyncRead { addr, len, .. } => Some(servo.read(*addr, *len)),
                Request::SyncWrite { addr, entries, .. } => {
                    for (target, data) in entries {
                        if *target == id {
                            servo.write(*addr, data);
                        }
                    }
                    None
                }
            };
            // A broadcast gets no reply except PING; a servo whose id changed answers as
            // its old id.
            let reply_expected =
                frame.id != BROADCAST_ID || matches!(request, Request::Ping | Request::SyncRead { .. });
            if let Some(params) = params.filter(|_| reply_expected) {
                replies.push(StatusPacket::new(id, flags, params));
            }
        }
        // Re-key servos whose ID register changed.
        let moved: Vec<(u8, u8)> = self
            .servos
            .iter()
            .filter(|(key, servo)| servo.id() != **key)
            .map(|(key, servo)| (*key, servo.id()))
            .collect();
        for (old, new) in moved {
            let servo = self.servos.remove(&old).unwrap();
            self.servos.insert(new, servo);
        }
        if self.reverse_sync_read {
            replies.reverse();
        }
        let mut out = Vec::new();
        for reply in replies {
            if self.silent.contains(&reply.id) {
                continue;
            }
            if self.drop_replies > 0 {
                self.drop_replies -= 1;
                continue;
            }
            out.extend_from_slice(&self.noise);
            let mut bytes = reply.to_frame().encode();
            if self.corrupt_replies > 0 {
                self.corrupt_replies -= 1;
                *bytes.last_mut().unwrap() ^= 0x5A;
            }
            out.extend(bytes);
        }
        out
    }
}

/// Runs the scripted servos on one end of a duplex pipe until it closes.
pub async fn serve(mut end: DuplexStream, script: Shared) {
    let mut decoder = FrameDecoder::new();
    let mut buf = [0_u8; 1024];
    loop {
        let n = match end.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut out = Vec::new();
        {
            let mut script = script.lock().unwrap();
            if script.echo {
                out.extend_from_slice(&buf[..n]);
            }
            decoder.push(&buf[..n]);
            while let Some(frame) = decoder.next_frame() {
                if let Ok(frame) = frame {
                    out.append(&mut std::mem::take(&mut script.stale_before_next_request));
                    out.extend(script.answer(&frame));
                }
            }
        }
        if !out.is_empty() && end.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// The host end of the pipe; remembers the baud rate the host selected.
pub struct BaudPort {
    inner: DuplexStream,
    script: Shared,
}

impl BaudControl for BaudPort {
    fn baud_rate(&self) -> std::io::Result<u32> {
        Ok(self.script.lock().unwrap().host_baud)
    }

    fn set_baud_rate(&mut self, baud: u32) -> std::io::Result<()> {
        self.script.lock().unwrap().host_baud = baud;
        Ok(())
    }
}

impl AsyncRead for BaudPort {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for BaudPort {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Test timeout: short, since the fake answers instantly.
pub fn config() -> BusConfig {
    BusConfig {
        timeout: std::time::Duration::from_millis(100),
        retries: 2,
        echo: false,
    }
}

/// A bus with servos `ids` (all at 1 Mbps) and the handle to script them.
pub fn fake_bus(ids: &[u8]) -> (Bus<BaudPort>, Shared) {
    let script = Arc::new(Mutex::new(Script {
        servos: ids.iter().map(|id| (*id, FakeServo::new(*id))).collect(),
        host_baud: BAUD_RATES[0],
        ..Script::default()
    }));
    let (host, device) = tokio::io::duplex(4096);
    tokio::spawn(serve(device, script.clone()));
    let port = BaudPort {
        inner: host,
        script: script.clone(),
    };
    (Bus::new(port, config()), script)
}
