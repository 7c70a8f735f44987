//! How the episode engine's moves and gripper actions run: wherever the bridge routes motion
//! in the current mode. In `sim` on the twin alone, lock-step; in `mirror` (and while the
//! emergency stop is latched) refused; in `hil` on the real arm in real time, with the twin
//! mirroring it.

use super::bridge::{BridgeError, HardwareBridge, Route};
use super::mode::VerbKind;
use fakesim_episode::EpisodeError;
use fakesim_episode::actuation::{Actuation, BoxFuture, SimActuation};
use fakesim_episode::gripper::{GripperReport, GripperState};
use fakesim_episode::motion::{MoveController, MoveReport, MoveTarget};
use fakesim_episode::runner::{distance, gripper_setpoint};
use fakesim_twin::TwinHandle;
use fakesim_twin::joints::GRIPPER_INDEX;

/// The error the engine reports for a bridge refusal or failure: the bridge's own error,
/// carried whole so the daemon reports it as it would on any other route.
pub fn episode_error(error: BridgeError) -> EpisodeError {
    match error {
        BridgeError::Twin(e) => EpisodeError::Twin(e),
        other => EpisodeError::Actuation(Box::new(other)),
    }
}

/// The engine's actuation with a bridge: each call asks the bridge where motion goes now.
///
/// On the real arm each tick computes targets on the twin (which mirrors the measured joints),
/// sends them through the safety layers, waits for the tick's end in real time, and judges the
/// stop reasons on the mirrored state.
pub struct BridgeActuation {
    bridge: HardwareBridge,
}

impl BridgeActuation {
    /// Motion routed by `bridge`.
    pub fn new(bridge: HardwareBridge) -> Self {
        BridgeActuation { bridge }
    }

    fn route(&self) -> Result<Route, EpisodeError> {
        self.bridge.route(VerbKind::Motion).map_err(episode_error)
    }

    /// Sends one tick's goals through the safety layers. A refusal (a target into the table,
    /// out of range, the emergency stop) is not sent and ends the call with that refusal; the
    /// arm keeps its last safe goal.
    async fn send(&self, targets: [f64; 6], measured: [f64; 6]) -> Result<(), EpisodeError> {
        self.bridge
            .command(targets, measured)
            .await
            .map(drop)
            .map_err(episode_error)
    }

    /// Waits until `deadline` and for a reading of the arm taken after it, so the twin shows
    /// where the tick left the arm.
    async fn end_tick(&self, deadline: tokio::time::Instant) -> Result<(), EpisodeError> {
        tokio::time::sleep_until(deadline).await;
        self.bridge.next_sample().await.map(drop).map_err(episode_error)
    }

    fn check_still_hil(&self) -> Result<(), EpisodeError> {
        if self.route()? != Route::Arm {
            return Err(episode_error(BridgeError::ModeChanged(self.bridge.mode().name())));
        }
        Ok(())
    }

    async fn hil_move(
        &self,
        twin: &TwinHandle,
        delta_xyz: [f64; 3],
        delta_rpy: Option<[f64; 3]>,
        cap: u32,
        steps_left: u64,
    ) -> Result<MoveReport, EpisodeError> {
        let start = twin.with_sim(|sim| sim.tcp_pose()).await?;
        let mut controller = MoveController::new(start, MoveTarget::from_delta(&start, delta_xyz, delta_rpy));
        let limits = self.bridge.limits();
        let period = self.bridge.control_period();
        let mut deadline = tokio::time::Instant::now();
        let (mut ticks, mut left, mut travel) = (0u32, steps_left, Vec::new());
        loop {
            self.check_still_hil()?;
            let (tcp, qpos, jacobian) = twin
                .with_sim(|sim| (sim.tcp_pose(), sim.arm_qpos(), sim.tcp_jacobian()))
                .await?;
            let current = self.bridge.last_goals().unwrap_or(qpos);
            let targets = controller.joint_targets(&tcp, &qpos, &current, &jacobian, &limits);
            self.send(targets, qpos).await?;
            deadline += period;
            self.end_tick(deadline).await?;
            ticks += 1;
            left = left.saturating_sub(1);
            let now = twin.with_sim(|sim| sim.tcp_pose()).await?;
            travel.push(distance(&tcp.pos, &now.pos));
            if let Some(stop) = controller.after_tick(&now, ticks, cap, left) {
                return Ok(controller.report(ticks, stop, &now, travel));
            }
        }
    }

    async fn hil_gripper(
        &self,
        twin: &TwinHandle,
        mut state: GripperState,
        cap: u32,
        steps_left: u64,
    ) -> Result<(GripperReport, GripperState), EpisodeError> {
        let command = state.command();
        let (before, qpos, setpoint) = twin
            .with_sim(move |sim| (sim.gripper_opening_m(), sim.arm_qpos(), gripper_setpoint(sim, command)))
            .await?;
        let mut goals = self.bridge.last_goals().unwrap_or(qpos);
        goals[GRIPPER_INDEX] = setpoint;
        let period = self.bridge.control_period();
        let mut deadline = tokio::time::Instant::now();
        let (mut ticks, mut left, mut openings) = (0u32, steps_left, Vec::new());
        loop {
            self.check_still_hil()?;
            let measured = twin.with_sim(|sim| sim.arm_qpos()).await?;
            self.send(goals, measured).await?;
            deadline += period;
            self.end_tick(deadline).await?;
            ticks += 1;
            left = left.saturating_sub(1);
            let opening = twin.with_sim(|sim| sim.gripper_opening_m()).await?;
            openings.push(opening);
            if let Some(stop) = state.after_tick(opening, ticks, cap, left) {
                let report = GripperReport {
                    executed_steps: ticks,
                    stop,
                    opening_before_m: before,
                    openings_m: openings,
                };
                return Ok((report, state));
            }
        }
    }
}

impl Actuation for BridgeActuation {
    fn run_move<'a>(
        &'a self,
        twin: &'a TwinHandle,
        delta_xyz: [f64; 3],
        delta_rpy: Option<[f64; 3]>,
        cap: u32,
        steps_left: u64,
    ) -> BoxFuture<'a, Result<MoveReport, EpisodeError>> {
        Box::pin(async move {
            match self.route()? {
                Route::Twin => SimActuation.run_move(twin, delta_xyz, delta_rpy, cap, steps_left).await,
                Route::Arm => self.hil_move(twin, delta_xyz, delta_rpy, cap, steps_left).await,
            }
        })
    }

    fn run_gripper<'a>(
        &'a self,
        twin: &'a TwinHandle,
        state: GripperState,
        cap: u32,
        steps_left: u64,
    ) -> BoxFuture<'a, Result<(GripperReport, GripperState), EpisodeError>> {
        Box::pin(async move {
            match self.route()? {
                Route::Twin => SimActuation.run_gripper(twin, state, cap, steps_left).await,
                Route::Arm => self.hil_gripper(twin, state, cap, steps_left).await,
            }
        })
    }
}
