//! The hardware bridge: owns the pairing of the real arm and the twin, the mode, the mirror
//! loop, and the safety layers every command to the real arm passes through.

use super::mode::{Mode, SyncOption, VerbKind};
use super::shadow::{Finding, JointResidual, Shadow, ShadowConfig, ShadowInput};
use crate::now;
use crate::telemetry::{HardwareStatus, RecentEvents};
use fakesim_arm::mapping::Joint;
use fakesim_arm::{Arm, ArmError, ArmHealth, ArmState};
use fakesim_safety::{
    CommandPreview, Commanded, DeltaCap, EstopLatch, GuardError, Layers, Pace, PipelineTiming, RangeGuard, SafetyError,
    SafetyEvent, SafetyPipeline, TableGuard, TcpKinematics, check_servo_faults,
};
use fakesim_twin::values::Bounds;
use fakesim_twin::{JointValues, TwinError, TwinHandle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Safety events kept for the hardware status.
const RECENT_EVENTS: usize = 64;
/// The longest an arm-to-twin sync may take; a slower speed is refused before anything moves.
pub const MAX_SYNC_DURATION: Duration = Duration::from_secs(30);

/// How the bridge runs.
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    /// How often the mirror loop reads the real arm (Hz); `None` reads again as soon as the
    /// last reading is in the twin, as fast as the bus allows.
    pub mirror_rate_hz: Option<f64>,
    /// One control tick in real time (the twin's control period).
    pub control_period: Duration,
    /// Entering `hil` is refused when any joint differs by more than this (rad).
    pub disagree_threshold_rad: f64,
    /// Speed of the slow move that brings the real arm to the twin's pose (rad/s).
    pub sync_speed_rad_s: f64,
    /// In `hil`, no command for longer than this holds the arm where it is.
    pub watchdog_timeout: Duration,
    /// Largest change of any joint goal from its measured position in one command (rad).
    pub max_delta_rad: f64,
    /// After torque comes on or the arm is held, goals ramp from the held position to the
    /// targets at this speed (rad/s) until they catch up.
    pub ramp_speed_rad_s: f64,
    /// The shadow's thresholds for obstructions and calibration drift.
    pub shadow: ShadowConfig,
}

impl BridgeConfig {
    /// Defaults for a control period: mirroring at the bus's own rate, 0.1 rad disagreement,
    /// 0.5 rad/s sync and ramp, a 1 s watchdog and 0.35 rad per command.
    pub fn new(control_period: Duration) -> Self {
        BridgeConfig {
            mirror_rate_hz: None,
            control_period,
            disagree_threshold_rad: 0.1,
            sync_speed_rad_s: 0.5,
            watchdog_timeout: Duration::from_secs(1),
            max_delta_rad: 0.35,
            ramp_speed_rad_s: 0.5,
            shadow: ShadowConfig::default(),
        }
    }
}

