//! The twin as an arm, so sim-only runs go through the same trait.

use std::sync::atomic::{AtomicBool, Ordering};

use fakesim_arm::values::{Check, JointValues, resolve};
use fakesim_arm::{Arm, ArmError, ArmHealth, ArmState, BoxFuture, Joint, JointState, Torque};
use fakesim_twin::{TwinError, TwinHandle};

/// The twin's arm: reads its joint positions, commands set its position-servo setpoints.
/// Stepping physics stays with whoever owns the episode. The twin has no torque switch:
/// [`Arm::set_torque`] is only recorded in [`Arm::health`].
#[derive(Clone)]
pub struct TwinArm {
    twin: TwinHandle,
    torque: std::sync::Arc<AtomicBool>,
}

impl TwinArm {
    /// An arm over a running twin (torque reported on: the twin's servos always act).
    pub fn new(twin: TwinHandle) -> Self {
        Self {
            twin,
            torque: std::sync::Arc::new(AtomicBool::new(true)),
        }
    }
}

impl Arm for TwinArm {
    fn port(&self) -> Option<&str> {
        None
    }

    fn read_state(&self) -> BoxFuture<'_, Result<ArmState, ArmError>> {
        Box::pin(async move {
            let qpos = self.twin.with_sim(|sim| sim.arm_qpos()).await.map_err(arm_error)?;
            Ok(ArmState {
                joints: qpos.map(|position_rad| JointState {
                    position_rad,
                    servo: None,
                }),
            })
        })
    }

    /// Refuses (changing nothing) a goal that is not finite or outside the setpoint range.
    fn command(&self, goals_rad: [f64; 6]) -> BoxFuture<'_, Result<(), ArmError>> {
        Box::pin(async move {
            self.twin
                .try_with_sim(move |sim| {
                    let ranges = sim.ctrl_ranges();
                    resolve(
                        sim.arm(),
                        &JointValues::Ordered(goals_rad.to_vec()),
                        Check::Within(&ranges),
                    )?;
                    sim.set_arm_ctrl(&goals_rad);
                    Ok(())
                })
                .await
                .map_err(arm_error)
        })
    }

    fn set_torque(&self, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
        self.torque.store(enabled, Ordering::Relaxed);
        Box::pin(async { Ok(()) })
    }

    /// The twin's joints cannot go limp one at a time: refused, changing nothing.
    fn set_joint_torque(&self, joint: Joint, _enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
        Box::pin(async move {
            Err(ArmError::Failed(format!(
                "the twin has no torque switch for {joint}; its servos always act"
            )))
        })
    }

    fn health(&self) -> ArmHealth {
        ArmHealth::no_servos(Torque::confirmed(Some(self.torque.load(Ordering::Relaxed))))
    }
}

/// The twin's refusals and failures as an arm's: a value it refuses stays that refusal, the
/// rest keeps its message.
fn arm_error(error: TwinError) -> ArmError {
    match error {
        TwinError::Value(refusal) => ArmError::Refused(refusal),
        other => ArmError::Failed(other.to_string()),
    }
}
