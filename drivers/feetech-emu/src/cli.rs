//! Command-line options of fault injection, shared by the `feetech-emu` binary and
//! `fakesim-hil emulate`.

use feetech::protocol::status::ServoError;

use crate::faults::FaultConfig;

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

/// Parses a probability in 0..=1.
pub fn parse_probability(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| format!("`{text}` is not a probability between 0 and 1"))
}

impl FaultArgs {
    /// The emulator's fault settings (the seed goes to `EmuConfig::seed`).
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// Parses fault flags as a command line would.
    #[derive(Debug, clap::Parser)]
    struct Command {
        #[command(flatten)]
        faults: FaultArgs,
    }

    fn parse(argv: &[&str]) -> Result<FaultArgs, clap::Error> {
        use clap::Parser;
        Command::try_parse_from(std::iter::once("emu").chain(argv.iter().copied())).map(|command| command.faults)
    }

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

    #[test]
    fn command_line_flags_parse_into_faults() {
        let args = parse(&[
            "--corrupt-checksum",
            "0.25",
            "--silent",
            "5",
            "--voltage-error",
            "1",
            "--echo",
            "--seed",
            "7",
        ])
        .unwrap();
        assert_eq!(args.seed, 7);
        let faults = args.config();
        assert_eq!(faults.corrupt_checksum, 0.25);
        assert_eq!(faults.drop_reply, 0.0);
        assert!(faults.echo && faults.is_silent(5));
        assert_eq!(faults.forced(1), ServoError::VOLTAGE);
        assert_eq!(parse(&[]).unwrap().config(), FaultConfig::none());
        assert!(parse(&["--drop-reply", "-0.1"]).is_err());
    }
}
