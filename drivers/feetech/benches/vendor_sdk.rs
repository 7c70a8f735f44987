//! The driver beside the vendor's Python SDK (`feetech-servo-sdk`, module `scservo_sdk`) on one
//! virtual SO-101 bus over a pseudo-terminal at 1 Mbaud, in one run: the same control cycle
//! (SYNC_READ of the present position of 6 servos, then SYNC_WRITE of 6 goal positions), with
//! the emulator's wire timing on and off. The two take turns block by block, so the shared
//! machine's load falls on both alike; after each block the emulator's write log must hold
//! exactly the goals of the cycles counted. A sync read without a complete answer in time (each
//! side's own timeout: the SDK's about 34 ms, the driver's 100 ms here, no retries on either side)
//! is counted as a failure and the cycle goes on to its write, as a control loop would.
//!
//! `FAKESIM_BENCH_PYTHON` names a Python with `scservo_sdk` (scripts/bench/vendor-sdk sets it).
//! Run: `scripts/bench/vendor-sdk` (optionally `-- CYCLES`, per block; 5 blocks each).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use feetech::bus::{Bus, BusConfig};
use feetech::control_table::{DEFAULT_BAUD_RATE, GOAL_POSITION, PRESENT_POSITION};
use feetech_emu::{ServoBus, VirtualSo101, serve_pty};

const IDS: [u8; 6] = [1, 2, 3, 4, 5, 6];
const GOALS: [i32; 2] = [2047, 2048];
const WARM_UP: usize = 100;
const BLOCKS: usize = 5;

/// Bytes one cycle puts on the wire: request + replies of the SYNC_READ, then the SYNC_WRITE.
fn cycle_bytes() -> usize {
    let n = IDS.len();
    let sync_read = 8 + n;
    let replies = n * (6 + usize::from(PRESENT_POSITION.size));
    let sync_write = 8 + n * 3;
    sync_read + replies + sync_write
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(rank).copied().unwrap_or_default()
}

/// One side's block: per-cycle times, failed reads among the timed cycles, and the positions
/// read after the last cycle (its reply comes after the last write was handled).
struct Block {
    times: Vec<Duration>,
    failures: usize,
    positions: Vec<i32>,
}

/// The driver's cycles: `WARM_UP` untimed, then `cycles` timed.
async fn driver_block(port: &Path, cycles: usize) -> Block {
    let config = BusConfig {
        timeout: Duration::from_millis(100),
        retries: 0,
        echo: false,
    };
    let mut bus = Bus::open(port, DEFAULT_BAUD_RATE, config).unwrap();
    let mut times = Vec::with_capacity(cycles);
    let mut failures = 0;
    for i in 0..WARM_UP + cycles {
        let start = Instant::now();
        let read = bus.sync_read_positions(&IDS).await.unwrap();
        let failed = !read.iter().all(Result::is_ok);
        let goal = GOALS[i % 2];
        let goals: Vec<(u8, i32)> = IDS.iter().map(|id| (*id, goal)).collect();
        bus.sync_write_goal_positions(&goals).await.unwrap();
        if i >= WARM_UP {
            times.push(start.elapsed());
            failures += usize::from(failed);
        }
    }
    for _ in 0..3 {
        let read = bus.sync_read_positions(&IDS).await.unwrap();
        if let Ok(positions) = read.into_iter().map(|r| r.map(|reply| reply.value)).collect() {
            return Block {
                times,
                failures,
                positions,
            };
        }
    }
    panic!("three sync reads in a row failed after the timed cycles");
}

