//! What one teleop cycle did, and why a teleop loop cannot run.

use fakesim_twin::TwinError;

use fakesim_arm::ArmError;
use fakesim_arm::Joint;
use fakesim_safety::{FaultAction, GuardError, InvalidSetting, LimitSource, SafetyError, SafetyEvent};

/// Which arm an error came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The hand-moved arm.
    Leader,
    /// The driven arm.
    Follower,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Leader => "leader",
            Role::Follower => "follower",
        })
    }
}

/// Why a teleop loop could not start or a cycle failed.
#[derive(Debug, thiserror::Error)]
pub enum TeleopError {
    /// The rate is not a finite number of cycles per second within the supported range.
    #[error("teleop rate {0} Hz is not between 1 and 1000 Hz")]
    InvalidRate(f64),
    /// The ramp speed is not above 0 rad/s.
    #[error("ramp speed {0} rad/s must be above 0 (infinite: no ramp)")]
    InvalidRampSpeed(f64),
    /// A safety layer was configured with an unusable value.
    #[error(transparent)]
    Setting(#[from] InvalidSetting),
    /// An arm failed.
    #[error("{role} arm: {source}")]
    Arm {
        /// Which arm.
        role: Role,
        /// What failed.
        #[source]
        source: ArmError,
    },
    /// The follower's safety pipeline refused (a servo fault still present at torque on).
    #[error("follower arm: {0}")]
    Follower(GuardError),
    /// The twin failed.
    #[error("twin: {0}")]
    Twin(#[from] TwinError),
}

impl TeleopError {
    /// Wraps an arm error with the arm's role.
    pub(super) fn arm(role: Role) -> impl FnOnce(ArmError) -> Self {
        move |source| TeleopError::Arm { role, source }
    }

    /// An error of the follower's safety pipeline; an arm failure keeps the arm's role.
    pub(super) fn follower(error: GuardError) -> Self {
        match error {
            GuardError::Arm(source) => TeleopError::Arm {
                role: Role::Follower,
                source,
            },
            other => TeleopError::Follower(other),
        }
    }
}

/// Why a cycle sent nothing although every layer would have let a target through.
#[derive(Debug, Clone, PartialEq)]
pub enum SkipReason {
    /// A target outside the model's or the follower's calibrated range.
    OutOfRange(SafetyError),
    /// The fault policy holds the follower or switched its torque off.
    Fault(FaultAction),
}

/// The result of one cycle.
#[derive(Debug)]
pub enum CycleOutcome {
    /// Goals (twin radians, action-key order) went to the follower and the twin.
    Commanded {
        /// The goals sent, after the delta cap.
        goals: [f64; 6],
        /// Whether the delta cap limited them.
        capped: bool,
    },
    /// Nothing was sent this cycle; the loop goes on.
    Skipped(SkipReason),
    /// The emergency stop or the table guard refused the target; nothing was sent.
    Refused(SafetyError),
    /// An arm or the twin failed; the follower keeps its last goal.
    Failed(TeleopError),
}

/// One cycle: its outcome and the safety events it raised (each lasting condition once).
#[derive(Debug)]
pub struct Cycle {
    /// What the cycle did.
    pub outcome: CycleOutcome,
    /// Safety events raised, in order.
    pub events: Vec<SafetyEvent>,
}

/// The kind of a repeated condition: a refusal or a cap is journalled when it starts, not on
/// every cycle it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Condition {
    /// Refused while the emergency stop is latched.
    Latched,
    /// A joint outside a range.
    OutOfRange(Joint, LimitSource),
    /// A non-finite target.
    NonFinite(Joint),
    /// The TCP below the table, or not computable.
    Table,
    /// The twin's preview refused the goals, or could not run.
    Preview,
    /// Goals limited by the delta cap.
    Capped,
}

impl Condition {
    /// The condition a refusal stands for.
    pub(super) fn of(error: &SafetyError) -> Self {
        match error {
            SafetyError::OutOfRange { joint, limit, .. } => Condition::OutOfRange(*joint, *limit),
            SafetyError::NonFinite { joint, .. } => Condition::NonFinite(*joint),
            SafetyError::BelowTable { .. } | SafetyError::Kinematics(_) => Condition::Table,
            SafetyError::EstopLatched { .. } => Condition::Latched,
            SafetyError::PreviewRefused { .. } | SafetyError::PreviewFailed(_) => Condition::Preview,
        }
    }
}
