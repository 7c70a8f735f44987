//! The episode engine: one episode at a time over the twin, with the session contract's
//! states, step budget, task lock, journal and images.

use crate::actuation::{Actuation, SimActuation};
use crate::budget::Budget;
use crate::error::EpisodeError;
use crate::gripper::GripperReport;
use crate::gripper::{GripperCommand, GripperState, GripperStop};
use crate::journal::{Artifacts, Journal, Kind};
use crate::motion::MoveReport;
use crate::motion::{MoveStop, MoveTarget};
use crate::tap::{JournalTap, TapEntry};
use crate::tasks::{self, N_INIT_STATES, SUITE, TASKS, TaskDef, TaskRef};
use crate::ticks::GRIPPER_OPEN_RAD;
use fakesim_twin::image::{ImageTiming, encode_rgb_png};
use fakesim_twin::joints::ARM_JOINTS;
use fakesim_twin::values::Bounds;
use fakesim_twin::{JointValues, Pose, RenderQuality, Sim, TwinHandle, Watch};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{Mutex, MutexGuard, watch};

/// Cameras every observation carries, in order.
pub const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];
/// Arm pose at the start of every episode (rad), gripper open, where the arm's range allows.
pub const HOME_POSE: [f64; 6] = [0.0, -0.8, 0.4, 1.55, 0.0, GRIPPER_OPEN_RAD];
/// How far inside a range's end a pose brought into it stays (rad).
const RANGE_INSET_RAD: f64 = 0.01;

/// `pose` brought inside `limits` (an arm's effective range): each joint past an end stops
/// [`RANGE_INSET_RAD`] short of it (at the middle of a narrower range).
pub fn within_limits(pose: [f64; 6], limits: &[Bounds; 6]) -> [f64; 6] {
    std::array::from_fn(|i| {
        let Bounds { lo, hi } = limits[i];
        let inset = RANGE_INSET_RAD.min((hi - lo) / 2.0).max(0.0);
        pose[i].clamp(lo + inset, (hi - inset).max(lo + inset))
    })
}
/// Ticks run after a reset so objects come to rest; they use no budget.
const SETTLE_TICKS: u32 = 10;
/// Control ticks one move or gripper call may run, by default (a cap, not a quota).
pub const MAX_STEPS_PER_CALL: u32 = 30;
/// Largest translation one move may ask for (m).
pub const MAX_MOVE_M: f64 = 0.5;

/// How the engine runs episodes.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Step budget of an episode (control ticks).
    pub max_steps: u64,
    /// Ticks one move or gripper call may run.
    pub max_steps_per_call: u32,
    /// Where run directories go.
    pub runs_dir: PathBuf,
    /// Side of the square camera images (pixels).
    pub image_size: u32,
    /// The task every reset uses when the server was started with `--lock-task`.
    pub locked_task: Option<TaskRef>,
    /// The pose every episode starts from: [`HOME_POSE`] brought inside the arm's effective
    /// range ([`within_limits`]).
    pub home_pose: [f64; 6],
}

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// No episode yet.
    Idle,
    /// An episode is live.
    Running,
    /// The last episode was stopped.
    Stopped,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Running => "running",
            Status::Stopped => "stopped",
        }
    }
}

/// A task as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskInfo {
    /// Suite name.
    pub suite: String,
    /// Index in the suite.
    pub task_index: u32,
    /// Short name.
    pub name: String,
    /// Instruction in words.
    pub instruction: String,
    /// Layout index.
    pub init_state_index: u32,
}

impl TaskInfo {
    fn new(task_ref: &TaskRef, task: &TaskDef) -> Self {
        TaskInfo {
            suite: task_ref.suite.clone(),
            task_index: task_ref.task_index,
            name: task.name.to_owned(),
            instruction: task.instruction.to_owned(),
            init_state_index: task_ref.init_state_index,
        }
    }
}

