//! The hardware bridge: owns the pairing of the real arm and the twin, the mode, the mirror
//! loop, and the safety layers every command to the real arm passes through.

mod mirror;
mod switch;
mod sync;

pub use switch::ModeSwitch;

use super::config::BridgeConfig;
use super::error::BridgeError;
use super::mode::{Mode, SyncOption, VerbKind};
use super::shadow::{JointResidual, Shadow};
use super::stall::StallGuard;
use crate::now;
use crate::telemetry::{HardwareStatus, RecentEvents};
use fakesim_arm::Joint;
use fakesim_arm::{Arm, ArmHealth};
use fakesim_safety::{
    CommandPreview, Commanded, DeltaCap, EstopLatch, GuardError, LatchedBy, Layers, Pace, PipelineTiming, RangeGuard,
    SafetyEvent, SafetyPipeline, TableGuard, TcpKinematics, bus_loss,
};
use fakesim_twin::TwinHandle;
use fakesim_twin::values::Bounds;
use mirror::mirror_loop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Safety events kept for the hardware status.
const RECENT_EVENTS: usize = 64;
/// The longest an arm-to-twin sync may take; a slower speed is refused before anything moves.
pub const MAX_SYNC_DURATION: Duration = Duration::from_secs(30);

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
    /// When the read of the real arm was asked for (`at` without one).
    pub sent_at: Instant,
    /// When this reading was in the twin (`at` in `sim`, where the twin was read).
    pub mirrored_at: Instant,
}

