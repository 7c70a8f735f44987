//! `feetech-emu`: serves a virtual SO-101 (or SO-100) servo bus on a pseudo-terminal until Ctrl-C.

use anyhow::Context;
use clap::Parser;
use feetech_emu::cli::{ArmArgs, FaultArgs, PlugArgs, ScriptArgs};
use feetech_emu::config::{EmuConfig, ServoConfig};
use feetech_emu::timeline::Timeline;
use feetech_emu::{ServoBus, VirtualSo101};

/// Emulate Feetech STS3215 servos (a virtual SO-101 arm by default) on a pseudo-terminal.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Number of servos (ids 1..=N); 6 gives the calibrated SO-101 arm.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(1..=253))]
    servos: u8,
    /// The emulated arm (only with 6 servos).
    #[command(flatten)]
    arm: ArmArgs,
    /// Delay replies by their wire time at the bus baud rate plus the return delay.
    #[arg(long)]
    wire_timing: bool,
    /// Host line rate in bits per second.
    #[arg(long, default_value_t = 1_000_000)]
    baud: u32,
    /// A hand moving the arm (only with 6 servos).
    #[command(flatten)]
    hand: ScriptArgs,
    /// Injected faults.
    #[command(flatten)]
    faults: FaultArgs,
    /// The adapter: a stable link, unplugging and plugging in again.
    #[command(flatten)]
    adapter: PlugArgs,
}

impl Args {
    fn config(&self) -> anyhow::Result<EmuConfig> {
        let servos = if self.arm.is_custom() || self.hand.is_set() {
            anyhow::ensure!(
                self.servos == 6,
                "--arm, --calibration, --joint-offset, --obstacle, --lose-steps, --script and --push emulate the 6-servo arm"
            );
            self.arm.servos()?
        } else if usize::from(self.servos) == VirtualSo101::servos().len() {
            VirtualSo101::servos()
        } else {
            (1..=self.servos).map(ServoConfig::new).collect()
        };
        let config = EmuConfig {
            baud: self.baud,
            wire_timing: self.wire_timing,
            faults: self.faults.config(),
            seed: self.faults.seed,
            ..EmuConfig::new(servos)
        };
        Ok(self.hand.apply(&self.arm.calibration()?, config)?)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let config = args.config()?;
    if let Some(script) = &config.script {
        eprintln!("{}", args.hand.describe(script));
    }
    let servos = ServoBus::real_time(&config);
    let timeline = Timeline::new(&args.adapter, &args.faults, &servos.ids())?;
    let mut bus = args.adapter.serve(servos).context("starting the virtual servo bus")?;
    println!("{}", bus.link().unwrap_or(bus.path()).display());
    eprintln!(
        "virtual bus with servos {:?} at {} baud; press Ctrl-C to stop",
        bus.servos().ids(),
        args.baud
    );
    timeline
        .run_until(&mut bus, tokio::signal::ctrl_c())
        .await
        .context("running the scheduled bus events")?
        .context("waiting for Ctrl-C")?;
    bus.shutdown().await.context("stopping the virtual bus")?;
    Ok(())
}
