//! The one pipeline every command to the real arm passes: the layers in order (emergency
//! stop, range, table, the ramp after torque came on or a hold, the delta cap, and, with an
//! arm, the twin's preview of the goals), then a last check of the goals, then the arm;
//! around it the watchdog, the fault reaction and torque switching. The API's motions, the
//! arm-to-twin sync, teleop and resuming after a hold all command the arm through it.
//!
//! A command is judged before anything changes: the layers compute a [`Plan`] (the goals the
//! ramp and the cap would write, and the layer state that writing them leaves) from their
//! state without changing it; the preview runs on exactly those goals; only once they are
//! written is the plan's state committed. A refusal anywhere leaves every layer as it was.
//!
//! The pipeline raises events but does not record them: each call returns what it raised,
//! and the caller journals it (the bridge every event, teleop a lasting condition once).

mod reaction;
mod refusal;

pub use reaction::Reaction;
use refusal::check_fault_flags;
pub use refusal::{GuardError, check_servo_faults};

use crate::ramp::Ramp;
use crate::{
    Capped, DeltaCap, EstopLatch, FaultPolicy, RangeGuard, SafetyError, SafetyEvent, TableGuard, TcpKinematics,
    Watchdog, WatchdogAction,
};
use fakesim_arm::Joint;
use fakesim_arm::{Arm, ArmError, ArmState, BoxFuture};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The last layer: the command's targets run on a scratch copy of the twin, from the arm's
/// state now, before any goal reaches the arm.
pub trait CommandPreview: Send + Sync {
    /// Refuses targets whose preview, from the arm at `measured`, shows a violation.
    fn check(&self, targets: [f64; 6], measured: [f64; 6]) -> BoxFuture<'_, Result<(), SafetyError>>;
}

/// The layers a target passes, in order.
#[derive(Clone)]
pub struct Layers {
    /// The emergency stop, shared with whoever may trip or reset it.
    pub estop: EstopLatch,
    /// Model ranges, narrowed by the calibrated ranges with a real arm.
    pub range: RangeGuard,
    /// The table surface and margin.
    pub table: TableGuard,
    /// Forward kinematics for the table layer (never the live twin).
    pub kinematics: Arc<dyn TcpKinematics>,
    /// The per-command step limit from the measured position.
    pub delta: DeltaCap,
    /// The twin's preview of the goals (none: not previewed).
    pub preview: Option<Arc<dyn CommandPreview>>,
}

/// The pipeline's timing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PipelineTiming {
    /// Speed at which goals close the gap to the targets after torque came on or a hold
    /// (rad/s; infinite: no ramp).
    pub ramp_speed_rad_s: f64,
    /// One command period: the most time one ramp step counts, however long the pause.
    pub period: Duration,
    /// With commands flowing, a silence longer than this holds the arm.
    pub watchdog_timeout: Duration,
}

/// How goals approach the targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Through the ramp while one runs: every ordinary command.
    Ramped,
    /// Straight to the targets: a sync that interpolates its own slow path.
    Direct,
}

/// What a sent command did.
#[derive(Debug, Clone, PartialEq)]
pub struct Commanded {
    /// The goals sent (rad, action-key order).
    pub goals: [f64; 6],
    /// Whether the delta cap limited any goal.
    pub capped: bool,
    /// Events raised on the way: the cap, the end of a watchdog hold.
    pub events: Vec<SafetyEvent>,
}

/// Where the pipeline reads the time (tests pause and advance it).
pub type Clock = fn() -> Instant;

/// What a command would write and the layer state writing it leaves; computed without
/// changing anything.
struct Plan {
    /// The goals to write, capped (rad, action-key order).
    capped: Capped,
    /// The ramp after these goals: `None` when it caught up (or none ran).
    ramp: Option<Ramp>,
}

/// What changes between commands.
struct Progress {
    ramp: Option<Ramp>,
    faults: FaultPolicy,
    watchdog: Watchdog,
    last_goals: Option<[f64; 6]>,
    torque_on: bool,
    /// Why the fault reaction last switched torque off (cleared when it comes back on).
    torque_off_cause: Option<String>,
}

/// The safety pipeline of one arm (or of none: teleop driving only the twin runs the layers
/// and sends nothing). Shared by reference; every method takes `&self`.
pub struct SafetyPipeline {
    arm: Option<Arc<dyn Arm>>,
    clock: Clock,
    layers: Layers,
    timing: PipelineTiming,
    progress: Mutex<Progress>,
    /// Held from a command's plan to its commit (and by holds), so no other write changes the
    /// layer state a plan was computed from.
    writing: tokio::sync::Mutex<()>,
}

