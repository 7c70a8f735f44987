//! How moves and gripper actions reach an arm: lock-step on the twin alone (sim), or paced in
//! real time on a real arm that the twin mirrors (hardware in the loop, in `fakesim-bridge`).
//! Both run the same loops of [`crate::ticks`] on their own tick driver.

use crate::error::EpisodeError;
use crate::gripper::{GripperReport, GripperState};
use crate::motion::MoveReport;
use crate::ticks::{SimTicks, drive_gripper, lock_step, move_tcp};
use fakesim_twin::TwinHandle;
use std::future::Future;
use std::pin::Pin;

/// A boxed future, so an actuation can be used behind `dyn`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs the per-tick loop of a move or a gripper action somewhere.
pub trait Actuation: Send + Sync {
    /// Moves toward a target computed from the TCP pose at the start of the call.
    fn run_move<'a>(
        &'a self,
        twin: &'a TwinHandle,
        delta_xyz: [f64; 3],
        delta_rpy: Option<[f64; 3]>,
        cap: u32,
        steps_left: u64,
    ) -> BoxFuture<'a, Result<MoveReport, EpisodeError>>;

    /// Drives the gripper with the state's command (already begun) and returns the new state.
    fn run_gripper<'a>(
        &'a self,
        twin: &'a TwinHandle,
        state: GripperState,
        cap: u32,
        steps_left: u64,
    ) -> BoxFuture<'a, Result<(GripperReport, GripperState), EpisodeError>>;
}

/// Sim mode: the whole loop runs on the physics thread in lock-step, one tick per step.
#[derive(Debug, Default, Clone, Copy)]
pub struct SimActuation;

impl Actuation for SimActuation {
    fn run_move<'a>(
        &'a self,
        twin: &'a TwinHandle,
        delta_xyz: [f64; 3],
        delta_rpy: Option<[f64; 3]>,
        cap: u32,
        steps_left: u64,
    ) -> BoxFuture<'a, Result<MoveReport, EpisodeError>> {
        Box::pin(async move {
            let report = twin
                .try_with_sim(move |sim| {
                    lock_step(move_tcp(&mut SimTicks::new(sim), delta_xyz, delta_rpy, cap, steps_left))
                })
                .await?;
            Ok(report)
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
            let out = twin
                .try_with_sim(move |sim| {
                    let report = lock_step(drive_gripper(&mut SimTicks::new(sim), &mut state, cap, steps_left))?;
                    Ok((report, state))
                })
                .await?;
            Ok(out)
        })
    }
}