/// End-effector and gripper state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EefState {
    /// TCP position in the world (m; table surface at z = 0.80).
    pub eef_pos_m: [f64; 3],
    /// TCP orientation about the base X, Y, Z axes (rad): roll_x, pitch_y, yaw_z.
    pub eef_rpy_rad: [f64; 3],
    /// The gripper's target.
    pub gripper_command: GripperCommand,
    /// Distance between the jaw tips (m).
    pub opening_m: f64,
}

impl EefState {
    fn read(sim: &Sim, command: GripperCommand) -> Self {
        let tcp: Pose = sim.tcp_pose();
        let (roll, pitch, yaw) = tcp.rotation().euler_angles();
        EefState {
            eef_pos_m: tcp.pos,
            eef_rpy_rad: [roll, pitch, yaw],
            gripper_command: command,
            opening_m: sim.gripper_opening_m(),
        }
    }
}

/// The two camera images as PNG bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Images {
    /// Scene camera.
    pub agentview: Vec<u8>,
    /// Wrist camera.
    pub robot0_eye_in_hand: Vec<u8>,
    /// How long drawing and encoding them took.
    pub timing: ImageTiming,
}

/// What every episode call returns besides its own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Camera images.
    pub images: Images,
    /// Arm state.
    pub state: EefState,
    /// Steps used.
    pub step: u64,
    /// Steps left.
    pub steps_left: u64,
    /// Session status.
    pub status: Status,
}

/// Answer to a reset.
#[derive(Debug, Clone, PartialEq)]
pub struct ResetOutcome {
    /// New run id.
    pub run: String,
    /// The task started.
    pub task: TaskInfo,
    /// Images, state and budget.
    pub observation: Observation,
}

/// Answer to a move.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveOutcome {
    /// Images, state and budget after the move.
    pub observation: Observation,
    /// Requested translation (m).
    pub delta_xyz: [f64; 3],
    /// Requested rotation (rad), if any.
    pub delta_rpy: Option<[f64; 3]>,
    /// What the move did.
    pub report: MoveReport,
}

/// Answer to a gripper action.
#[derive(Debug, Clone, PartialEq)]
pub struct GripperOutcome {
    /// Images, state and budget after the action.
    pub observation: Observation,
    /// Requested command.
    pub command: GripperCommand,
    /// What the action did.
    pub report: GripperReport,
}

/// Answer to a stop.
#[derive(Debug, Clone, PartialEq)]
pub struct StopOutcome {
    /// The run stopped.
    pub run: String,
    /// Where its files are.
    pub artifacts: Artifacts,
    /// The task's judgement from the twin's object poses.
    pub success: bool,
    /// The policy-validation report (`summary.json`'s `validation`).
    pub validation: serde_json::Value,
}

/// Answer to a session-info read.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// Current or last run id.
    pub run: Option<String>,
    /// Session status.
    pub status: Status,
    /// Steps used.
    pub step: u64,
    /// Episode budget (0: none).
    pub max_steps: u64,
    /// Steps left.
    pub steps_left: u64,
    /// Current or last task (absent while idle).
    pub task: Option<TaskInfo>,
    /// Whether the server fixed the task.
    pub task_locked: bool,
    /// Arm state (absent while idle).
    pub state: Option<EefState>,
    /// The scene a reset without arguments starts (only while idle).
    pub default_scene: Option<TaskInfo>,
}

/// A suite's name and task count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteSummary {
    /// Suite name.
    pub name: String,
    /// Tasks in it.
    pub n_tasks: u32,
}

/// One task row of a suite listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSummary {
    /// Index in the suite.
    pub task_index: u32,
    /// Short name.
    pub name: String,
    /// Instruction.
    pub instruction: String,
    /// Layouts available.
    pub n_init_states: u32,
}

/// Answer to a task listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskListing {
    /// Every suite.
    pub suites: Vec<SuiteSummary>,
    /// Tasks over all suites.
    pub total_tasks: u32,
    /// The tasks of the suite asked for, if one was.
    pub tasks: Vec<TaskSummary>,
}

