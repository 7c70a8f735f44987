//! Writing to the arm in the port task: the goals, and torque on the arm or one joint.

use super::Actor;
use crate::reading::attempt_failed;
use crate::trace;
use fakesim_arm::{ArmError, Joint, ServoFailure};
use feetech::bus::BusError;
use tokio::io::{AsyncRead, AsyncWrite};

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Actor<T> {
    pub(super) async fn command(&mut self, goals: [f64; 6]) -> Result<(), ArmError> {
        self.ensure_open()?;
        let mut entries = Vec::with_capacity(Joint::ALL.len());
        for joint in Joint::ALL {
            let value = goals[joint.index()];
            let steps = self
                .mapping
                .rad_to_servo(joint, value)
                .ok_or(ArmError::NonFiniteGoal { joint, value })?;
            entries.push((joint, steps));
        }
        self.write_goals(&entries).await
    }

    async fn write_goals(&mut self, goals: &[(Joint, i32)]) -> Result<(), ArmError> {
        let entries: Vec<(u8, i32)> = goals
            .iter()
            .map(|(joint, steps)| (self.mapping.servo_id(*joint), *steps))
            .collect();
        if let Err(error) = self.bus.sync_write_goal_positions(&entries).await {
            return Err(self.bus_failure(error));
        }
        for (joint, steps) in goals {
            self.servo(*joint).goal_steps = Some(*steps);
        }
        self.trace_goals();
        Ok(())
    }

    /// Records the goals every servo holds now, when tracing.
    fn trace_goals(&self) {
        if let Some(recorder) = &self.trace {
            let at = std::time::Instant::now();
            trace::goals(recorder, &self.mapping, at, &self.servos, self.torque().is_on());
        }
    }

    /// Torque on first makes every goal the present position, so no joint jumps to a stale
    /// goal; torque off is attempted on every servo even when some fail.
    pub(super) async fn set_torque(&mut self, enabled: bool) -> Result<(), ArmError> {
        self.ensure_open()?;
        if enabled {
            let state = self.read_state().await?;
            let hold: Vec<(Joint, i32)> = Joint::ALL
                .into_iter()
                .filter_map(|joint| state.joint(joint).servo.map(|s| (joint, s.steps)))
                .collect();
            self.write_goals(&hold).await?;
        }
        self.switch_torque(&Joint::ALL, enabled).await?;
        tracing::info!(port = %self.config.port, enabled, "torque switched");
        Ok(())
    }

    /// Switches one joint's torque (on: holding where it stands).
    pub(super) async fn set_joint_torque(&mut self, joint: Joint, enabled: bool) -> Result<(), ArmError> {
        self.ensure_open()?;
        if enabled {
            let id = self.mapping.servo_id(joint);
            let steps = self
                .bus
                .hold_present(id)
                .await
                .map_err(|error| self.bus_failure(error))?;
            self.servo(joint).goal_steps = Some(steps);
            self.trace_goals();
        }
        self.switch_torque(&[joint], enabled).await?;
        tracing::info!(port = %self.config.port, joint = joint.label(), enabled, "joint torque switched");
        Ok(())
    }

    /// Writes torque to `joints`, trying every one of them even when some fail.
    pub(crate) async fn switch_torque(&mut self, joints: &[Joint], enabled: bool) -> Result<(), ArmError> {
        let mut failures = Vec::new();
        for &joint in joints {
            match self.servo_torque(joint, enabled).await {
                Ok(()) => {}
                Err(error @ BusError::PortGone(_)) => return Err(self.bus_failure(error)),
                Err(error) => failures.push(ServoFailure {
                    joint,
                    id: self.mapping.servo_id(joint),
                    error: error.to_string(),
                }),
            }
        }
        if !failures.is_empty() {
            return Err(self.unresponsive(failures));
        }
        Ok(())
    }

    async fn servo_torque(&mut self, joint: Joint, enabled: bool) -> Result<(), BusError> {
        let id = self.mapping.servo_id(joint);
        let (retries, lost_after) = (self.config.retries, self.config.lost_after);
        let mut attempt = 0;
        loop {
            let result = if enabled {
                self.bus.torque_on(id).await
            } else {
                self.bus.torque_off(id).await
            };
            let servo = self.servo(joint);
            match result {
                Ok(flags) => {
                    servo.error_flags = flags;
                    servo.torque_enabled = Some(enabled);
                    servo.transaction_done(true, lost_after);
                    return Ok(());
                }
                Err(error) if error.is_retryable() && attempt < retries => {
                    attempt_failed(servo, &error);
                    servo.retried();
                    attempt += 1;
                }
                Err(error) => {
                    attempt_failed(servo, &error);
                    servo.transaction_done(false, lost_after);
                    // The write may have landed with only its reply lost.
                    servo.torque_enabled = None;
                    return Err(error);
                }
            }
        }
    }
}
