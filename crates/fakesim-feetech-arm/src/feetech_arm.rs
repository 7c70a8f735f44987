//! The Feetech SO-101: a handle talking over channels to the one task that owns the port.

use std::path::Path;

use feetech::bus::{Bus, BusConfig};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};

use crate::actor::{Actor, Request};
use crate::config::FeetechArmConfig;
use crate::mapping::CalibratedMapping;
use crate::reconnect::Reconnection;
use fakesim_arm::{Arm, ArmError, ArmHealth, ArmState, BoxFuture, Joint};

/// Requests waiting for the port task at most.
const QUEUE: usize = 8;

/// An SO-101 on a Feetech bus. The port is owned by one task; this handle is cheap to clone
/// and every call is a message to that task, answered in order. The task ends on
/// [`FeetechArm::close`] or when the last clone is dropped (torque off first, if configured).
#[derive(Debug, Clone)]
pub struct FeetechArm {
    requests: mpsc::Sender<Request>,
    health: watch::Receiver<ArmHealth>,
    port: String,
}

impl FeetechArm {
    /// Starts the port task on `bus` (inside a tokio runtime). The bus's retry count is set
    /// to 0: the task retries itself, per [`FeetechArmConfig::retries`].
    pub fn spawn<T>(bus: Bus<T>, mapping: CalibratedMapping, config: FeetechArmConfig) -> Self
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        Self::spawn_reconnecting(bus, mapping, config, None)
    }

    /// [`FeetechArm::spawn`], with a way to reopen a lost port and to configure a servo that
    /// reset: a lost port then comes back through reconnecting and verifying to connected,
    /// torque off (see [`fakesim_arm::LinkState`]).
    pub fn spawn_reconnecting<T>(
        bus: Bus<T>,
        mapping: CalibratedMapping,
        config: FeetechArmConfig,
        reconnection: Option<Reconnection<T>>,
    ) -> Self
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (requests, inbox) = mpsc::channel(QUEUE);
        let port = config.port.clone();
        let (actor, health) = Actor::new(bus, mapping, config, reconnection);
        tokio::spawn(actor.run(inbox));
        Self { requests, health, port }
    }

    /// Opens a serial port (8N1, no flow control) and starts the port task on it.
    pub fn open(
        path: &Path,
        baud: u32,
        bus_config: BusConfig,
        mapping: CalibratedMapping,
        config: FeetechArmConfig,
    ) -> Result<Self, ArmError> {
        let bus = Bus::open(path, baud, bus_config).map_err(|e| ArmError::PortGone {
            port: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(Self::spawn(bus, mapping, config))
    }

    /// Switches torque off (when configured) and ends the port task; later calls fail with
    /// [`ArmError::Closed`].
    pub async fn close(&self) -> Result<(), ArmError> {
        self.call(Request::Close).await?
    }

    /// Records every reading and goal write of the port task to `recorder` from now on.
    pub async fn trace_to(&self, recorder: fakesim_trace::Recorder) -> Result<(), ArmError> {
        self.call(|reply| Request::Trace(recorder, reply)).await
    }

    async fn call<R>(&self, request: impl FnOnce(oneshot::Sender<R>) -> Request) -> Result<R, ArmError> {
        let (reply, answer) = oneshot::channel();
        self.requests.send(request(reply)).await.map_err(|_| ArmError::Closed)?;
        answer.await.map_err(|_| ArmError::Closed)
    }
}

impl Arm for FeetechArm {
    fn port(&self) -> Option<&str> {
        Some(&self.port)
    }

    fn read_state(&self) -> BoxFuture<'_, Result<ArmState, ArmError>> {
        Box::pin(async move { self.call(Request::ReadState).await? })
    }

    fn command(&self, goals_rad: [f64; 6]) -> BoxFuture<'_, Result<(), ArmError>> {
        Box::pin(async move { self.call(|reply| Request::Command(goals_rad, reply)).await? })
    }

    fn set_torque(&self, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
        Box::pin(async move { self.call(|reply| Request::Torque(enabled, reply)).await? })
    }

    fn set_joint_torque(&self, joint: Joint, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
        Box::pin(async move { self.call(|reply| Request::JointTorque(joint, enabled, reply)).await? })
    }

    fn health(&self) -> ArmHealth {
        self.health.borrow().clone()
    }
}
