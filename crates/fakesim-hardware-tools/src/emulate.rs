//! `fakesim-hil emulate`: a virtual SO-101 (or, with `--arm so100`, SO-100) servo bus on a
//! pseudo-terminal, so every hardware command can be tried without an arm.

use std::future::Future;
use std::path::{Path, PathBuf};

use anyhow::Context;
use feetech_emu::cli::{ArmArgs, FaultArgs, PlugArgs, ScriptArgs};
use feetech_emu::timeline::{BusEvent, Timeline};
use feetech_emu::{EmuConfig, ServoBus, ServoConfig, VirtualSo101, WriteRecord};

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
    /// Write the virtual arm's LeRobot calibration to FILE, for `fakesim-hil --port DEVICE
    /// --calibration FILE`.
    #[arg(long, value_name = "FILE", conflicts_with = "new_servo")]
    pub write_calibration: Option<PathBuf>,
    /// When emulate stops, write every host write the servos executed to FILE, one JSON object
    /// a line (`at_us`, `id`, `addr`, `data`, `present_before`, `torque_before`), so a test can
    /// check what reached the bus.
    #[arg(long, value_name = "FILE")]
    pub write_log: Option<PathBuf>,
    /// Move as the arm of this dynamics profile (as `fakesim-hil identify` writes it): each
    /// servo acts on a goal its joint's delay late, and turns no faster than the joint's
    /// torque limit lets it.
    #[arg(long, value_name = "FILE", conflicts_with = "new_servo")]
    pub dynamics: Option<PathBuf>,
    /// The emulated arm: which one, the calibration its servos hold, joint offsets, obstacles, slips.
    #[command(flatten)]
    pub arm: ArmArgs,
    /// A hand moving the arm: a sweep, waypoints, a LeRobot episode, pushes.
    #[command(flatten)]
    pub hand: ScriptArgs,
    /// Injected faults.
    #[command(flatten)]
    pub faults: FaultArgs,
    /// The adapter: a stable link to serve at, when it is unplugged and plugged in again.
    #[command(flatten)]
    pub adapter: PlugArgs,
}

impl EmulateArgs {
    /// The virtual bus to start.
    pub fn config(&self) -> anyhow::Result<EmuConfig> {
        let servos = if self.new_servo {
            anyhow::ensure!(
                !self.arm.is_custom() && !self.hand.is_set(),
                "--new-servo emulates a factory servo, not an arm"
            );
            vec![ServoConfig::new(1)]
        } else if self.arm.is_custom() {
            self.arm.servos().context("building the emulated arm")?
        } else {
            VirtualSo101::servos()
        };
        let mut servos = servos;
        if let Some(file) = &self.dynamics {
            crate::emulate_dynamics::apply(file, self.arm.kind, &self.arm.calibration()?, &mut servos)
                .with_context(|| format!("--dynamics {}", file.display()))?;
        }
        let config = EmuConfig {
            wire_timing: self.wire_timing,
            faults: self.faults.config(),
            seed: self.faults.seed,
            ..EmuConfig::new(servos)
        };
        if self.new_servo {
            return Ok(config);
        }
        let calibration = self.arm.calibration()?;
        self.hand
            .apply(&calibration, config)
            .context("building the hand that moves the arm")
    }
}

/// Serves the virtual bus until Ctrl-C.
pub async fn run(args: EmulateArgs, io: Console) -> anyhow::Result<()> {
    serve_until(args, io, crate::interrupt::installed()?).await
}

/// Serves the virtual bus until `stop` completes; prints the device path and how to use it.
pub async fn serve_until(
    args: EmulateArgs,
    mut io: Console,
    stop: impl Future<Output = std::io::Result<()>>,
) -> anyhow::Result<()> {
    let config = args.config()?;
    if let Some(file) = &args.write_calibration {
        args.arm
            .calibration()?
            .save(file)
            .with_context(|| format!("writing the virtual arm's calibration to {}", file.display()))?;
    }
    let servos = ServoBus::real_time(&config);
    let timeline = Timeline::new(&args.adapter, &args.faults, &servos.ids()).context("scheduling the bus events")?;
    let mut bus = args.adapter.serve(servos).context("starting the virtual servo bus")?;
    let path = bus.link().unwrap_or(bus.path()).display().to_string();
    let ids: Vec<String> = bus.servos().ids().iter().map(u8::to_string).collect();
    io.say(&format!(
        "Virtual servo bus on {path}: servo id(s) {} at {} baud{}.",
        ids.join(", "),
        config.baud,
        if config.wire_timing { ", wire timing on" } else { "" }
    ))?;
    if bus.link().is_some() {
        io.say(&format!("{path} links to {} now.", bus.path().display()))?;
    }
    for (at, event) in timeline.events() {
        io.say(&describe(*at, event, &path))?;
    }
    io.say(&format!("Try: fakesim-hil scan --port {path}"))?;
    if let Some(file) = &args.write_calibration {
        io.say(&format!(
            "     fakesim-hil --port {path} --calibration {}",
            file.display()
        ))?;
    }
    if let Some(script) = &config.script {
        io.say(&args.hand.describe(script))?;
    }
    if args.new_servo {
        io.say(&format!("     fakesim-hil setup-ids --port {path} --motor gripper"))?;
    } else {
        io.say(&format!(
            "     fakesim-hil calibrate --port {path} --role follower --id virtual"
        ))?;
    }
    io.say("Press Ctrl-C to stop.")?;
    let stopped = match timeline.run_until(&mut bus, stop).await {
        Ok(stopped) => stopped.context("waiting for Ctrl-C"),
        Err(error) => Err(anyhow::Error::new(error).context("running the scheduled bus events")),
    };
    let writes = bus.servos().write_log();
    bus.shutdown().await.context("stopping the virtual servo bus")?;
    if let Some(file) = &args.write_log {
        save_write_log(file, &writes)
            .await
            .with_context(|| format!("writing the bus write log to {}", file.display()))?;
    }
    stopped
}

