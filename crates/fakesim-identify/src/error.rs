//! What identification refuses or fails at.

use fakesim_twin::TwinError;

/// Why a recording cannot be used for a fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unusable {
    /// Too little of it to split and fit.
    #[error("too short: {seconds:.1} s of usable readings ({readings} readings), the fit needs at least {need_s:.0} s")]
    TooShort {
        /// Seconds usable.
        seconds: f64,
        /// Readings usable.
        readings: usize,
        /// Seconds needed.
        need_s: f64,
    },
    /// A joint neither moved nor was asked to: nothing about its dynamics is in the recording.
    #[error("no motion on joint {joint}: it moved {moved_rad:.4} rad in all (the fit needs {need_rad:.3} rad)")]
    NoMotion {
        /// LeRobot label.
        joint: &'static str,
        /// Its measured travel (max − min, rad).
        moved_rad: f64,
        /// Travel needed (rad).
        need_rad: f64,
    },
    /// Torque was off (the arm was moved by hand or limp), so goals did not drive it.
    #[error("torque off for {off_s:.1} of {total_s:.1} s; record in hil mode with torque on")]
    TorqueOff {
        /// Seconds with torque off.
        off_s: f64,
        /// Seconds in all.
        total_s: f64,
    },
    /// A joint was held at its limit or at full load for much of the recording.
    #[error("joint {joint} saturated: {percent:.0} % {what}")]
    Saturated {
        /// LeRobot label.
        joint: &'static str,
        /// What saturated, and of what the share is: the goals beyond the joint's range, or
        /// the readings at full load.
        what: &'static str,
        /// Share of the goals or the readings.
        percent: f64,
    },
    /// Goals or readings out of time order or not finite.
    #[error("malformed: {0}")]
    Malformed(String),
}

/// Why identification failed.
#[derive(Debug, thiserror::Error)]
pub enum IdentifyError {
    /// A recording could not be read.
    #[error("{path}: {what}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        what: String,
    },
    /// A recording cannot be used.
    #[error("{name}: cannot use this recording: {reason}")]
    Unusable {
        /// The recording.
        name: String,
        /// Why.
        reason: Unusable,
    },
    /// The recordings are of different arms, or of another arm than asked.
    #[error("recordings of different arms: {0}")]
    MixedArms(String),
    /// The twin could not be loaded or configured.
    #[error(transparent)]
    Twin(#[from] TwinError),
    /// The fit broke off: one of its threads failed.
    #[error("the fit stopped: {0}; this is a bug in fakesim-hil, please report it with the log above")]
    Fault(#[from] FitFault),
}

/// Which of the fit's threads failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitFault {
    /// A replay worker's model was left unusable by a panic during an earlier rollout.
    #[error("replay worker {worker}'s model is unusable (poisoned by an earlier panic)")]
    WorkerPoisoned {
        /// The worker's index.
        worker: usize,
    },
    /// A replay worker panicked during a rollout.
    #[error("replay worker {worker} panicked during a rollout")]
    WorkerPanicked {
        /// The worker's index.
        worker: usize,
    },
    /// A thread of the strategies on the joints alone panicked.
    #[error("search thread {thread} panicked while fitting the joints alone")]
    SearchPanicked {
        /// The thread's index.
        thread: usize,
    },
}
