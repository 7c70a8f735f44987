//! The one controller every request that moves the twin or the arm passes: it admits the
//! request (lease, mode, the episode's budget), runs it, charges the budget and journals it,
//! all under one serialisation point, so no two motions interleave and no step is forgotten
//! by one route. The gRPC and MCP services only translate requests into [`Motion`] values.

mod calls;
mod chunk;
mod mode;
mod motion;

pub use calls::{Call, Need};
pub use motion::{Done, Motion, TickMotion, Ticked};

use crate::state::{AppState, ArmUnit};
use crate::wire::status;
use crate::wire::tick::ImageRequest;
use fakesim_arm::Side;
use fakesim_bridge::hil::{Mode, Route, VerbKind, run_action};
use fakesim_episode::journal::Kind;
use fakesim_episode::ticks::{Hold, Observed, tick_arms};
use fakesim_twin::quote::Quoted;
use fakesim_twin::sim::SetJointsReport;
use fakesim_twin::{FrameRoom, JointValues, Sim, TwinError};
use serde_json::json;
use std::sync::Arc;
use tonic::Status;
use tonic::metadata::MetadataMap;

/// The answer to a controller result of another kind than the motion asked for: a defect.
pub fn mismatched() -> Status {
    status::refusal(
        status::Reason::Internal,
        "the controller answered another kind of motion",
    )
    .into()
}

impl AppState {
    /// Whether a call of this kind needs the lease now.
    pub fn lease_required(&self, need: Need) -> bool {
        match need {
            Need::Never => false,
            Need::Motion => self.settings.lease_in_sim || self.bridge.mode() != Mode::Sim,
            Need::Control => self.settings.lease_in_sim || self.settings.has_hardware(),
        }
    }

    /// Where motion of the arms `actions` move goes now, as the first of them routes it (the
    /// arms share one mode; an arm's own emergency stop refuses only motion of that arm).
    pub(super) fn route_of(&self, actions: &[JointValues]) -> Result<Route, fakesim_bridge::hil::BridgeError> {
        let moved = self.arms.iter().zip(actions).find(|(_, action)| moves(action));
        let bridge = moved.map_or(&self.bridge, |(arm, _)| &arm.bridge);
        bridge.route(VerbKind::Motion)
    }

    /// Refuses `verb`, which drives one arm without naming it, on a daemon driving a pair;
    /// `takes_arm`: the verb can name its arm.
    pub fn refuse_on_pair(&self, verb: &str, takes_arm: bool) -> Result<(), Status> {
        if !self.is_pair() {
            return Ok(());
        }
        let message = if takes_arm {
            format!("{verb} acts on one arm, and this daemon drives a pair: name the arm (arm: left or right)")
        } else {
            format!(
                "{verb} drives one arm, and this daemon drives a pair: move both with Tick or TickChunk \
                 (12 targets, the left arm's six then the right's), or one with Tick's arm"
            )
        };
        Err(status::refusal(status::Reason::OneArmVerb, message).into())
    }

    /// Admits a call of this kind carrying `metadata` that moves the arms at `arms`, or
    /// refuses it for want of their lease.
    pub fn admit(&self, metadata: &MetadataMap, need: Need, arms: &[usize]) -> Result<(), Status> {
        if !self.lease_required(need) {
            return Ok(());
        }
        self.leases
            .admit_arms(metadata, arms)
            .map_err(|e| status::from_lease(&e))
    }

    /// Admits `motion` carrying `metadata`, runs it, charges a live episode's budget and
    /// journals it, holding the drive lock throughout.
    pub async fn run(&self, metadata: &MetadataMap, motion: Motion) -> Result<Done, Status> {
        let call = motion.call();
        if motion.one_arm() {
            self.refuse_on_pair(call.journal_name(), motion.takes_arm())?;
        }
        let _drive = self.lock_drive().await;
        self.admit(metadata, call.need(), &motion.arms_moved(self.arms.len()))?;
        if motion.sim_only() {
            self.bridge
                .route(VerbKind::SimOnly)
                .map_err(|e| status::from_bridge(&e))?;
        }
        // A chunk checks, charges and journals each of its ticks itself.
        if let Motion::TickChunk(ticks) = motion {
            return self.chunk(ticks).await;
        }
        let charged = motion.counts_against_budget();
        if charged {
            self.engine
                .check_robot_call()
                .await
                .map_err(|e| status::from_episode(&e))?;
        }
        let (done, physics_steps, fields) = self.execute(motion).await?;
        if charged {
            let ticks = physics_steps.div_ceil(u64::from(self.model.substeps_per_tick.max(1)));
            self.engine
                .record_robot_call(call.journal_name(), ticks, fields)
                .await
                .map_err(|e| status::from_episode(&e))?;
        } else if let Done::ModeSwitched(switch) = &done {
            let fields = json!({ "from": switch.previous.name(), "to": self.bridge.mode().name() });
            if let Err(e) = self.engine.journal_event(Kind::Mode, fields).await {
                tracing::error!(error = %e, "cannot journal the mode switch");
            }
        }
        Ok(done)
    }

