//! One SO-101 control cycle through the emulator on a pseudo-terminal, with a raw serial
//! client (no driver): SYNC_READ of the state block of 6 servos, then SYNC_WRITE of 6 goals.
//! Shows the emulator's own turnaround with wire timing off and how close it keeps to the
//! wire-time limit with wire timing on.
//!
//! Run: `cargo bench -p feetech-emu --bench pty_cycle`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use feetech::control_table as ct;
use feetech::protocol::instruction;
use feetech_emu::wire_timing::transfer_time;
use feetech_emu::{VirtualSo101, serve_pty};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_serial::SerialPortBuilderExt;

const CYCLES: usize = 2000;
const WARM_UP: usize = 100;
const SERVOS: [u8; 6] = [1, 2, 3, 4, 5, 6];

#[tokio::main]
async fn main() {
    let read = instruction::sync_read(ct::STATE_BLOCK_ADDRESS, ct::STATE_BLOCK_LEN, &SERVOS).encode();
    let goals: Vec<(u8, Vec<u8>)> = SERVOS.iter().map(|id| (*id, ct::GOAL_POSITION.encode(2047))).collect();
    let write = instruction::sync_write(ct::GOAL_POSITION.address, 2, &goals).encode();
    let reply_len = SERVOS.len() * (usize::from(ct::STATE_BLOCK_LEN) + 6);
    let wire_bytes = read.len() + reply_len + write.len();
    println!(
        "cycle: {} B request + {reply_len} B reply + {} B sync write = {wire_bytes} B; wire time \
         {:?} for the sync read, {:?} for the cycle at 1 Mbaud",
        read.len(),
        write.len(),
        transfer_time(read.len() + reply_len, 1_000_000),
        transfer_time(wire_bytes, 1_000_000)
    );

    for wire_timing in [false, true] {
        let pty = serve_pty(VirtualSo101::config()).await.unwrap();
        pty.servos().set_wire_timing(wire_timing);
        let mut port = tokio_serial::new(pty.path().to_string_lossy(), 1_000_000)
            .open_native_async()
            .unwrap();
        let mut reply = vec![0; reply_len];
        let mut cycles = Vec::with_capacity(CYCLES);
        let mut reads = Vec::with_capacity(CYCLES);
        for cycle in 0..WARM_UP + CYCLES {
            let started = Instant::now();
            port.write_all(&read).await.unwrap();
            port.read_exact(&mut reply).await.unwrap();
            let read_done = started.elapsed();
            port.write_all(&write).await.unwrap();
            if wire_timing {
                // The sync write occupies the line too before the next request can go out.
                let line_free = started + transfer_time(wire_bytes, 1_000_000);
                while Instant::now() < line_free {
                    tokio::task::yield_now().await;
                }
            }
            if cycle >= WARM_UP {
                reads.push(read_done);
                cycles.push(started.elapsed());
            }
        }
        let mode = if wire_timing { "on" } else { "off" };
        report(&format!("wire timing {mode:>3}, sync read round trip"), &mut reads);
        report(&format!("wire timing {mode:>3}, whole cycle"), &mut cycles);
        pty.shutdown().await.unwrap();
    }
}

fn report(label: &str, samples: &mut [Duration]) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    let total: Duration = samples.iter().sum();
    println!(
        "{label}: p50 {:?}  p99 {:?}  max {:?}  ({:.0}/s over {})",
        at(0.5),
        at(0.99),
        at(1.0),
        samples.len() as f64 / total.as_secs_f64(),
        samples.len()
    );
}
