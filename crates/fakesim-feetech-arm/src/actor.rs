//! The task that owns the serial port: it runs one request at a time, applies the mapping,
//! reads the state block or only the positions as [`Cadence`] plans, retries lost or
//! corrupted replies per servo, and keeps the health counters.

use feetech::bus::{Bus, BusConfig, BusError, Reply, SyncReadResults};
use feetech::control_table::ServoState;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};

use crate::cadence::Cadence;
use crate::feetech_arm::FeetechArmConfig;
use crate::mapping::CalibratedMapping;
use crate::reading::{attempt_failed, joint_state};
use fakesim_arm::{ArmError, ArmHealth, ArmState, Joint, ServoFailure, ServoHealth};

/// A call from a [`super::FeetechArm`] handle.
pub(super) enum Request {
    /// Read every joint.
    ReadState(oneshot::Sender<Result<ArmState, ArmError>>),
    /// Send goals (twin radians).
    Command([f64; 6], oneshot::Sender<Result<(), ArmError>>),
    /// Switch torque.
    Torque(bool, oneshot::Sender<Result<(), ArmError>>),
    /// Torque off (when configured) and stop.
    Close(oneshot::Sender<Result<(), ArmError>>),
}

/// The port owner.
pub(super) struct Actor<T> {
    bus: Bus<T>,
    mapping: CalibratedMapping,
    config: FeetechArmConfig,
    cadence: Cadence,
    servos: [ServoHealth; 6],
    port_open: bool,
    torque_enabled: bool,
    last_error: Option<String>,
    publish: watch::Sender<ArmHealth>,
}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Actor<T> {
    /// An actor and the receiver its health snapshots go to.
    pub(super) fn new(
        mut bus: Bus<T>,
        mapping: CalibratedMapping,
        config: FeetechArmConfig,
    ) -> (Self, watch::Receiver<ArmHealth>) {
        bus.set_config(BusConfig {
            retries: 0,
            ..*bus.config()
        });
        let servos = Joint::ALL.map(|joint| ServoHealth::new(joint, mapping.servo_id(joint)));
        let (publish, health) = watch::channel(ArmHealth {
            port_open: true,
            torque_enabled: false,
            servos: servos.to_vec(),
            last_error: None,
        });
        let actor = Self {
            bus,
            mapping,
            cadence: Cadence::new(config.state_every),
            config,
            servos,
            port_open: true,
            torque_enabled: false,
            last_error: None,
            publish,
        };
        (actor, health)
    }

    /// Serves requests until closed or until every handle is gone.
    pub(super) async fn run(mut self, mut inbox: mpsc::Receiver<Request>) {
        while let Some(request) = inbox.recv().await {
            match request {
                Request::ReadState(reply) => {
                    let result = self.read_state().await;
                    self.answer(reply, result);
                }
                Request::Command(goals, reply) => {
                    let result = self.command(goals).await;
                    self.answer(reply, result);
                }
                Request::Torque(enabled, reply) => {
                    let result = self.set_torque(enabled).await;
                    self.answer(reply, result);
                }
                Request::Close(reply) => {
                    let result = self.close().await;
                    self.answer(reply, result);
                    return;
                }
            }
        }
        if let Err(error) = self.close().await {
            tracing::warn!(port = %self.config.port, %error, "closing the arm after its last handle went away");
        }
    }

    fn answer<R>(&mut self, reply: oneshot::Sender<R>, result: R) {
        self.publish.send_replace(ArmHealth {
            port_open: self.port_open,
            torque_enabled: self.torque_enabled,
            servos: self.servos.to_vec(),
            last_error: self.last_error.clone(),
        });
        // A caller that stopped waiting does not need the answer.
        let _ = reply.send(result);
    }

    fn servo(&mut self, joint: Joint) -> &mut ServoHealth {
        &mut self.servos[joint.index()]
    }

    fn ensure_open(&self) -> Result<(), ArmError> {
        if self.port_open {
            return Ok(());
        }
        Err(ArmError::PortGone {
            reason: self.last_error.clone().unwrap_or_default(),
        })
    }

    /// Turns a bus-level failure into the arm's error; a dead port stays dead.
    fn bus_failure(&mut self, error: BusError) -> ArmError {
        self.last_error = Some(error.to_string());
        match error {
            BusError::PortGone(source) => {
                tracing::error!(port = %self.config.port, error = %source, "serial port lost");
                self.port_open = false;
                ArmError::PortGone {
                    reason: source.to_string(),
                }
            }
            other => ArmError::Bus(other.to_string()),
        }
    }

    fn unresponsive(&mut self, failures: Vec<ServoFailure>) -> ArmError {
        let error = ArmError::Unresponsive { failures };
        self.last_error = Some(error.to_string());
        error
    }

    /// One reading: a SYNC_READ of the state block or, between blocks, of the positions only
    /// (see [`Cadence`]), re-asking only the servos whose reply was lost or corrupted, up to
    /// the retry budget.
    async fn read_state(&mut self) -> Result<ArmState, ArmError> {
        self.ensure_open()?;
        let block = self.cadence.wants_block();
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
        for joint in Joint::ALL {
            let lost_after = self.config.lost_after;
            let reply = replies[joint.index()].take();
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
        if failures.is_empty() {
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

    async fn command(&mut self, goals: [f64; 6]) -> Result<(), ArmError> {
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
        Ok(())
    }

    /// Torque on first makes every goal the present position, so no joint jumps to a stale
    /// goal; torque off is attempted on every servo even when some fail.
    async fn set_torque(&mut self, enabled: bool) -> Result<(), ArmError> {
        self.ensure_open()?;
        if enabled {
            let state = self.read_state().await?;
            let hold: Vec<(Joint, i32)> = Joint::ALL
                .into_iter()
                .filter_map(|joint| state.joint(joint).servo.map(|s| (joint, s.steps)))
                .collect();
            self.write_goals(&hold).await?;
        }
        let mut failures = Vec::new();
        for joint in Joint::ALL {
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
        self.torque_enabled = enabled;
        tracing::info!(port = %self.config.port, enabled, "torque switched");
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
                    return Err(error);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), ArmError> {
        if self.config.torque_off_on_close && self.port_open {
            return self.set_torque(false).await;
        }
        Ok(())
    }
}
