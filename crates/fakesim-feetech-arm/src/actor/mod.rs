//! The task that owns the serial port: it runs one request at a time, applies the mapping,
//! reads the state block or only the positions as [`Cadence`] plans, retries lost or
//! corrupted replies per servo, keeps the health counters, checks each servo's RAM with every
//! state block, and brings a lost port back (see [`link`]).

mod link;
mod state;
mod writes;

use feetech::bus::{Bus, BusConfig, BusError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::cadence::Cadence;
use crate::config::FeetechArmConfig;
use crate::mapping::CalibratedMapping;
use crate::ram::RamWatch;
use crate::reconnect::{Reconnection, operating_config};
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

    async fn close(&mut self) -> Result<(), ArmError> {
        if self.config.torque_off_on_close && self.link.state == LinkState::Connected {
            return self.set_torque(false).await;
        }
        Ok(())
    }
}