/// Arguments of a reset; all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResetRequest {
    /// Suite name.
    pub suite: Option<String>,
    /// Task index.
    pub task_index: Option<u32>,
    /// Layout index.
    pub init_state_index: Option<u32>,
    /// Step budget: unset the daemon's, 0 none, N that many ticks (see [`Budget::asked`]).
    pub max_steps: Option<u64>,
}

struct Run {
    id: String,
    task_ref: TaskRef,
    task: &'static TaskDef,
    budget: Budget,
    step: u64,
    gripper: GripperState,
    journal: Journal,
    started: Instant,
    calls: BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
    /// Safety events journaled during the run (refusals and stops of the safety layers).
    safety_events: u64,
}

struct Session {
    status: Status,
    run: Option<Run>,
}

/// Where the session stood when its lock was last released: what a session-info read reports
/// besides the arm, so that read never waits for a call in flight (a render, a move).
#[derive(Debug, Clone)]
struct Progress {
    run: Option<String>,
    status: Status,
    budget: Option<Budget>,
    step: u64,
    task: Option<TaskInfo>,
    command: GripperCommand,
}

impl Progress {
    fn of(session: &Session) -> Self {
        let run = session.run.as_ref();
        Progress {
            run: run.map(|r| r.id.clone()),
            status: session.status,
            budget: run.map(|r| r.budget),
            step: run.map_or(0, |r| r.step),
            task: run.map(|r| TaskInfo::new(&r.task_ref, r.task)),
            command: run.map_or(GripperCommand::Open, |r| r.gripper.command()),
        }
    }
}

/// The session, locked; releasing it publishes the session's progress.
struct Locked<'a> {
    session: MutexGuard<'a, Session>,
    progress: &'a watch::Sender<Progress>,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.progress.send_replace(Progress::of(&self.session));
    }
}

/// Runs episodes on a twin. Driving calls are serialised; reads may come from anywhere.
pub struct Engine {
    twin: TwinHandle,
    config: EngineConfig,
    session: Mutex<Session>,
    progress: watch::Sender<Progress>,
    actuation: Arc<dyn Actuation>,
    tap: JournalTap,
}

impl Engine {
    /// An idle engine over a twin, moving it in lock-step.
    pub fn new(twin: TwinHandle, config: EngineConfig) -> Self {
        Self::with_actuation(twin, config, Arc::new(SimActuation))
    }

    /// An idle engine whose moves and gripper actions run through `actuation`.
    pub fn with_actuation(twin: TwinHandle, config: EngineConfig, actuation: Arc<dyn Actuation>) -> Self {
        let session = Session {
            status: Status::Idle,
            run: None,
        };
        Engine {
            twin,
            config,
            progress: watch::Sender::new(Progress::of(&session)),
            session: Mutex::new(session),
            actuation,
            tap: JournalTap::default(),
        }
    }

    /// The tap every run's journal lines and frames, and each move's target, are handed to.
    pub fn tap(&self) -> &JournalTap {
        &self.tap
    }

