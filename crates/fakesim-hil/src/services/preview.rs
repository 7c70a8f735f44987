//! The preview service: a chunk of actions run on the twin's scratch copy, reported without
//! moving anything, in any mode.

use crate::state::{AppState, ArmUnit};
use crate::wire::convert::joint_values;
use crate::wire::status;
use fakesim_bridge::hil::Mode;
use fakesim_proto::v1;
use fakesim_proto::v1::preview_service_server::PreviewService as PreviewApi;
use fakesim_twin::joints::Joint;
use fakesim_twin::preview::{PreviewLimits, PreviewReport, PreviewRequest, StartState, check_actions, check_ticks};
use fakesim_twin::values::{Check, resolve};
use fakesim_twin::{ArmSpec, JointValues, TwinError};
use tokio::sync::Semaphore;
use tonic::{Request, Response, Status};

/// Serves `fakesim.v1.PreviewService` over the shared twin.
pub struct PreviewService {
    state: AppState,
    /// One client preview on the preview thread at a time, the others waiting here: a hil
    /// command's own preview then waits behind one client preview at most.
    one_at_a_time: Semaphore,
}

impl PreviewService {
    /// A preview service on the shared state.
    pub fn new(state: AppState) -> Self {
        PreviewService {
            state,
            one_at_a_time: Semaphore::new(1),
        }
    }

    /// The request as the twin's preview takes it: sizes checked first, units converted.
    async fn preview_request(
        &self,
        request: v1::PreviewActionsRequest,
        arm: &ArmUnit,
    ) -> Result<PreviewRequest, Status> {
        let substeps = request.n_substeps.unwrap_or(arm.model.substeps_per_tick);
        check_ticks(request.actions.len(), request.horizon_ticks, substeps).map_err(|e| status::from_twin(&e))?;
        if let Some(max) = request.max_joint_speed_rad_s
            && !(max.is_finite() && max > 0.0)
        {
            return Err(status::invalid_argument(
                "max_joint_speed_rad_s",
                format!("max_joint_speed_rad_s={max} must be a positive finite number"),
            ));
        }
        let unit = request.unit;
        let actions = request
            .actions
            .into_iter()
            .enumerate()
            .map(|(i, action)| {
                let values = joint_values(Some(action), "actions")?;
                arm.units
                    .to_radians(values, unit)
                    .map_err(|e| status::for_item(e, "actions", i))
            })
            .collect::<Result<Vec<_>, Status>>()?;
        let ctrl_ranges = std::array::from_fn(|i| arm.model.joints[i].ctrl_range);
        check_actions(arm.twin.arm(), &actions, &ctrl_ranges)
            .map_err(|(i, e)| status::for_item(status::from_twin(&e), "actions", i))?;
        let start = match request.start {
            Some(start) => Some(self.start_state(start, unit, arm)?),
            None => self.measured_start(arm).await?,
        };
        Ok(PreviewRequest {
            start,
            actions,
            substeps_per_action: request.n_substeps,
            horizon_ticks: request.horizon_ticks,
            limits: PreviewLimits {
                max_joint_speed_rad_s: request.max_joint_speed_rad_s,
                ..PreviewLimits::default()
            },
        })
    }

    /// A client's start state in radians.
    fn start_state(&self, start: v1::PreviewStart, unit: i32, arm: &ArmUnit) -> Result<StartState, Status> {
        let radians = |values: Vec<f64>| -> Result<[f64; 6], Status> {
            let values = arm.units.to_radians(JointValues::Ordered(values), unit)?;
            six(arm.twin.arm(), &values)
        };
        Ok(StartState {
            qpos: radians(start.positions)?,
            qvel: if start.velocities.is_empty() {
                [0.0; 6]
            } else {
                six(arm.twin.arm(), &JointValues::Ordered(start.velocities))?
            },
            ctrl: if start.ctrl_targets.is_empty() {
                None
            } else {
                Some(radians(start.ctrl_targets)?)
            },
        })
    }

