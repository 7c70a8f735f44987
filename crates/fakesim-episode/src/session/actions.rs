//! The verbs inside a live episode: observe, move the end effector, open or close the gripper.

use super::events::Event;
use super::images::{CAMERAS, images_of};
use super::requests::check_delta;
use super::results::{EefState, GripperOutcome, MoveOutcome, Observation};
use super::run::{Steps, gripper_stop_name, move_stop_name};
use super::{ArmActuation, Engine};
use crate::error::EpisodeError;
use crate::gripper::{GripperCommand, GripperReport};
use crate::journal::{Flushed, Frames};
use crate::motion::MoveTarget;
use crate::tap::TapEntry;
use fakesim_twin::image::ImageTiming;
use fakesim_twin::{Admission, RenderQuality, TwinError, TwinHandle};
use std::time::Instant;

/// An observation ready to answer: its encoded images, its line journaled, its frames named.
struct Taken {
    pngs: Vec<Vec<u8>>,
    timing: ImageTiming,
    frames: Frames,
    flushed: Flushed,
    state: EefState,
    steps: Steps,
}

impl Engine {
    /// Images (drawn at `quality`, `None`: the twin's own) and arm `arm`'s state now (as
    /// [`Engine::move_tcp`] numbers the arms), using no budget.
    ///
    /// The images are a read ([`Admission::Read`]): refused at once (`RenderBusy`) when the
    /// renderer's backlog is full, and given up at `deadline` (`DeadlinePassed`) with nothing
    /// journaled. The observe line and the frames are journaled only once the answer is
    /// certain, so the journal holds the observations that were answered (the line records the
    /// step observed; a move journaled meanwhile may come before it).
    pub async fn observation(
        &self,
        arm: usize,
        quality: Option<RenderQuality>,
        deadline: Option<Instant>,
    ) -> Result<Observation, EpisodeError> {
        let taken = self.take_observation(arm, quality, deadline);
        let taken = match deadline {
            Some(at) => tokio::time::timeout_at(at.into(), taken)
                .await
                .map_err(|_| TwinError::DeadlinePassed)??,
            None => taken.await?,
        };
        // Answered from here: the line is journaled. The frames are written and the line waited
        // for until the deadline at most; past it they are left to finish on their own.
        let Taken {
            pngs,
            timing,
            frames,
            flushed,
            state,
            steps,
        } = taken;
        let written = async {
            self.write_frames(frames, pngs.clone()).await?;
            flushed.written().await?;
            Ok::<_, EpisodeError>(())
        };
        match deadline {
            Some(at) => match tokio::time::timeout_at(at.into(), written).await {
                Ok(written) => written?,
                Err(_) => tracing::warn!("an observation was answered at its deadline before its frames were on disk"),
            },
            None => written.await?,
        }
        Ok(Observation::running(
            Some(images_of(&CAMERAS, pngs, timing)),
            state,
            steps,
        ))
    }

    /// An observation's state and encoded images, and its journal line once they are ready:
    /// everything up to the point where the call is certain to be answered.
    async fn take_observation(
        &self,
        arm: usize,
        quality: Option<RenderQuality>,
        deadline: Option<Instant>,
    ) -> Result<Taken, EpisodeError> {
        let ArmActuation { twin, .. } = self.arm(arm)?;
        let (run_id, step, steps, state, snapshot) = {
            let mut session = self.lock().await;
            let run = session.running()?;
            let command = run.gripper_command(arm);
            let state = twin.with_sim(move |sim| EefState::read(sim, command)).await?;
            let snapshot = self.snapshot(&CAMERAS, quality, twin).await?;
            (run.id.clone(), run.step, run.steps(), state, snapshot)
        };
        let (pngs, timing) = self
            .draw_encoded(snapshot, Admission::Read { deadline }, Instant::now(), None)
            .await?;
        let mut session = self.lock().await;
        // The run observed has ended (and maybe another begun) while its images were drawn.
        let ended = EpisodeError::NotRunning { status: "stopped" };
        let run = session.running().map_err(|_| ended)?;
        if run.id != run_id {
            return Err(EpisodeError::NotRunning { status: "stopped" });
        }
        run.journal(&Event::Observe { step, state: &state })?;
        Ok(Taken {
            pngs,
            timing,
            frames: run.journal.frames("observe", &CAMERAS),
            flushed: run.journal.flushed(),
            state,
            steps,
        })
    }

