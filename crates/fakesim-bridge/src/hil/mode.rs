//! The three ways the daemon runs: the twin alone, the twin mirroring a hand-moved arm, or API
//! motions on the real arm with the twin mirroring it.

use serde::Serialize;

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
    /// Lower-case name, as in status answers and journals.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sim => "sim",
            Mode::Mirror => "mirror",
            Mode::Hil => "hil",
        }
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