    /// With a real arm attached (mirror, hil): the twin's joints, which mirror the measured
    /// arm, at rest, with the last goals sent to the arm. In sim: the twin as it is (`None`).
    async fn measured_start(&self, arm: &ArmUnit) -> Result<Option<StartState>, Status> {
        if arm.bridge.mode() == Mode::Sim {
            return Ok(None);
        }
        let qpos = arm
            .twin
            .with_sim(|sim| sim.arm_qpos())
            .await
            .map_err(|e| status::from_twin(&e))?;
        Ok(Some(StartState {
            qpos,
            qvel: [0.0; 6],
            ctrl: arm.bridge.last_goals(),
        }))
    }

    /// The report as the proto message, positions in `unit`.
    fn response(&self, report: PreviewReport, unit: i32, arm: &ArmUnit) -> Result<v1::PreviewActionsResponse, Status> {
        let finals: Vec<f64> = report.joints.iter().map(|j| j.final_qpos).collect();
        let finals = arm.units.positions_in(&finals, unit)?;
        Ok(v1::PreviewActionsResponse {
            safe: report.is_safe(),
            summary: report.summary(),
            ticks: report.ticks,
            substeps_per_tick: report.substeps_per_tick,
            contacts: report
                .contacts
                .into_iter()
                .map(|c| v1::PreviewContact {
                    link: c.link,
                    geom: c.geom,
                    other_body: c.other_body,
                    other_geom: c.other_geom,
                    contact_class: c.class.name().to_owned(),
                    max_depth_m: c.max_depth_m,
                    first_tick: c.first_tick,
                    start_depth_m: c.start_depth_m,
                    violation: c.violation,
                })
                .collect(),
            joints: report
                .joints
                .iter()
                .zip(Joint::ALL)
                .zip(finals)
                .map(|((j, joint), final_position)| v1::PreviewJoint {
                    id: arm.twin.arm().model_name(joint),
                    label: arm.twin.arm().label(joint),
                    peak_speed_rad_s: j.peak_speed_rad_s,
                    peak_accel_rad_s2: j.peak_accel_rad_s2,
                    limit_first_tick: j.limit_first_tick,
                    past_limit_rad: j.past_limit_rad,
                    final_position,
                })
                .collect(),
            table_clearance: report.table_clearance.map(|c| v1::PreviewClearance {
                link: c.link,
                geom: c.geom,
                clearance_m: c.clearance_m,
                tick: c.tick,
            }),
            gripper_stall: report.gripper_stall.map(|s| v1::PreviewGripperStall {
                first_tick: s.first_tick,
                gap_rad: s.gap_rad,
                blocked_by: s.blocked_by,
            }),
            violations: report
                .violations
                .into_iter()
                .map(|v| v1::PreviewViolation {
                    message: v.to_string(),
                    kind: v.kind.name().to_owned(),
                    links: v.links,
                    first_tick: v.first_tick,
                    value: v.value,
                })
                .collect(),
        })
    }
}

/// Six finite values in action-key order, or the twin's refusal (length, NaN).
fn six(arm: &ArmSpec, values: &JointValues) -> Result<[f64; 6], Status> {
    let pairs = resolve(arm, values, Check::Finite).map_err(|e| status::from_twin(&TwinError::from(e)))?;
    let mut out = [0.0; 6];
    for (i, v) in pairs {
        out[i] = v;
    }
    Ok(out)
}

#[tonic::async_trait]
impl PreviewApi for PreviewService {
    async fn preview_actions(
        &self,
        request: Request<v1::PreviewActionsRequest>,
    ) -> Result<Response<v1::PreviewActionsResponse>, Status> {
        let request = request.into_inner();
        let arm = self.state.arm_named(&request.arm)?.clone();
        let unit = request.unit;
        let preview = self.preview_request(request, &arm).await?;
        // Never closed, so acquiring only waits.
        let _turn = self.one_at_a_time.acquire().await;
        let report = arm
            .twin
            .preview(preview)
            .await
            .map_err(|e: TwinError| status::from_twin(&e))?;
        Ok(Response::new(self.response(report, unit, &arm)?))
    }
}
