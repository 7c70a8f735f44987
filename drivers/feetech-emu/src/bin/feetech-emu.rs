//! `feetech-emu`: serves a virtual SO-101 servo bus on a pseudo-terminal until Ctrl-C.

use anyhow::Context;
use clap::Parser;
use feetech::protocol::status::ServoError;
use feetech_emu::config::{EmuConfig, ServoConfig};
use feetech_emu::{FaultConfig, VirtualSo101, serve_pty};

/// Emulate Feetech STS3215 servos (a virtual SO-101 arm by default) on a pseudo-terminal.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Number of servos (ids 1..=N); 6 gives the calibrated SO-101 arm.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(1..=253))]
    servos: u8,
    /// Delay replies by their wire time at the bus baud rate plus the return delay.
    #[arg(long)]
    wire_timing: bool,
    /// Host line rate in bits per second.
    #[arg(long, default_value_t = 1_000_000)]
    baud: u32,
    /// Probability (0..1) of a reply with a corrupted checksum.
    #[arg(long, default_value_t = 0.0)]
    corrupt_checksum: f64,
    /// Probability (0..1) of a dropped reply.
    #[arg(long, default_value_t = 0.0)]
    drop_reply: f64,
    /// Id of a servo that does not answer (repeatable).
    #[arg(long = "silent", value_name = "ID")]
    silent: Vec<u8>,
    /// Id of a servo reporting an overload error (repeatable).
    #[arg(long = "overload", value_name = "ID")]
    overload: Vec<u8>,
    /// Id of a servo reporting an overheat error (repeatable).
    #[arg(long = "overheat", value_name = "ID")]
    overheat: Vec<u8>,
    /// Id of a servo reporting an input voltage error (repeatable).
    #[arg(long = "voltage-error", value_name = "ID")]
    voltage_error: Vec<u8>,
    /// Echo every received byte back, like some adapters do.
    #[arg(long)]
    echo: bool,
    /// Seed of the fault injection random generator.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

impl Args {
    fn faults(&self) -> FaultConfig {
        let mut faults = FaultConfig {
            corrupt_checksum: self.corrupt_checksum,
            drop_reply: self.drop_reply,
            silent: self.silent.iter().copied().collect(),
            echo: self.echo,
            ..FaultConfig::none()
        };
        let forced = [
            (&self.overload, ServoError::OVERLOAD),
            (&self.overheat, ServoError::OVERHEAT),
            (&self.voltage_error, ServoError::VOLTAGE),
        ];
        for (ids, flag) in forced {
            for id in ids {
                *faults.forced_errors.entry(*id).or_default() |= flag;
            }
        }
        faults
    }

    fn config(&self) -> EmuConfig {
        let servos = if usize::from(self.servos) == VirtualSo101::servos().len() {
            VirtualSo101::servos()
        } else {
            (1..=self.servos).map(ServoConfig::new).collect()
        };
        EmuConfig {
            baud: self.baud,
            wire_timing: self.wire_timing,
            faults: self.faults(),
            seed: self.seed,
            ..EmuConfig::new(servos)
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let bus = serve_pty(args.config())
        .await
        .context("starting the virtual servo bus")?;
    println!("{}", bus.path().display());
    eprintln!(
        "virtual bus with servos {:?} at {} baud; press Ctrl-C to stop",
        bus.servos().ids(),
        args.baud
    );
    tokio::signal::ctrl_c().await.context("waiting for Ctrl-C")?;
    bus.shutdown().await.context("stopping the virtual bus")?;
    Ok(())
}