    /// Locks the session for a call; every change is published when the call lets go.
    async fn lock(&self) -> Locked<'_> {
        Locked {
            session: self.session.lock().await,
            progress: &self.progress,
        }
    }

    /// Records a notable event (mode switch, safety stop) in the live run's journal, if any.
    pub async fn journal_event(&self, kind: Kind, fields: serde_json::Value) -> Result<(), EpisodeError> {
        let mut session = self.lock().await;
        if let Ok(run) = running(&mut session) {
            if kind == Kind::Safety {
                run.safety_events += 1;
            }
            run.journal.event(kind, fields)?;
        }
        Ok(())
    }

    /// Refuses a robot-service call that moves the robot once a live episode's step budget is
    /// used up (`step_limit`); outside an episode there is nothing to check.
    pub async fn check_robot_call(&self) -> Result<(), EpisodeError> {
        let mut session = self.lock().await;
        match running(&mut session) {
            Ok(run) => run.budget.check(run.step).map(drop),
            Err(_) => Ok(()),
        }
    }

    /// Counts a robot-service call's control ticks against a live episode's budget and journals
    /// it as a `robot_call` event with `fields`; outside an episode it does nothing.
    pub async fn record_robot_call(
        &self,
        call: &'static str,
        ticks: u64,
        fields: serde_json::Value,
    ) -> Result<(), EpisodeError> {
        let mut session = self.lock().await;
        let Ok(run) = running(&mut session) else {
            return Ok(());
        };
        run.step += ticks;
        count(run, call, "robot_service");
        run.journal.event(
            Kind::RobotCall,
            json!({ "call": call, "ticks": ticks, "step": run.step, "request": fields }),
        )?;
        note_budget(run)
    }

    /// The engine's settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Suites, and the tasks of one suite when named.
    pub fn list_tasks(&self, suite: Option<&str>) -> Result<TaskListing, EpisodeError> {
        let tasks = match suite {
            None => Vec::new(),
            Some(name) if name == SUITE => TASKS
                .iter()
                .enumerate()
                .map(|(i, t)| TaskSummary {
                    task_index: i as u32,
                    name: t.name.to_owned(),
                    instruction: t.instruction.to_owned(),
                    n_init_states: N_INIT_STATES,
                })
                .collect(),
            Some(other) => {
                return Err(tasks::TaskError::UnknownSuite {
                    suite: other.to_owned(),
                }
                .into());
            }
        };
        Ok(TaskListing {
            suites: vec![SuiteSummary {
                name: SUITE.to_owned(),
                n_tasks: TASKS.len() as u32,
            }],
            total_tasks: TASKS.len() as u32,
            tasks,
        })
    }

    fn default_task(&self) -> TaskRef {
        self.config.locked_task.clone().unwrap_or_default()
    }

    /// Starts an episode.
    pub async fn reset_task(&self, request: ResetRequest) -> Result<ResetOutcome, EpisodeError> {
        let mut session = self.lock().await;
        if let Some(run) = session.run.as_ref().filter(|_| session.status == Status::Running) {
            return Err(EpisodeError::AlreadyRunning { run: run.id.clone() });
        }
        let budget = Budget::asked(request.max_steps, self.config.max_steps);
        let given = request.suite.is_some() || request.task_index.is_some() || request.init_state_index.is_some();
        if let (true, Some(locked)) = (given, &self.config.locked_task) {
            return Err(EpisodeError::TaskLocked {
                suite: locked.suite.clone(),
                task_index: locked.task_index,
                init_state_index: locked.init_state_index,
            });
        }
        let default = self.default_task();
        let task_ref = TaskRef {
            suite: request.suite.unwrap_or(default.suite),
            task_index: request.task_index.unwrap_or(default.task_index),
            init_state_index: request.init_state_index.unwrap_or(default.init_state_index),
        };
        let task = task_ref.task()?;
        let layout = tasks::layout(task_ref.task_index, task_ref.init_state_index);
        let home = self.config.home_pose;
        let (state, period_s) = self
            .twin
            .try_with_sim(move |sim| {
                sim.reset();
                tasks::apply_layout(sim, &layout)?;
                sim.set_joint_positions(&JointValues::Ordered(home.to_vec()), true)?;
                for _ in 0..SETTLE_TICKS {
                    sim.step_tick();
                }
                sim.reset_watch();
                Ok((EefState::read(sim, GripperCommand::Open), sim.clock().period_s()))
            })
            .await?;
        let id = new_run_id(&self.config.runs_dir);
        let mut journal = Journal::create(&self.config.runs_dir, &id)?.with_tap(self.tap.clone());
        journal.event(
            Kind::ResetTask,
            json!({
                "run": id, "task": TaskInfo::new(&task_ref, task), "layout": layout,
                "max_steps": budget.ticks(), "control_period_s": period_s,
            }),
        )?;
        let mut run = Run {
            id: id.clone(),
            task_ref: task_ref.clone(),
            task,
            budget,
            step: 0,
            gripper: GripperState::settled(GripperCommand::Open),
            journal,
            started: Instant::now(),
            calls: BTreeMap::new(),
            safety_events: 0,
        };
        let images = self.images(&mut run, "reset", None).await?;
        tracing::info!(run = %id, task = task.name, layout = task_ref.init_state_index, "episode started");
        session.status = Status::Running;
        let observation = Observation {
            images,
            state,
            step: 0,
            steps_left: budget.left(0),
            status: Status::Running,
        };
        session.run = Some(run);
        Ok(ResetOutcome {
            run: id,
            task: TaskInfo::new(&task_ref, task),
            observation,
        })
    }

    /// Images (drawn at `quality`, `None`: the twin's own) and state now, using no budget.
    pub async fn observation(&self, quality: Option<RenderQuality>) -> Result<Observation, EpisodeError> {
        let mut session = self.lock().await;
        let run = running(&mut session)?;
        let command = run.gripper.command();
        let state = self.twin.with_sim(move |sim| EefState::read(sim, command)).await?;
        let images = self.images(run, "observe", quality).await?;
        run.journal
            .event(Kind::Observe, json!({ "step": run.step, "state": state }))?;
        Ok(self.observation_of(run, images, state))
    }

    /// Moves the end effector by `delta_xyz` (m), optionally rotating by `delta_rpy` (rad).
    pub async fn move_tcp(
        &self,
        delta_xyz: [f64; 3],
        delta_rpy: Option<[f64; 3]>,
    ) -> Result<MoveOutcome, EpisodeError> {
        check_delta(delta_xyz, delta_rpy)?;
        let mut session = self.lock().await;
        let run = running(&mut session)?;
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
        run.step += u64::from(report.executed_steps);
        count(run, "move", stop_name(&report.stop));
        run.journal.event(
            Kind::Move,
            json!({
                "delta_xyz": delta_xyz, "delta_rpy": delta_rpy, "executed_steps": report.executed_steps,
                "stop_reason": report.stop, "achieved_delta_xyz": report.achieved_delta_xyz,
                "remaining_distance_m": report.remaining_distance_m, "step_distances_m": report.tick_travel_m,
                "step": run.step, "state": state,
            }),
        )?;
        note_budget(run)?;
        let images = self.images(run, "move", None).await?;
        Ok(MoveOutcome {
            observation: self.observation_of(run, images, state),
            delta_xyz,
            delta_rpy,
            report,
        })
    }

    /// Opens or closes the gripper.
    pub async fn gripper(&self, command: GripperCommand) -> Result<GripperOutcome, EpisodeError> {
        let mut session = self.lock().await;
        let run = running(&mut session)?;
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
        run.step += u64::from(report.executed_steps);
        count(run, "gripper", gripper_stop_name(&report.stop));
        run.journal.event(
            Kind::Gripper,
            json!({
                "command": command, "executed_steps": report.executed_steps, "stop_reason": report.stop,
                "opening_before_m": report.opening_before_m, "opening_after_m": report.opening_after_m(),
                "openings_m": report.openings_m, "step": run.step, "state": state,
            }),
        )?;
        note_budget(run)?;
        let images = self.images(run, "gripper", None).await?;
        Ok(GripperOutcome {
            observation: self.observation_of(run, images, state),
            command,
            report,
        })
    }

    /// Ends the episode and writes its summary.
    pub async fn stop_episode(&self) -> Result<StopOutcome, EpisodeError> {
        let mut session = self.lock().await;
        let run = running(&mut session)?;
        let outcome = self.finish(run, "stopped").await?;
        session.status = Status::Stopped;
        Ok(outcome)
    }

    /// Ends a live episode as `interrupted` (server shutdown). Does nothing when none is live.
    pub async fn interrupt(&self) -> Result<(), EpisodeError> {
        let mut session = self.lock().await;
        if session.status != Status::Running {
            return Ok(());
        }
        if let Some(run) = session.run.as_mut() {
            run.journal.event(Kind::Interrupted, json!({ "step": run.step }))?;
            self.finish(run, "interrupted").await?;
        }
        session.status = Status::Stopped;
        Ok(())
    }

    /// Where the session is; no images, no budget. Answers from the progress published when
    /// the last call finished, and the arm as it is now: it never waits for a call in flight.
    pub async fn session_info(&self) -> Result<SessionInfo, EpisodeError> {
        let progress = self.progress.borrow().clone();
        let task_locked = self.config.locked_task.is_some();
        let budget = progress.budget.unwrap_or(Budget::asked(None, self.config.max_steps));
        let max_steps = budget.max_steps();
        let Some(run) = progress.run else {
            let default = self.default_task();
            let default_scene = default.task().ok().map(|task| TaskInfo::new(&default, task));
            return Ok(SessionInfo {
                run: None,
                status: Status::Idle,
                step: 0,
                max_steps,
                steps_left: budget.left(0),
                task: None,
                task_locked,
                state: None,
                default_scene,
            });
        };
        let command = progress.command;
        let state = self.twin.with_sim(move |sim| EefState::read(sim, command)).await?;
        Ok(SessionInfo {
            run: Some(run),
            status: progress.status,
            step: progress.step,
            max_steps,
            steps_left: budget.left(progress.step),
            task: progress.task,
            task_locked,
            state: Some(state),
            default_scene: None,
        })
    }

    async fn finish(&self, run: &mut Run, status: &str) -> Result<StopOutcome, EpisodeError> {
        let task = run.task;
        let (success, watch) = self
            .twin
            .try_with_sim(move |sim| Ok((tasks::success(task, sim)?, sim.watch())))
            .await?;
        let total: u64 = run.calls.values().flat_map(|m| m.values()).sum();
        let validation = validation_report(success, run, &watch);
        let summary = json!({
            "run": run.id, "status": status, "task": TaskInfo::new(&run.task_ref, run.task),
            "steps": run.step, "max_steps": run.budget.ticks(),
            "calls": { "total": total, "by_stop_reason": run.calls },
            "duration_s": run.started.elapsed().as_secs_f64(), "success": success,
            "validation": validation,
        });
        run.journal
            .event(Kind::StopEpisode, json!({ "status": status, "step": run.step }))?;
        run.journal.summary(&summary)?;
        tracing::info!(run = %run.id, status, steps = run.step, "episode ended");
        Ok(StopOutcome {
            run: run.id.clone(),
            artifacts: run.journal.artifacts().clone(),
            success,
            validation,
        })
    }

    fn observation_of(&self, run: &Run, images: Images, state: EefState) -> Observation {
        Observation {
            images,
            state,
            step: run.step,
            steps_left: run.budget.left(run.step),
            status: Status::Running,
        }
    }

    async fn images(&self, run: &mut Run, label: &str, quality: Option<RenderQuality>) -> Result<Images, EpisodeError> {
        let size = self.config.image_size;
        let started = Instant::now();
        let shot = self.twin.snapshot_cameras(&CAMERAS, size, size, false).await?;
        let frames = self.twin.draw(shot.at(quality)).await?;
        let rendered = Instant::now();
        let mut pngs = Vec::with_capacity(CAMERAS.len());
        for frame in &frames {
            pngs.push(encode_rgb_png(frame)?);
        }
        let timing = ImageTiming::since(started, rendered);
        for (camera, png) in CAMERAS.iter().zip(&pngs) {
            run.journal.frame(label, camera, png)?;
        }
        let robot0_eye_in_hand = pngs.pop().unwrap_or_default();
        let agentview = pngs.pop().unwrap_or_default();
        Ok(Images {
            agentview,
            robot0_eye_in_hand,
            timing,
        })
    }
}

