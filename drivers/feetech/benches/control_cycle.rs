//! One SO-101 control cycle against the emulator over a pseudo-terminal at 1 Mbaud:
//! SYNC_READ of the state block of 6 servos + SYNC_WRITE of 6 goal positions.
//! Run: `cargo bench -p feetech --bench control_cycle` (optionally `-- CYCLES`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use feetech::bus::{Bus, BusConfig};
use feetech::control_table::{DEFAULT_BAUD_RATE, STATE_BLOCK_LEN};
use feetech_emu::{VirtualSo101, serve_pty};

const IDS: [u8; 6] = [1, 2, 3, 4, 5, 6];
const WARM_UP: usize = 200;

/// Bytes one cycle puts on the wire: request + replies of the SYNC_READ, then the SYNC_WRITE.
fn cycle_bytes() -> usize {
    let n = IDS.len();
    let sync_read = 8 + n;
    let replies = n * (6 + usize::from(STATE_BLOCK_LEN));
    let sync_write = 8 + n * 3;
    sync_read + replies + sync_write
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(rank).copied().unwrap_or_default()
}

async fn run(bus: &mut Bus<tokio_serial::SerialStream>, cycles: usize) -> Vec<Duration> {
    let mut goal = 2047;
    let mut times = Vec::with_capacity(cycles);
    for _ in 0..cycles {
        let start = Instant::now();
        let states = bus.sync_read_state(&IDS).await.unwrap();
        assert!(states.iter().all(Result::is_ok), "{states:?}");
        goal = if goal == 2047 { 2048 } else { 2047 };
        let goals: Vec<(u8, i32)> = IDS.iter().map(|id| (*id, goal)).collect();
        bus.sync_write_goal_positions(&goals).await.unwrap();
        times.push(start.elapsed());
    }
    times
}

fn report(label: &str, mut times: Vec<Duration>) {
    let total: Duration = times.iter().sum();
    times.sort();
    let wire = Duration::from_micros(10 * cycle_bytes() as u64);
    let p50 = percentile(&times, 0.50);
    println!(
        "{label:<16} cycles={:<6} p50={:>8.3} ms  p99={:>8.3} ms  max={:>8.3} ms  {:>7.0} cycles/s  p50/wire={:.2}",
        times.len(),
        p50.as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
        times.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        times.len() as f64 / total.as_secs_f64(),
        p50.as_secs_f64() / wire.as_secs_f64(),
    );
}

fn main() {
    let cycles: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(3000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let emu = serve_pty(VirtualSo101::config()).await.unwrap();
        let config = BusConfig {
            timeout: Duration::from_millis(100),
            retries: 0,
            echo: false,
        };
        let mut bus = Bus::open(emu.path(), DEFAULT_BAUD_RATE, config).unwrap();
        println!(
            "control cycle: SYNC_READ state block ({STATE_BLOCK_LEN} B) x6 + SYNC_WRITE goals x6, {} bytes on the wire = {:.2} ms at 1 Mbaud",
            cycle_bytes(),
            cycle_bytes() as f64 * 10.0 / 1000.0
        );
        for wire_timing in [false, true] {
            emu.servos().set_wire_timing(wire_timing);
            run(&mut bus, WARM_UP).await;
            let label = if wire_timing { "wire timing on" } else { "wire timing off" };
            report(label, run(&mut bus, cycles).await);
        }
        emu.shutdown().await.unwrap();
    });
}