/// The SDK's cycles, in a Python process on the same bus.
fn sdk_block(python: &str, port: &Path, cycles: usize) -> Block {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bench/feetech_sdk.py");
    let output = Command::new(python)
        .arg(script)
        .arg(port)
        .arg(WARM_UP.to_string())
        .arg(cycles.to_string())
        .output()
        .expect("cannot start the SDK's Python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the SDK run failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let field = |name: &str| -> Vec<f64> {
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no `{name}` line in {stdout}"));
        line.split_whitespace().map(|v| v.parse().unwrap()).collect()
    };
    let times = field("cycles_us ")
        .into_iter()
        .map(|us| Duration::from_secs_f64(us * 1e-6))
        .collect();
    let positions = field("positions ").into_iter().map(|p| p as i32).collect();
    let failures = field("failures ").first().map_or(0, |n| *n as usize);
    Block {
        times,
        failures,
        positions,
    }
}

/// Checks that a block ran `cycles` cycles (warm-up included) and read the bus's positions.
fn check_block(emu: &ServoBus, who: &str, cycles: usize, block: &Block) {
    let expected: Vec<i32> = IDS.iter().map(|id| emu.present_position(*id).unwrap()).collect();
    assert_eq!(
        block.positions, expected,
        "{who} read other positions than the bus holds"
    );
    let timed = block.times.len();
    assert_eq!(timed, cycles, "{who} timed {timed} cycles, not {cycles}");
    let log = emu.write_log();
    for id in IDS {
        let goals: Vec<i32> = log
            .iter()
            .filter(|w| w.id == id)
            .filter_map(|w| w.value(&GOAL_POSITION))
            .collect();
        assert_eq!(
            goals.len(),
            WARM_UP + cycles,
            "{who}: servo {id} got {} goals",
            goals.len()
        );
        assert_eq!(
            goals.last(),
            Some(&GOALS[(WARM_UP + cycles - 1) % 2]),
            "{who}: servo {id}"
        );
    }
    emu.clear_write_log();
}

fn report(label: &str, mut times: Vec<Duration>, failures: usize) -> (f64, f64) {
    let total: Duration = times.iter().sum();
    times.sort();
    let (p50, p99) = (percentile(&times, 0.50), percentile(&times, 0.99));
    let rate = times.len() as f64 / total.as_secs_f64();
    println!(
        "  {label:<22} cycles={:<6} {:>7.0} cycles/s  p50={:>7.3} ms  p99={:>7.3} ms  failed reads={failures}",
        times.len(),
        rate,
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
    );
    (rate, p50.as_secs_f64())
}

fn main() {
    let cycles: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1000);
    let python = std::env::var("FAKESIM_BENCH_PYTHON")
        .expect("FAKESIM_BENCH_PYTHON must name a Python with scservo_sdk (run scripts/bench/vendor-sdk)");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let emu = serve_pty(VirtualSo101::config()).await.unwrap();
        let port = emu.path().to_path_buf();
        let servos = emu.servos().clone();
        println!(
            "control cycle: SYNC_READ present position x6 + SYNC_WRITE goal x6, {} bytes = {:.2} ms on the wire at 1 Mbaud; {BLOCKS} blocks of {cycles} cycles each, in turn",
            cycle_bytes(),
            cycle_bytes() as f64 * 10.0 / 1000.0
        );
        for wire_timing in [true, false] {
            servos.set_wire_timing(wire_timing);
            servos.clear_write_log();
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            let (mut our_failures, mut their_failures) = (0, 0);
            for _ in 0..BLOCKS {
                let block = sdk_block(&python, &port, cycles);
                check_block(&servos, "the SDK", cycles, &block);
                theirs.extend(block.times);
                their_failures += block.failures;
                let block = driver_block(&port, cycles).await;
                check_block(&servos, "the driver", cycles, &block);
                ours.extend(block.times);
                our_failures += block.failures;
            }
            println!("wire timing {}:", if wire_timing { "on" } else { "off" });
            let (our_rate, our_p50) = report("driver (Rust, async)", ours, our_failures);
            let (their_rate, their_p50) = report("scservo_sdk (Python)", theirs, their_failures);
            println!(
                "  driver ÷ SDK: {:.2} of the SDK's cycles/s, p50 {:.2} of the SDK's",
                our_rate / their_rate,
                our_p50 / their_p50
            );
        }
        emu.shutdown().await.unwrap();
    });
}