impl SafetyPipeline {
    /// A pipeline for `arm` with torque as it is (assumed off) and the watchdog disarmed,
    /// reading the time from `clock`.
    pub fn new(arm: Option<Arc<dyn Arm>>, layers: Layers, timing: PipelineTiming, clock: Clock) -> Self {
        SafetyPipeline {
            arm,
            clock,
            layers,
            progress: Mutex::new(Progress {
                ramp: None,
                faults: FaultPolicy::new(),
                watchdog: Watchdog::new(timing.watchdog_timeout),
                last_goals: None,
                torque_on: false,
                torque_off_cause: None,
            }),
            writing: tokio::sync::Mutex::new(()),
            timing,
        }
    }

    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The arm commands go to.
    pub fn arm(&self) -> Option<&Arc<dyn Arm>> {
        self.arm.as_ref()
    }

    /// The layers.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The goals last sent (or set as the reference with [`Self::start_from`]).
    pub fn last_goals(&self) -> Option<[f64; 6]> {
        self.progress().last_goals
    }

    /// Whether torque is on, as this pipeline last switched it.
    pub fn torque_on(&self) -> bool {
        self.progress().torque_on
    }

    /// Takes `pose` as the last goals: the delta cap's reference while nothing is measured.
    pub fn start_from(&self, pose: [f64; 6]) {
        self.progress().last_goals = Some(pose);
    }

    /// Runs the layers on `targets` without changing them: the goals a command would write
    /// now and the ramp that writing them would leave. The delta cap limits from `measured`
    /// and the last goals (`DeltaCap::limit_from`), or from the last goals without a
    /// measurement.
    fn plan(&self, targets: [f64; 6], measured: Option<[f64; 6]>, pace: Pace) -> Result<Plan, SafetyError> {
        let layers = &self.layers;
        layers.estop.check()?;
        layers.range.check(&targets)?;
        layers.table.check(&targets, layers.kinematics.as_ref())?;
        let progress = self.progress();
        let (goals, ramp) = match (pace, progress.ramp) {
            (Pace::Ramped, Some(mut ramp)) => {
                let (goals, done) = ramp.advance(
                    &targets,
                    (self.clock)(),
                    self.timing.ramp_speed_rad_s,
                    self.timing.period,
                );
                (goals, (!done).then_some(ramp))
            }
            (_, ramp) => (targets, ramp),
        };
        let capped = match (measured, progress.last_goals) {
            (Some(measured), last) => layers.delta.limit_from(&measured, last.as_ref(), &goals)?,
            (None, Some(last)) => layers.delta.limit(&last, &goals)?,
            (None, None) => Capped {
                goals,
                capped: Vec::new(),
            },
        };
        Ok(Plan { capped, ramp })
    }

    /// The last check before the bus: the emergency stop is not latched and every goal lies in
    /// the effective range. A failure here is a defect of the layers before it.
    fn check_before_bus(&self, goals: &[f64; 6]) -> Result<(), GuardError> {
        let check = self.layers.estop.check().and_then(|()| self.layers.range.check(goals));
        check.map_err(|broken| match broken {
            // The stop latched while the command was in flight: an ordinary refusal.
            SafetyError::EstopLatched { .. } => self.latched_refusal(broken),
            other => {
                tracing::error!(error = %other, ?goals, "defect: goals failed the last check before the bus");
                GuardError::Invariant(other)
            }
        })
    }

    /// Runs the layers, previews the goals they would write (and the targets, where those
    /// differ), checks the goals once more and writes them to the arm (when there is one); only then commits the layers' state and feeds the
    /// watchdog. A refusal at any step writes nothing and changes nothing.
    pub async fn command(
        &self,
        targets: [f64; 6],
        measured: Option<[f64; 6]>,
        pace: Pace,
    ) -> Result<Commanded, GuardError> {
        let _writing = self.writing.lock().await;
        // A fault first: a stall latches the stop too, and the fault is what the client needs.
        if let Some(arm) = &self.arm {
            self.check_arm_can_move(arm.as_ref())?;
        }
        let plan = self
            .plan(targets, measured, pace)
            .map_err(|e| self.latched_refusal(e))?;
        let goals = plan.capped.goals;
        if let Some(arm) = &self.arm {
            if let Some(preview) = &self.layers.preview {
                let from = measured.unwrap_or(goals);
                preview.check(goals, from).await?;
                // Where the command leads, when the ramp or the cap write less of it now: a
                // client creeping towards a contact is refused before its goals get there.
                if targets != goals {
                    preview.check(targets, from).await?;
                }
            }
            self.check_before_bus(&goals)?;
            arm.command(goals).await?;
        }
        let mut events: Vec<SafetyEvent> = plan.capped.event().into_iter().collect();
        let mut progress = self.progress();
        if progress.ramp.is_some() && plan.ramp.is_none() && pace == Pace::Ramped {
            tracing::debug!("ramp caught up with the targets");
        }
        if pace == Pace::Ramped {
            progress.ramp = plan.ramp;
        }
        progress.last_goals = Some(goals);
        events.extend(progress.watchdog.feed((self.clock)()));
        Ok(Commanded {
            goals,
            capped: !plan.capped.capped.is_empty(),
            events,
        })
    }