/// Why the bridge refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// A mode or verb that needs the real arm, without one.
    #[error("no real arm is connected; start fakesim-hil with --port DEVICE to use {0} mode")]
    NoHardware(&'static str),
    /// The real arm and the twin disagree too much to enter `hil` without a sync.
    #[error(
        "the real arm and the twin disagree by {error_rad:.3} rad at {joint} (more than {threshold_rad} rad); \
         ask for sync MOVE_ARM_TO_TWIN or MOVE_TWIN_TO_ARM"
    )]
    Disagree {
        /// The joint that differs most.
        joint: &'static str,
        /// By how much (rad).
        error_rad: f64,
        /// The threshold (rad).
        threshold_rad: f64,
    },
    /// Motion asked for while the arm is in mirror mode.
    #[error(
        "the arm is in mirror mode (moved by hand or a leader arm); switch to hil or sim with SetMode to command it"
    )]
    MirrorMode,
    /// A simulation-only verb asked for in `hil`.
    #[error(
        "this verb only exists in simulation (the real arm cannot be stepped, teleported or restored); switch to sim \
         with SetMode first"
    )]
    SimOnlyVerb,
    /// The mode changed away from `hil` while a call was moving the real arm.
    #[error("the mode changed to {0} during the call; the call ended where the arm was")]
    ModeChanged(&'static str),
    /// A configured setting the bridge cannot run with.
    #[error("invalid setting: {0}")]
    InvalidSetting(String),
    /// A setting or request value the bridge cannot use.
    #[error("{0}")]
    InvalidArgument(String),
    /// The slow move to the twin's pose ended with the arm elsewhere (blocked, or too slow).
    #[error(
        "the real arm did not arrive at the twin's pose: {joint} is {error_rad:.3} rad away (more than \
         {threshold_rad} rad); check what blocks it, then ask for the sync again"
    )]
    NotArrived {
        /// The joint farthest from the target.
        joint: &'static str,
        /// How far (rad).
        error_rad: f64,
        /// The threshold (rad).
        threshold_rad: f64,
    },
    /// A servo still reports a fault that switched its torque off.
    #[error(
        "{joint} (servo {id}) still reports {flags:?}; torque stays off until the fault clears \
         (let it cool down or free the joint, see GetHardwareStatus), then reset the stop and enter hil again"
    )]
    ServoFault {
        /// The joint.
        joint: &'static str,
        /// Its servo.
        id: u8,
        /// The flags it reports.
        flags: feetech::protocol::status::ServoError,
    },
    /// The mirror loop produced no reading of the arm in time.
    #[error("no reading of the real arm for {0:?}; check the bus (GetHardwareStatus)")]
    NoReading(Duration),
    /// A safety layer refused the command.
    #[error(transparent)]
    Safety(#[from] SafetyError),
    /// The real arm failed.
    #[error(transparent)]
    Arm(#[from] ArmError),
    /// The twin refused or failed.
    #[error(transparent)]
    Twin(#[from] TwinError),
}

impl From<GuardError> for BridgeError {
    fn from(error: GuardError) -> Self {
        match error {
            GuardError::Refused(refusal) => BridgeError::Safety(refusal),
            GuardError::Arm(failure) => BridgeError::Arm(failure),
            GuardError::ServoFault { joint, id, flags } => BridgeError::ServoFault {
                joint: joint.label(),
                id,
                flags,
            },
        }
    }
}

/// Where a robot-service call goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// To the twin, as in simulation.
    Twin,
    /// To the real arm through the safety layers.
    Arm,
}

/// One reading of the joints: the real arm (when there is one) and the twin after mirroring.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Readings since the bridge started.
    pub seq: u64,
    /// When the reading of the real arm arrived (or the twin was read, without one).
    pub at: Instant,
    /// Real joint positions (rad), action-key order.
    pub real_rad: Option<[f64; 6]>,
    /// Twin joint positions (rad) after this reading was mirrored.
    pub twin_rad: [f64; 6],
    /// Joints whose real position lay outside the twin's range and was mirrored clamped.
    pub clamped: [bool; 6],
    /// The shadow's prediction and residual per joint, in `mirror` and `hil` with a reading.
    pub shadow: Option<[JointResidual; 6]>,
    /// From sending the read to the reading being in the twin.
    pub latency: Duration,
}

/// What a mode switch did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeSwitch {
    /// The mode before.
    pub previous: Mode,
    /// Largest joint difference between arm and twin at the switch (rad), with hardware.
    pub max_joint_error_rad: f64,
    /// How long the sync move took.
    pub sync_duration: Duration,
}

