//! Safety layers, one small type each, and the events they produce.
//!
//! A control tick runs them in this order: [`EstopLatch::check`], [`RangeGuard::check`]
//! (refuse), [`TableGuard::check`] (refuse), [`DeltaCap::limit`] (limit and report), then
//! the goals go to the arm. Between ticks, [`Watchdog::check`] holds the arm when commands
//! stop coming and [`FaultPolicy::evaluate`] turns servo flags and bus health into
//! hold / torque-off / latch decisions. Every firing yields a [`SafetyEvent`] for the
//! journal and the hardware status.

mod delta;
mod estop;
mod event;
mod fault;
mod range;
mod table;
mod watchdog;

pub use delta::{Capped, CappedJoint, DeltaCap};
pub use estop::EstopLatch;
pub use event::{InvalidSetting, LimitSource, SafetyError, SafetyEvent};
pub use fault::{FaultAction, FaultDecision, FaultPolicy};
pub use range::RangeGuard;
pub use table::{DEFAULT_TABLE_MARGIN, ScratchTwinKinematics, TABLE_SURFACE_Z, TableGuard, TcpKinematics};
pub use watchdog::{Watchdog, WatchdogAction, WatchdogVerdict};

/// Checks that every value is finite, naming the first joint that is not.
fn require_finite(values: &[f64; 6]) -> Result<(), SafetyError> {
    for joint in fakesim_arm::mapping::Joint::ALL {
        let value = values[joint.index()];
        if !value.is_finite() {
            return Err(SafetyError::NonFinite { joint, value });
        }
    }
    Ok(())
}
