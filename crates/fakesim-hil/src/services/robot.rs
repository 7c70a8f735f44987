//! The robot service: the twin's joint-space verbs and the control tick over gRPC. In `hil`
//! mode motion verbs drive the real arm; simulation-only verbs are refused there and in `mirror`.

use crate::controller::{Done, Motion, TickMotion, Ticked, mismatched};
use crate::state::AppState;
use crate::wire::convert::{frame_pose, image_timing, joint_values, written_ids};
use crate::wire::status;
use crate::wire::status::from_name;
use crate::wire::tick::ImageRequest;
use fakesim_episode::names::check_path_name;
use fakesim_proto::v1;
use fakesim_proto::v1::robot_service_server::RobotService as RobotApi;
use fakesim_twin::preview::check_actions;
use fakesim_twin::{JointValues, Sim, TwinError};
use tonic::{Request, Response, Status};

/// Most ticks one `TickChunk` runs.
pub const MAX_CHUNK_TICKS: usize = 256;

/// Serves `fakesim.v1.RobotService` over the shared twin.
pub struct RobotService {
    state: AppState,
}

impl RobotService {
    /// A robot service on the shared state.
    pub fn new(state: AppState) -> Self {
        RobotService { state }
    }

    /// Runs a read on the twin's thread (no drive lock: reads never wait for driving calls
    /// longer than one twin job).
    async fn read<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Sim) -> Result<R, TwinError> + Send + 'static,
    ) -> Result<R, Status> {
        self.state.twin.try_with_sim(f).await.map_err(|e| status::from_twin(&e))
    }

    /// A tick request as the controller takes it, checked whole before anything runs; and the
    /// unit its answer is in.
    fn tick_motion(&self, request: &v1::TickRequest) -> Result<(TickMotion, i32), Status> {
        let images = ImageRequest::from_request(request, &self.state.model, self.state.settings.image_size)?;
        let period_s = self.state.tick_period(request.period_s)?;
        let tick = TickMotion {
            actions: self.state.split_action(&request.action, request.unit, &request.arm)?,
            period_s,
            images,
        };
        Ok((tick, request.unit))
    }

    /// A tick's answer: its frames drawn (after the drive lock was let go) and its observation
    /// with positions in `unit`.
    async fn tick_answer(
        &self,
        ticked: Ticked,
        images: Option<&ImageRequest>,
        unit: i32,
    ) -> Result<v1::TickResponse, Status> {
        let time = ticked.time();
        let observation = self.state.observation(&ticked.after, unit)?;
        let blocked = ticked.blocked();
        let (frames, image_timing) = match (images, ticked.shot, ticked.room) {
            (Some(images), Some(shot), Some(room)) => {
                let (frames, timing) = images.render(&self.state.twin, shot, &room).await?;
                (frames, Some(image_timing(timing)))
            }
            _ => (Vec::new(), None),
        };
        Ok(v1::TickResponse {
            observation,
            physics_steps: self.state.physics_steps(time),
            time_s: time,
            frames,
            image_timing,
            blocked,
        })
    }
}

#[tonic::async_trait]
impl RobotApi for RobotService {
    async fn get_model_info(
        &self,
        _request: Request<v1::GetModelInfoRequest>,
    ) -> Result<Response<v1::GetModelInfoResponse>, Status> {
        let model = &self.state.model;
        let size = self.state.settings.image_size;
        let arms = &self.state.arms;
        Ok(Response::new(v1::GetModelInfoResponse {
            joints: self.state.joint_infos(),
            action_keys: arms.iter().flat_map(|arm| arm.model.action_keys.clone()).collect(),
            control_rate_hz: model.control_rate_hz(),
            substeps_per_tick: model.substeps_per_tick,
            timestep_s: model.timestep,
            cameras: model.cameras.clone(),
            default_image_width: size,
            default_image_height: size,
            observation_keys: self.state.observation_keys(),
            control_period_s: self.state.control_period().await?.period_s(),
            robot: self.state.arm().name.to_owned(),
            lerobot_robot: self.state.arm().lerobot_robot.to_owned(),
            joint_names: self.state.joint_names(),
            arms: arms
                .iter()
                .filter_map(|arm| arm.side)
                .map(|side| side.name().to_owned())
                .collect(),
            dynamics: self.state.dynamics_profiles(),
            camera_sizes: model
                .cameras
                .iter()
                .zip(&model.camera_sizes)
                .filter_map(|(camera, size)| {
                    size.map(|(width, height)| v1::CameraSize {
                        camera: camera.clone(),
                        width,
                        height,
                    })
                })
                .collect(),
        }))
    }

