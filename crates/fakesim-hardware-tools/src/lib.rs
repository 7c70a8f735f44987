//! The hardware commands of `fakesim-hil`: `scan`, `setup-ids`, `calibrate`, `align`,
//! `emulate` and `teleop`.
//!
//! Each command has a clap [`clap::Args`] struct and an async `run(args, io)` that talks to
//! the user through a [`Console`] (stdin lines, stdout, stderr), so tests can script the
//! interactive prompts. `emulate` serves a virtual SO-101 bus on a pseudo-terminal, which
//! every other command can open like a real adapter.

pub mod align;
pub mod calibrate;
pub mod console;
pub mod emulate;
pub mod emulate_dynamics;
mod interrupt;
pub mod port;
pub mod progress;
pub mod scan;
pub mod setup_ids;
pub mod teleop;

pub use console::Console;

use std::time::Duration;

use feetech::bus::BusConfig;
use feetech::control_table::BAUD_RATES;

/// How long the commands wait for a servo's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct ReplyTimeout {
    /// Milliseconds to wait for each reply; raise it for slow adapters.
    #[arg(
        long = "timeout",
        value_name = "MS",
        default_value_t = 50,
        value_parser = clap::value_parser!(u64).range(1..=10_000)
    )]
    pub millis: u64,
}

impl ReplyTimeout {
    /// The driver's default bus policy with this timeout.
    fn bus_config(self) -> BusConfig {
        BusConfig {
            timeout: Duration::from_millis(self.millis),
            ..BusConfig::default()
        }
    }
}

/// Parses a baud rate, accepting only the rates an STS3215 can be set to.
fn parse_baud(text: &str) -> Result<u32, String> {
    let supported = || BAUD_RATES.map(|b| b.to_string()).join(", ");
    match text.parse::<u32>() {
        Ok(baud) if BAUD_RATES.contains(&baud) => Ok(baud),
        _ => Err(format!(
            "`{text}` is not a baud rate the servos support ({})",
            supported()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_servo_baud_rates_are_accepted() {
        assert_eq!(parse_baud("1000000"), Ok(1_000_000));
        assert_eq!(parse_baud("38400"), Ok(38_400));
        let refused = parse_baud("9600").unwrap_err();
        assert!(refused.contains("1000000, 500000"), "{refused}");
    }
}
