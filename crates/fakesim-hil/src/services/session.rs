//! The session service: the episode tools of the contract, served by the episode engine.

use crate::controller::{Done, Motion, mismatched};
use crate::state::AppState;
use crate::wire::convert::{image_timing, render_quality};
use crate::wire::deadline::deadline;
use crate::wire::status;
use fakesim_arm::Side;
use fakesim_episode::session::{EefState, Images, Observation, TaskInfo};
use fakesim_episode::{Engine, GripperCommand, GripperStop, MoveStop, ResetRequest, Status as EpisodeStatus};
use fakesim_proto::v1;
use fakesim_proto::v1::session_service_server::SessionService as SessionApi;
use std::sync::Arc;
use std::time::Instant;
use tonic::{Request, Response, Status};

/// Serves `fakesim.v1.SessionService` over the episode engine. Calls that drive the arm hold
/// the daemon's drive lock, so they never interleave with the robot service's writes.
pub struct SessionService {
    engine: Arc<Engine>,
    state: AppState,
}

impl SessionService {
    /// The session service over the shared state's engine.
    pub fn new(state: AppState) -> Self {
        SessionService {
            engine: state.engine.clone(),
            state,
        }
    }

    /// Called once the server has stopped accepting calls and the calls in flight have
    /// finished: finalises an open episode as `interrupted`.
    pub async fn on_shutdown(&self) {
        if let Err(e) = self.engine.interrupt().await {
            tracing::error!(error = %e, "could not finalise the open episode");
        }
    }
}