struct Inner {
    /// Every command to the real arm passes it; it owns the arm.
    pipeline: SafetyPipeline,
    twin: TwinHandle,
    config: BridgeConfig,
    twin_ranges: [Bounds; 6],
    mode: watch::Sender<Mode>,
    events: Mutex<RecentEvents>,
    journal: mpsc::UnboundedSender<SafetyEvent>,
    samples: watch::Sender<Sample>,
    switching: tokio::sync::Mutex<()>,
    events_total: AtomicU64,
    stopping: CancellationToken,
    mirror: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Watches the real arm against its prediction (mirror loop only).
    shadow: Mutex<Shadow>,
    /// Obstructions the shadow held the arm for, since the bridge started.
    obstructions: AtomicU64,
}

/// The pairing of the real arm and the twin. Cheap to clone.
#[derive(Clone)]
pub struct HardwareBridge {
    inner: Arc<Inner>,
}

/// What the bridge is built from.
pub struct BridgeParts {
    /// The real arm, or `None` for sim-only.
    pub arm: Option<Arc<dyn Arm>>,
    /// The twin.
    pub twin: TwinHandle,
    /// The range layer (model and, with hardware, calibrated ranges).
    pub range: RangeGuard,
    /// The table layer.
    pub table: TableGuard,
    /// Forward kinematics for the table layer (never the live twin).
    pub kinematics: Arc<dyn TcpKinematics>,
    /// The twin's preview of every command to the real arm (none: not previewed).
    pub preview: Option<Arc<dyn CommandPreview>>,
    /// Settings.
    pub config: BridgeConfig,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HardwareBridge {
    /// Starts the bridge in `initial` mode. With an arm, a mirror loop reads it until
    /// [`Self::stop`]; safety events also arrive on the returned receiver (for the run journal).
    pub async fn start(
        parts: BridgeParts,
        initial: Mode,
    ) -> Result<(Self, mpsc::UnboundedReceiver<SafetyEvent>), BridgeError> {
        if parts.arm.is_none() && initial != Mode::Sim {
            return Err(BridgeError::NoHardware(initial.name()));
        }
        parts.config.shadow.check().map_err(BridgeError::InvalidSetting)?;
        let delta =
            DeltaCap::uniform(parts.config.max_delta_rad).map_err(|e| BridgeError::InvalidSetting(e.to_string()))?;
        // Mirrored joints are written with hold, so they must fit both the joint and the setpoint range.
        let (twin_ranges, twin_rad) = parts
            .twin
            .with_sim(|sim| {
                let (joints, ctrl) = (sim.joint_ranges(), sim.ctrl_ranges());
                let both = std::array::from_fn(|i| Bounds {
                    lo: joints[i].lo.max(ctrl[i].lo),
                    hi: joints[i].hi.min(ctrl[i].hi),
                });
                (both, sim.arm_qpos())
            })
            .await?;
        let (journal, events_rx) = mpsc::unbounded_channel();
        let first = Sample {
            seq: 0,
            at: Instant::now(),
            real_rad: None,
            twin_rad,
            clamped: [false; 6],
            shadow: None,
            latency: Duration::ZERO,
        };
        let layers = Layers {
            estop: EstopLatch::new(),
            range: parts.range,
            table: parts.table,
            kinematics: parts.kinematics,
            delta,
            preview: parts.preview,
        };
        let timing = PipelineTiming {
            ramp_speed_rad_s: parts.config.ramp_speed_rad_s,
            period: parts.config.control_period,
            watchdog_timeout: parts.config.watchdog_timeout,
        };
        let shadow = Shadow::new(parts.config.shadow, parts.config.control_period, twin_rad);
        let inner = Arc::new(Inner {
            pipeline: SafetyPipeline::new(parts.arm, layers, timing, now),
            twin: parts.twin,
            config: parts.config,
            twin_ranges,
            mode: watch::channel(Mode::Sim).0,
            events: Mutex::new(RecentEvents::new(RECENT_EVENTS)),
            journal,
            samples: watch::channel(first).0,
            switching: tokio::sync::Mutex::new(()),
            events_total: AtomicU64::new(0),
            stopping: CancellationToken::new(),
            mirror: tokio::sync::Mutex::new(None),
            shadow: Mutex::new(shadow),
            obstructions: AtomicU64::new(0),
        });
        let bridge = HardwareBridge { inner };
        if let Some(arm) = bridge.arm().cloned() {
            let task = tokio::spawn(mirror_loop(bridge.clone(), arm, bridge.inner.stopping.clone()));
            *bridge.inner.mirror.lock().await = Some(task);
        }
        if initial != Mode::Sim {
            bridge.set_mode(initial, SyncOption::MoveTwinToArm, None).await?;
        }
        Ok((bridge, events_rx))
    }

    /// Stops the mirror loop and waits for it to switch the arm's torque off.
    pub async fn stop(&self) {
        self.inner.stopping.cancel();
        if let Some(task) = self.inner.mirror.lock().await.take()
            && let Err(e) = task.await
        {
            tracing::error!(error = %e, "the mirror loop ended abnormally");
        }
    }

    /// The mode now.
    pub fn mode(&self) -> Mode {
        *self.inner.mode.borrow()
    }

    /// Follows mode changes.
    pub fn watch_mode(&self) -> watch::Receiver<Mode> {
        self.inner.mode.subscribe()
    }

    /// Follows the mirror loop's readings (with hardware) as they happen.
    pub fn samples(&self) -> watch::Receiver<Sample> {
        self.inner.samples.subscribe()
    }

    fn arm(&self) -> Option<&Arc<dyn Arm>> {
        self.inner.pipeline.arm()
    }

    fn estop(&self) -> &EstopLatch {
        &self.inner.pipeline.layers().estop
    }

    /// The port of the real arm, if there is one.
    pub fn port(&self) -> Option<String> {
        self.arm().and_then(|a| a.port().map(str::to_owned))
    }

    /// The real arm's health (none for sim-only).
    pub fn health(&self) -> Option<ArmHealth> {
        self.arm().map(|a| a.health())
    }

    /// The hardware status now.
    pub fn status(&self) -> HardwareStatus {
        let health = self.health().unwrap_or_else(|| ArmHealth::no_servos(false));
        let port = self.port();
        let events = lock(&self.inner.events);
        HardwareStatus::snapshot(self.mode().name(), port.as_deref(), &health, self.estop(), &events)
    }

    /// Safety events since the bridge started.
    pub fn safety_event_count(&self) -> u64 {
        self.inner.events_total.load(Ordering::Relaxed)
    }

    /// One control tick in real time.
    pub fn control_period(&self) -> Duration {
        self.inner.config.control_period
    }

    /// Goal limits per joint: the model range narrowed by the calibrated range.
    pub fn limits(&self) -> [Bounds; 6] {
        Joint::ALL.map(|j| self.inner.pipeline.layers().range.limits(j))
    }

    /// The real arm's calibrated range per joint (twin radians); `None` without one.
    pub fn calibrated_limits(&self) -> Option<[Bounds; 6]> {
        self.inner.pipeline.layers().range.calibrated()
    }

    /// Obstructions the shadow held the arm for since the bridge started: a tick driver that
    /// sees the count rise ends its call stalled.
    pub fn obstructions(&self) -> u64 {
        self.inner.obstructions.load(Ordering::Acquire)
    }

    /// The goals last sent to the real arm.
    pub fn last_goals(&self) -> Option<[f64; 6]> {
        self.inner.pipeline.last_goals()
    }

    /// Refuses motion while the emergency stop is latched.
    pub fn check_estop(&self) -> Result<(), BridgeError> {
        self.estop().check().map_err(|e| {
            self.record(e.event());
            BridgeError::Safety(e)
        })
    }

    /// Latches the emergency stop and switches torque off. Returns whether it was latched already.
    pub async fn emergency_stop(&self, reason: &str) -> bool {
        let was = self.estop().is_latched();
        self.record(self.inner.pipeline.emergency_stop(reason).await);
        was
    }

    /// Clears a latched emergency stop. Returns whether it was latched.
    pub fn reset_emergency_stop(&self) -> bool {
        match self.estop().reset() {
            Some(event) => {
                self.record(event);
                true
            }
            None => false,
        }
    }

    /// Where a robot-service verb goes in the current mode, or why it is refused.
    pub fn route(&self, verb: VerbKind) -> Result<Route, BridgeError> {
        match (self.mode(), verb) {
            (Mode::Mirror, _) => Err(BridgeError::MirrorMode),
            (Mode::Hil, VerbKind::SimOnly) => Err(BridgeError::SimOnlyVerb),
            (Mode::Hil, VerbKind::Motion) => {
                self.check_estop()?;
                Ok(Route::Arm)
            }
            (Mode::Sim, VerbKind::Motion) => {
                self.check_estop()?;
                Ok(Route::Twin)
            }
            (Mode::Sim, VerbKind::SimOnly) => Ok(Route::Twin),
        }
    }

    /// Sends goals to the real arm through the safety pipeline: emergency stop, range (refuse),
    /// table (refuse), the ramp after torque came on or a hold (limit, see
    /// [`BridgeConfig::ramp_speed_rad_s`]), delta cap (limit, from `measured`). Feeds the
    /// watchdog; records what the layers raised.
    pub async fn command(&self, targets: [f64; 6], measured: [f64; 6]) -> Result<Commanded, BridgeError> {
        self.send(targets, measured, Pace::Ramped).await
    }

    async fn send(&self, targets: [f64; 6], measured: [f64; 6], pace: Pace) -> Result<Commanded, BridgeError> {
        if self.arm().is_none() {
            return Err(BridgeError::NoHardware("hil"));
        }
        let sent = self.inner.pipeline.command(targets, Some(measured), pace).await;
        let sent = self.recorded(sent)?;
        for event in &sent.events {
            self.record(event.clone());
        }
        Ok(sent)
    }

    /// Records the refusal of a pipeline call, if it was one, and converts its error.
    fn recorded<T>(&self, outcome: Result<T, GuardError>) -> Result<T, BridgeError> {
        outcome.map_err(|e| {
            if let Some(event) = e.event() {
                self.record(event);
            }
            BridgeError::from(e)
        })
    }

    /// Switches torque on holding the present pose (later commands ramp from it), unless a
    /// servo still reports a fault that switched it off.
    async fn enable_torque(&self) -> Result<ArmState, BridgeError> {
        let state = self.inner.pipeline.switch_torque_on().await;
        let state = self.recorded(state)?.ok_or(BridgeError::NoHardware("hil"))?;
        lock(&self.inner.shadow).rebase(state.positions_rad());
        Ok(state)
    }

    /// Switches mode. Entering `hil` checks that the arm and the twin agree, or syncs them as
    /// asked (a sync must end with the arm at the twin's pose), then switches torque on
    /// holding the present pose, and later commands ramp from it; a servo still reporting a
    /// fault refuses the switch. Entering `mirror` switches torque off.
    /// `sync_speed_rad_s` overrides the configured speed of a `MoveArmToTwin` sync.
    pub async fn set_mode(
        &self,
        mode: Mode,
        sync: SyncOption,
        sync_speed_rad_s: Option<f64>,
    ) -> Result<ModeSwitch, BridgeError> {
        let _switching = self.inner.switching.lock().await;
        let previous = self.mode();
        let started = Instant::now();
        let mut max_joint_error_rad = 0.0;
        match (mode, self.arm().cloned()) {
            (Mode::Sim, _) => self.inner.pipeline.disarm_watchdog(),
            (_, None) => return Err(BridgeError::NoHardware(mode.name())),
            (Mode::Mirror, Some(_)) => self.inner.pipeline.switch_torque_off().await?,
            (Mode::Hil, Some(arm)) => {
                self.check_estop()?;
                let state = arm.read_state().await?;
                self.recorded(check_servo_faults(&state))?;
                let real = state.positions_rad();
                let twin = self.inner.twin.with_sim(|sim| sim.arm_qpos()).await?;
                let (joint, error_rad) = largest_difference(&real, &twin);
                max_joint_error_rad = error_rad;
                if error_rad > self.inner.config.disagree_threshold_rad {
                    match sync {
                        SyncOption::None => {
                            return Err(BridgeError::Disagree {
                                joint: joint.label(),
                                error_rad,
                                threshold_rad: self.inner.config.disagree_threshold_rad,
                            });
                        }
                        SyncOption::MoveTwinToArm => self.put_twin_at(real).await?,
                        SyncOption::MoveArmToTwin => {
                            let speed = sync_speed_rad_s.unwrap_or(self.inner.config.sync_speed_rad_s);
                            self.move_arm_slowly(arm.as_ref(), real, twin, speed).await?;
                        }
                    }
                }
                self.enable_torque().await?;
            }
        }
        self.inner.mode.send_replace(mode);
        tracing::info!(from = previous.name(), to = mode.name(), "mode switched");
        Ok(ModeSwitch {
            previous,
            max_joint_error_rad,
            sync_duration: started.elapsed(),
        })
    }

    /// In `hil`, moves the real arm to `target` at the sync speed through the safety layers
    /// (the twin follows it); in other modes does nothing.
    pub async fn move_arm_to(&self, target: [f64; 6]) -> Result<(), BridgeError> {
        let Some(arm) = self.arm().cloned().filter(|_| self.mode() == Mode::Hil) else {
            return Ok(());
        };
        let _switching = self.inner.switching.lock().await;
        let real = arm.read_state().await?.positions_rad();
        self.move_arm_slowly(arm.as_ref(), real, target, self.inner.config.sync_speed_rad_s)
            .await
    }

    async fn put_twin_at(&self, joints: [f64; 6]) -> Result<(), BridgeError> {
        let clamped = clamp_into(&joints, &self.inner.twin_ranges);
        self.inner
            .twin
            .try_with_sim(move |sim| sim.set_joint_positions(&JointValues::Ordered(clamped.to_vec()), true))
            .await?;
        Ok(())
    }

    /// Moves the real arm from `from` to `to` at the sync speed, one control tick at a time.
    async fn move_arm_slowly(
        &self,
        arm: &dyn Arm,
        from: [f64; 6],
        to: [f64; 6],
        speed_rad_s: f64,
    ) -> Result<(), BridgeError> {
        if !(speed_rad_s.is_finite() && speed_rad_s > 0.0) {
            return Err(BridgeError::InvalidArgument(format!(
                "sync_max_speed_rad_s={speed_rad_s} must be finite and above 0 rad/s"
            )));
        }
        let (joint, distance) = largest_difference(&from, &to);
        let duration_s = distance / speed_rad_s;
        let max_s = MAX_SYNC_DURATION.as_secs_f64();
        if duration_s > max_s {
            return Err(BridgeError::InvalidArgument(format!(
                "sync_max_speed_rad_s={speed_rad_s} would take {duration_s:.1} s to move {} by {distance:.3} rad; \
                 a sync takes at most {max_s} s, so ask for at least {:.3} rad/s",
                joint.label(),
                distance / max_s
            )));
        }
        self.enable_torque().await?;
        let period = self.inner.config.control_period;
        let step = speed_rad_s * period.as_secs_f64();
        let ticks = (distance / step).ceil().max(1.0) as u32;
        let mut deadline = tokio::time::Instant::now();
        let mut measured = from;
        for k in 1..=ticks {
            let fraction = f64::from(k) / f64::from(ticks);
            let goal: [f64; 6] = std::array::from_fn(|i| from[i] + (to[i] - from[i]) * fraction);
            self.send(goal, measured, Pace::Direct).await?;
            deadline += period;
            tokio::time::sleep_until(deadline).await;
            measured = arm.read_state().await?.positions_rad();
        }
        self.await_arrival(arm, to, measured).await?;
        self.inner.pipeline.ramp_from(to);
        Ok(())
    }

    /// Waits (a bounded number of control periods) for the arm to settle on `target`; refuses
    /// when it stays farther than the disagreement threshold.
    async fn await_arrival(&self, arm: &dyn Arm, target: [f64; 6], mut measured: [f64; 6]) -> Result<(), BridgeError> {
        let threshold_rad = self.inner.config.disagree_threshold_rad;
        let period = self.inner.config.control_period;
        for _ in 0..ARRIVAL_PERIODS {
            if largest_difference(&measured, &target).1 <= threshold_rad {
                return Ok(());
            }
            tokio::time::sleep(period).await;
            measured = arm.read_state().await?.positions_rad();
        }
        let (joint, error_rad) = largest_difference(&measured, &target);
        if error_rad <= threshold_rad {
            return Ok(());
        }
        Err(BridgeError::NotArrived {
            joint: joint.label(),
            error_rad,
            threshold_rad,
        })
    }

    /// Records a safety event for the status and the journal.
    pub fn record(&self, event: SafetyEvent) {
        tracing::warn!(?event, "safety event");
        self.inner.events_total.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.events).push(SystemTime::now(), event.clone());
        // The journal forwarder may be gone at shutdown; the status still has the event.
        let _ = self.inner.journal.send(event);
    }