/// The policy-validation part of `summary.json`: success, stop reasons, safety refusals,
/// joint-limit hits and the minimum clearance of the tool over the table.
fn validation_report(success: bool, run: &Run, watch: &Watch) -> serde_json::Value {
    let hits: BTreeMap<&str, u64> = ARM_JOINTS
        .iter()
        .zip(watch.joint_limit_hits)
        .map(|(joint, hits)| (joint.label, hits))
        .collect();
    json!({
        "success": success,
        "stop_reasons": run.calls,
        "safety_refusals": run.safety_events,
        "joint_limit_hits": hits,
        "joint_limit_hits_total": watch.joint_limit_hits.iter().sum::<u64>(),
        "min_table_clearance_m": watch.lowest_tool_z.map(|z| z - tasks::TABLE_Z),
        "samples": watch.samples,
    })
}

/// Journals that the run's budget is used up, once its steps reach it.
fn note_budget(run: &mut Run) -> Result<(), EpisodeError> {
    if run.budget.used_up(run.step) {
        run.journal.event(Kind::BudgetExhausted, json!({ "step": run.step }))?;
    }
    Ok(())
}

fn running(session: &mut Session) -> Result<&mut Run, EpisodeError> {
    let status = session.status;
    match session.run.as_mut() {
        Some(run) if status == Status::Running => Ok(run),
        _ => Err(EpisodeError::NotRunning { status: status.name() }),
    }
}

