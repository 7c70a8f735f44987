//! The robot service: the twin's joint-space verbs and the control tick over gRPC. In `hil`
//! mode motion verbs drive the real arm; simulation-only verbs are refused there and in `mirror`.

use crate::control::Need;
use crate::convert::{frame_pose, ids_of_labels, image_timing, joint_values, pose, written_ids};
use crate::state::AppState;
use crate::status;
use crate::status::from_name;
use crate::tick::{ImageRequest, observation, observation_keys};
use fakesim_bridge::hil::{VerbKind, run_action};
use fakesim_episode::names::check_path_name;
use fakesim_episode::ticks::{Hold, Observed};
use fakesim_proto::v1;
use fakesim_proto::v1::robot_service_server::RobotService as RobotApi;
use fakesim_twin::quote::Quoted;
use fakesim_twin::{JointValues, RobotState, Sim, TwinError};
use serde_json::json;
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status};

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

    /// Runs a simulation-only call that changes the robot, holding the drive lock throughout;
    /// refused with hardware in the loop or in mirror mode, and without the lease when needed.
    async fn drive<R: Send + 'static>(
        &self,
        metadata: &MetadataMap,
        f: impl FnOnce(&mut Sim) -> Result<R, TwinError> + Send + 'static,
    ) -> Result<R, Status> {
        let _drive = self.state.lock_drive().await;
        self.state.admit(metadata, Need::Motion)?;
        self.state
            .bridge
            .route(VerbKind::SimOnly)
            .map_err(|e| status::from_bridge(&e))?;
        self.read(f).await
    }

    /// Writes servo setpoints and holds them (on the twin in lock-step, or, in `hil`, on the
    /// real arm for that long in real time) through the one tick driver of the mode. Returns
    /// the state after. The caller holds the drive lock.
    async fn act(&self, action: JointValues, hold: Hold) -> Result<Observed, Status> {
        run_action(&self.state.bridge, &self.state.twin, action, hold)
            .await
            .map_err(|e| status::from_bridge(&e))
    }

    /// Refuses a call that changes the robot once a live episode's step budget is used up.
    async fn check_budget(&self) -> Result<(), Status> {
        self.state
            .engine
            .check_robot_call()
            .await
            .map_err(|e| status::from_episode(&e))
    }

    /// Counts a call that changed the robot against a live episode's budget (its physics steps
    /// rounded up to control ticks) and journals it with `request`.
    async fn record(&self, call: &'static str, physics_steps: u64, request: serde_json::Value) -> Result<(), Status> {
        let ticks = physics_steps.div_ceil(u64::from(self.state.model.substeps_per_tick.max(1)));
        self.state
            .engine
            .record_robot_call(call, ticks, request)
            .await
            .map_err(|e| status::from_episode(&e))
    }

    /// The state answer, positions and targets in `unit`.
    fn robot_state(&self, robot: &RobotState, unit: i32) -> Result<v1::GetRobotStateResponse, Status> {
        Ok(v1::GetRobotStateResponse {
            joint_ids: self.state.model.joints.iter().map(|j| j.id.clone()).collect(),
            positions: self.state.units.positions_in(&robot.qpos, unit)?,
            velocities: robot.qvel.to_vec(),
            ctrl_targets: self.state.units.positions_in(&robot.ctrl, unit)?,
            time_s: robot.time,
            physics_steps: self.state.physics_steps(robot.time),
            tcp: Some(pose(&robot.tcp)),
            gripper_opening_m: robot.gripper_opening_m,
            unit,
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
        let bridge = &self.state.bridge;
        let effective = bridge.port().map(|_| bridge.limits());
        Ok(Response::new(v1::GetModelInfoResponse {
            joints: model
                .joints
                .iter()
                .enumerate()
                .map(|(index, j)| {
                    let effective = effective.and_then(|limits| limits.get(index).copied());
                    v1::JointInfo {
                        id: j.id.clone(),
                        name: j.id.clone(),
                        label: j.label.clone(),
                        range_min: j.range.lo,
                        range_max: j.range.hi,
                        unit: j.unit.to_owned(),
                        effective_min: effective.map(|b| b.lo),
                        effective_max: effective.map(|b| b.hi),
                    }
                })
                .collect(),
            action_keys: model.action_keys.clone(),
            control_rate_hz: model.control_rate_hz(),
            substeps_per_tick: model.substeps_per_tick,
            timestep_s: model.timestep,
            cameras: model.cameras.clone(),
            default_image_width: size,
            default_image_height: size,
            observation_keys: observation_keys(),
            control_period_s: self.state.control_period().await?.period_s(),
        }))
    }

    async fn get_robot_state(
        &self,
        request: Request<v1::GetRobotStateRequest>,
    ) -> Result<Response<v1::GetRobotStateResponse>, Status> {
        let unit = request.into_inner().unit;
        let robot = self.read(|sim| Ok(sim.robot_state())).await?;
        Ok(Response::new(self.robot_state(&robot, unit)?))
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
        let applied_keys = written_ids(&action);
        self.check_budget().await?;
        let after = {
            let _drive = self.state.lock_drive().await;
            self.state.admit(&metadata, Need::Motion)?;
            self.act(action, Hold::Substeps(n_substeps)).await?
        };
        let time = after.robot.time;
        let fields = json!({ "keys": applied_keys, "n_substeps": n_substeps });
        self.record("send_action", u64::from(n_substeps), fields).await?;
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
        let n_steps = request.n_steps;
        self.check_budget().await?;
        let time = self
            .drive(&metadata, move |sim| {
                sim.step(n_steps)?;
                Ok(sim.time())
            })
            .await?;
        self.record("step", u64::from(n_steps), json!({ "n_steps": n_steps }))
            .await?;
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
        let positions = joint_values(request.positions, "positions")?;
        let hold = request.hold;
        let report = self
            .drive(&metadata, move |sim| sim.set_joint_positions(&positions, hold))
            .await?;
        let written = ids_of_labels(&report.written);
        let fields = json!({ "joints": written, "hold": hold });
        self.record("set_joint_positions", 0, fields).await?;
        Ok(Response::new(v1::SetJointPositionsResponse {
            pulled_back_joints: ids_of_labels(&report.pulled_back),
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
        let written_joints = written_ids(&velocities);
        self.drive(&metadata, move |sim| sim.set_joint_velocities(&velocities))
            .await?;
        let fields = json!({ "joints": written_joints });
        self.record("set_joint_velocities", 0, fields).await?;
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
        let (metadata, _, request) = request.into_parts();
        let name = request.name;
        if name.is_empty() {
            return Err(status::invalid_argument("name", "name must not be empty"));
        }
        check_path_name("state name", &name).map_err(|e| from_name(&e))?;
        let saved = name.clone();
        let time = self
            .drive(&metadata, move |sim| {
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
        let loaded = name.clone();
        let time = self
            .drive(&metadata, move |sim| {
                sim.load_state(&loaded)?;
                Ok(sim.time())
            })
            .await?;
        self.record("load_state", 0, json!({ "name": Quoted(&name).to_string() }))
            .await?;
        Ok(Response::new(v1::LoadStateResponse {
            name,
            physics_steps: self.state.physics_steps(time),
            time_s: time,
        }))
    }

    async fn tick(&self, request: Request<v1::TickRequest>) -> Result<Response<v1::TickResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let images = ImageRequest::from_request(&request, &self.state.model, self.state.settings.image_size)?;
        let period_s = self.state.tick_period(request.period_s)?;
        let action = self
            .state
            .units
            .to_radians(JointValues::Ordered(request.action), request.unit)?;
        self.check_budget().await?;
        let (after, shot) = {
            let _drive = self.state.lock_drive().await;
            self.state.admit(&metadata, Need::Motion)?;
            let after = self.act(action, Hold::Period(period_s)).await?;
            // Taken before the lock is released, so the frames show the state after this tick;
            // drawn after, so no other call waits for the render.
            let shot = match &images {
                Some(images) => Some(images.snapshot(&self.state.twin).await?),
                None => None,
            };
            (after, shot)
        };
        let robot = &after.robot;
        let ticked = u64::from(self.state.model.substeps_per_tick);
        self.record(
            "tick",
            ticked,
            json!({ "action": robot.ctrl.to_vec(), "period_s": period_s }),
        )
        .await?;
        let (frames, image_timing) = match (&images, shot) {
            (Some(images), Some(shot)) => {
                let (frames, timing) = images.render(&self.state.twin, shot).await?;
                (frames, Some(image_timing(timing)))
            }
            _ => (Vec::new(), None),
        };
        let mut observation = observation(robot);
        let positions = self.state.units.positions_in(&robot.qpos, request.unit)?;
        observation[..positions.len()].copy_from_slice(&positions);
        Ok(Response::new(v1::TickResponse {
            observation,
            physics_steps: self.state.physics_steps(robot.time),
            time_s: robot.time,
            frames,
            image_timing,
            blocked: after.blocked,
        }))
    }

    async fn set_control_period(
        &self,
        request: Request<v1::SetControlPeriodRequest>,
    ) -> Result<Response<v1::SetControlPeriodResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let answer = self.state.set_control_period(&metadata, request.period_s).await?;
        Ok(Response::new(answer))
    }
}