    /// Waits for the mirror loop's next reading, for at most ten control periods.
    pub async fn next_sample(&self) -> Result<Sample, BridgeError> {
        let mut rx = self.samples();
        let seq = rx.borrow_and_update().seq;
        let wait = self.inner.config.control_period * 10;
        match tokio::time::timeout(wait, rx.wait_for(|s| s.seq > seq)).await {
            Ok(Ok(sample)) => Ok(*sample),
            _ => Err(BridgeError::NoReading(wait)),
        }
    }

    /// Reads the arm once and writes the reading into the twin at once; false when the read
    /// failed.
    async fn mirror_once(&self, arm: &dyn Arm, seq: u64) -> bool {
        let started = now();
        let reading = arm.read_state().await;
        let read_at = now();
        self.inner.pipeline.react_to_faults(|event| self.record(event)).await;
        let (real, load_percent) = match reading {
            Ok(state) => (
                state.positions_rad(),
                state.joints.map(|j| j.servo.map_or(0.0, |s| s.load_percent)),
            ),
            Err(e) => {
                tracing::debug!(error = %e, "mirror read failed");
                return false;
            }
        };
        let mode = self.mode();
        let ranges = &self.inner.twin_ranges;
        let clamped: [bool; 6] = std::array::from_fn(|i| real[i] < ranges[i].lo || real[i] > ranges[i].hi);
        if mode != Mode::Sim {
            self.flag_clamped(&clamped);
        }
        let twin_rad = if mode == Mode::Sim {
            self.inner.twin.with_sim(|sim| sim.arm_qpos()).await
        } else {
            let clamped = clamp_into(&real, &self.inner.twin_ranges);
            self.inner
                .twin
                .try_with_sim(move |sim| {
                    sim.set_joint_positions(&JointValues::Ordered(clamped.to_vec()), true)?;
                    Ok(sim.arm_qpos())
                })
                .await
        };
        let twin_rad = match twin_rad {
            Ok(twin_rad) => twin_rad,
            Err(e) => {
                tracing::warn!(error = %e, "cannot mirror the arm into the twin");
                return true;
            }
        };
        let shadow = if mode == Mode::Sim {
            None
        } else {
            let pipeline = &self.inner.pipeline;
            let input = ShadowInput {
                at: read_at,
                measured: real,
                load_percent,
                goals: pipeline.last_goals().filter(|_| pipeline.torque_on()),
            };
            Some(self.shade(input).await)
        };
        self.inner.samples.send_replace(Sample {
            seq,
            at: read_at,
            real_rad: Some(real),
            twin_rad,
            clamped,
            shadow,
            latency: started.elapsed(),
        });
        if mode == Mode::Hil
            && let Some(event) = self.inner.pipeline.check_watchdog(real).await
        {
            self.record(event);
        }
        true
    }