    /// A layer's refusal, unless the stop it names was latched by a fault of the arm that
    /// appeared meanwhile: then that fault, which is what the caller can act on.
    fn latched_refusal(&self, refusal: SafetyError) -> GuardError {
        if let (SafetyError::EstopLatched { .. }, Some(arm)) = (&refusal, &self.arm)
            && let Err(fault) = self.check_arm_can_move(arm.as_ref())
        {
            return fault;
        }
        GuardError::Refused(refusal)
    }

    /// Refuses while a servo's fault holds the arm or switched torque off, or while torque is
    /// still off after such a fault: the arm would not carry the command out.
    pub fn check_arm_can_move(&self, arm: &dyn Arm) -> Result<(), GuardError> {
        check_fault_flags(
            arm.health()
                .servos
                .iter()
                .map(|servo| (servo.joint, servo.id, servo.error_flags)),
        )?;
        match self.progress().torque_off_cause.clone() {
            Some(cause) => Err(GuardError::TorqueOff { cause }),
            None => Ok(()),
        }
    }

    /// Switches torque on holding the present pose, unless a servo still reports a fault that
    /// switched it off; ramped commands then start from that pose, and the watchdog watches.
    /// Returns the state read (`None` without an arm).
    pub async fn switch_torque_on(&self) -> Result<Option<ArmState>, GuardError> {
        let Some(arm) = &self.arm else {
            return Ok(None);
        };
        let _writing = self.writing.lock().await;
        let state = arm.read_state().await?;
        check_servo_faults(&state)?;
        arm.set_torque(true).await?;
        let now = (self.clock)();
        let mut progress = self.progress();
        progress.ramp = Some(Ramp::hold(state.positions_rad(), now));
        progress.last_goals = None;
        progress.torque_on = true;
        progress.torque_off_cause = None;
        progress.watchdog.disarm();
        progress.watchdog.feed(now);
        Ok(Some(state))
    }

    /// Switches torque off and stops watching. Torque counts as on until an attempt succeeds,
    /// so a failed attempt is tried again.
    pub async fn switch_torque_off(&self) -> Result<(), ArmError> {
        self.disarm_watchdog();
        let Some(arm) = &self.arm else {
            return Ok(());
        };
        arm.set_torque(false).await?;
        self.progress().torque_on = false;
        Ok(())
    }

    /// Stops watching for silence (leaving `hil`).
    pub fn disarm_watchdog(&self) {
        self.progress().watchdog.disarm();
    }

    /// Ramped commands start from `pose` (the arm was just brought there).
    pub fn ramp_from(&self, pose: [f64; 6]) {
        self.progress().ramp = Some(Ramp::hold(pose, (self.clock)()));
    }

    /// Holds the arm at `measured`, brought into the effective range (the goals last sent from
    /// then on); ramped commands then start from there.
    pub async fn hold(&self, measured: [f64; 6]) -> Result<(), GuardError> {
        let _writing = self.writing.lock().await;
        let goals: [f64; 6] = std::array::from_fn(|i| {
            let limits = self.layers.range.limits(Joint::ALL[i]);
            measured[i].clamp(limits.lo, limits.hi)
        });
        if let Some(arm) = &self.arm {
            self.check_before_bus(&goals)?;
            arm.command(goals).await?;
        }
        let mut progress = self.progress();
        progress.last_goals = Some(goals);
        progress.ramp = Some(Ramp::hold(goals, (self.clock)()));
        Ok(())
    }

    /// Holds the arm at `measured` when commands stopped coming for longer than the
    /// watchdog's timeout; returns the event when the hold starts.
    pub async fn check_watchdog(&self, measured: [f64; 6]) -> Option<SafetyEvent> {
        let verdict = self.progress().watchdog.check((self.clock)());
        if verdict.action == WatchdogAction::Hold
            && verdict.event.is_some()
            && let Err(e) = self.hold(measured).await
        {
            tracing::error!(error = %e, "watchdog hold failed");
        }
        verdict.event
    }
}
