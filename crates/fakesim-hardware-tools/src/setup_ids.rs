//! `fakesim-hil setup-ids`: gives each servo of an SO-101 its id and the bus baud rate, one
//! servo at a time (new servos all ship as id 1, so two on the bus would collide).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use feetech::bus::{Bus, BusError, FoundServo, ScanMethod, ScanOptions};
use feetech::calibration::{MotorSpec, SO101_MOTORS};
use feetech::control_table::{BAUD_RATES, DEFAULT_BAUD_RATE, STS3215_MODEL_NUMBER};
use tokio::io::{AsyncRead, AsyncWrite};

use super::port::open_bus;
use super::{Console, ReplyTimeout, parse_baud};

/// Arguments of `fakesim-hil setup-ids`.
#[derive(Debug, Clone, clap::Args)]
pub struct SetupIdsArgs {
    /// Serial port of the servo bus.
    #[arg(long, value_name = "PATH")]
    pub port: PathBuf,
    /// Baud rate to give every servo (a servo is found at whatever rate it has now).
    #[arg(long, value_name = "BAUD", default_value_t = DEFAULT_BAUD_RATE, value_parser = parse_baud)]
    pub baud: u32,
    /// Set up only this motor: shoulder_pan, shoulder_lift, elbow_flex, wrist_flex,
    /// wrist_roll or gripper [default: all six, gripper first].
    #[arg(long, value_name = "LABEL", value_parser = parse_motor)]
    pub motor: Option<MotorSpec>,
    /// Reply timeout.
    #[command(flatten)]
    pub timeout: ReplyTimeout,
}

/// The SO-101 motor called `name`.
fn parse_motor(name: &str) -> Result<MotorSpec, String> {
    SO101_MOTORS
        .iter()
        .find(|motor| motor.name == name)
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = SO101_MOTORS.iter().map(|m| m.name).collect();
            format!("`{name}` is not an SO-101 motor ({})", names.join(", "))
        })
}

/// Walks the user through the motors (gripper first, as LeRobot does), one servo on the
/// bus at a time.
pub async fn run(args: SetupIdsArgs, mut io: Console) -> anyhow::Result<()> {
    let motors: Vec<MotorSpec> = match args.motor {
        Some(motor) => vec![motor],
        None => SO101_MOTORS.iter().rev().copied().collect(),
    };
    let mut bus = open_bus(&args.port, args.baud, args.timeout.bus_config())?;
    // Look at the target rate first: servos that were set up before answer there.
    let mut baud_rates = vec![args.baud];
    baud_rates.extend(BAUD_RATES.iter().filter(|b| **b != args.baud));
    let options = ScanOptions {
        baud_rates,
        method: ScanMethod::Broadcast,
    };
    for motor in &motors {
        set_up(&mut bus, &options, motor, args.baud, &args.port, &mut io).await?;
    }
    io.say(&format!(
        "Done: {} servo(s) set up at {} baud. Chain them together and check with \
         `fakesim-hil scan --port {}`.",
        motors.len(),
        args.baud,
        args.port.display()
    ))
}

/// Prompts until the motor's servo is alone on the bus, then gives it its id and `baud`.
async fn set_up<T>(
    bus: &mut Bus<T>,
    options: &ScanOptions,
    motor: &MotorSpec,
    baud: u32,
    port: &Path,
    io: &mut Console,
) -> anyhow::Result<()>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + feetech::bus::BaudControl,
{
    let name = motor.name;
    let mut question = format!(
        "Connect only the {name} servo to the adapter (new servos all ship as id 1), then press \
         Enter (q to quit)."
    );
    loop {
        let answer = io.prompt(&question).await?;
        if answer.trim().eq_ignore_ascii_case("q") {
            bail!("stopped before setting up the {name} servo");
        }
        match bus.setup_lone_servo(options, motor.id, baud).await {
            Ok(servo) => return confirm(bus, motor, &servo, io).await,
            Err(BusError::NotAlone { found: 0 }) => {
                question = format!(
                    "No servo answered on {}. Check the servo power supply and the cable, then \
                     press Enter to try again (q to quit).",
                    port.display()
                );
            }
            Err(BusError::NotAlone { found }) => {
                question = format!(
                    "{found} servos answered: disconnect all but the {name} servo, then press Enter \
                     to try again (q to quit)."
                );
            }
            Err(error) => return Err(anyhow!("setting up the {name} servo on {}: {error}", port.display())),
        }
    }
}

/// Pings the servo at its new id and reports what it is.
async fn confirm<T>(bus: &mut Bus<T>, motor: &MotorSpec, servo: &FoundServo, io: &mut Console) -> anyhow::Result<()>
where
    T: AsyncRead + AsyncWrite + Unpin + Send,
{
    let reply = bus.ping(motor.id).await.map_err(|error| {
        anyhow!(
            "the {} servo does not answer at its new id {}: {error}",
            motor.name,
            motor.id
        )
    })?;
    let model = servo.model.map_or("unknown model".to_owned(), str::to_uppercase);
    let firmware = servo
        .firmware
        .map_or(String::new(), |(major, minor)| format!(", firmware {major}.{minor}"));
    io.say(&format!(
        "{}: now id {} at {} baud ({model}{firmware}), answers a ping.",
        motor.name,
        motor.id,
        servo.baud_rate.map_or("?".to_owned(), |b| b.to_string()),
    ))?;
    if servo.model_number != Some(STS3215_MODEL_NUMBER) {
        io.say(&format!("warning: the {} servo is not an STS3215", motor.name))?;
    }
    if !reply.error.is_empty() {
        io.say(&format!("warning: the {} servo reports {}", motor.name, reply.error))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motors_by_label() {
        assert_eq!(parse_motor("gripper").map(|m| m.id), Ok(6));
        assert!(parse_motor("elbow").unwrap_err().contains("elbow_flex"));
    }
}
