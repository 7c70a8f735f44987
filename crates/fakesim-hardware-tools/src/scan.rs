//! `fakesim-hil scan`: which servos answer on which port, at which baud rate.

use std::path::{Path, PathBuf};

use anyhow::bail;
use feetech::bus::{BusConfig, FoundServo, ScanEvent, ScanMethod, ScanOptions};
use feetech::control_table::BAUD_RATES;
use feetech::protocol::MAX_SERVO_ID;
use tokio::sync::mpsc;

use super::port::{FoundPort, list_ports, open_bus};
use super::progress::StatusBlock;
use super::{Console, ReplyTimeout, parse_baud};

/// Arguments of `fakesim-hil scan`.
#[derive(Debug, Clone, clap::Args)]
pub struct ScanArgs {
    /// Serial port to scan (repeatable) [default: every USB serial port found].
    #[arg(long = "port", value_name = "PATH")]
    pub ports: Vec<PathBuf>,
    /// Baud rate to try (repeatable) [default: the eight rates an STS3215 supports,
    /// 1000000 first].
    #[arg(long = "baud", value_name = "BAUD", value_parser = parse_baud)]
    pub bauds: Vec<u32>,
    /// Ping these ids one at a time, e.g. `1-20` or `1,3,5-6`, instead of one broadcast ping
    /// (slower, but does not depend on broadcast replies).
    #[arg(long, value_name = "IDS", value_parser = parse_ids)]
    pub ids: Option<IdList>,
    /// Reply timeout.
    #[command(flatten)]
    pub timeout: ReplyTimeout,
}

/// Servo ids given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdList(pub Vec<u8>);

/// Parses `1-20`, `7` or `1,3,5-6` into ids 0..=253.
fn parse_ids(text: &str) -> Result<IdList, String> {
    let id = |part: &str| {
        part.trim()
            .parse::<u8>()
            .ok()
            .filter(|id| *id <= MAX_SERVO_ID)
            .ok_or_else(|| format!("`{part}` is not a servo id (0..={MAX_SERVO_ID})"))
    };
    let mut ids = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last) = (id(first)?, id(last)?);
                if first > last {
                    return Err(format!("`{part}` is an empty range"));
                }
                ids.extend(first..=last);
            }
            None => ids.push(id(part)?),
        }
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(IdList(ids))
}

/// Scans every port and prints the servos found; fails if a port could not be scanned.
pub async fn run(args: ScanArgs, mut io: Console) -> anyhow::Result<()> {
    let ports = if args.ports.is_empty() {
        let found = list_ports();
        if found.is_empty() {
            bail!(
                "no USB serial port found. Plug in the servo adapter (check `lsusb`), or start a \
                 virtual arm with `fakesim-hil emulate` and scan the port it prints."
            );
        }
        found
    } else {
        args.ports
            .iter()
            .map(|path| FoundPort {
                path: path.clone(),
                description: String::new(),
            })
            .collect()
    };
    let options = ScanOptions {
        baud_rates: if args.bauds.is_empty() {
            BAUD_RATES.to_vec()
        } else {
            args.bauds.clone()
        },
        method: args
            .ids
            .map_or(ScanMethod::Broadcast, |IdList(ids)| ScanMethod::Ids(ids)),
    };
    // A broadcast ping always waits out the timeout, and a missed servo shows up again on
    // the next scan: one retry is enough.
    let config = BusConfig {
        retries: 1,
        ..args.timeout.bus_config()
    };
    let mut failed: Vec<(&Path, anyhow::Error)> = Vec::new();
    let mut total = 0;
    for port in &ports {
        let header = if port.description.is_empty() {
            format!("{}:", port.path.display())
        } else {
            format!("{} ({}):", port.path.display(), port.description)
        };
        io.say(&header)?;
        match scan_port(&port.path, &options, config, &mut io).await {
            Ok(found) => {
                total += found.len();
                print_servos(&found, &options, &mut io)?;
            }
            // A lone port's error is the command's error, printed once by the caller.
            Err(error) if ports.len() == 1 => return Err(error),
            Err(error) => {
                io.say(&format!("  {error:#}"))?;
                failed.push((&port.path, error));
            }
        }
    }
    let scanned = ports.len() - failed.len();
    io.say(&format!("{total} servo(s) found on {scanned} port(s)"))?;
    if !failed.is_empty() {
        let names: Vec<String> = failed.iter().map(|(path, _)| path.display().to_string()).collect();
        bail!("could not scan {} (see above)", names.join(", "));
    }
    Ok(())
}

