//! Teleoperation: a leader arm, moved by hand with its torque off, drives a follower arm and
//! the twin.
//!
//! One cycle ([`Teleop::step_once`]):
//! 1. read the follower (when there is one) and run the [`FaultPolicy`] on its health: hold,
//!    torque off, or torque off and latch the emergency stop;
//! 2. [`EstopLatch`]: while latched, nothing is commanded and the follower's torque is off;
//! 3. read the leader: its joints, through its own calibration, are the targets in the twin's
//!    radians;
//! 4. [`RangeGuard`]: a target outside the model's or the follower's calibrated range skips
//!    the cycle (the loop goes on, the follower holds its last goal);
//! 5. [`TableGuard`]: a target whose TCP is below the table plus the margin is refused;
//! 6. [`DeltaCap`]: each goal is limited to a step from the follower's measured position
//!    (without a follower, from the last goals sent);
//! 7. after the follower's torque came on, goals ramp from its held pose towards the targets
//!    at [`TeleopConfig::ramp_speed_rad_s`] until they catch up;
//! 8. the goals go to the follower (torque switched on first if it is off) and to the twin
//!    with `set_joint_positions(hold = true)`, clamped into the twin's joint and setpoint
//!    ranges; the twin shows what the follower is told.
//!
//! A refusal or a cap that lasts several cycles is reported once, when it starts; the fault
//! policy's events are edge-triggered too. A failed leader read sends nothing (the follower
//! holds), without latching. [`Teleop::run`] paces cycles with a tokio interval (missed ticks
//! are skipped, not bunched) until cancelled, then switches the follower's torque off.

mod outcome;
mod stats;

use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Duration;

use crate::ramp::Ramp;

