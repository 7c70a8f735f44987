//! Connect time of an SO-101: the calibration check (Homing_Offset and both limits of 6
//! servos) plus the follower configuration, against the emulator over a pseudo-terminal at
//! 1 Mbaud with wire timing on. Two cases: a factory-fresh arm (configuration writes what
//! differs: the gains, accelerations and gripper limits) and an arm configured before
//! (everything read, nothing written).
//! Run: `cargo bench -p feetech --bench connect` (optionally `-- ROUNDS`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use feetech::bus::{Bus, BusConfig};
use feetech::calibration::{Calibration, check_servos};
use feetech::configure::{ServoSettings, configure};
use feetech::control_table::DEFAULT_BAUD_RATE;
use feetech_emu::field::field_calibrations;
use feetech_emu::{EmuConfig, VirtualSo101, serve_pty};
use tokio_serial::SerialStream;

/// Verifies, then configures; returns the time taken and the registers written.
async fn connect(bus: &mut Bus<SerialStream>, calibration: &Calibration) -> (Duration, usize) {
    let motors: Vec<(&str, u8)> = calibration.by_id().into_iter().map(|(n, m)| (n, m.id)).collect();
    let start = Instant::now();
    check_servos(bus, calibration).await.unwrap();
    let configured = configure(bus, &motors, &ServoSettings::default()).await.unwrap();
    let written = configured.iter().map(|servo| servo.written.len()).sum();
    (start.elapsed(), written)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn main() {
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let calibration = field_calibrations().remove(0).1;
    let config = BusConfig {
        timeout: Duration::from_millis(100),
        retries: 2,
        echo: false,
    };
    runtime.block_on(async {
        let (mut fresh, mut again, mut writes) = (Vec::new(), Vec::new(), 0);
        for _ in 0..rounds {
            let servos = VirtualSo101::holding(&calibration, &[]).unwrap();
            let emu = serve_pty(EmuConfig {
                wire_timing: true,
                ..EmuConfig::new(servos)
            })
            .await
            .unwrap();
            let mut bus = Bus::open(emu.path(), DEFAULT_BAUD_RATE, config).unwrap();
            let (time, written) = connect(&mut bus, &calibration).await;
            fresh.push(time);
            writes = written;
            let (time, written) = connect(&mut bus, &calibration).await;
            assert_eq!(written, 0);
            again.push(time);
            drop(bus);
            emu.shutdown().await.unwrap();
        }
        println!("connect (verify + configure), 6 servos, wire timing on, median of {rounds}:");
        println!(
            "  factory-fresh arm ({writes} registers written): {:>7.1} ms",
            median(fresh).as_secs_f64() * 1e3
        );
        println!(
            "  configured arm (0 written):            {:>7.1} ms",
            median(again).as_secs_f64() * 1e3
        );
    });
}