    /// One tick of the client's clock, wherever the bridge routes motion; the cameras' state
    /// taken after it (before the lock is released, so the frames show the state after this
    /// tick; drawn by the caller after, so no other call waits for the render).
    pub(super) async fn tick(&self, tick: TickMotion, room: Option<Arc<FrameRoom>>) -> Result<Ticked, Status> {
        let bridge = |e: fakesim_bridge::hil::BridgeError| status::from_bridge(&e);
        let hold = Hold::Period(tick.period_s);
        let after = match self.route_of(&tick.actions).map_err(bridge)? {
            // Every arm's targets in one physics job: the twin advances once for the tick.
            Route::Twin => {
                let (actions, period_s) = (tick.actions, tick.period_s);
                self.twin
                    .try_with_sim(move |sim| tick_arms(sim, &actions, period_s))
                    .await
                    .map_err(|e| status::from_twin(&e))?
            }
            // Each arm through its own safety pipeline; a tick only sends, so the arms'
            // goals go out one after the other within the period.
            Route::Arm => {
                let mut after = Vec::with_capacity(self.arms.len());
                for (arm, action) in self.arms.iter().zip(tick.actions) {
                    // An arm this tick does not move is sent nothing (its watchdog stays its own
                    // client's): the twin, mirroring it, with its goals in force.
                    let observed = if moves(&action) {
                        run_action(&arm.bridge, &arm.twin, action, hold).await.map_err(bridge)?
                    } else {
                        observe(arm).await?
                    };
                    after.push(observed);
                }
                after
            }
        };
        let shot = match &tick.images {
            Some(images) => Some(images.snapshot(&self.twin).await?),
            None => None,
        };
        Ok(Ticked { after, shot, room })
    }

    /// Reserves room in the render backlog for the frames of the ticks given, drawn one tick
    /// after the other (room for the largest), before any runs: refused `render_busy` with a
    /// retry hint when the backlog has not that much room, nothing run. No frames: no room.
    pub(super) fn reserve_frames(&self, ticks: &[TickMotion]) -> Result<Option<Arc<FrameRoom>>, Status> {
        let frames = ticks
            .iter()
            .filter_map(|tick| tick.images.as_ref().map(ImageRequest::frames))
            .max()
            .unwrap_or(0);
        if frames == 0 {
            return Ok(None);
        }
        let room = self.twin.reserve_frames(frames).map_err(|e| status::from_twin(&e))?;
        Ok(Some(Arc::new(room)))
    }

