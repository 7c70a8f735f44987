//! Refusals ([`SafetyError`]) and the journal record of every layer firing ([`SafetyEvent`]).

use serde::Serialize;

use super::delta::CappedJoint;
use super::fault::FaultAction;
use fakesim_arm::Joint;

/// Which range a refused target broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitSource {
    /// The twin model's joint (or setpoint) range.
    Model,
    /// The real servo's calibrated range, in the twin's radians.
    Calibrated,
}

impl std::fmt::Display for LimitSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LimitSource::Model => "model",
            LimitSource::Calibrated => "calibrated",
        })
    }
}

/// A target a safety layer refused; nothing was sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SafetyError {
    /// A joint target outside a range (refused, not clamped).
    #[error(
        "{joint}={value:.4} rad ({value_deg:.1} deg) is outside the {limit} range [{lo:.4}, {hi:.4}] rad \
         ([{lo_deg:.1}, {hi_deg:.1}] deg); refused, not clamped",
        value_deg = value.to_degrees(),
        lo_deg = lo.to_degrees(),
        hi_deg = hi.to_degrees()
    )]
    OutOfRange {
        /// The joint.
        joint: Joint,
        /// The target (rad).
        value: f64,
        /// Lower end (rad).
        lo: f64,
        /// Upper end (rad).
        hi: f64,
        /// Which range.
        limit: LimitSource,
    },
    /// A NaN or infinite target or measurement.
    #[error("{joint}={value} is not a finite number")]
    NonFinite {
        /// The joint.
        joint: Joint,
        /// The value.
        value: f64,
    },
    /// The target puts the TCP below the table surface plus the margin.
    #[error(
        "the target puts the TCP at z={tcp_z:.4} m, below the table surface {surface_z:.3} m plus margin {margin:.3} m",
        tcp_z = tcp[2]
    )]
    BelowTable {
        /// TCP position the target gives (m, world frame).
        tcp: [f64; 3],
        /// Table surface height (m).
        surface_z: f64,
        /// Margin above it (m).
        margin: f64,
    },
    /// The TCP of the target could not be computed, so it cannot be checked.
    #[error("cannot compute the TCP of the target: {0}")]
    Kinematics(String),
    /// The twin's preview of the command shows a violation (a contact, a joint past its range).
    #[error(
        "the twin's preview of this command shows {violations}; refused before anything moved (check the path \
         with PreviewActions)"
    )]
    PreviewRefused {
        /// The violations, one line (bounded).
        violations: String,
    },
    /// The twin could not preview the command, so it cannot be checked.
    #[error("cannot preview the command on the twin: {0}")]
    PreviewFailed(String),
    /// The emergency stop is latched.
    #[error("emergency stop latched ({reason}); motion refused until an explicit reset")]
    EstopLatched {
        /// Why it was latched.
        reason: String,
    },
}

impl SafetyError {
    /// The journal record of this refusal.
    pub fn event(&self) -> SafetyEvent {
        match self {
            SafetyError::OutOfRange {
                joint,
                value,
                lo,
                hi,
                limit,
            } => SafetyEvent::RangeRefused {
                joint: *joint,
                value_rad: *value,
                lo_rad: *lo,
                hi_rad: *hi,
                limit: *limit,
            },
            SafetyError::NonFinite { joint, value } => SafetyEvent::NonFiniteRefused {
                joint: *joint,
                value: value.to_string(),
            },
            SafetyError::BelowTable { tcp, surface_z, margin } => SafetyEvent::TableRefused {
                tcp: *tcp,
                min_z: surface_z + margin,
            },
            SafetyError::Kinematics(reason) => SafetyEvent::KinematicsFailed { reason: reason.clone() },
            SafetyError::PreviewRefused { violations } => SafetyEvent::PreviewRefused {
                violations: violations.clone(),
            },
            SafetyError::PreviewFailed(reason) => SafetyEvent::PreviewFailed { reason: reason.clone() },
            SafetyError::EstopLatched { reason } => SafetyEvent::RefusedWhileLatched { reason: reason.clone() },
        }
    }
}