    /// Moves arm `arm`'s end effector (the engine's arms in the twin's order, 0 for an arm
    /// alone) by `delta_xyz` (m), optionally rotating by `delta_rpy` (rad).
    pub async fn move_tcp(
        &self,
        arm: usize,
        delta_xyz: [f64; 3],
        delta_rpy: Option<[f64; 3]>,
    ) -> Result<MoveOutcome, EpisodeError> {
        check_delta(delta_xyz, delta_rpy)?;
        let ArmActuation { twin, actuation } = self.arm(arm)?;
        let room = self.reserve(&CAMERAS)?;
        let (report, snapped) = {
            let mut session = self.lock().await;
            let run = session.running()?;
            let steps_left = run.budget.check(run.step)?;
            let cap = self.config.max_steps_per_call;
            let command = run.gripper_command(arm);
            if self.tap.is_watched() {
                let start = twin.with_sim(|sim| sim.tcp_pose()).await?;
                let target = MoveTarget::from_delta(&start, delta_xyz, delta_rpy).position;
                self.tap.offer(|| TapEntry::MoveTarget(target.into()));
            }
            let report = actuation.run_move(twin, delta_xyz, delta_rpy, cap, steps_left).await?;
            let state = twin.with_sim(move |sim| EefState::read(sim, command)).await?;
            run.charge(u64::from(report.executed_steps), "move", move_stop_name(&report.stop));
            run.journal(&Event::Move {
                arm: arm_name(twin),
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
            let shot = self.shoot(run, "move", (&CAMERAS, room), None, twin).await?;
            (report, shot.of(run, state))
        };
        Ok(MoveOutcome {
            observation: self.develop(snapped).await?,
            delta_xyz,
            delta_rpy,
            report,
        })
    }

    /// Opens or closes arm `arm`'s gripper (as [`Engine::move_tcp`] numbers the arms).
    pub async fn gripper(&self, arm: usize, command: GripperCommand) -> Result<GripperOutcome, EpisodeError> {
        let ArmActuation { twin, actuation } = self.arm(arm)?;
        let room = self.reserve(&CAMERAS)?;
        let (report, snapped) = {
            let mut session = self.lock().await;
            let run = session.running()?;
            let steps_left = run.budget.check(run.step)?;
            let cap = self.config.max_steps_per_call;
            let mut gripper = run.grippers.get(arm).cloned().ok_or_else(|| self.no_such_arm(arm))?;
            let report = match gripper.begin(command) {
                Some(no_op) => {
                    let opening = twin.with_sim(|sim| sim.gripper_opening_m()).await?;
                    GripperReport {
                        executed_steps: 0,
                        stop: no_op,
                        opening_before_m: opening,
                        openings_m: Vec::new(),
                    }
                }
                None => {
                    let (report, after) = actuation.run_gripper(twin, gripper, cap, steps_left).await?;
                    gripper = after;
                    report
                }
            };
            if let Some(slot) = run.grippers.get_mut(arm) {
                *slot = gripper;
            }
            let state = twin.with_sim(move |sim| EefState::read(sim, command)).await?;
            run.charge(
                u64::from(report.executed_steps),
                "gripper",
                gripper_stop_name(&report.stop),
            );
            run.journal(&Event::Gripper {
                arm: arm_name(twin),
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
            let shot = self.shoot(run, "gripper", (&CAMERAS, room), None, twin).await?;
            (report, shot.of(run, state))
        };
        Ok(GripperOutcome {
            observation: self.develop(snapped).await?,
            command,
            report,
        })
    }

    /// Arm `arm` of the engine's, or [`Engine::no_such_arm`].
    fn arm(&self, arm: usize) -> Result<&ArmActuation, EpisodeError> {
        self.arms.get(arm).ok_or_else(|| self.no_such_arm(arm))
    }

    /// The refusal of an arm the engine does not have, naming how many it has.
    fn no_such_arm(&self, arm: usize) -> EpisodeError {
        EpisodeError::BadRequest(format!("there is no arm {arm}: the engine drives {}", self.arms.len()))
    }
}

/// The side of a pair's arm as its journal lines name it; `None` for an arm alone.
fn arm_name(twin: &TwinHandle) -> Option<&'static str> {
    twin.arm().side.map(|side| side.name())
}
