//! Teleoperation: a leader arm, moved by hand with its torque off, drives a follower arm and
//! the twin.
//!
//! Every goal passes the same [`SafetyPipeline`] as the API's commands to the real arm. One
//! cycle ([`Teleop::step_once`]):
//! 1. read the follower (when there is one) and let the pipeline react to its health: hold,
//!    torque off, or torque off and latch the emergency stop;
//! 2. while the emergency stop is latched, nothing is commanded and the follower's torque is
//!    off; after a fault reaction the cycle is skipped;
//! 3. read the leader: its joints, through its own calibration, are the targets in the twin's
//!    radians;
//! 4. switch the follower's torque on if it is off (holding its pose; goals then ramp from it
//!    at [`TeleopConfig::ramp_speed_rad_s`] until they catch up);
//! 5. the pipeline's layers: a target outside the model's or the follower's calibrated range
//!    skips the cycle (the loop goes on, the follower holds its last goal), a target whose TCP
//!    is below the table plus the margin is refused, the ramp, and the delta cap from the
//!    follower's measured position (without a follower, from the last goals sent);
//! 6. the goals go to the follower and to the twin with `set_joint_positions(hold = true)`,
//!    clamped into the twin's joint and setpoint ranges; the twin shows what the follower is
//!    told.
//!
//! A refusal or a cap that lasts several cycles is reported once, when it starts; the fault
//! policy's events are edge-triggered too. A failed leader read sends nothing (the follower
//! holds), without latching. [`Teleop::run`] paces cycles with a tokio interval (missed ticks
//! are skipped, not bunched) until cancelled, then switches the follower's torque off.

mod outcome;
mod stats;

use crate::now;
use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Duration;

use fakesim_twin::values::Bounds;
use fakesim_twin::{JointValues, TwinHandle};
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use fakesim_arm::Arm;
use fakesim_safety::{
    EstopLatch, FaultAction, GuardError, Layers, Pace, PipelineTiming, SafetyError, SafetyEvent, SafetyPipeline,
};
use outcome::Condition;

pub use outcome::{Cycle, CycleOutcome, Role, SkipReason, TeleopError};
pub use stats::TeleopStats;

/// The default cycle rate (Hz).
pub const DEFAULT_RATE_HZ: f64 = 60.0;

/// The default delta cap (rad per cycle): a little more than an STS3215 turns in one 60 Hz
/// cycle at full speed (3400 steps/s, 0.087 rad), so a follower keeping up is never limited.
pub const DEFAULT_MAX_STEP_RAD: f64 = 0.1;

/// Rates a loop may run at (Hz).
const RATE_RANGE: RangeInclusive<f64> = 1.0..=1000.0;

/// The arms of a teleop session.
#[derive(Clone)]
pub struct TeleopArms {
    /// The hand-moved arm; its torque is switched off and it is only read.
    pub leader: Arc<dyn Arm>,
    /// The driven arm, if any.
    pub follower: Option<Arc<dyn Arm>>,
    /// The twin, if any.
    pub twin: Option<TwinHandle>,
}

/// How fast a teleop loop runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TeleopConfig {
    /// Cycles per second (1..=1000).
    pub rate_hz: f64,
    /// Speed limit of the ramp after the follower's torque comes on (rad/s, above 0;
    /// infinite: no ramp).
    pub ramp_speed_rad_s: f64,
}

impl Default for TeleopConfig {
    fn default() -> Self {
        Self {
            rate_hz: DEFAULT_RATE_HZ,
            ramp_speed_rad_s: DEFAULT_RAMP_SPEED_RAD_S,
        }
    }
}

/// Default speed of the ramp after torque comes on (rad/s).
pub const DEFAULT_RAMP_SPEED_RAD_S: f64 = 0.5;

/// The twin as a teleop target.
struct TwinTarget {
    handle: TwinHandle,
    /// Joint ranges intersected with setpoint ranges: what `set_joint_positions(hold)` takes.
    bounds: [Bounds; 6],
}

