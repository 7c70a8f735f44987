//! The task that owns the serial port: it runs one request at a time, applies the mapping,
//! reads the state block or only the positions as [`Cadence`] plans, retries lost or
//! corrupted replies per servo, keeps the health counters, checks each servo's RAM with every
//! state block, and brings a lost port back (see [`link`]).

mod link;

use feetech::bus::{Bus, BusConfig, BusError, Reply, SyncReadResults};
use feetech::control_table::ServoState;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::cadence::Cadence;
use crate::config::FeetechArmConfig;
use crate::mapping::CalibratedMapping;
use crate::ram::{self, RamWatch};
use crate::reading::{attempt_failed, joint_state};
use crate::reconnect::{Reconnection, operating_config};
use crate::trace;
use fakesim_arm::{ArmError, ArmHealth, ArmState, Joint, LinkHealth, LinkState, ServoFailure, ServoHealth, Torque};
use fakesim_trace::Recorder;

/// A call from a [`super::FeetechArm`] handle.
pub(super) enum Request {
    /// Read every joint.
    ReadState(oneshot::Sender<Result<ArmState, ArmError>>),
    /// Send goals (twin radians).
    Command([f64; 6], oneshot::Sender<Result<(), ArmError>>),
    /// Switch torque.
    Torque(bool, oneshot::Sender<Result<(), ArmError>>),
    /// Switch one joint's torque.
    JointTorque(Joint, bool, oneshot::Sender<Result<(), ArmError>>),
    /// Torque off (when configured) and stop.
    Close(oneshot::Sender<Result<(), ArmError>>),
    /// Record every reading and goal write from now on.
    Trace(Recorder, oneshot::Sender<()>),
}

/// The port owner.
pub(super) struct Actor<T> {
    pub(crate) bus: Bus<T>,
    mapping: CalibratedMapping,
    pub(crate) config: FeetechArmConfig,
    cadence: Cadence,
    pub(crate) servos: [ServoHealth; 6],
    pub(crate) link: LinkHealth,
    pub(crate) last_error: Option<String>,
    publish: watch::Sender<ArmHealth>,
    /// How a lost port comes back (`None`: it stays lost).
    pub(crate) reconnection: Option<Reconnection<T>>,
    /// When the next attempt to reopen a lost port is due.
    pub(crate) next_attempt: Instant,
    /// The bus policy the task runs with, for a reopened port too.
    pub(crate) operating: BusConfig,
    /// What each servo's RAM should hold.
    pub(crate) ram: RamWatch,
    /// Where readings and goal writes are recorded, if anywhere.
    trace: Option<Recorder>,
}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Actor<T> {
    /// An actor and the receiver its health snapshots go to.
    pub(super) fn new(
        mut bus: Bus<T>,
        mapping: CalibratedMapping,
        config: FeetechArmConfig,
        reconnection: Option<Reconnection<T>>,
    ) -> (Self, watch::Receiver<ArmHealth>) {
        let operating = operating_config(bus.config());
        bus.set_config(operating);
        let servos = Joint::ALL.map(|joint| ServoHealth::new(joint, mapping.servo_id(joint)));
        let (publish, health) = watch::channel(ArmHealth {
            link: LinkHealth::connected(),
            torque: Torque::of_servos(&servos),
            servos: servos.to_vec(),
            last_error: None,
        });
        let actor = Self {
            bus,
            mapping,
            cadence: Cadence::new(config.state_every),
            ram: RamWatch::new(config.acceleration),
            config,
            servos,
            link: LinkHealth::connected(),
            last_error: None,
            publish,
            reconnection,
            next_attempt: Instant::now(),
            operating,
            trace: None,
        };
        (actor, health)
    }

    /// Serves requests until closed or until every handle is gone.
    pub(super) async fn run(mut self, mut inbox: mpsc::Receiver<Request>) {
        loop {
            let request = match self.reconnect_due() {
                None => inbox.recv().await,
                Some(due) => tokio::select! {
                    biased;
                    request = inbox.recv() => request,
                    () = tokio::time::sleep_until(due) => {
                        self.try_reconnect().await;
                        continue;
                    }
                },
            };
            let Some(request) = request else {
                break;
            };
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
                Request::JointTorque(joint, enabled, reply) => {
                    let result = self.set_joint_torque(joint, enabled).await;
                    self.answer(reply, result);
                }
                Request::Trace(recorder, reply) => {
                    self.trace = Some(recorder);
                    self.answer(reply, ());
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
        self.publish();
        // A caller that stopped waiting does not need the answer.
        let _ = reply.send(result);
    }

    /// The arm's torque as its servos last confirmed it.
    fn torque(&self) -> Torque {
        Torque::of_servos(&self.servos)
    }

    /// Publishes the health as it stands.
    pub(crate) fn publish(&self) {
        if let Some(recorder) = &self.trace {
            let servos = std::array::from_fn(|i| self.servos[i].torque_enabled);
            recorder.torque(std::time::Instant::now(), servos);
        }
        self.publish.send_replace(ArmHealth {
            link: self.link,
            torque: self.torque(),
            servos: self.servos.to_vec(),
            last_error: self.last_error.clone(),
        });
    }

    fn servo(&mut self, joint: Joint) -> &mut ServoHealth {
        &mut self.servos[joint.index()]
    }

    fn ensure_open(&self) -> Result<(), ArmError> {
        if self.link.state == LinkState::Connected {
            return Ok(());
        }
        Err(ArmError::PortGone {
            port: self.config.port.clone(),
            reason: self.last_error.clone().unwrap_or_default(),
        })
    }

    /// Turns a bus-level failure into the arm's error; a failed port counts as lost until
    /// it is reopened and its servos verified.
    pub(crate) fn bus_failure(&mut self, error: BusError) -> ArmError {
        self.last_error = Some(error.to_string());
        match error {
            BusError::PortGone(source) => {
                tracing::error!(port = %self.config.port, error = %source, "serial port lost");
                self.lose_link();
                ArmError::PortGone {
                    port: self.config.port.clone(),
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
        self.switch_torque(&Joint::ALL, enabled).await?;
        tracing::info!(port = %self.config.port, enabled, "torque switched");
        Ok(())
    }

    /// Switches one joint's torque (on: holding where it stands).
    async fn set_joint_torque(&mut self, joint: Joint, enabled: bool) -> Result<(), ArmError> {
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

    async fn close(&mut self) -> Result<(), ArmError> {
        if self.config.torque_off_on_close && self.link.state == LinkState::Connected {
            return self.set_torque(false).await;
        }
        Ok(())
    }
}
