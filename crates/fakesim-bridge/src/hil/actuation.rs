//! How motion runs wherever the bridge routes it in the current mode: in `sim` on the twin
//! alone, lock-step; in `mirror` (and while the emergency stop is latched) refused; in `hil`
//! on the real arm in real time, with the twin mirroring it. Moves and gripper actions (the
//! episode engine's actuation) and joint actions (`SendAction`, `Tick`) run the same loops of
//! [`fakesim_episode::ticks`] on either tick driver.

use super::bridge::{HardwareBridge, Route};
use super::error::BridgeError;
use super::mode::VerbKind;
use super::ticks::ArmTicks;
use fakesim_episode::EpisodeError;
use fakesim_episode::actuation::{Actuation, BoxFuture, SimActuation};
use fakesim_episode::gripper::{GripperReport, GripperState};
use fakesim_episode::motion::MoveReport;
use fakesim_episode::ticks::{Hold, Observed, SimTicks, act, drive_gripper, lock_step, move_tcp};
use fakesim_twin::{JointValues, TwinHandle};

/// The error the engine reports for a bridge refusal or failure: the bridge's own error,
/// carried whole so the daemon reports it as it would on any other route.
pub fn episode_error(error: BridgeError) -> EpisodeError {
    match error {
        BridgeError::Twin(e) => EpisodeError::Twin(e),
        other => EpisodeError::Actuation(Box::new(other)),
    }
}

/// Writes joint targets over the goals in force and holds them for `hold`, wherever the
/// bridge routes motion now; returns the arm at the end (on the real arm: the twin mirroring
/// it).
pub async fn run_action(
    bridge: &HardwareBridge,
    twin: &TwinHandle,
    action: JointValues,
    hold: Hold,
) -> Result<Observed, BridgeError> {
    match bridge.route(VerbKind::Motion)? {
        Route::Twin => Ok(twin
            .try_with_sim(move |sim| lock_step(act(&mut SimTicks::new(sim), &action, hold)))
            .await?),
        Route::Arm => {
            let mut ticks = ArmTicks::new(bridge.clone(), twin.clone()).await?;
            act(&mut ticks, &action, hold).await
        }
    }
}

/// The engine's actuation with a bridge: each call asks the bridge where motion goes now.
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

    async fn arm_ticks(&self, twin: &TwinHandle) -> Result<ArmTicks, EpisodeError> {
        ArmTicks::new(self.bridge.clone(), twin.clone())
            .await
            .map_err(episode_error)
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
                Route::Arm => {
                    let mut ticks = self.arm_ticks(twin).await?;
                    move_tcp(&mut ticks, delta_xyz, delta_rpy, cap, steps_left)
                        .await
                        .map_err(episode_error)
                }
            }
        })
    }

    fn run_gripper<'a>(
        &'a self,
        twin: &'a TwinHandle,
        mut state: GripperState,
        cap: u32,
        steps_left: u64,
    ) -> BoxFuture<'a, Result<(GripperReport, GripperState), EpisodeError>> {
        Box::pin(async move {
            match self.route()? {
                Route::Twin => SimActuation.run_gripper(twin, state, cap, steps_left).await,
                Route::Arm => {
                    let mut ticks = self.arm_ticks(twin).await?;
                    let report = drive_gripper(&mut ticks, &mut state, cap, steps_left)
                        .await
                        .map_err(episode_error)?;
                    Ok((report, state))
                }
            }
        })
    }
}
