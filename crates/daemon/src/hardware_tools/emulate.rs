//! `fakesim-hil emulate`: a virtual SO-101 servo bus on a pseudo-terminal, so every hardware
//! command can be tried without an arm.

use std::future::Future;

use anyhow::Context;
use feetech::protocol::status::ServoError;
use feetech_emu::{EmuConfig, FaultConfig, ServoConfig, VirtualSo101, serve_pty};

use super::Console;

/// Arguments of `fakesim-hil emulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct EmulateArgs {
    /// Delay replies by their time on the wire at 1 Mbaud plus the servo's return delay.
    #[arg(long)]
    pub wire_timing: bool,
    /// Emulate a single factory-new servo (id 1) instead of the calibrated arm, to try
    /// `setup-ids --motor LABEL`.
    #[arg(long)]
    pub new_servo: bool,
    /// Injected faults.
    #[command(flatten)]
    pub faults: FaultArgs,
}

/// Faults the virtual bus injects from the start.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Faults")]
pub struct FaultArgs {
    /// Probability (0..1) that a reply is sent with a corrupted checksum.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = parse_probability)]
    pub corrupt_checksum: f64,
    /// Probability (0..1) that a reply is not sent.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = parse_probability)]
    pub drop_reply: f64,
    /// Id of a servo that stopped answering (repeatable).
    #[arg(long = "silent", value_name = "ID")]
    pub silent: Vec<u8>,
    /// Id of a servo reporting an overload error (repeatable).
    #[arg(long = "overload", value_name = "ID")]
    pub overload: Vec<u8>,
    /// Id of a servo reporting an overheat error (repeatable).
    #[arg(long = "overheat", value_name = "ID")]
    pub overheat: Vec<u8>,
    /// Id of a servo reporting an input voltage error (repeatable).
    #[arg(long = "voltage-error", value_name = "ID")]
    pub voltage_error: Vec<u8>,
    /// Echo every received byte back, as some adapters do.
    #[arg(long)]
    pub echo: bool,
    /// Seed of the random faults.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
}

/// A probability in 0..=1.
fn parse_probability(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| format!("`{text}` is not a probability between 0 and 1"))
}

impl FaultArgs {
    /// The emulator's fault settings.
    pub fn config(&self) -> FaultConfig {
        let mut faults = FaultConfig {
            corrupt_checksum: self.corrupt_checksum,
            drop_reply: self.drop_reply,
            silent: self.silent.iter().copied().collect(),
            echo: self.echo,
            ..FaultConfig::none()
        };
        for (ids, flag) in [
            (&self.overload, ServoError::OVERLOAD),
            (&self.overheat, ServoError::OVERHEAT),
            (&self.voltage_error, ServoError::VOLTAGE),
        ] {
            for id in ids {
                *faults.forced_errors.entry(*id).or_default() |= flag;
            }
        }
        faults
    }
}

impl EmulateArgs {
    /// The virtual bus to start.
    pub fn config(&self) -> EmuConfig {
        let servos = if self.new_servo {
            vec![ServoConfig::new(1)]
        } else {
            VirtualSo101::servos()
        };
        EmuConfig {
            wire_timing: self.wire_timing,
            faults: self.faults.config(),
            seed: self.faults.seed,
            ..EmuConfig::new(servos)
        }
    }
}

/// Serves the virtual bus until Ctrl-C.
pub async fn run(args: EmulateArgs, io: Console) -> anyhow::Result<()> {
    serve_until(args, io, tokio::signal::ctrl_c()).await
}

/// Serves the virtual bus until `stop` completes; prints the device path and how to use it.
pub async fn serve_until(
    args: EmulateArgs,
    mut io: Console,
    stop: impl Future<Output = std::io::Result<()>>,
) -> anyhow::Result<()> {
    let config = args.config();
    let bus = serve_pty(config.clone())
        .await
        .context("starting the virtual servo bus")?;
    let path = bus.path().display().to_string();
    let ids: Vec<String> = bus.servos().ids().iter().map(u8::to_string).collect();
    io.say(&format!(
        "Virtual servo bus on {path}: servo id(s) {} at {} baud{}.",
        ids.join(", "),
        config.baud,
        if config.wire_timing { ", wire timing on" } else { "" }
    ))?;
    io.say(&format!("Try: fakesim-hil scan --port {path}"))?;
    if args.new_servo {
        io.say(&format!("     fakesim-hil setup-ids --port {path} --motor gripper"))?;
    } else {
        io.say(&format!(
            "     fakesim-hil calibrate --port {path} --role follower --id virtual"
        ))?;
    }
    io.say("Press Ctrl-C to stop.")?;
    let stopped = stop.await.context("waiting for Ctrl-C");
    bus.shutdown().await.context("stopping the virtual servo bus")?;
    stopped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_flags_become_emulator_faults() {
        let faults = FaultArgs {
            drop_reply: 0.5,
            overload: vec![2],
            overheat: vec![2, 3],
            silent: vec![4],
            ..FaultArgs::default()
        }
        .config();
        assert_eq!(faults.drop_reply, 0.5);
        assert_eq!(faults.forced(2), ServoError::OVERLOAD | ServoError::OVERHEAT);
        assert_eq!(faults.forced(3), ServoError::OVERHEAT);
        assert!(faults.is_silent(4) && !faults.is_silent(2));
        assert!(parse_probability("1.5").is_err());
    }
}