/// One firing of a safety layer, for `events.jsonl` and the hardware status. Serialises with
/// an `"event"` tag, e.g. `{"event":"delta_capped","joints":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SafetyEvent {
    /// [`super::RangeGuard`] refused a target.
    RangeRefused {
        /// The joint.
        joint: Joint,
        /// The target (rad).
        value_rad: f64,
        /// Lower end of the range broken (rad).
        lo_rad: f64,
        /// Upper end (rad).
        hi_rad: f64,
        /// Which range.
        limit: LimitSource,
    },
    /// A non-finite target was refused.
    NonFiniteRefused {
        /// The joint.
        joint: Joint,
        /// The value, as text (`NaN`, `inf`).
        value: String,
    },
    /// [`super::DeltaCap`] limited some joints this tick.
    DeltaCapped {
        /// The joints limited.
        joints: Vec<CappedJoint>,
    },
    /// [`super::TableGuard`] refused a target.
    TableRefused {
        /// TCP position of the target (m).
        tcp: [f64; 3],
        /// Lowest allowed TCP height (m).
        min_z: f64,
    },
    /// The TCP of a target could not be computed; the target was refused.
    KinematicsFailed {
        /// Why.
        reason: String,
    },
    /// The twin's preview of a command showed a violation; the command was refused.
    PreviewRefused {
        /// The violations, one line.
        violations: String,
    },
    /// The twin could not preview a command; the command was refused.
    PreviewFailed {
        /// Why.
        reason: String,
    },
    /// [`super::Watchdog`]: no command for longer than the timeout; holding position.
    WatchdogHold {
        /// Time since the last command (ms).
        silent_ms: u64,
        /// The timeout (ms).
        timeout_ms: u64,
    },
    /// [`super::Watchdog`]: commands came back after a hold.
    WatchdogResumed,
    /// [`super::FaultPolicy`]: a servo reports error flags (new or changed).
    ServoFault {
        /// The joint.
        joint: Joint,
        /// Servo id.
        id: u8,
        /// Flag names, e.g. `["OVERLOAD"]`.
        flags: Vec<String>,
        /// What the policy decided.
        action: FaultAction,
    },
    /// [`super::FaultPolicy`]: a servo's error flags cleared.
    ServoFaultCleared {
        /// The joint.
        joint: Joint,
        /// Servo id.
        id: u8,
    },
    /// [`super::FaultPolicy`]: a servo stopped answering after the retries.
    ServoLost {
        /// The joint.
        joint: Joint,
        /// Servo id.
        id: u8,
        /// Failed transactions in a row.
        consecutive_failures: u32,
        /// Its last error.
        last_error: Option<String>,
    },
    /// [`super::FaultPolicy`]: a servo that reported an overload stopped answering: it locked
    /// up, and only a power cycle brings it back.
    ServoLockedUp {
        /// The joint.
        joint: Joint,
        /// Servo id.
        id: u8,
        /// What to do, for a person.
        message: String,
    },
    /// [`super::FaultPolicy`]: a servo reset its RAM (torque, lock or configuration lost, as
    /// after a supply that sagged); it was configured again with torque off, and the arm held.
    ServoReset {
        /// The joint.
        joint: Joint,
        /// Servo id.
        id: u8,
        /// What the servo held that the daemon had not written.
        detail: Option<String>,
    },
    /// The stall guard: a joint stayed under load away from its goal for longer than its
    /// window; its torque was switched off and the stop latched.
    JointStalled {
        /// The joint.
        joint: Joint,
        /// Its load (signed percent of full duty).
        load_percent: f64,
        /// Goal minus measured position (rad).
        error_rad: f64,
        /// How long it lasted (ms).
        lasted_ms: u64,
    },
    /// [`super::FaultPolicy`]: the bus is lost (port gone or no servo answers).
    BusLost {
        /// Why.
        reason: String,
    },
    /// The link to the arm's bus changed state (lost, reconnecting, verifying, connected).
    BusLink {
        /// The state it entered.
        state: String,
        /// The port.
        port: String,
        /// Attempts to reopen the port in this outage so far.
        attempts: u32,
        /// Time lost in outages since the arm was opened, this one included (s).
        time_lost_s: f64,
        /// The arm's latest error, when the link is not connected.
        last_error: Option<String>,
    },
    /// [`super::EstopLatch`] latched.
    EstopLatched {
        /// Why.
        reason: String,
    },
    /// [`super::EstopLatch`] was reset.
    EstopReset {
        /// The reason it had been latched for.
        was: String,
    },
    /// A motion was refused because the emergency stop is latched.
    RefusedWhileLatched {
        /// Why it is latched.
        reason: String,
    },
    /// A goal about to be written broke the last check before the bus (outside the effective
    /// range, or the emergency stop latched meanwhile): a defect of the layers before it;
    /// nothing was written.
    InvariantViolated {
        /// What the last check found.
        detail: String,
    },
    /// The shadow found a joint held away from its predicted position under load; the arm was
    /// held where it stood.
    JointBlocked {
        /// The joint.
        joint: Joint,
        /// Where it is held (rad).
        position_rad: f64,
        /// Measured minus predicted position (rad).
        residual_rad: f64,
        /// Its load (signed percent of full duty).
        load_percent: f64,
        /// What a person reads, e.g. `wrist_flex blocked at 0.42 rad, load 87 %`.
        message: String,
    },
    /// The shadow found a steady offset at rest without load: the joint's calibration drifted.
    CalibrationDrift {
        /// The joint.
        joint: Joint,
        /// Measured minus predicted position (rad).
        offset_rad: f64,
        /// What a person reads, e.g. `wrist_roll reads 0.052 rad (3.0 deg) off at rest`.
        message: String,
    },
}

impl SafetyEvent {
    /// The shadow's event for a joint blocked at `position_rad` under `load_percent`.
    pub fn joint_blocked(joint: Joint, position_rad: f64, residual_rad: f64, load_percent: f64) -> Self {
        SafetyEvent::JointBlocked {
            joint,
            position_rad,
            residual_rad,
            load_percent,
            message: format!(
                "{} blocked at {position_rad:.2} rad, load {:.0} %",
                joint.label(),
                load_percent.abs()
            ),
        }
    }

    /// The shadow's event for a joint whose reading at rest is `offset_rad` off.
    pub fn calibration_drift(joint: Joint, offset_rad: f64) -> Self {
        SafetyEvent::CalibrationDrift {
            joint,
            offset_rad,
            message: format!(
                "{} reads {offset_rad:.3} rad ({:.1} deg) off at rest: calibration drift",
                joint.label(),
                offset_rad.to_degrees()
            ),
        }
    }
}

/// A safety layer configured with an unusable value (negative, zero or not finite).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{setting}={value} is not a usable setting")]
pub struct InvalidSetting {
    /// The setting.
    pub setting: &'static str,
    /// The value given.
    pub value: f64,
}
