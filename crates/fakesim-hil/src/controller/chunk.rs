//! `TickChunk`: a chunk's ticks in order, each admitted against the episode's budget, charged
//! and journaled as a `Tick`; a refusal of the first tick is the call's error, a later one ends
//! the chunk there. On the twin alone the ticks the budget allows run in one physics job (one
//! hand-off for the chunk, not one a tick); with the arm in the loop each tick starts a control
//! period after the one before.

use super::{Call, Done, TickMotion, Ticked};
use crate::state::AppState;
use crate::wire::status;
use fakesim_bridge::hil::{Mode, Route};
use fakesim_episode::ticks::tick_arms;
use fakesim_twin::{FrameRoom, Sim, TwinError};
use serde_json::json;
use std::sync::Arc;
use tonic::Status;

/// The ticks a chunk ran, and where and why it stopped early.
type Ran = (Vec<Ticked>, Option<(usize, Status)>);

impl AppState {
    /// Runs a chunk wherever the bridge routes motion now.
    pub(super) async fn chunk(&self, ticks: Vec<TickMotion>) -> Result<Done, Status> {
        let first = ticks.first().map_or(&[][..], |tick| &tick.actions[..]);
        let room = self.reserve_frames(&ticks)?;
        let (mut ticks, stopped) = match self.route_of(first) {
            Ok(Route::Twin) => self.chunk_on_twin(ticks).await?,
            _ => self.chunk_tick_by_tick(ticks, &room).await?,
        };
        for ticked in ticks.iter_mut().filter(|ticked| ticked.shot.is_some()) {
            ticked.room.clone_from(&room);
        }
        match stopped {
            Some((0, refusal)) => Err(refusal),
            stopped => Ok(Done::Chunk { ticks, stopped }),
        }
    }

    /// The ticks the budget allows in one physics job, each tick's cameras taken right after
    /// it; then each is charged and journaled. Ticks past the budget are refused `step_limit`.
    async fn chunk_on_twin(&self, ticks: Vec<TickMotion>) -> Result<Ran, Status> {
        let episode = |e: fakesim_episode::EpisodeError| status::from_episode(&e);
        let left = self.engine.check_robot_call().await.map_err(episode)?;
        let count = ticks.len();
        let allowed = usize::try_from(left).unwrap_or(usize::MAX).min(count);
        let mut ticks = ticks;
        ticks.truncate(allowed);
        let periods: Vec<Option<f64>> = ticks.iter().map(|t| t.period_s).collect();
        let (ran, failed) = self
            .twin
            .with_sim(move |sim| run_on(sim, ticks))
            .await
            .map_err(|e| status::from_twin(&e))?;
        let lines = ran
            .iter()
            .zip(periods)
            .enumerate()
            .map(|(index, (ticked, period_s))| (1, tick_line(ticked, period_s, index)));
        // The journal is waited for once for the chunk; one that cannot be written fails the
        // call (the twin has run the ticks all the same).
        self.engine
            .record_robot_calls(Call::Tick.journal_name(), lines.collect::<Vec<_>>())
            .await
            .map_err(episode)?;
        let stopped = match failed {
            Some((index, error)) => Some((index, status::from_twin(&error))),
            None if allowed < count => {
                let refusal = self.engine.check_robot_call().await.err().map(episode);
                Some((allowed, refusal.unwrap_or_else(budget_moved)))
            }
            None => None,
        };
        Ok((ran, stopped))
    }

    /// One tick at a time through the bridge; in `hil` each starts a period after the one
    /// before (the client's clock on the real arm).
    async fn chunk_tick_by_tick(&self, ticks: Vec<TickMotion>, room: &Option<Arc<FrameRoom>>) -> Result<Ran, Status> {
        let mut done = Vec::with_capacity(ticks.len());
        let mut next_start = tokio::time::Instant::now();
        for (index, tick) in ticks.into_iter().enumerate() {
            if self.bridge.mode() == Mode::Hil {
                tokio::time::sleep_until(next_start).await;
                let period_s = match tick.period_s {
                    Some(period_s) => period_s,
                    None => self.control_period().await?.period_s(),
                };
                next_start += std::time::Duration::from_secs_f64(period_s);
            }
            let period_s = tick.period_s;
            let outcome = async {
                self.engine
                    .check_robot_call()
                    .await
                    .map_err(|e| status::from_episode(&e))?;
                let ticked = self.tick(tick, room.clone()).await?;
                self.record_tick(&ticked, period_s, index).await?;
                Ok::<_, Status>(ticked)
            }
            .await;
            match outcome {
                Ok(ticked) => done.push(ticked),
                Err(refusal) => return Ok((done, Some((index, refusal)))),
            }
        }
        Ok((done, None))
    }

    /// Charges one tick of a chunk and journals it as a `Tick` with its place in the chunk.
    async fn record_tick(&self, ticked: &Ticked, period_s: Option<f64>, index: usize) -> Result<(), Status> {
        self.engine
            .record_robot_call(Call::Tick.journal_name(), 1, tick_line(ticked, period_s, index))
            .await
            .map_err(|e| status::from_episode(&e))
    }
}

/// What the journal records of a chunk's tick: the targets it held, its period and its index.
fn tick_line(ticked: &Ticked, period_s: Option<f64>, index: usize) -> serde_json::Value {
    json!({ "action": ticked.ctrl(), "period_s": period_s, "chunk_index": index })
}

/// Runs the ticks on `sim` in order, each one's cameras taken right after it, until one fails.
fn run_on(sim: &mut Sim, ticks: Vec<TickMotion>) -> (Vec<Ticked>, Option<(usize, TwinError)>) {
    let mut done = Vec::with_capacity(ticks.len());
    for (index, tick) in ticks.into_iter().enumerate() {
        let ticked = tick_arms(sim, &tick.actions, tick.period_s).and_then(|after| {
            let shot = tick.images.as_ref().map(|images| images.snapshot_on(sim)).transpose()?;
            Ok(Ticked {
                after,
                shot,
                room: None,
            })
        });
        match ticked {
            Ok(ticked) => done.push(ticked),
            Err(error) => return (done, Some((index, error))),
        }
    }
    (done, None)
}

/// The refusal for ticks past a budget that, checked again, was not used up: only another
/// call could have changed it, and the drive lock keeps others out, so this is a defect.
fn budget_moved() -> Status {
    status::refusal(
        status::Reason::Internal,
        "the episode's budget changed while a chunk held the drive lock",
    )
    .into()
}
