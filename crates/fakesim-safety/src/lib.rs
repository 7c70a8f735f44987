//! Safety layers, one small type each, the events they produce, and the one pipeline that
//! runs them for every command to the real arm.
//!
//! [`SafetyPipeline`] runs the layers in this order: [`EstopLatch::check`],
//! [`RangeGuard::check`] (refuse), [`TableGuard::check`] (refuse), the ramp after torque came
//! on or a hold (limit), [`DeltaCap::limit`] (limit and report), the preview of the goals
//! ([`CommandPreview`], refuse; the twin's is in `fakesim-bridge`), then the goals go to the
//! arm. Between commands, [`Watchdog::check`] holds the arm when commands stop coming and
//! [`FaultPolicy::evaluate`] turns servo flags and bus health into hold / torque-off / latch
//! reactions. Every firing yields a [`SafetyEvent`] for the journal and the hardware status.
pub mod bus_loss;
mod delta;
mod estop;
mod event;
mod fault;
mod pipeline;
mod ramp;
mod range;
mod table;
mod watchdog;

pub use delta::{Capped, CappedJoint, DeltaCap};
pub use estop::{EstopLatch, LatchedBy};
pub use event::{InvalidSetting, LimitSource, SafetyError, SafetyEvent};
pub use fault::{FaultAction, FaultDecision, FaultPolicy};
pub use pipeline::{
    CommandPreview, Commanded, GuardError, Layers, Pace, PipelineTiming, Reaction, SafetyPipeline, check_servo_faults,
};
pub use range::RangeGuard;
pub use table::{DEFAULT_TABLE_MARGIN, TABLE_SURFACE_Z, TableGuard, TcpKinematics};
pub use watchdog::{Watchdog, WatchdogAction, WatchdogVerdict};

/// Checks that every value is finite, naming the first joint that is not.
fn require_finite(values: &[f64; 6]) -> Result<(), SafetyError> {
    for joint in fakesim_arm::Joint::ALL {
        let value = values[joint.index()];
        if !value.is_finite() {
            return Err(SafetyError::NonFinite { joint, value });
        }
    }
    Ok(())
}

/// A healthy six-servo arm, the starting point of the fault and bus-loss unit tests.
#[cfg(test)]
mod test_arm {
    use fakesim_arm::{ArmHealth, Joint, LinkHealth, ServoHealth, Torque};

    pub(crate) fn healthy() -> ArmHealth {
        ArmHealth {
            link: LinkHealth::connected(),
            torque: Torque::On,
            servos: Joint::ALL
                .iter()
                .map(|j| ServoHealth::new(*j, j.default_servo_id()))
                .collect(),
            last_error: None,
        }
    }
}
