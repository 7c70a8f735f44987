//! Entity paths and timelines of the recording. The joint scalars LeRobot also logs keep its
//! names (`observation.<joint>.pos`, `action.<joint>.pos`, `observation.<camera>`), so one
//! viewer can show a LeRobot session and the daemon side by side.

use fakesim_twin::ArmSpec;
use fakesim_twin::joints::Joint;

/// Timeline of the twin's control ticks (simulated time over the control period).
pub(crate) const TICK: &str = "tick";
/// Timeline of the real arm's readings (the bridge's reading count).
pub(crate) const READING: &str = "reading";
/// Timeline of wall-clock time, on every row.
pub(crate) const WALL_TIME: &str = "wall_time";

/// Root of the 3D scene (z up, metres, the twin's world frame).
pub(crate) const WORLD: &str = "world";
/// The table, the task objects and everything else that is not the arm.
pub(crate) const SCENE: &str = "world/scene";
/// The TCP's recent path (the twin's); a pair's arms have theirs below it.
pub(crate) const TCP_PATH: &str = "world/tcp_path";
/// The current `Move`'s target position.
pub(crate) const MOVE_TARGET: &str = "world/move_target";
/// Mode changes.
pub(crate) const EVENTS_MODE: &str = "events/mode";
/// Safety events (calibration drift and blocked joints included).
pub(crate) const EVENTS_SAFETY: &str = "events/safety";
/// The episode's journal: resets, moves and gripper actions with their stop reasons.
pub(crate) const EVENTS_EPISODE: &str = "events/episode";

/// The three poses of the arm drawn in 3D; a pair's arms both under each, their bodies named
/// `left/…` and `right/…` by the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arm {
    /// The twin.
    Twin,
    /// The measured real arm.
    Real,
    /// The shadow's prediction of the real arm.
    Predicted,
}

impl Arm {
    /// The arm's root entity.
    pub fn root(self) -> &'static str {
        match self {
            Arm::Twin => "world/twin",
            Arm::Real => "world/real",
            Arm::Predicted => "world/predicted",
        }
    }
}

/// One joint series of the daemon's own, in radians.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Series {
    /// The twin's joint.
    Twin = 0,
    /// The real arm's reading.
    Real = 1,
    /// The shadow's prediction.
    Predicted = 2,
    /// Measured minus predicted.
    Residual = 3,
}

impl Series {
    const NAMES: [&'static str; 4] = ["twin", "real", "predicted", "residual"];
}

/// Every path of one arm, made once.
pub(crate) struct ArmPaths {
    /// `observation.<joint>.pos`, action-key order.
    pub observation: [String; 6],
    /// `action.<joint>.pos`.
    pub action: [String; 6],
    /// `joints/<joint>/<series>`, by joint then [`Series`].
    series: [[String; 4]; 6],
    /// The TCP's recent path: [`TCP_PATH`], or `world/tcp_path/<side>` for an arm of a pair.
    pub tcp_path: String,
}

impl ArmPaths {
    /// The paths of an arm's six joints, by label; an arm of a pair puts its side before
    /// each label as LeRobot's bimanual robots do (`left_shoulder_pan`).
    pub fn new(arm: &ArmSpec) -> Self {
        let labels = Joint::ALL.map(|joint| match arm.side {
            Some(side) => format!("{side}_{}", joint.label()),
            None => joint.label().to_owned(),
        });
        ArmPaths {
            observation: labels.clone().map(|l| format!("observation.{l}.pos")),
            action: labels.clone().map(|l| format!("action.{l}.pos")),
            series: labels.map(|l| Series::NAMES.map(|s| format!("joints/{l}/{s}"))),
            tcp_path: match arm.side {
                Some(side) => format!("{TCP_PATH}/{side}"),
                None => TCP_PATH.to_owned(),
            },
        }
    }

    /// `joints/<joint>/<series>`.
    pub fn series(&self, joint: usize, series: Series) -> &str {
        &self.series[joint][series as usize]
    }
}

/// Where a camera's frames go: LeRobot logs its cameras as `observation.<camera>`.
pub(crate) fn camera(name: &str) -> String {
    format!("observation.{name}")
}
