//! Where the updates come from: the twin's observer on the physics thread, and tasks following
//! the bridge's readings and modes and the engine's journal tap. Each only hands updates on.

use crate::feed::{Feed, Update};
use crate::logger::{ArmSetup, Logger, Opened};
use crate::{LiveViewError, Sources, Target};
use fakesim_bridge::hil::{HardwareBridge, Mode};
use fakesim_episode::journal::Kind;
use fakesim_episode::tap::TapEntry;
use fakesim_safety::SafetyEvent;
use fakesim_twin::TwinHandle;
use fakesim_twin::arms::Side;
use serde_json::Value;
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::task::JoinHandle as TaskHandle;

/// Shortest gap between two logged readings of the real arm: the bus gives about a thousand a
/// second, the view needs far fewer.
const READING_GAP: Duration = Duration::from_millis(10);

/// The logger thread and the tasks feeding it, until stopped.
struct Parts {
    thread: JoinHandle<()>,
    tasks: Vec<TaskHandle<()>>,
}

/// The logger thread, the tasks feeding it, and the feed.
pub(crate) struct Running {
    feed: Feed,
    twin: TwinHandle,
    parts: Mutex<Option<Parts>>,
}

impl Running {
    /// Opens `target`, logs the static scene, starts the logger thread and the sources.
    pub async fn start(target: &Target, sources: Sources) -> Result<Self, LiveViewError> {
        let Sources { twin, arms, journal } = sources;
        let (model, start) = twin.with_sim(|sim| (sim.model().clone(), sim.tick_snapshot())).await?;
        let specs = twin.arms();
        // Every arm switches mode together: the first one's mode is the daemon's.
        let modes = match arms.first() {
            Some(first) if specs.len() == arms.len() => first.bridge.clone(),
            _ => {
                return Err(LiveViewError::Rerun {
                    target: target.to_string(),
                    message: format!(
                        "the twin holds {} arms, the live view was given {}",
                        specs.len(),
                        arms.len()
                    ),
                });
            }
        };
        let setups = (specs.iter().zip(&arms))
            .map(|(spec, arm)| ArmSetup {
                spec,
                has_arm: arm.bridge.port().is_some(),
                to_lerobot: arm.to_lerobot.clone(),
            })
            .collect();
        let opened = Opened::new(target)?;
        let mode = modes.mode();
        // Posing and logging the static scene is CPU work: off the runtime.
        let logger = tokio::task::spawn_blocking(move || Logger::new(opened, model, setups, &start, mode))
            .await
            .map_err(|e| LiveViewError::Rerun {
                target: target.to_string(),
                message: format!("the logger panicked while starting: {e}"),
            })?
            .map_err(|message| LiveViewError::Rerun {
                target: target.to_string(),
                message,
            })?;
        let (feed, updates) = Feed::new();
        let thread = std::thread::Builder::new()
            .name("live-view".to_owned())
            .spawn(move || logger.run(updates))?;
        let ticks = feed.clone();
        twin.with_sim(move |sim| {
            sim.set_tick_observer(Some(Box::new(move |snapshot| {
                ticks.offer(Update::Tick(Box::new(snapshot)));
            })));
        })
        .await?;
        let mut tasks: Vec<_> = (arms.into_iter().enumerate())
            .map(|(index, arm)| tokio::spawn(follow_readings(index, arm.bridge, feed.clone())))
            .collect();
        tasks.push(tokio::spawn(follow_modes(modes, feed.clone())));
        tasks.push(tokio::spawn(follow_journal(journal, feed.clone())));
        tracing::info!(%target, rerun = crate::RERUN_VERSION, "live view started");
        Ok(Running {
            feed,
            twin,
            parts: Mutex::new(Some(Parts { thread, tasks })),
        })
    }

    /// Queues a safety event of arm `arm` of a pair, or of the arm alone.
    pub fn safety_event(&self, arm: Option<Side>, event: &SafetyEvent) {
        self.feed.offer(Update::Safety {
            arm,
            event: Box::new(event.clone()),
        });
    }

    /// Updates dropped so far.
    pub fn dropped(&self) -> u64 {
        self.feed.dropped()
    }

    /// Stops the sources, lets the logger log what is queued and flush, and joins it.
    pub async fn stop(&self) {
        let parts = self.parts.lock().unwrap_or_else(PoisonError::into_inner).take();
        let Some(Parts { thread, tasks }) = parts else {
            return;
        };
        for task in tasks {
            task.abort();
        }
        // A twin already stopped hands nothing on any more either.
        let _ = self.twin.with_sim(|sim| sim.set_tick_observer(None)).await;
        let feed = self.feed.clone();
        let joined = tokio::task::spawn_blocking(move || {
            feed.finish();
            thread.join()
        })
        .await;
        if !matches!(joined, Ok(Ok(()))) {
            tracing::error!("the live view's thread ended abnormally");
        }
        let dropped = self.feed.dropped();
        if dropped > 0 {
            tracing::warn!(dropped, "live view: updates dropped because the logger fell behind");
        }
    }
}

/// Hands on the readings of real arm `arm`, at most one per [`READING_GAP`], with the goals
/// in force.
async fn follow_readings(arm: usize, bridge: HardwareBridge, feed: Feed) {
    let mut readings = bridge.samples();
    let mut last = None;
    while readings.changed().await.is_ok() {
        let sample = *readings.borrow_and_update();
        if sample.real_rad.is_none() || last.is_some_and(|at| sample.at < at + READING_GAP) {
            continue;
        }
        last = Some(sample.at);
        feed.offer(Update::Sample {
            arm,
            sample: Box::new(sample),
            // Only `hil` drives the arm; goals left from an earlier `hil` are not in force.
            goals: bridge.last_goals().filter(|_| bridge.mode() == Mode::Hil),
        });
    }
}

/// Hands on every mode switch.
async fn follow_modes(bridge: HardwareBridge, feed: Feed) {
    let mut modes = bridge.watch_mode();
    while modes.changed().await.is_ok() {
        let mode = *modes.borrow_and_update();
        feed.offer(Update::Mode(mode));
    }
}

/// Hands on the journal's lines, frames and move targets. Not its safety lines, which come
/// from the bridge directly (also outside an episode), nor its robot-call lines: there is one
/// a tick, the joint series already show what those calls did, and a text entry a tick was
/// most of what the live view cost a tick in an episode.
async fn follow_journal(mut journal: broadcast::Receiver<TapEntry>, feed: Feed) {
    loop {
        let update = match journal.recv().await {
            Ok(TapEntry::Line(line)) => {
                let kind = line.get("kind").and_then(Value::as_str);
                if [Kind::Safety, Kind::RobotCall].iter().any(|k| kind == Some(k.name())) {
                    continue;
                }
                Update::Journal(line)
            }
            Ok(TapEntry::Frame { camera, png }) => Update::Frame { camera, png },
            Ok(TapEntry::MoveTarget(target)) => Update::MoveTarget(target),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                feed.count_dropped(missed);
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        feed.offer(update);
    }
}