/// How one read of the real arm by the mirror loop went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading {
    /// When the read was asked for.
    pub sent_at: Instant,
    /// Whether every servo answered it; its reaction to the arm's health has run either way.
    pub ok: bool,
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
    /// The obstructions the client's ticks have been told of (see
    /// [`HardwareBridge::held_since_last_tick`]).
    told_ticks: AtomicU64,
    /// How the mirror loop's latest read of the arm went.
    readings: watch::Sender<Reading>,
    /// Watches for joints straining against their goals (hil only).
    stall: Mutex<StallGuard>,
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
        parts.config.stall.check().map_err(BridgeError::InvalidSetting)?;
        let delta =
            DeltaCap::uniform(parts.config.max_delta_rad).map_err(|e| BridgeError::InvalidSetting(e.to_string()))?;
        // Mirrored joints are written with hold, so they must fit both the joint and the setpoint range.
        let (twin_ranges, twin_rad) = parts
            .twin
            .with_sim(|sim| (sim.settable_ranges(), sim.arm_qpos()))
            .await?;
        let (journal, events_rx) = mpsc::unbounded_channel();
        let started = Instant::now();
        let first = Sample {
            seq: 0,
            at: started,
            real_rad: None,
            twin_rad,
            clamped: [false; 6],
            shadow: None,
            sent_at: started,
            mirrored_at: started,
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
        let shadow = Shadow::new(parts.config.shadow, parts.config.control_period, twin_rad)
            .identified(parts.config.shadow_model.clone());
        let stall = StallGuard::new(parts.config.stall);
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
            told_ticks: AtomicU64::new(0),
            readings: watch::channel(Reading {
                sent_at: now(),
                ok: false,
            })
            .0,
            stall: Mutex::new(stall),
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
        let health = self
            .health()
            .unwrap_or_else(|| ArmHealth::no_servos(fakesim_arm::Torque::Off));
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

    /// Whether the shadow held the arm since a client's tick last asked, which counts it as
    /// told: client ticks return between their goals, so a hold mostly falls between two.
    pub(crate) fn held_since_last_tick(&self) -> bool {
        let now = self.obstructions();
        self.inner.told_ticks.swap(now, Ordering::AcqRel) < now
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

    /// Clears a latched emergency stop. Returns whether it was latched. A stop the arm latched
    /// stays while the bus it latched for is not back, and the refusal says so.
    pub fn reset_emergency_stop(&self) -> Result<bool, BridgeError> {
        if self.estop().latched_by() == Some(LatchedBy::Arm) {
            self.check_link()?;
        }
        Ok(match self.estop().reset() {
            Some(event) => {
                self.record(event);
                true
            }
            None => false,
        })
    }

    /// Refuses while the real arm's bus is not connected (as [`bus_loss::check_link`] decides),
    /// naming the port, where the link stands and its last error.
    pub fn check_link(&self) -> Result<(), BridgeError> {
        let Some(health) = self.health() else {
            return Ok(());
        };
        bus_loss::check_link(&health).map_err(|down| BridgeError::BusLost {
            port: self.port().unwrap_or_default(),
            state: down.state,
            last_error: down.last_error,
        })
    }

    /// Follows how the mirror loop's reads of the arm go.
    pub(crate) fn readings(&self) -> watch::Receiver<Reading> {
        self.inner.readings.subscribe()
    }

    /// Where a robot-service verb goes in the current mode, or why it is refused. In `sim` the
    /// real arm's troubles refuse nothing: only a stop a client latched stops the twin.
    pub fn route(&self, verb: VerbKind) -> Result<Route, BridgeError> {
        let mode = self.mode();
        if mode != Mode::Sim && verb == VerbKind::Motion {
            self.check_link()?;
        }
        match (mode, verb) {
            (Mode::Mirror, _) => Err(BridgeError::MirrorMode),
            (Mode::Hil, VerbKind::SimOnly) => Err(BridgeError::SimOnlyVerb),
            (Mode::Hil, VerbKind::Motion) => {
                if let Some(arm) = self.arm() {
                    self.recorded(self.inner.pipeline.check_arm_can_move(arm.as_ref()))?;
                }
                self.check_estop()?;
                Ok(Route::Arm)
            }
            (Mode::Sim, VerbKind::Motion) => {
                if self.estop().latched_by() == Some(LatchedBy::Client) {
                    self.check_estop()?;
                }
                Ok(Route::Twin)
            }
            (Mode::Sim, VerbKind::SimOnly) => Ok(Route::Twin),
        }
    }

    /// Refuses what needs the real arm when there is none.
    fn require_arm(&self) -> Result<(), BridgeError> {
        match self.arm() {
            Some(_) => Ok(()),
            None => Err(BridgeError::NoHardware("hil")),
        }
    }

    /// Holds the real arm at `measured` (brought into the effective range): those are the goals
    /// sent, whatever a ramp was closing, and ramped commands start from there.
    pub async fn hold(&self, measured: [f64; 6]) -> Result<(), BridgeError> {
        self.require_arm()?;
        self.recorded(self.inner.pipeline.hold(measured).await)
    }

    /// Sends goals to the real arm through the safety pipeline: emergency stop, range (refuse),
    /// table (refuse), the ramp after torque came on or a hold (limit, see
    /// [`BridgeConfig::ramp_speed_rad_s`]), delta cap (limit, from `measured`). Feeds the
    /// watchdog; records what the layers raised.
    pub async fn command(&self, targets: [f64; 6], measured: [f64; 6]) -> Result<Commanded, BridgeError> {
        self.send(targets, measured, Pace::Ramped).await
    }

    async fn send(&self, targets: [f64; 6], measured: [f64; 6], pace: Pace) -> Result<Commanded, BridgeError> {
        self.require_arm()?;
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

    /// Records a safety event for the status and the journal.
    pub fn record(&self, event: SafetyEvent) {
        tracing::warn!(?event, "safety event");
        self.inner.events_total.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.events).push(SystemTime::now(), event.clone());
        // The journal forwarder may be gone at shutdown; the status still has the event.
        let _ = self.inner.journal.send(event);
    }
}

fn clamp_into(joints: &[f64; 6], ranges: &[Bounds; 6]) -> [f64; 6] {
    std::array::from_fn(|i| joints[i].clamp(ranges[i].lo, ranges[i].hi))
}