fn count(run: &mut Run, call: &'static str, reason: &'static str) {
    *run.calls.entry(call).or_default().entry(reason).or_default() += 1;
}

fn stop_name(stop: &MoveStop) -> &'static str {
    match stop {
        MoveStop::Reached => "reached",
        MoveStop::Stalled => "stalled",
        MoveStop::StepCap => "step_cap",
        MoveStop::Budget => "budget",
    }
}

fn gripper_stop_name(stop: &GripperStop) -> &'static str {
    match stop {
        GripperStop::Settled => "settled",
        GripperStop::StepCap => "step_cap",
        GripperStop::Budget => "budget",
        GripperStop::NoOp => "no_op",
    }
}

fn check_delta(delta_xyz: [f64; 3], delta_rpy: Option<[f64; 3]>) -> Result<(), EpisodeError> {
    if let Some((axis, v)) = ["x", "y", "z"].iter().zip(delta_xyz).find(|(_, v)| !v.is_finite()) {
        return Err(EpisodeError::BadRequest(format!(
            "delta_xyz.{axis}={v} is not a finite number"
        )));
    }
    let norm = delta_xyz.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > MAX_MOVE_M {
        return Err(EpisodeError::BadRequest(format!(
            "delta_xyz is {norm:.3} m long; one move goes at most {MAX_MOVE_M} m (delta_xyz is in metres, not millimetres)"
        )));
    }
    if let Some(rpy) = delta_rpy {
        let names = ["roll_x", "pitch_y", "yaw_z"];
        if let Some((axis, v)) = names
            .iter()
            .zip(rpy)
            .find(|(_, v)| !v.is_finite() || v.abs() > std::f64::consts::PI)
        {
            return Err(EpisodeError::BadRequest(format!(
                "delta_rpy.{axis}={v} must be a finite angle within [-pi, pi] rad (radians, not degrees: {v} deg = {:.3} rad)",
                v.to_radians()
            )));
        }
    }
    Ok(())
}

fn new_run_id(runs_dir: &std::path::Path) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut seed = (nanos as u64) ^ u64::from(std::process::id()).rotate_left(32);
    loop {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let id = format!("{:08x}", seed >> 32);
        if !runs_dir.join(&id).exists() {
            return id;
        }
    }
}