fn count(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn vec3([x, y, z]: [f64; 3]) -> v1::Vec3 {
    v1::Vec3 { x, y, z }
}

fn rpy([roll_x, pitch_y, yaw_z]: [f64; 3]) -> v1::Rpy {
    v1::Rpy { roll_x, pitch_y, yaw_z }
}

fn episode_status(status: EpisodeStatus) -> i32 {
    match status {
        EpisodeStatus::Idle => v1::EpisodeStatus::Idle,
        EpisodeStatus::Running => v1::EpisodeStatus::Running,
        EpisodeStatus::Stopped => v1::EpisodeStatus::Stopped,
    }
    .into()
}

fn gripper_command(command: GripperCommand) -> i32 {
    match command {
        GripperCommand::Open => v1::GripperCommand::Open,
        GripperCommand::Close => v1::GripperCommand::Close,
    }
    .into()
}

fn task(task: TaskInfo) -> v1::Task {
    v1::Task {
        suite: task.suite,
        task_index: task.task_index,
        name: task.name,
        instruction: task.instruction,
        init_state_index: task.init_state_index,
    }
}

fn state(state: EefState) -> v1::EefState {
    v1::EefState {
        eef_pos_m: Some(vec3(state.eef_pos_m)),
        eef_rpy_rad: Some(rpy(state.eef_rpy_rad)),
        gripper: Some(v1::GripperState {
            command: gripper_command(state.gripper_command),
            opening_m: state.opening_m,
        }),
    }
}

fn images(images: Images) -> v1::Images {
    v1::Images {
        agentview: images.agentview,
        robot0_eye_in_hand: images.robot0_eye_in_hand,
        timing: Some(image_timing(images.timing)),
    }
}

/// The parts every driving answer shares.
struct Common {
    images: Option<v1::Images>,
    state: Option<v1::EefState>,
    step: u32,
    steps_left: u32,
    status: i32,
}

fn common(observation: Observation) -> Common {
    Common {
        images: observation.images.map(images),
        state: Some(state(observation.state)),
        step: count(observation.step),
        steps_left: count(observation.steps_left),
        status: episode_status(observation.status),
    }
}

fn move_stop(stop: MoveStop) -> i32 {
    match stop {
        MoveStop::Reached => v1::MoveStopReason::Reached,
        MoveStop::Stalled => v1::MoveStopReason::Stalled,
        MoveStop::StepCap => v1::MoveStopReason::StepCap,
        MoveStop::Budget => v1::MoveStopReason::Budget,
    }
    .into()
}

fn gripper_stop(stop: GripperStop) -> i32 {
    match stop {
        GripperStop::Settled => v1::GripperStopReason::Settled,
        GripperStop::StepCap => v1::GripperStopReason::StepCap,
        GripperStop::Budget => v1::GripperStopReason::Budget,
        GripperStop::NoOp => v1::GripperStopReason::NoOp,
    }
    .into()
}

fn required_vec3(value: Option<v1::Vec3>, field: &str) -> Result<[f64; 3], Status> {
    value
        .map(|v| [v.x, v.y, v.z])
        .ok_or_else(|| status::invalid_argument(field, format!("{field} is required (metres, world frame)")))
}

#[tonic::async_trait]
impl SessionApi for SessionService {
    async fn list_tasks(
        &self,
        request: Request<v1::ListTasksRequest>,
    ) -> Result<Response<v1::ListTasksResponse>, Status> {
        let suite = request.into_inner().suite;
        let listing = self
            .engine
            .list_tasks(suite.as_deref())
            .map_err(|e| status::from_episode(&e))?;
        Ok(Response::new(v1::ListTasksResponse {
            suites: listing
                .suites
                .into_iter()
                .map(|s| v1::SuiteSummary {
                    name: s.name,
                    n_tasks: s.n_tasks,
                })
                .collect(),
            total_tasks: listing.total_tasks,
            suite,
            tasks: listing
                .tasks
                .into_iter()
                .map(|t| v1::TaskSummary {
                    task_index: t.task_index,
                    name: t.name,
                    instruction: t.instruction,
                    n_init_states: t.n_init_states,
                })
                .collect(),
        }))
    }

    async fn reset_task(
        &self,
        request: Request<v1::ResetTaskRequest>,
    ) -> Result<Response<v1::ResetTaskResponse>, Status> {
        let (metadata, _, r) = request.into_parts();
        let request = ResetRequest {
            suite: r.suite,
            task_index: r.task_index,
            init_state_index: r.init_state_index,
            max_steps: r.max_steps,
            cameras: r.cameras,
            quality: render_quality(r.render_quality)?,
            seed: r.seed,
        };
        let Done::Reset(outcome) = self.state.run(&metadata, Motion::ResetTask(request)).await? else {
            return Err(mismatched());
        };
        let c = common(outcome.observation);
        Ok(Response::new(v1::ResetTaskResponse {
            run: outcome.run,
            task: Some(task(outcome.task)),
            images: c.images,
            state: c.state,
            step: c.step,
            steps_left: c.steps_left,
        }))
    }

    async fn get_observation(
        &self,
        request: Request<v1::GetObservationRequest>,
    ) -> Result<Response<v1::GetObservationResponse>, Status> {
        let deadline = deadline(request.metadata(), Instant::now());
        let request = request.into_inner();
        let arm = self.state.tool_arm(&request.arm)?;
        if arm.is_none() {
            self.state.refuse_on_pair("GetObservation", true)?;
        }
        let quality = render_quality(request.render_quality)?;
        let c = common(
            self.engine
                .observation(arm.map_or(0, Side::index), quality, deadline)
                .await
                .map_err(|e| status::from_episode(&e))?,
        );
        Ok(Response::new(v1::GetObservationResponse {
            images: c.images,
            state: c.state,
            step: c.step,
            steps_left: c.steps_left,
            status: c.status,
        }))
    }

    async fn r#move(&self, request: Request<v1::MoveRequest>) -> Result<Response<v1::MoveResponse>, Status> {
        let (metadata, _, r) = request.into_parts();
        let delta_xyz = required_vec3(r.delta_xyz, "delta_xyz")?;
        let delta_rpy = r.delta_rpy.map(|v| [v.roll_x, v.pitch_y, v.yaw_z]);
        let motion = Motion::Move {
            arm: self.state.tool_arm(&r.arm)?,
            delta_xyz,
            delta_rpy,
        };
        let Done::Moved(outcome) = self.state.run(&metadata, motion).await? else {
            return Err(mismatched());
        };
        let report = outcome.report;
        let action = v1::MoveAction {
            delta_xyz: Some(vec3(outcome.delta_xyz)),
            delta_rpy: outcome.delta_rpy.map(rpy),
            executed_steps: report.executed_steps,
            stop_reason: move_stop(report.stop),
            achieved_delta_xyz: Some(vec3(report.achieved_delta_xyz)),
            remaining_distance_m: report.remaining_distance_m,
        };
        let c = common(outcome.observation);
        Ok(Response::new(v1::MoveResponse {
            images: c.images,
            state: c.state,
            action: Some(action),
            step: c.step,
            steps_left: c.steps_left,
            status: c.status,
        }))
    }

    async fn gripper(&self, request: Request<v1::GripperRequest>) -> Result<Response<v1::GripperResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let command = match v1::GripperCommand::try_from(request.command) {
            Ok(v1::GripperCommand::Open) => GripperCommand::Open,
            Ok(v1::GripperCommand::Close) => GripperCommand::Close,
            _ => return Err(status::invalid_argument("command", "command must be OPEN or CLOSE")),
        };
        let motion = Motion::Gripper {
            arm: self.state.tool_arm(&request.arm)?,
            command,
        };
        let Done::Gripped(outcome) = self.state.run(&metadata, motion).await? else {
            return Err(mismatched());
        };
        let report = outcome.report;
        let action = v1::GripperAction {
            command: gripper_command(outcome.command),
            executed_steps: report.executed_steps,
            stop_reason: gripper_stop(report.stop),
            opening_before_m: report.opening_before_m,
            opening_after_m: report.opening_after_m(),
        };
        let c = common(outcome.observation);
        Ok(Response::new(v1::GripperResponse {
            images: c.images,
            state: c.state,
            action: Some(action),
            step: c.step,
            steps_left: c.steps_left,
            status: c.status,
        }))
    }

    async fn stop_episode(
        &self,
        request: Request<v1::StopEpisodeRequest>,
    ) -> Result<Response<v1::StopEpisodeResponse>, Status> {
        let Done::Stopped(outcome) = self.state.run(request.metadata(), Motion::StopEpisode).await? else {
            return Err(mismatched());
        };
        let path = |p: &std::path::Path| p.display().to_string();
        Ok(Response::new(v1::StopEpisodeResponse {
            run: outcome.run,
            status: episode_status(EpisodeStatus::Stopped),
            artifacts: Some(v1::Artifacts {
                events: path(&outcome.artifacts.events),
                frames: path(&outcome.artifacts.frames),
                summary: path(&outcome.artifacts.summary),
            }),
            success: outcome.success,
            validation_json: outcome.validation.to_string(),
        }))
    }

    async fn get_session_info(
        &self,
        _: Request<v1::GetSessionInfoRequest>,
    ) -> Result<Response<v1::GetSessionInfoResponse>, Status> {
        let info = self.engine.session_info().await.map_err(|e| status::from_episode(&e))?;
        Ok(Response::new(v1::GetSessionInfoResponse {
            run: info.run,
            status: episode_status(info.status),
            step: count(info.step),
            max_steps: count(info.max_steps),
            steps_left: count(info.steps_left),
            task: info.task.map(task),
            task_locked: info.task_locked,
            state: info.state.map(state),
            default_scene: info.default_scene.map(task),
            success: info.success,
        }))
    }
}
