//! The verbs that begin and end an episode: reset (the scene laid out, the run's journal
//! created), stop, and the interruption of a shutdown (the judgement and `summary.json`).

use super::Engine;
use super::events::Event;
use super::requests::{ResetRequest, session_cameras};
use super::results::{EefState, ResetOutcome, Status, StopOutcome, TaskInfo};
use super::run::Run;
use super::run_id::new_run_id;
use super::validation::{Summary, Validation};
use crate::error::EpisodeError;
use crate::gripper::{GripperCommand, GripperState};
use crate::journal::{self, Journal, io_at};
use crate::tasks;
use fakesim_twin::JointValues;
use std::collections::BTreeMap;
use std::time::Instant;

/// A seed for an episode whose reset names none, from the system's randomness (0 where
/// there is none to be had, with a warning).
fn fresh_seed() -> u64 {
    let mut bytes = [0u8; 8];
    match getrandom::fill(&mut bytes) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(error) => {
            tracing::warn!(%error, "no randomness for the episode's seed; it is 0");
            0
        }
    }
}

/// Ticks run after a reset so objects come to rest; they use no budget.
const SETTLE_TICKS: u32 = 10;

impl Engine {
    /// Starts an episode; the cameras it names are drawn once the scene is laid out.
    pub async fn reset_task(&self, request: ResetRequest) -> Result<ResetOutcome, EpisodeError> {
        let cameras = session_cameras(&request.cameras)?;
        let quality = request.quality;
        let seed = request.seed.unwrap_or_else(fresh_seed);
        let room = self.reserve(&cameras)?;
        let (id, task, snapped) = {
            let mut session = self.lock().await;
            if let Some(run) = session.run.as_ref().filter(|_| session.status == Status::Running) {
                return Err(EpisodeError::AlreadyRunning { run: run.id.clone() });
            }
            let (budget, task_ref) = request.resolve(&self.config)?;
            let task = task_ref.task_for(self.twin.arms().len())?;
            let layout = task_ref.layout();
            let home = self.config.home_pose;
            let (state, period_s) = self
                .twin
                .try_with_sim(move |sim| {
                    sim.reset();
                    tasks::apply_layout(sim, &layout)?;
                    sim.every_arm(|sim| {
                        sim.set_joint_positions(&JointValues::Ordered(home.to_vec()), true)
                            .map(drop)
                    })?;
                    for _ in 0..SETTLE_TICKS {
                        sim.step_tick();
                    }
                    sim.reset_watch();
                    Ok((EefState::read(sim, GripperCommand::Open), sim.clock().period_s()))
                })
                .await?;
            let look = self.twin.vary(seed);
            let (id, journal) = self.open_journal().await?;
            let mut run = Run {
                id: id.clone(),
                task_ref: task_ref.clone(),
                task,
                budget,
                step: 0,
                grippers: vec![GripperState::settled(GripperCommand::Open); self.arms.len()],
                journal,
                started: Instant::now(),
                calls: BTreeMap::new(),
                safety_events: 0,
                look,
            };
            run.journal(&Event::ResetTask {
                run: &id,
                task: TaskInfo::new(&task_ref, task),
                layout,
                max_steps: budget.ticks(),
                control_period_s: period_s,
            })?;
            let snapped = self
                .shoot(&mut run, "reset", (&cameras, room), quality, &self.twin)
                .await?
                .of(&run, state);
            tracing::info!(run = %id, task = task.name, layout = task_ref.init_state_index, "episode started");
            session.status = Status::Running;
            session.run = Some(run);
            (id, TaskInfo::new(&task_ref, task), snapped)
        };
        Ok(ResetOutcome {
            run: id,
            task,
            observation: self.develop(snapped).await?,
        })
    }

    /// Ends the episode and writes its summary.
    pub async fn stop_episode(&self) -> Result<StopOutcome, EpisodeError> {
        let (outcome, flushed) = {
            let mut session = self.lock().await;
            let run = session.running()?;
            let outcome = self.finish(run, "stopped").await?;
            let flushed = run.journal.flushed();
            session.status = Status::Stopped;
            (outcome, flushed)
        };
        flushed.written().await?;
        Ok(outcome)
    }

    /// Ends a live episode as `interrupted` (server shutdown). Does nothing when none is live.
    pub async fn interrupt(&self) -> Result<(), EpisodeError> {
        let flushed = {
            let mut session = self.lock().await;
            let Ok(run) = session.running() else {
                return Ok(());
            };
            run.journal(&Event::Interrupted { step: run.step })?;
            self.finish(run, "interrupted").await?;
            let flushed = run.journal.flushed();
            session.status = Status::Stopped;
            flushed
        };
        Ok(flushed.written().await?)
    }

    /// A fresh run id and its journal, made off the async runtime. The reset waits for it
    /// under the lock: a run without its directory never goes live.
    async fn open_journal(&self) -> Result<(String, Journal), EpisodeError> {
        let runs_dir = self.config.runs_dir.clone();
        let tap = self.tap.clone();
        let made = journal::blocking(&self.config.runs_dir, "creating the run", move || {
            let id = new_run_id(&runs_dir);
            Journal::create(&runs_dir, &id).map(|journal| (id, journal.with_tap(tap)))
        })
        .await?;
        Ok(made?)
    }

    /// Judges the run, journals its end as `status` and queues its summary.
    async fn finish(&self, run: &Run, status: &str) -> Result<StopOutcome, EpisodeError> {
        let task = run.task;
        let (success, watch) = self
            .twin
            .try_with_sim(move |sim| Ok((tasks::success(task, sim)?, sim.watch())))
            .await?;
        run.journal(&Event::StopEpisode { status, step: run.step })?;
        let validation = Validation::of(success, run, &watch);
        let report =
            serde_json::to_value(&validation).map_err(|e| io_at(&run.journal.artifacts().summary)(e.into()))?;
        run.journal.summary(&Summary::of(run, status, &validation))?;
        tracing::info!(run = %run.id, status, steps = run.step, "episode ended");
        Ok(StopOutcome {
            run: run.id.clone(),
            artifacts: run.journal.artifacts().clone(),
            success,
            validation: report,
        })
    }
}
