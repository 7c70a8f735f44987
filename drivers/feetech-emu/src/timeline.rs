//! Events at given times of a served bus: the adapter unplugged and plugged in again, servos
//! resetting; with the command-line options that schedule them.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{FaultArgs, FaultTime, parse_window};
use crate::error::EmuError;
use crate::handle::ServoBus;
use crate::transport::{PtyBus, serve_pty_bus, serve_pty_linked};

/// The adapter: the symbolic link to serve at, and when it is unplugged.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Adapter")]
pub struct PlugArgs {
    /// Serve at this symbolic link to the pseudo-terminal (replaced if it is a link already),
    /// as udev's /dev/serial/by-id links are: the device to give a driver. It is removed when
    /// the device goes away.
    #[arg(long, value_name = "PATH")]
    pub link: Option<PathBuf>,
    /// Unplug the adapter S seconds after start (the pseudo-terminal disappears); with `..E`,
    /// plug it in again at E seconds: a new pseudo-terminal at the same --link path, the
    /// servos as they were.
    #[arg(long, value_name = "S[..E]", value_parser = UnplugAt::parse)]
    pub unplug_at: Option<UnplugAt>,
}

impl PlugArgs {
    /// Serves `servos` on a new pseudo-terminal, at the link if one is given.
    pub fn serve(&self, servos: ServoBus) -> Result<PtyBus, EmuError> {
        match &self.link {
            Some(link) => serve_pty_linked(servos, link),
            None => serve_pty_bus(servos),
        }
    }
}

/// When the adapter is unplugged and, maybe, plugged in again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnplugAt {
    /// Unplugged at, since the bus started.
    pub at: Duration,
    /// Plugged in again at; `None` never.
    pub replug_at: Option<Duration>,
}

impl UnplugAt {
    /// Parses `S` or `S..E` (seconds, fractions allowed, E after S).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (at, replug_at) = parse_window(text).map_err(|reason| format!("`{text}`: {reason}"))?;
        Ok(Self { at, replug_at })
    }
}

/// A servo resetting its RAM at a given time, as given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetAt {
    /// Servo id.
    pub id: u8,
    /// When, since the bus started.
    pub at: Duration,
}

impl ResetAt {
    /// Parses `ID@S` (seconds, fractions allowed).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("`{text}` is not ID@SECONDS");
        let time = FaultTime::parse(text)?;
        if !text.contains('@') || time.until.is_some() {
            return Err(bad());
        }
        Ok(Self {
            id: time.id,
            at: time.from,
        })
    }
}

/// Something that happens to a served bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusEvent {
    /// The adapter is unplugged: the pseudo-terminal (and its link) disappear.
    Unplug,
    /// The adapter is plugged in again: a new pseudo-terminal, the link pointed to it.
    Replug,
    /// A servo's RAM returns to its power-on values ([`crate::ServoBus::reset_ram`]).
    ResetRam(u8),
}

/// Events in the order they happen, each at a time since the bus started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline {
    events: Vec<(Duration, BusEvent)>,
}

impl Timeline {
    /// The events the options schedule for a bus with servos `ids`. Refuses a replug without
    /// a link (a driver could not find the new device) and a reset of a servo not on the bus.
    pub fn new(plug: &PlugArgs, faults: &FaultArgs, ids: &[u8]) -> Result<Self, EmuError> {
        let mut events = Vec::new();
        if let Some(unplug) = plug.unplug_at {
            events.push((unplug.at, BusEvent::Unplug));
            if let Some(replug_at) = unplug.replug_at {
                if plug.link.is_none() {
                    return Err(EmuError::ReplugWithoutLink {
                        at: unplug.at,
                        replug_at,
                    });
                }
                events.push((replug_at, BusEvent::Replug));
            }
        }
        for reset in &faults.reset_at {
            if !ids.contains(&reset.id) {
                return Err(EmuError::NoSuchServo(reset.id));
            }
            events.push((reset.at, BusEvent::ResetRam(reset.id)));
        }
        events.sort_by_key(|(at, _)| *at);
        Ok(Self { events })
    }

    /// The events, in order.
    pub fn events(&self) -> &[(Duration, BusEvent)] {
        &self.events
    }