/// One line saying what happens to the bus at `at` seconds.
fn describe(at: std::time::Duration, event: &BusEvent, device: &str) -> String {
    let at = at.as_secs_f64();
    match event {
        BusEvent::Unplug => format!("At {at} s the adapter is unplugged: {device} disappears."),
        BusEvent::Replug => format!("At {at} s it is plugged in again: a new pseudo-terminal at {device}."),
        BusEvent::ResetRam(id) => format!("At {at} s servo {id} resets (RAM to its power-on values)."),
    }
}

/// Writes `writes` as JSON lines to `file`, whole or not at all (a temporary file renamed).
async fn save_write_log(file: &Path, writes: &[WriteRecord]) -> std::io::Result<()> {
    let mut text = String::new();
    for record in writes {
        let line = serde_json::json!({
            "at_us": record.at.as_micros(),
            "id": record.id,
            "addr": record.addr,
            "data": record.data,
            "present_before": record.present_before,
            "torque_before": record.torque_before,
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let partial = file.with_extension("partial");
    tokio::fs::write(&partial, text).await?;
    tokio::fs::rename(&partial, file).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use clap::Parser;
    use tokio::sync::{mpsc, oneshot};

    use super::*;

    /// Everything the command printed, shared with the test.
    #[derive(Clone, Default)]
    struct Printed(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Printed {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Printed {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[derive(Debug, Parser)]
    struct Command {
        #[command(flatten)]
        args: EmulateArgs,
    }

    fn args(argv: &[&str]) -> EmulateArgs {
        Command::try_parse_from(std::iter::once("emulate").chain(argv.iter().copied()))
            .unwrap()
            .args
    }

    fn console() -> (Console, Printed) {
        let printed = Printed::default();
        let (_, input) = mpsc::unbounded_channel();
        let console = Console::new(input, Box::new(printed.clone()), Box::new(printed.clone()), false);
        (console, printed)
    }

    /// Waits, within a generous bound, until `done` holds.
    async fn until(mut done: impl FnMut() -> bool) {
        let waited = tokio::time::timeout(Duration::from_secs(10), async {
            while !done() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        waited.await.expect("the condition within 10 s");
    }

    #[tokio::test]
    async fn a_replug_without_a_link_is_refused_before_anything_is_served() {
        let (io, printed) = console();
        let refused = serve_until(args(&["--unplug-at", "1..2"]), io, std::future::pending())
            .await
            .unwrap_err();
        assert!(
            format!("{refused:#}").contains("--unplug-at 1..2: plugging the adapter in again needs --link PATH"),
            "{refused:#}"
        );
        assert_eq!(printed.text(), "");
    }

    #[tokio::test]
    async fn a_linked_emulator_names_its_link_and_schedule_and_keeps_running_across_the_unplug() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("ttyARM");
        let link_arg = link.to_str().unwrap();
        let (io, printed) = console();
        let (stop, stopped) = oneshot::channel::<()>();
        let argv = [
            "--link",
            link_arg,
            "--unplug-at",
            "0..3600",
            "--reset-at",
            "2@1800",
            "--lockup-after-overload",
            "3",
        ];
        let emulator = tokio::spawn(serve_until(args(&argv), io, async move {
            stopped.await.map_err(std::io::Error::other)
        }));
        until(|| printed.text().contains("Press Ctrl-C to stop.")).await;
        let text = printed.text();
        assert!(
            text.starts_with(&format!(
                "Virtual servo bus on {link_arg}: servo id(s) 1, 2, 3, 4, 5, 6"
            )),
            "{text}"
        );
        assert!(text.contains(&format!("{link_arg} links to /dev/pts/")), "{text}");
        assert!(
            text.contains(&format!("At 0 s the adapter is unplugged: {link_arg} disappears.")),
            "{text}"
        );
        assert!(text.contains("At 1800 s servo 2 resets"), "{text}");
        assert!(
            text.contains(&format!(
                "At 3600 s it is plugged in again: a new pseudo-terminal at {link_arg}."
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!("Try: fakesim-hil scan --port {link_arg}")),
            "{text}"
        );

        until(|| std::fs::symlink_metadata(&link).is_err()).await;
        assert!(!emulator.is_finished(), "emulate keeps running while unplugged");
        stop.send(()).unwrap();
        emulator.await.unwrap().unwrap();
    }
}
