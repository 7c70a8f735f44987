//! Switching modes: entering `hil` checks or syncs the arm and the twin and switches torque on
//! holding the present pose; entering `mirror` switches torque off. Bus transactions made
//! while switching ride through a noisy bus.

use super::{HardwareBridge, lock};
use crate::hil::error::BridgeError;
use crate::hil::mode::{Mode, SyncOption};
use fakesim_arm::{Arm, ArmError, ArmState, Joint};
use fakesim_episode::session::within_limits;
use fakesim_safety::check_servo_faults;
use std::time::{Duration, Instant};

/// Attempts a mode switch or a sync makes at a reading or a torque switch that found servos
/// silent or garbled, a control period apart, before it refuses: a noisy bus loses a reply
/// now and then, and the mirror loop rides through the same way.
const BUS_ATTEMPTS: u32 = 5;

/// What a mode switch did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeSwitch {
    /// The mode before.
    pub previous: Mode,
    /// Largest joint difference between arm and twin at the switch (rad), with hardware.
    pub max_joint_error_rad: f64,
    /// How long the sync move took.
    pub sync_duration: Duration,
}

impl HardwareBridge {
    /// Switches torque on holding the present pose (later commands ramp from it), unless a
    /// servo still reports a fault that switched it off.
    pub(super) async fn enable_torque(&self) -> Result<(), BridgeError> {
        let state = self
            .on_noisy_bus(|| async { self.recorded(self.inner.pipeline.switch_torque_on().await) })
            .await?
            .ok_or(BridgeError::NoHardware("hil"))?;
        lock(&self.inner.shadow).rebase(state.positions_rad());
        lock(&self.inner.stall).rebase();
        Ok(())
    }

    /// Switches mode. Entering `hil` checks that the arm and the twin agree, or syncs them as
    /// asked (a sync must end with the arm at the twin's pose), then switches torque on
    /// holding the present pose, and later commands ramp from it; a servo still reporting a
    /// fault refuses the switch. Entering `mirror` switches torque off.
    /// `sync_speed_rad_s` overrides the configured speed of a `MoveArmToTwin` sync.
    pub async fn set_mode(
        &self,
        mode: Mode,
        sync: SyncOption,
        sync_speed_rad_s: Option<f64>,
    ) -> Result<ModeSwitch, BridgeError> {
        let _switching = self.inner.switching.lock().await;
        let previous = self.mode();
        let started = Instant::now();
        let mut max_joint_error_rad = 0.0;
        match (mode, self.arm().cloned()) {
            (Mode::Sim, _) => self.inner.pipeline.disarm_watchdog(),
            (_, None) => return Err(BridgeError::NoHardware(mode.name())),
            (Mode::Mirror, Some(_)) => {
                self.on_noisy_bus(|| async { Ok(self.inner.pipeline.switch_torque_off().await?) })
                    .await?
            }
            (Mode::Hil, Some(arm)) => {
                self.check_link()?;
                self.check_estop()?;
                let state = self.read_arm(arm.as_ref()).await?;
                self.recorded(check_servo_faults(&state))?;
                let real = state.positions_rad();
                let twin = self.inner.twin.with_sim(|sim| sim.arm_qpos()).await?;
                let (joint, error_rad) = largest_difference(&real, &twin);
                max_joint_error_rad = error_rad;
                if error_rad > self.inner.config.disagree_threshold_rad {
                    match sync {
                        SyncOption::None => {
                            return Err(BridgeError::Disagree {
                                joint: joint.label(),
                                error_rad,
                                threshold_rad: self.inner.config.disagree_threshold_rad,
                            });
                        }
                        SyncOption::MoveTwinToArm => self.put_twin_at(real).await?,
                        SyncOption::MoveArmToTwin => {
                            let speed = sync_speed_rad_s.unwrap_or(self.inner.config.sync_speed_rad_s);
                            // The twin may stand where this arm's calibration does not reach.
                            let target = within_limits(twin, &self.limits());
                            self.move_arm_slowly(arm.as_ref(), real, target, speed).await?;
                        }
                    }
                }
                self.enable_torque().await?;
                // The arm may have been lost while the switch ran: its loss latched the stop
                // first and then waits for this switch to end before it leaves hil.
                if let Err(lost) = self.check_link().and_then(|()| self.check_estop()) {
                    if let Err(e) = self.inner.pipeline.switch_torque_off().await {
                        tracing::warn!(error = %e, "torque off after a switch the arm's loss overtook failed");
                    }
                    return Err(lost);
                }
            }
        }
        self.inner.mode.send_replace(mode);
        tracing::info!(from = previous.name(), to = mode.name(), "mode switched");
        Ok(ModeSwitch {
            previous,
            max_joint_error_rad,
            sync_duration: started.elapsed(),
        })
    }

    /// Runs `attempt` until it succeeds, fails for a reason other than silent or garbled
    /// servos, or has been tried [`BUS_ATTEMPTS`] times a control period apart.
    async fn on_noisy_bus<T, F: Future<Output = Result<T, BridgeError>>>(
        &self,
        mut attempt: impl FnMut() -> F,
    ) -> Result<T, BridgeError> {
        let mut tries = 1;
        loop {
            match attempt().await {
                Err(BridgeError::Arm(error @ (ArmError::Unresponsive { .. } | ArmError::Bus(_))))
                    if tries < BUS_ATTEMPTS =>
                {
                    tracing::debug!(%error, tries, "bus transaction failed; trying again");
                    tries += 1;
                    tokio::time::sleep(self.inner.config.control_period).await;
                }
                outcome => return outcome,
            }
        }
    }

    /// Reads the arm, riding through a noisy bus as [`Self::on_noisy_bus`] does.
    pub(super) async fn read_arm(&self, arm: &dyn Arm) -> Result<ArmState, BridgeError> {
        self.on_noisy_bus(|| async { Ok(arm.read_state().await?) }).await
    }
}

pub(super) fn largest_difference(a: &[f64; 6], b: &[f64; 6]) -> (Joint, f64) {
    Joint::ALL
        .into_iter()
        .map(|j| (j, (a[j.index()] - b[j.index()]).abs()))
        .fold(
            (Joint::ShoulderPan, 0.0),
            |best, next| if next.1 > best.1 { next } else { best },
        )
}