    /// Makes each event happen to `pty` when the bus clock (wall time for a served bus)
    /// reaches its time; returns after the last one.
    pub async fn run(&self, pty: &mut PtyBus) -> Result<(), EmuError> {
        for (at, event) in &self.events {
            tokio::time::sleep(at.saturating_sub(pty.servos().elapsed())).await;
            tracing::info!(?event, at_s = at.as_secs_f64(), "bus event");
            match event {
                BusEvent::Unplug => pty.unplug(),
                BusEvent::Replug => pty.replug().await?,
                BusEvent::ResetRam(id) => pty.servos().reset_ram(*id)?,
            }
        }
        Ok(())
    }

    /// Runs the events on `pty` until `stop` completes (also long after the last event) and
    /// gives what it gave; an event that fails ends it at once with the error.
    pub async fn run_until<F: Future>(&self, pty: &mut PtyBus, stop: F) -> Result<F::Output, EmuError> {
        let events = async {
            self.run(pty).await?;
            std::future::pending().await
        };
        tokio::select! {
            stopped = stop => Ok(stopped),
            failed = events => failed,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::cli::tests::parse_command as parse;

    fn timeline(argv: &[&str]) -> Result<Timeline, EmuError> {
        let command = parse(argv).unwrap();
        Timeline::new(&command.plug, &command.faults, &[1, 2, 3, 4, 5, 6])
    }

    #[test]
    fn the_options_schedule_unplug_replug_and_resets_in_time_order() {
        let secs = Duration::from_secs_f64;
        let events = timeline(&[
            "--link",
            "/tmp/ttyARM",
            "--unplug-at",
            "2..4.5",
            "--reset-at",
            "3@5",
            "--reset-at",
            "6@0.5",
        ])
        .unwrap();
        assert_eq!(
            events.events(),
            [
                (secs(0.5), BusEvent::ResetRam(6)),
                (secs(2.0), BusEvent::Unplug),
                (secs(4.5), BusEvent::Replug),
                (secs(5.0), BusEvent::ResetRam(3)),
            ]
        );
        assert_eq!(
            timeline(&["--unplug-at", "1.5"]).unwrap().events(),
            [(secs(1.5), BusEvent::Unplug)],
            "an unplug for good needs no link"
        );
        assert_eq!(timeline(&[]).unwrap(), Timeline::default());
    }

    #[test]
    fn a_replug_without_a_link_and_a_reset_of_a_missing_servo_are_refused() {
        let refused = timeline(&["--unplug-at", "1..2"]).unwrap_err();
        assert!(matches!(refused, EmuError::ReplugWithoutLink { .. }), "{refused:?}");
        assert!(
            refused
                .to_string()
                .starts_with("--unplug-at 1..2: plugging the adapter in again needs --link PATH")
        );
        let missing = timeline(&["--reset-at", "9@1"]).unwrap_err();
        assert!(matches!(missing, EmuError::NoSuchServo(9)), "{missing:?}");
    }

    #[test]
    fn malformed_times_are_refused_when_parsing() {
        for bad in [
            &["--unplug-at", "2..1"][..],
            &["--unplug-at", "soon"],
            &["--unplug-at", "-1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        for bad in ["3", "3@1..2", "x@1", "@1", "3@", "300@1"] {
            assert!(ResetAt::parse(bad).is_err(), "{bad}");
            assert!(parse(&["--reset-at", bad]).is_err(), "{bad}");
        }
        assert_eq!(
            ResetAt::parse("3@1.25").unwrap(),
            ResetAt {
                id: 3,
                at: Duration::from_millis(1250)
            }
        );
    }

    #[test]
    fn lockup_flags_set_the_fault() {
        let command = parse(&[
            "--overload",
            "2@1..2",
            "--lockup-after-overload",
            "2",
            "--lockup-after-overload",
            "5",
        ])
        .unwrap();
        let faults = command.faults.config();
        assert_eq!(faults.lockup_after_overload, [2, 5].into());
        assert!(faults.locks_up(2, Duration::from_millis(1500), Duration::from_millis(1500)));
        assert!(!faults.locks_up(2, Duration::ZERO, Duration::from_millis(999)));
        assert!(
            !faults.locks_up(5, Duration::ZERO, Duration::from_secs(9)),
            "no overload for 5"
        );
        assert!(parse(&["--lockup-after-overload", "x"]).is_err());
    }
}