    /// Runs the shadow on a reading: records drift, and holds the arm where it stands when a
    /// joint is blocked (the tick driver then ends its call stalled).
    async fn shade(&self, input: ShadowInput) -> [JointResidual; 6] {
        let (residuals, findings) = lock(&self.inner.shadow).observe(&input);
        let mut blocked = false;
        for finding in findings {
            match finding {
                Finding::Obstructed {
                    joint,
                    position_rad,
                    residual_rad,
                    load_percent,
                } => {
                    blocked = true;
                    self.record(SafetyEvent::joint_blocked(
                        joint,
                        position_rad,
                        residual_rad,
                        load_percent,
                    ));
                }
                Finding::Drift { joint, offset_rad } => self.record(SafetyEvent::calibration_drift(joint, offset_rad)),
            }
        }
        if blocked {
            if let Err(e) = self.inner.pipeline.hold(input.measured).await {
                tracing::error!(error = %e, "holding the blocked arm failed");
            }
            lock(&self.inner.shadow).rebase(input.measured);
            self.inner.obstructions.fetch_add(1, Ordering::Release);
        }
        residuals
    }

    /// Logs once when a joint's reading leaves the twin's range and when it comes back.
    fn flag_clamped(&self, clamped: &[bool; 6]) {
        let previous = self.inner.samples.borrow().clamped;
        for joint in Joint::ALL {
            let (was, is) = (previous[joint.index()], clamped[joint.index()]);
            if is && !was {
                tracing::warn!(
                    joint = joint.label(),
                    "the real arm is outside the twin's range; the twin mirrors it clamped"
                );
            } else if was && !is {
                tracing::info!(joint = joint.label(), "the real arm is back inside the twin's range");
            }
        }
    }
}

