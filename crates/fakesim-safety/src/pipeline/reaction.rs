//! The pipeline's reactions between commands: to the arm's health (hold, torque off, latch),
//! to a stalled joint, and to an emergency stop.

use super::{GuardError, SafetyPipeline};
use crate::bus_loss::LinkChange;
use crate::{FaultAction, LatchedBy, SafetyEvent};
use fakesim_arm::Joint;

/// What [`SafetyPipeline::react_to_faults`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaction {
    /// The action the arm's health calls for now.
    pub action: FaultAction,
    /// What became of the bus since the last reaction, oldest first.
    pub link: Vec<LinkChange>,
}

impl SafetyPipeline {
    /// Runs the fault policy on the arm's health, hands what it raised to `record` (before
    /// acting, so the record comes first), and reacts: hold, torque off, or torque off and
    /// then latch the emergency stop. Reactions follow the edges of conditions: a lasting fault is
    /// not acted on again. Failures of the reaction itself are logged. Returns the action the
    /// health calls for now and what became of the bus since the last call (every loss and
    /// recovery, counted, see [`crate::bus_loss`]).
    pub async fn react_to_faults(&self, mut record: impl FnMut(SafetyEvent)) -> Reaction {
        let Some(arm) = &self.arm else {
            return Reaction {
                action: FaultAction::Continue,
                link: Vec::new(),
            };
        };
        let decision = self.progress().faults.evaluate(&arm.health());
        let changed = !decision.events.is_empty() || !decision.link.is_empty();
        decision.events.into_iter().for_each(&mut record);
        let outcome: Result<(), GuardError> = match decision.action {
            _ if !changed => Ok(()),
            FaultAction::TorqueOff => {
                let switched = self.switch_torque_off().await.map_err(GuardError::from);
                // A servo's fault, not a loss: the stop it latches names a lost bus or servo.
                if !decision.latch
                    && let Some(cause) = decision.reasons.first()
                {
                    self.progress().torque_off_cause = Some(cause.clone());
                }
                switched
            }
            FaultAction::Hold => match arm.read_state().await {
                Ok(state) => self.hold(state.positions_rad()).await,
                Err(e) => Err(e.into()),
            },
            FaultAction::Continue => Ok(()),
        };
        if let Err(e) = outcome {
            tracing::error!(error = %e, action = ?decision.action, "fault reaction failed");
        }
        // Latched after the reaction, so whoever sees the latch finds torque already off.
        if decision.latch && !self.layers.estop.is_latched() {
            record(self.layers.estop.trip_by(decision.reasons.join("; "), LatchedBy::Arm));
            self.disarm_watchdog();
        }
        Reaction {
            action: decision.action,
            link: decision.link,
        }
    }

    /// Switches one joint's torque off because of `cause` (the stall guard) and latches the
    /// stop for the arm; motion stays refused until the stop is reset and torque comes back
    /// on. Returns the latch event.
    pub async fn stop_joint(&self, joint: Joint, cause: &str) -> SafetyEvent {
        if let Some(arm) = &self.arm
            && let Err(e) = arm.set_joint_torque(joint, false).await
        {
            tracing::error!(error = %e, joint = joint.label(), "switching the joint's torque off failed");
        }
        self.progress().torque_off_cause = Some(cause.to_owned());
        self.disarm_watchdog();
        self.layers.estop.trip_by(cause, LatchedBy::Arm)
    }

    /// Latches the emergency stop and switches torque off; returns the event.
    pub async fn emergency_stop(&self, reason: &str) -> SafetyEvent {
        let event = self.layers.estop.trip(reason);
        if let Err(e) = self.switch_torque_off().await {
            tracing::error!(error = %e, "emergency stop: torque off failed");
        }
        event
    }
}