/// Scans one port over the baud rates of `options`, showing progress.
async fn scan_port(
    path: &Path,
    options: &ScanOptions,
    config: BusConfig,
    io: &mut Console,
) -> anyhow::Result<Vec<FoundServo>> {
    let first_baud = options
        .baud_rates
        .first()
        .copied()
        .unwrap_or(feetech::control_table::DEFAULT_BAUD_RATE);
    let mut bus = open_bus(path, first_baud, config)?;
    let (events, mut received) = mpsc::unbounded_channel();
    let scanning = async {
        let found = bus
            .scan(options, &mut |event| {
                // The receiver outlives the scan; a send cannot fail.
                let _ = events.send(event);
            })
            .await;
        drop(events);
        found
    };
    let showing = async {
        let mut block = StatusBlock::new();
        let mut progress = ScanProgress::new(path, options.baud_rates.len());
        while let Some(event) = received.recv().await {
            progress.update(&event);
            block.show(io, vec![progress.row(io.is_live())])?;
        }
        block.finish(io)
    };
    let (found, shown) = tokio::join!(scanning, showing);
    shown?;
    found.map_err(|error| anyhow::anyhow!("scanning {}: {error}", path.display()))
}

/// What the progress line of a port scan says.
#[derive(Debug)]
struct ScanProgress {
    port: String,
    rates: usize,
    rate_index: usize,
    baud: u32,
    probe: Option<u8>,
    found: usize,
}

impl ScanProgress {
    fn new(port: &Path, rates: usize) -> Self {
        Self {
            port: port.display().to_string(),
            rates,
            rate_index: 0,
            baud: 0,
            probe: None,
            found: 0,
        }
    }

    fn update(&mut self, event: &ScanEvent) {
        match event {
            ScanEvent::BaudRate(baud) => {
                self.rate_index += 1;
                self.baud = *baud;
                self.probe = None;
            }
            ScanEvent::Probe(id) => self.probe = Some(*id),
            ScanEvent::Found(_) => self.found += 1,
        }
    }

    /// The line; per-id probes only when redrawn in place (they would flood a log).
    fn row(&self, with_probe: bool) -> String {
        let probe = match self.probe {
            Some(id) if with_probe => format!(", id {id}"),
            _ => String::new(),
        };
        format!(
            "scanning {} at {} baud ({}/{}){probe}: {} found",
            self.port, self.baud, self.rate_index, self.rates, self.found
        )
    }
}

/// The table of servos found on one port, or what to check when there are none.
fn print_servos(found: &[FoundServo], options: &ScanOptions, io: &mut Console) -> anyhow::Result<()> {
    if found.is_empty() {
        let rates: Vec<String> = options.baud_rates.iter().map(u32::to_string).collect();
        io.say(&format!(
            "  no servo answered at {} baud. Check that the servo power supply is on and the bus \
             cable is plugged in; new servos answer as id 1 at 1000000 baud.",
            rates.join(", ")
        ))?;
        return Ok(());
    }
    io.say(&format!(
        "  {:>3}  {:<10} {:<9} {:>8}  errors",
        "id", "model", "firmware", "baud"
    ))?;
    for servo in found {
        io.say(&format!(
            "  {:>3}  {:<10} {:<9} {:>8}  {}",
            servo.id,
            model_label(servo),
            servo
                .firmware
                .map_or("?".to_owned(), |(major, minor)| format!("{major}.{minor}")),
            servo.baud_rate.map_or("?".to_owned(), |baud| baud.to_string()),
            if servo.error.is_empty() {
                "-".to_owned()
            } else {
                servo.error.to_string()
            },
        ))?;
    }
    Ok(())
}

/// `STS3215`, `model 1234` for unknown numbers, `?` when it could not be read.
fn model_label(servo: &FoundServo) -> String {
    match (servo.model, servo.model_number) {
        (Some(name), _) => name.to_uppercase(),
        (None, Some(number)) => format!("model {number}"),
        (None, None) => "?".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_lists_and_ranges() {
        assert_eq!(parse_ids("1-4"), Ok(IdList(vec![1, 2, 3, 4])));
        assert_eq!(parse_ids("6,1, 3-4,3"), Ok(IdList(vec![1, 3, 4, 6])));
        assert!(parse_ids("4-1").is_err());
        assert!(parse_ids("254").unwrap_err().contains("0..=253"));
        assert!(parse_ids("x").is_err());
    }

    #[test]
    fn progress_line() {
        let mut progress = ScanProgress::new(Path::new("/dev/ttyACM0"), 8);
        progress.update(&ScanEvent::BaudRate(1_000_000));
        progress.update(&ScanEvent::Probe(3));
        assert_eq!(
            progress.row(true),
            "scanning /dev/ttyACM0 at 1000000 baud (1/8), id 3: 0 found"
        );
        assert_eq!(
            progress.row(false),
            "scanning /dev/ttyACM0 at 1000000 baud (1/8): 0 found"
        );
    }
}
