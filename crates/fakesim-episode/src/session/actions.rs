//! The verbs inside a live episode: observe, move the end effector, open or close the gripper.

use super::Engine;
use super::events::Event;
use super::requests::check_delta;
use super::results::{EefState, GripperOutcome, MoveOutcome, Observation};
use super::run::{gripper_stop_name, move_stop_name};
use crate::error::EpisodeError;
use crate::gripper::{GripperCommand, GripperReport};
use crate::motion::MoveTarget;
use crate::tap::TapEntry;
use fakesim_twin::RenderQuality;

impl Engine {
    /// Images (drawn at `quality`, `None`: the twin's own) and state now, using no budget.
    pub async fn observation(&self, quality: Option<RenderQuality>) -> Result<Observation, EpisodeError> {
        let snapped = {
            let mut session = self.lock().await;
            let run = session.running()?;
            let command = run.gripper.command();
            let state = self.twin.with_sim(move |sim| EefState::read(sim, command)).await?;
            let shot = self.shoot(run, "observe", quality).await?;
            run.journal(&Event::Observe {
                step: run.step,
                state: &state,
            })?;
            shot.of(run, state)
        };
        self.develop(snapped).await
    }

    /// Moves the end effector by `delta_xyz` (m), optionally rotating by `delta_rpy` (rad).
    pub async fn move_tcp(
        &self,
        delta_xyz: [f64; 3],
        delta_rpy: Option<[f64; 3]>,
    ) -> Result<MoveOutcome, EpisodeError> {
        check_delta(delta_xyz, delta_rpy)?;
        let (report, snapped) = {
            let mut session = self.lock().await;
            let run = session.running()?;
            let steps_left = run.budget.check(run.step)?;
            let cap = self.config.max_steps_per_call;
            let command = run.gripper.command();
            if self.tap.is_watched() {
                let start = self.twin.with_sim(|sim| sim.tcp_pose()).await?;
                let target = MoveTarget::from_delta(&start, delta_xyz, delta_rpy).position;
                self.tap.offer(|| TapEntry::MoveTarget(target.into()));
            }
            let report = self
                .actuation
                .run_move(&self.twin, delta_xyz, delta_rpy, cap, steps_left)
                .await?;
            let state = self.twin.with_sim(move |sim| EefState::read(sim, command)).await?;
            run.charge(u64::from(report.executed_steps), "move", move_stop_name(&report.stop));
            run.journal(&Event::Move {
                delta_xyz,
                delta_rpy,
                executed_steps: report.executed_steps,
                stop_reason: report.stop,
                achieved_delta_xyz: report.achieved_delta_xyz,
                remaining_distance_m: report.remaining_distance_m,
                step_distances_m: &report.tick_travel_m,
                step: run.step,
                state: &state,
            })?;
            run.note_budget()?;
            let shot = self.shoot(run, "move", None).await?;
            (report, shot.of(run, state))
        };
        Ok(MoveOutcome {
            observation: self.develop(snapped).await?,
            delta_xyz,
            delta_rpy,
            report,
        })
    }

    /// Opens or closes the gripper.
    pub async fn gripper(&self, command: GripperCommand) -> Result<GripperOutcome, EpisodeError> {
        let (report, snapped) = {
            let mut session = self.lock().await;
            let run = session.running()?;
            let steps_left = run.budget.check(run.step)?;
            let cap = self.config.max_steps_per_call;
            let mut gripper = run.gripper.clone();
            let report = match gripper.begin(command) {
                Some(no_op) => {
                    let opening = self.twin.with_sim(|sim| sim.gripper_opening_m()).await?;
                    GripperReport {
                        executed_steps: 0,
                        stop: no_op,
                        opening_before_m: opening,
                        openings_m: Vec::new(),
                    }
                }
                None => {
                    let (report, after) = self.actuation.run_gripper(&self.twin, gripper, cap, steps_left).await?;
                    gripper = after;
                    report
                }
            };
            run.gripper = gripper;
            let state = self.twin.with_sim(move |sim| EefState::read(sim, command)).await?;
            run.charge(
                u64::from(report.executed_steps),
                "gripper",
                gripper_stop_name(&report.stop),
            );
            run.journal(&Event::Gripper {
                command,
                executed_steps: report.executed_steps,
                stop_reason: report.stop,
                opening_before_m: report.opening_before_m,
                opening_after_m: report.opening_after_m(),
                openings_m: &report.openings_m,
                step: run.step,
                state: &state,
            })?;
            run.note_budget()?;
            let shot = self.shoot(run, "gripper", None).await?;
            (report, shot.of(run, state))
        };
        Ok(GripperOutcome {
            observation: self.develop(snapped).await?,
            command,
            report,
        })
    }
}
