//! The three ways the daemon runs: the twin alone, the twin mirroring a hand-moved arm, or API
//! motions on the real arm with the twin mirroring it.

use serde::Serialize;
use std::str::FromStr;

/// How the real arm and the twin are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The twin only, in lock-step; the real arm (if any) is left alone.
    Sim,
    /// The real arm is moved by hand or a leader arm; the twin follows it; motion calls are refused.
    Mirror,
    /// API motions run on the real arm, paced in real time; the twin mirrors the measured joints.
    Hil,
}

impl Mode {
    /// Every mode, in the order the daemon's help lists them.
    pub const ALL: [Mode; 3] = [Mode::Sim, Mode::Mirror, Mode::Hil];

    /// Lower-case name, as in status answers and journals.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sim => "sim",
            Mode::Mirror => "mirror",
            Mode::Hil => "hil",
        }
    }
}

/// A mode name that is none of [`Mode::ALL`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode {0:?}: expected sim, mirror or hil")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    /// The mode of a lower-case name, as [`Mode::name`] spells it.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|mode| mode.name() == name)
            .ok_or_else(|| UnknownMode(name.to_owned()))
    }
}

/// What to do when entering `hil` while the real arm and the twin disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncOption {
    /// Refuse to switch if they disagree by more than the threshold.
    None,
    /// Move the real arm slowly (speed-limited) to the twin's pose first.
    MoveArmToTwin,
    /// Put the twin on the real arm's pose first.
    MoveTwinToArm,
}

/// Which kind of robot-service verb a call is, for the mode gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerbKind {
    /// A motion command (`SendAction`, `Tick`, `Move`, `Gripper`): routed to the arm in `hil`.
    Motion,
    /// A verb that only makes sense in simulation (`Step`, `LoadState`, velocity or position
    /// writes): refused with hardware in the loop.
    SimOnly,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn names_parse_back_and_others_are_refused() {
        for mode in Mode::ALL {
            assert_eq!(mode.name().parse::<Mode>(), Ok(mode));
        }
        let refused = "Hil".parse::<Mode>().unwrap_err();
        assert_eq!(refused.to_string(), "unknown mode \"Hil\": expected sim, mirror or hil");
    }
}