async fn mirror_loop(bridge: HardwareBridge, arm: Arc<dyn Arm>, cancel: CancellationToken) {
    let mut pace = bridge.inner.config.mirror_rate_hz.map(|hz| {
        let mut interval = tokio::time::interval(Duration::from_secs_f64(1.0 / hz.max(1.0)));
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        interval
    });
    // After a failed read, wait this long before the next, rather than spin on a dead bus.
    let retry_after = bridge.inner.config.control_period;
    let mut seq = 0;
    loop {
        let next = async {
            match pace.as_mut() {
                Some(interval) => {
                    interval.tick().await;
                }
                None => tokio::task::yield_now().await,
            }
        };
        tokio::select! {
            () = cancel.cancelled() => break,
            () = next => {}
        }
        seq += 1;
        if !bridge.mirror_once(arm.as_ref(), seq).await {
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(retry_after) => {}
            }
        }
    }
    if let Err(e) = bridge.inner.pipeline.switch_torque_off().await {
        tracing::warn!(error = %e, "torque off at shutdown failed");
    }
}

/// Control periods the arm gets to settle on a sync target after the last goal.
const ARRIVAL_PERIODS: u32 = 50;

fn largest_difference(a: &[f64; 6], b: &[f64; 6]) -> (Joint, f64) {
    Joint::ALL
        .into_iter()
        .map(|j| (j, (a[j.index()] - b[j.index()]).abs()))
        .fold(
            (Joint::ShoulderPan, 0.0),
            |best, next| if next.1 > best.1 { next } else { best },
        )
}

fn clamp_into(joints: &[f64; 6], ranges: &[Bounds; 6]) -> [f64; 6] {
    std::array::from_fn(|i| joints[i].clamp(ranges[i].lo, ranges[i].hi))
}