    /// Runs an admitted motion; returns what it did, the physics steps it took and what the
    /// journal records of the request.
    async fn execute(&self, motion: Motion) -> Result<(Done, u64, serde_json::Value), Status> {
        let episode = |e: fakesim_episode::EpisodeError| status::from_episode(&e);
        let bridge = |e: fakesim_bridge::hil::BridgeError| status::from_bridge(&e);
        let twin = |e: fakesim_twin::TwinError| status::from_twin(&e);
        let none = serde_json::Value::Null;
        Ok(match motion {
            Motion::ResetTask(request) => {
                if self.bridge.mode() == Mode::Hil {
                    self.bridge.route(VerbKind::Motion).map_err(bridge)?;
                    // With the arm in the loop the episode starts from the real arm at the
                    // home pose, and only once it is there: a move that fails starts no
                    // episode. A running episode is left alone (the engine refuses the reset).
                    let info = self.engine.session_info().await.map_err(episode)?;
                    if info.status != fakesim_episode::Status::Running {
                        let home = self.engine.config().home_pose;
                        for arm in self.arms.iter() {
                            arm.bridge.move_arm_to(home).await.map_err(bridge)?;
                        }
                    }
                }
                let outcome = self.engine.reset_task(request).await.map_err(episode)?;
                (Done::Reset(Box::new(outcome)), 0, none)
            }
            Motion::Move {
                arm,
                delta_xyz,
                delta_rpy,
            } => {
                let arm = arm.map_or(0, Side::index);
                let outcome = self.engine.move_tcp(arm, delta_xyz, delta_rpy).await.map_err(episode)?;
                (Done::Moved(Box::new(outcome)), 0, none)
            }
            Motion::Gripper { arm, command } => {
                let outcome = (self.engine)
                    .gripper(arm.map_or(0, Side::index), command)
                    .await
                    .map_err(episode)?;
                (Done::Gripped(Box::new(outcome)), 0, none)
            }
            Motion::StopEpisode => {
                let outcome = self.engine.stop_episode().await.map_err(episode)?;
                (Done::Stopped(Box::new(outcome)), 0, none)
            }
            Motion::SendAction { action, n_substeps } => {
                let fields =
                    json!({ "keys": crate::wire::convert::written_ids(self.arm(), &action), "n_substeps": n_substeps });
                let after = run_action(&self.bridge, &self.twin, action, Hold::Substeps(n_substeps))
                    .await
                    .map_err(bridge)?;
                (Done::Acted(Box::new(after)), u64::from(n_substeps), fields)
            }
            Motion::Tick(tick) => {
                let period_s = tick.period_s;
                let room = self.reserve_frames(std::slice::from_ref(&tick))?;
                let ticked = self.tick(tick, room).await?;
                let fields = json!({ "action": ticked.ctrl(), "period_s": period_s });
                (
                    Done::Ticked(Box::new(ticked)),
                    u64::from(self.model.substeps_per_tick),
                    fields,
                )
            }
            Motion::TickChunk(_) => return Err(mismatched()),
            Motion::Step { n_steps } => {
                let time = self
                    .twin
                    .try_with_sim(move |sim| {
                        sim.step(n_steps)?;
                        Ok(sim.time())
                    })
                    .await
                    .map_err(twin)?;
                (Done::Timed(time), u64::from(n_steps), json!({ "n_steps": n_steps }))
            }
            Motion::SetJointPositions { positions, hold } => {
                let report = self
                    .twin
                    .try_with_sim(move |sim| sim.all_or_nothing(|sim| set_each_arm(sim, &positions, hold)))
                    .await
                    .map_err(twin)?;
                let fields = json!({ "joints": self.joint_ids_of(&report.written), "hold": hold });
                (Done::PositionsSet(report), 0, fields)
            }
            Motion::SetJointVelocities { velocities } => {
                let fields = json!({ "joints": crate::wire::convert::written_ids(self.arm(), &velocities) });
                self.twin
                    .try_with_sim(move |sim| sim.set_joint_velocities(&velocities))
                    .await
                    .map_err(twin)?;
                (Done::VelocitiesSet, 0, fields)
            }
            Motion::LoadState { name } => {
                let fields = json!({ "name": Quoted(&name).to_string() });
                let time = self
                    .twin
                    .try_with_sim(move |sim| {
                        sim.load_state(&name)?;
                        Ok(sim.time())
                    })
                    .await
                    .map_err(twin)?;
                (Done::Timed(time), 0, fields)
            }
            Motion::SetMode {
                mode,
                sync,
                sync_speed_rad_s,
            } => {
                let switch = self.set_mode(mode, sync, sync_speed_rad_s).await.map_err(bridge)?;
                (Done::ModeSwitched(switch), 0, none)
            }
            Motion::ResetEmergencyStop(sides) => {
                let mut was_latched = false;
                for arm in self.arms.iter().filter(|arm| sides.contains(&arm.side)) {
                    was_latched |= arm.bridge.reset_emergency_stop().map_err(bridge)?;
                }
                (Done::EstopReset(was_latched), 0, none)
            }
            Motion::SetControlPeriod { period_s } => {
                let (before, after) = self
                    .twin
                    .try_with_sim(move |sim| {
                        let before = sim.clock().period_s();
                        Ok((before, sim.set_control_period(period_s)?))
                    })
                    .await
                    .map_err(twin)?;
                if after.period_s() != before {
                    // Journaled before the drive lock goes, so no tick at the new period comes first.
                    let fields = json!({
                        "period_s": after.period_s(), "physics_steps_per_tick": after.steps_per_tick(), "was_s": before,
                    });
                    self.engine
                        .journal_event(Kind::ControlPeriod, fields)
                        .await
                        .map_err(episode)?;
                    tracing::info!(period_s = after.period_s(), was_s = before, "control period set");
                }
                (Done::PeriodSet(after), 0, none)
            }
        })
    }
}

/// Puts each arm's joints at its `positions` entry (an arm given none is left alone); one
/// report of every joint written.
fn set_each_arm(sim: &mut Sim, positions: &[JointValues], hold: bool) -> Result<SetJointsReport, TwinError> {
    let mut all = SetJointsReport::default();
    for (index, values) in positions.iter().enumerate() {
        if !moves(values) {
            continue;
        }
        sim.focus(index)?;
        let report = sim.set_joint_positions(values, hold)?;
        all.written.extend(report.written);
        all.pulled_back.extend(report.pulled_back);
    }
    Ok(all)
}

/// Whether `values` move a joint: an arm given no values (an empty set of named values) is
/// left alone.
pub fn moves(values: &JointValues) -> bool {
    !matches!(values, JointValues::Named(named) if named.is_empty())
}

/// An arm as it stands: the twin mirroring it, with the goals last sent to it.
async fn observe(arm: &ArmUnit) -> Result<Observed, Status> {
    let robot = arm
        .twin
        .with_sim(|sim| sim.robot_state())
        .await
        .map_err(|e| status::from_twin(&e))?;
    Ok(Observed {
        goals: arm.bridge.last_goals().unwrap_or(robot.qpos),
        robot,
        blocked: false,
    })
}