    async fn get_robot_state(
        &self,
        request: Request<v1::GetRobotStateRequest>,
    ) -> Result<Response<v1::GetRobotStateResponse>, Status> {
        let unit = request.into_inner().unit;
        let states = self.state.robot_states().await?;
        Ok(Response::new(self.state.robot_state(&states, unit)?))
    }

    async fn send_action(
        &self,
        request: Request<v1::SendActionRequest>,
    ) -> Result<Response<v1::SendActionResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let action = self
            .state
            .units
            .to_radians(joint_values(request.action, "action")?, request.unit)?;
        let n_substeps = request.n_substeps.unwrap_or(1);
        let applied_keys = written_ids(self.state.arm(), &action);
        let motion = Motion::SendAction { action, n_substeps };
        let Done::Acted(after) = self.state.run(&metadata, motion).await? else {
            return Err(mismatched());
        };
        let time = after.robot.time;
        Ok(Response::new(v1::SendActionResponse {
            applied_keys,
            substeps_run: n_substeps,
            physics_steps: self.state.physics_steps(time),
            time_s: time,
            blocked: after.blocked,
        }))
    }

    async fn step(&self, request: Request<v1::StepRequest>) -> Result<Response<v1::StepResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let motion = Motion::Step {
            n_steps: request.n_steps,
        };
        let Done::Timed(time) = self.state.run(&metadata, motion).await? else {
            return Err(mismatched());
        };
        Ok(Response::new(v1::StepResponse {
            physics_steps: self.state.physics_steps(time),
            time_s: time,
        }))
    }

    async fn set_joint_positions(
        &self,
        request: Request<v1::SetJointPositionsRequest>,
    ) -> Result<Response<v1::SetJointPositionsResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let positions = self.state.split_values(joint_values(request.positions, "positions")?)?;
        let hold = request.hold;
        let motion = Motion::SetJointPositions { positions, hold };
        let Done::PositionsSet(report) = self.state.run(&metadata, motion).await? else {
            return Err(mismatched());
        };
        let written = self.state.joint_ids_of(&report.written);
        Ok(Response::new(v1::SetJointPositionsResponse {
            pulled_back_joints: self.state.joint_ids_of(&report.pulled_back),
            setpoints_moved: if hold { written.clone() } else { Vec::new() },
            written_joints: written,
        }))
    }

    async fn set_joint_velocities(
        &self,
        request: Request<v1::SetJointVelocitiesRequest>,
    ) -> Result<Response<v1::SetJointVelocitiesResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let velocities = joint_values(request.velocities, "velocities")?;
        let written_joints = written_ids(self.state.arm(), &velocities);
        self.state
            .run(&metadata, Motion::SetJointVelocities { velocities })
            .await?;
        Ok(Response::new(v1::SetJointVelocitiesResponse { written_joints }))
    }

    async fn forward_kinematics(
        &self,
        request: Request<v1::ForwardKinematicsRequest>,
    ) -> Result<Response<v1::ForwardKinematicsResponse>, Status> {
        let name = request.into_inner().name;
        let frames = self.read(move |sim| sim.forward_kinematics(name.as_deref())).await?;
        Ok(Response::new(v1::ForwardKinematicsResponse {
            frames: frames.into_iter().map(frame_pose).collect(),
        }))
    }

    async fn get_jacobian(
        &self,
        request: Request<v1::GetJacobianRequest>,
    ) -> Result<Response<v1::GetJacobianResponse>, Status> {
        let name = request.into_inner().name;
        let jacobian = self.read(move |sim| sim.jacobian(&name)).await?;
        // nv comes from MuJoCo as a non-negative i32, so it fits.
        let cols = jacobian.dof_names.len() as u32;
        let mut data = jacobian.position;
        data.extend(jacobian.rotation);
        Ok(Response::new(v1::GetJacobianResponse {
            rows: 6,
            cols,
            data,
            dof_joint_names: jacobian.dof_names,
        }))
    }

    async fn get_contacts(
        &self,
        _request: Request<v1::GetContactsRequest>,
    ) -> Result<Response<v1::GetContactsResponse>, Status> {
        let contacts = self.read(|sim| Ok(sim.contacts())).await?;
        Ok(Response::new(v1::GetContactsResponse {
            contacts: contacts
                .into_iter()
                .map(|c| v1::Contact {
                    geom1: c.geom1,
                    geom2: c.geom2,
                    dist_m: c.dist,
                    active: c.active,
                })
                .collect(),
        }))
    }

    async fn save_state(
        &self,
        request: Request<v1::SaveStateRequest>,
    ) -> Result<Response<v1::SaveStateResponse>, Status> {
        let name = request.into_inner().name;
        if name.is_empty() {
            return Err(status::invalid_argument("name", "name must not be empty"));
        }
        check_path_name("state name", &name).map_err(|e| from_name(&e))?;
        let saved = name.clone();
        // A read: it copies the twin's state aside and moves nothing, in any mode.
        let time = self
            .read(move |sim| {
                sim.save_state(&saved);
                Ok(sim.time())
            })
            .await?;
        Ok(Response::new(v1::SaveStateResponse {
            name,
            physics_steps: self.state.physics_steps(time),
        }))
    }

    async fn load_state(
        &self,
        request: Request<v1::LoadStateRequest>,
    ) -> Result<Response<v1::LoadStateResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let name = request.name;
        check_path_name("state name", &name).map_err(|e| from_name(&e))?;
        let motion = Motion::LoadState { name: name.clone() };
        let Done::Timed(time) = self.state.run(&metadata, motion).await? else {
            return Err(mismatched());
        };
        Ok(Response::new(v1::LoadStateResponse {
            name,
            physics_steps: self.state.physics_steps(time),
            time_s: time,
        }))
    }

    async fn tick(&self, request: Request<v1::TickRequest>) -> Result<Response<v1::TickResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let (tick, unit) = self.tick_motion(&request)?;
        let images = tick.images.clone();
        let Done::Ticked(ticked) = self.state.run(&metadata, Motion::Tick(tick)).await? else {
            return Err(mismatched());
        };
        Ok(Response::new(self.tick_answer(*ticked, images.as_ref(), unit).await?))
    }

    async fn tick_chunk(
        &self,
        request: Request<v1::TickChunkRequest>,
    ) -> Result<Response<v1::TickChunkResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let count = request.ticks.len();
        if !(1..=MAX_CHUNK_TICKS).contains(&count) {
            return Err(status::from_twin(&TwinError::CountOutOfRange {
                what: "ticks",
                value: count as u64,
                lo: 1,
                hi: MAX_CHUNK_TICKS as u64,
            }));
        }
        let mut motions = Vec::with_capacity(count);
        let mut answers = Vec::with_capacity(count);
        for (index, tick) in request.ticks.iter().enumerate() {
            let (motion, unit) = self
                .tick_motion(tick)
                .map_err(|e| status::for_item(e, "ticks", index))?;
            answers.push((motion.images.clone(), unit));
            motions.push(motion);
        }
        for (index, arm) in self.state.arms.iter().enumerate() {
            let actions: Vec<JointValues> = motions.iter().filter_map(|m| m.actions.get(index).cloned()).collect();
            let ctrl_ranges = std::array::from_fn(|i| arm.model.joints[i].ctrl_range);
            check_actions(arm.twin.arm(), &actions, &ctrl_ranges)
                .map_err(|(i, e)| status::for_item(status::from_twin(&e), "ticks", i))?;
        }
        let Done::Chunk { ticks, stopped } = self.state.run(&metadata, Motion::TickChunk(motions)).await? else {
            return Err(mismatched());
        };
        let mut responses = Vec::with_capacity(ticks.len());
        for (ticked, (images, unit)) in ticks.into_iter().zip(answers) {
            responses.push(self.tick_answer(ticked, images.as_ref(), unit).await?);
        }
        Ok(Response::new(v1::TickChunkResponse {
            ticks: responses,
            stopped: stopped.map(|(index, refusal)| v1::ChunkStop {
                tick_index: u32::try_from(index).unwrap_or(u32::MAX),
                code: refusal.code() as i32,
                reason: fakesim_proto::errors::error_reason(&refusal).unwrap_or_default(),
                message: refusal.message().to_owned(),
            }),
        }))
    }

    async fn set_control_period(
        &self,
        request: Request<v1::SetControlPeriodRequest>,
    ) -> Result<Response<v1::SetControlPeriodResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let motion = Motion::SetControlPeriod {
            period_s: request.period_s,
        };
        let Done::PeriodSet(clock) = self.state.run(&metadata, motion).await? else {
            return Err(mismatched());
        };
        Ok(Response::new(v1::SetControlPeriodResponse {
            period_s: clock.period_s(),
            physics_steps_per_tick: clock.steps_per_tick(),
        }))
    }
}