/// A teleop loop. Build it with [`Teleop::start`]; run one cycle with [`Teleop::step_once`]
/// or pace cycles with [`Teleop::run`].
pub struct Teleop {
    leader: Arc<dyn Arm>,
    /// The follower's (or, without one, the twin's) safety pipeline.
    pipeline: SafetyPipeline,
    twin: Option<TwinTarget>,
    period: Duration,
    /// The refusal or cap in force, so that a lasting one is reported once.
    condition: Option<Condition>,
    first_cycle: Option<Instant>,
    stats: watch::Sender<TeleopStats>,
    events: Option<mpsc::UnboundedSender<SafetyEvent>>,
}

impl Teleop {
    /// Checks the rate, switches the leader's torque off, reads the twin's ranges and pose, and
    /// switches the follower's torque on (holding its pose) unless the emergency stop is
    /// latched. Without a follower the twin's pose is the delta cap's first reference.
    pub async fn start(arms: TeleopArms, layers: Layers, config: TeleopConfig) -> Result<Self, TeleopError> {
        if !RATE_RANGE.contains(&config.rate_hz) {
            return Err(TeleopError::InvalidRate(config.rate_hz));
        }
        if config.ramp_speed_rad_s.is_nan() || config.ramp_speed_rad_s <= 0.0 {
            return Err(TeleopError::InvalidRampSpeed(config.ramp_speed_rad_s));
        }
        arms.leader
            .set_torque(false)
            .await
            .map_err(TeleopError::arm(Role::Leader))?;
        let (twin, last_goals) = match arms.twin {
            Some(handle) => {
                let (bounds, pose) = handle.with_sim(|sim| (sim.settable_ranges(), sim.arm_qpos())).await?;
                (Some(TwinTarget { handle, bounds }), Some(pose))
            }
            None => (None, None),
        };
        let period = Duration::from_secs_f64(1.0 / config.rate_hz);
        let timing = PipelineTiming {
            ramp_speed_rad_s: config.ramp_speed_rad_s,
            period,
            // Teleop is its own command source: its cycles never fall silent while it runs.
            watchdog_timeout: Duration::MAX,
        };
        let pipeline = SafetyPipeline::new(arms.follower, layers, timing, now);
        if let Some(pose) = last_goals {
            pipeline.start_from(pose);
        }
        let teleop = Self {
            leader: arms.leader,
            pipeline,
            twin,
            period,
            condition: None,
            first_cycle: None,
            stats: watch::Sender::new(TeleopStats::default()),
            events: None,
        };
        if !teleop.estop().is_latched() {
            teleop.switch_follower_torque(true).await?;
        }
        Ok(teleop)
    }

    /// Time between cycles in [`Teleop::run`].
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The emergency stop this loop obeys.
    pub fn estop(&self) -> &EstopLatch {
        &self.pipeline.layers().estop
    }

    /// The counters so far.
    pub fn stats(&self) -> TeleopStats {
        *self.stats.borrow()
    }

    /// The counters, updated after every cycle.
    pub fn watch_stats(&self) -> watch::Receiver<TeleopStats> {
        self.stats.subscribe()
    }

