//! Reading the arm in the port task: the state block or the positions as the cadence plans,
//! lost or corrupted replies asked again per servo, and each servo's RAM checked with every
//! state block (a servo that lost it was reset).

use super::Actor;
use crate::ram;
use crate::reading::{attempt_failed, joint_state};
use crate::trace;
use fakesim_arm::{ArmError, ArmState, Joint, ServoFailure};
use feetech::bus::{BusError, Reply, SyncReadResults};
use feetech::control_table::ServoState;
use tokio::io::{AsyncRead, AsyncWrite};

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Actor<T> {
    /// One reading: a SYNC_READ of the state block or, between blocks, of the positions only
    /// (see [`Cadence`]), re-asking only the servos whose reply was lost or corrupted, up to
    /// the retry budget.
    pub(super) async fn read_state(&mut self) -> Result<ArmState, ArmError> {
        self.ensure_open()?;
        let block = self.cadence.wants_block();
        let began = std::time::Instant::now();
        let mut replies: [Option<Reply<ServoState>>; 6] = Default::default();
        let mut errors: [Option<BusError>; 6] = Default::default();
        let mut pending: Vec<Joint> = Joint::ALL.to_vec();
        for attempt in 0..=self.config.retries {
            if attempt > 0 {
                pending.iter().for_each(|joint| self.servo(*joint).retried());
            }
            let round = match self.read_round(block, &pending).await {
                Ok(round) => round,
                Err(error) => return Err(self.bus_failure(error)),
            };
            let mut retry = Vec::new();
            for (joint, outcome) in pending.into_iter().zip(round) {
                match outcome {
                    Ok(reply) => replies[joint.index()] = Some(reply),
                    Err(error) => {
                        attempt_failed(self.servo(joint), &error);
                        if error.is_retryable() {
                            retry.push(joint);
                        }
                        errors[joint.index()] = Some(error);
                    }
                }
            }
            pending = retry;
            if pending.is_empty() {
                break;
            }
        }
        let mut state = ArmState::default();
        let mut failures = Vec::new();
        let mut velocity = [0; 6];
        for joint in Joint::ALL {
            let lost_after = self.config.lost_after;
            let reply = replies[joint.index()].take();
            velocity[joint.index()] = reply.as_ref().map_or(0, |reply| reply.value.velocity);
            if let Some(reply) = reply.as_ref().filter(|_| block) {
                self.cadence.record(joint, reply.value);
            }
            let reading = reply.as_ref().map(|reply| joint_state(&self.mapping, joint, reply));
            let servo = self.servo(joint);
            servo.transaction_done(reading.is_some(), lost_after);
            match reading {
                Some(reading) => {
                    servo.error_flags = reading.servo.map(|s| s.error_flags).unwrap_or_default();
                    servo.last_reading = Some(reading);
                    state.joints[joint.index()] = reading;
                }
                None => {
                    let id = servo.id;
                    let error = errors[joint.index()].take().unwrap_or(BusError::NoReply { id });
                    failures.push(ServoFailure {
                        joint,
                        id,
                        error: error.to_string(),
                    });
                }
            }
        }
        self.cadence.reading_done(block, failures.is_empty());
        if block {
            // A servo that did not answer the reading would not answer this either: asking it
            // would only add a timeout to seeing it silent.
            let answered: Vec<Joint> = Joint::ALL
                .into_iter()
                .filter(|joint| !failures.iter().any(|failure| failure.joint == *joint))
                .collect();
            self.check_ram(&answered).await?;
        }
        if failures.is_empty() {
            if let Some(recorder) = &self.trace {
                trace::reading(recorder, &self.mapping, began, &state, velocity, self.torque().is_on());
            }
            Ok(state)
        } else {
            Err(self.unresponsive(failures))
        }
    }

    /// One SYNC_READ attempt of `joints`: the state block, or the positions with the rest
    /// carried over from the last block.
    async fn read_round(&mut self, block: bool, joints: &[Joint]) -> Result<SyncReadResults<ServoState>, BusError> {
        let ids: Vec<u8> = joints.iter().map(|joint| self.mapping.servo_id(*joint)).collect();
        if block {
            return self.bus.sync_read_state(&ids).await;
        }
        let round = self.bus.sync_read_positions(&ids).await?;
        let cadence = &self.cadence;
        Ok(joints
            .iter()
            .zip(round)
            .map(|(joint, outcome)| outcome.map(|reply| reply.map(|position| cadence.carry(*joint, position))))
            .collect())
    }

    /// Reads the RAM of `joints`' servos and handles those that reset: configured again, torque
    /// off.
    async fn check_ram(&mut self, joints: &[Joint]) -> Result<(), ArmError> {
        if joints.is_empty() {
            return Ok(());
        }
        let ids: Vec<u8> = joints.iter().map(|joint| self.mapping.servo_id(*joint)).collect();
        let round = match self.bus.sync_read(ram::ADDRESS, ram::LEN, &ids).await {
            Ok(round) => round,
            Err(error @ BusError::PortGone(_)) => return Err(self.bus_failure(error)),
            // A lost RAM read is no verdict; the next state block reads it again.
            Err(_) => return Ok(()),
        };
        let mut suspects = Vec::new();
        for (&joint, outcome) in joints.iter().zip(round) {
            let Ok(reply) = outcome else { continue };
            let torque = self.servo(joint).torque_enabled;
            if self.ram.check(joint, &reply.value, torque).is_some() {
                suspects.push(joint);
            }
        }
        for joint in suspects {
            if let Some(difference) = self.confirm_reset(joint).await? {
                self.servo_was_reset(joint, &difference).await?;
            }
        }
        Ok(())
    }

    /// Reads a suspect servo's RAM once more on its own, so that one late or misread reply on
    /// a busy bus is not taken for a reset; says what still differs, if anything.
    async fn confirm_reset(&mut self, joint: Joint) -> Result<Option<String>, ArmError> {
        let id = self.mapping.servo_id(joint);
        match self.bus.read(id, ram::ADDRESS, ram::LEN).await {
            Ok(reply) => {
                let torque = self.servo(joint).torque_enabled;
                Ok(self.ram.check(joint, &reply.value, torque))
            }
            Err(error @ BusError::PortGone(_)) => Err(self.bus_failure(error)),
            Err(_) => Ok(None),
        }
    }

    /// A servo lost its RAM: counted, its torque switched off, the servos configured again.
    async fn servo_was_reset(&mut self, joint: Joint, difference: &str) -> Result<(), ArmError> {
        let id = self.mapping.servo_id(joint);
        tracing::warn!(port = %self.config.port, joint = joint.label(), id, %difference, "servo reset its RAM");
        let servo = self.servo(joint);
        servo.resets += 1;
        servo.last_error = Some(format!("reset: {difference}"));
        self.set_joint_torque(joint, false).await?;
        if let Some(reconnection) = self.reconnection.as_mut()
            && let Err(error) = reconnection.reconnect.prepare(&mut self.bus).await
        {
            tracing::error!(joint = joint.label(), %error, "configuring the servos again after a reset failed");
            self.last_error = Some(format!(
                "{} (servo {id}) reset and could not be configured again: {error}",
                joint.label()
            ));
        }
        self.bus.set_config(self.operating);
        // Configuring leaves the EEPROM locked; torque off unlocks it again, as expected.
        self.set_joint_torque(joint, false).await?;
        self.ram.forget_joint(joint);
        Ok(())
    }
}