use fakesim_twin::values::Bounds;
use fakesim_twin::{JointValues, TwinHandle};
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use fakesim_arm::Arm;
use fakesim_safety::{
    DeltaCap, EstopLatch, FaultAction, FaultPolicy, RangeGuard, SafetyError, SafetyEvent, TableGuard, TcpKinematics,
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

/// The safety layers of a teleop session.
#[derive(Clone)]
pub struct TeleopSafety {
    /// Model ranges, narrowed by the follower's calibrated ranges when there is a follower.
    pub range: RangeGuard,
    /// The table surface and margin.
    pub table: TableGuard,
    /// Forward kinematics the table guard uses (a scratch copy of the twin).
    pub kinematics: Arc<dyn TcpKinematics>,
    /// The per-cycle step limit.
    pub delta: DeltaCap,
    /// The emergency stop, shared with whoever may trip or reset it.
    pub estop: EstopLatch,
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
    follower: Option<Arc<dyn Arm>>,
    twin: Option<TwinTarget>,
    safety: TeleopSafety,
    policy: FaultPolicy,
    period: Duration,
    /// Torque of the follower as this loop last switched it.
    follower_torque: bool,
    /// The last goals sent (the twin's pose at start): the delta cap's reference without a
    /// follower.
    last_goals: Option<[f64; 6]>,
    /// The refusal or cap in force, so that a lasting one is reported once.
    condition: Option<Condition>,
    /// Torque came on: the next reading of the follower starts a ramp.
    ramp_pending: bool,
    /// The ramp from the held pose, while it runs.
    ramp: Option<Ramp>,
    /// Speed of the ramp (rad/s).
    ramp_speed_rad_s: f64,
    first_cycle: Option<Instant>,
    stats: watch::Sender<TeleopStats>,
    events: Option<mpsc::UnboundedSender<SafetyEvent>>,
}

impl Teleop {
    /// Checks the rate, switches the leader's torque off, reads the twin's ranges and pose, and
    /// switches the follower's torque on (holding its pose) unless the emergency stop is
    /// latched.
    pub async fn start(arms: TeleopArms, safety: TeleopSafety, config: TeleopConfig) -> Result<Self, TeleopError> {
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
                let (bounds, pose) = handle.with_sim(|sim| (settable_bounds(sim), sim.arm_qpos())).await?;
                (Some(TwinTarget { handle, bounds }), Some(pose))
            }
            None => (None, None),
        };
        let mut teleop = Self {
            leader: arms.leader,
            follower: arms.follower,
            twin,
            safety,
            policy: FaultPolicy::new(),
            period: Duration::from_secs_f64(1.0 / config.rate_hz),
            follower_torque: false,
            last_goals,
            condition: None,
            first_cycle: None,
            ramp_pending: true,
            ramp: None,
            ramp_speed_rad_s: config.ramp_speed_rad_s,
            stats: watch::Sender::new(TeleopStats::default()),
            events: None,
        };
        if !teleop.safety.estop.is_latched() {
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
        &self.safety.estop
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
        if let Some(follower) = &self.follower {
            follower
                .set_torque(false)
                .await
                .map_err(TeleopError::arm(Role::Follower))?;
            tracing::info!("teleop stopped: follower torque off");
        }
        self.follower_torque = false;
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
        let follower_state = match &self.follower {
            Some(follower) => Some(follower.read_state().await),
            None => None,
        };
        let fault = self.apply_fault_policy(events);
        if let Err(refusal) = self.safety.estop.check() {
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
            if fault == FaultAction::TorqueOff
                && let Err(error) = self.switch_follower_torque(false).await
            {
                return CycleOutcome::Failed(error);
            }
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
        if let Err(refusal) = self.check_targets(&targets) {
            self.note(Some(Condition::of(&refusal)), Some(refusal.event()), events);
            return match refusal {
                SafetyError::OutOfRange { .. } => CycleOutcome::Skipped(SkipReason::OutOfRange(refusal)),
                other => CycleOutcome::Refused(other),
            };
        }
        let (goals, capped) = match measured.or(self.last_goals) {
            Some(reference) => match self.safety.delta.limit(&reference, &targets) {
                Ok(capped) => (capped.goals, capped.event()),
                Err(refusal) => {
                    self.note(Some(Condition::of(&refusal)), Some(refusal.event()), events);
                    return CycleOutcome::Refused(refusal);
                }
            },
            None => (targets, None),
        };
        let goals = self.ramped(goals, measured);
        let is_capped = capped.is_some();
        self.note(is_capped.then_some(Condition::Capped), capped, events);
        if let Err(error) = self.send(goals).await {
            return CycleOutcome::Failed(error);
        }
        CycleOutcome::Commanded {
            goals,
            capped: is_capped,
        }
    }

    /// Goals limited by the ramp: after the follower's torque came on (or is about to), the
    /// goals start at its measured pose and move at the ramp speed until they catch up.
    fn ramped(&mut self, goals: [f64; 6], measured: Option<[f64; 6]>) -> [f64; 6] {
        let now = Instant::now().into_std();
        if let Some(measured) = measured
            && (self.ramp_pending || !self.follower_torque)
        {
            self.ramp = Some(Ramp::hold(measured, now));
            self.ramp_pending = false;
        }
        let Some(ramp) = self.ramp.as_mut() else {
            return goals;
        };
        let (goals, done) = ramp.advance(&goals, now, self.ramp_speed_rad_s, self.period);
        if done {
            self.ramp = None;
        }
        goals
    }

    /// Evaluates the follower's health: latches the emergency stop when the policy says so,
    /// and returns the action (continue without a follower).
    fn apply_fault_policy(&mut self, events: &mut Vec<SafetyEvent>) -> FaultAction {
        let Some(follower) = &self.follower else {
            return FaultAction::Continue;
        };
        let decision = self.policy.evaluate(&follower.health());
        events.extend(decision.events);
        if decision.latch && !self.safety.estop.is_latched() {
            events.push(self.safety.estop.trip(decision.reasons.join("; ")));
        }
        decision.action
    }

    /// The range layer, then the table layer.
    fn check_targets(&self, targets: &[f64; 6]) -> Result<(), SafetyError> {
        self.safety.range.check(targets)?;
        self.safety.table.check(targets, self.safety.kinematics.as_ref())
    }

    /// Sends goals to the follower (torque on first) and the twin.
    async fn send(&mut self, goals: [f64; 6]) -> Result<(), TeleopError> {
        self.switch_follower_torque(true).await?;
        if let Some(follower) = &self.follower {
            follower
                .command(goals)
                .await
                .map_err(TeleopError::arm(Role::Follower))?;
        }
        self.last_goals = Some(goals);
        if let Some(twin) = &self.twin {
            let pose: Vec<f64> = goals
                .iter()
                .zip(twin.bounds)
                .map(|(goal, bounds)| goal.clamp(bounds.lo, bounds.hi))
                .collect();
            twin.handle
                .try_with_sim(move |sim| sim.set_joint_positions(&JointValues::Ordered(pose), true).map(drop))
                .await?;
        }
        Ok(())
    }

    /// Records the condition of this cycle; its event is kept only when the condition changed.
    fn note(&mut self, condition: Option<Condition>, event: Option<SafetyEvent>, events: &mut Vec<SafetyEvent>) {
        if condition != self.condition {
            events.extend(event);
        }
        self.condition = condition;
    }

    async fn switch_follower_torque(&mut self, on: bool) -> Result<(), TeleopError> {
        let Some(follower) = &self.follower else {
            return Ok(());
        };
        if self.follower_torque == on {
            return Ok(());
        }
        follower
            .set_torque(on)
            .await
            .map_err(TeleopError::arm(Role::Follower))?;
        self.follower_torque = on;
        self.ramp_pending = on;
        tracing::info!(on, "follower torque switched");
        Ok(())
    }
}

/// The twin's joint ranges intersected with its setpoint ranges.
fn settable_bounds(sim: &fakesim_twin::Sim) -> [Bounds; 6] {
    let joints = sim.joint_ranges();
    let ctrl = sim.ctrl_ranges();
    std::array::from_fn(|i| Bounds {
        lo: joints[i].lo.max(ctrl[i].lo),
        hi: joints[i].hi.min(ctrl[i].hi),
    })
}