    /// Safety events raised from now on (replaces an earlier subscription).
    pub fn subscribe_events(&mut self) -> mpsc::UnboundedReceiver<SafetyEvent> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.events = Some(sender);
        receiver
    }

    /// Runs cycles every [`Teleop::period`] until `cancel` fires, then switches the follower's
    /// torque off. Returns the final counters.
    pub async fn run(&mut self, cancel: CancellationToken) -> Result<TeleopStats, TeleopError> {
        let mut ticks = tokio::time::interval(self.period);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                _ = ticks.tick() => {}
            }
            self.step_once().await;
        }
        self.stop().await?;
        Ok(self.stats())
    }

    /// Switches the follower's torque off (whatever this loop believes its state is).
    pub async fn stop(&mut self) -> Result<(), TeleopError> {
        self.pipeline
            .switch_torque_off()
            .await
            .map_err(TeleopError::arm(Role::Follower))?;
        if self.pipeline.arm().is_some() {
            tracing::info!("teleop stopped: follower torque off");
        }
        Ok(())
    }

    /// Runs one cycle now (see the module documentation) and counts it.
    pub async fn step_once(&mut self) -> Cycle {
        let started = Instant::now();
        let first = *self.first_cycle.get_or_insert(started);
        let mut events = Vec::new();
        let outcome = self.cycle(&mut events).await;
        self.stats
            .send_modify(|stats| stats.record(&outcome, started - first, started.elapsed()));
        if let CycleOutcome::Failed(error) = &outcome {
            tracing::debug!(%error, "teleop cycle failed");
        }
        for event in &events {
            tracing::warn!(?event, "teleop safety event");
            if let Some(sink) = &self.events {
                // A subscriber that went away does not stop the loop.
                let _ = sink.send(event.clone());
            }
        }
        Cycle { outcome, events }
    }

    async fn cycle(&mut self, events: &mut Vec<SafetyEvent>) -> CycleOutcome {
        let follower_state = match self.pipeline.arm() {
            Some(follower) => Some(follower.read_state().await),
            None => None,
        };
        let fault = self.pipeline.react_to_faults(|event| events.push(event)).await.action;
        if let Err(refusal) = self.estop().check() {
            self.note(Some(Condition::of(&refusal)), Some(refusal.event()), events);
            if let Err(error) = self.switch_follower_torque(false).await {
                return CycleOutcome::Failed(error);
            }
            return CycleOutcome::Refused(refusal);
        }
        let measured = match follower_state {
            Some(Ok(state)) => Some(state.positions_rad()),
            Some(Err(error)) => {
                return CycleOutcome::Failed(TeleopError::Arm {
                    role: Role::Follower,
                    source: error,
                });
            }
            None => None,
        };
        if fault != FaultAction::Continue {
            self.condition = None;
            return CycleOutcome::Skipped(SkipReason::Fault(fault));
        }
        let targets = match self.leader.read_state().await {
            Ok(state) => state.positions_rad(),
            Err(error) => {
                return CycleOutcome::Failed(TeleopError::Arm {
                    role: Role::Leader,
                    source: error,
                });
            }
        };
        if let Err(error) = self.switch_follower_torque(true).await {
            return CycleOutcome::Failed(error);
        }
        let sent = self.pipeline.command(targets, measured, Pace::Ramped).await;
        let sent = match sent {
            Ok(sent) => sent,
            Err(GuardError::Refused(refusal)) => {
                self.note(Some(Condition::of(&refusal)), Some(refusal.event()), events);
                return match refusal {
                    SafetyError::OutOfRange { .. } => CycleOutcome::Skipped(SkipReason::OutOfRange(refusal)),
                    other => CycleOutcome::Refused(other),
                };
            }
            Err(error) => return CycleOutcome::Failed(TeleopError::follower(error)),
        };
        let capped = sent
            .events
            .into_iter()
            .find(|e| matches!(e, SafetyEvent::DeltaCapped { .. }));
        self.note(sent.capped.then_some(Condition::Capped), capped, events);
        if let Err(error) = self.show_on_twin(sent.goals).await {
            return CycleOutcome::Failed(error);
        }
        CycleOutcome::Commanded {
            goals: sent.goals,
            capped: sent.capped,
        }
    }

    /// Shows the goals sent on the twin.
    async fn show_on_twin(&self, goals: [f64; 6]) -> Result<(), TeleopError> {
        let Some(twin) = &self.twin else {
            return Ok(());
        };
        let pose: Vec<f64> = goals
            .iter()
            .zip(twin.bounds)
            .map(|(goal, bounds)| goal.clamp(bounds.lo, bounds.hi))
            .collect();
        twin.handle
            .try_with_sim(move |sim| sim.set_joint_positions(&JointValues::Ordered(pose), true).map(drop))
            .await?;
        Ok(())
    }

    /// Records the condition of this cycle; its event is kept only when the condition changed.
    fn note(&mut self, condition: Option<Condition>, event: Option<SafetyEvent>, events: &mut Vec<SafetyEvent>) {
        if condition != self.condition {
            events.extend(event);
        }
        self.condition = condition;
    }

    /// Switches the follower's torque when this loop last left it otherwise.
    async fn switch_follower_torque(&self, on: bool) -> Result<(), TeleopError> {
        if self.pipeline.arm().is_none() || self.pipeline.torque_on() == on {
            return Ok(());
        }
        if on {
            self.pipeline.switch_torque_on().await.map_err(TeleopError::follower)?;
        } else {
            self.pipeline
                .switch_torque_off()
                .await
                .map_err(TeleopError::arm(Role::Follower))?;
        }
        tracing::info!(on, "follower torque switched");
        Ok(())
    }
}
