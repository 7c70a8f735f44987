//! The hardware service: mode switching, hardware status, the joint-state stream and the
//! emergency stop, over the hardware bridge.

use crate::access::lease::Granted;
use crate::controller::{Done, Motion, Need, mismatched};
use crate::state::AppState;
use crate::wire::status::from_lease;
use crate::wire::{convert, status};
use fakesim_arm::Side;
use fakesim_arm::{Joint, Torque};
use fakesim_bridge::hil::{Mode, SyncOption};
use fakesim_proto::v1;
use fakesim_proto::v1::hardware_service_server::HardwareService as HardwareApi;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// Fastest joint-state stream a client may ask for (Hz).
pub const MAX_STREAM_RATE_HZ: f64 = 1000.0;

/// Serves `fakesim.v1.HardwareService`.
pub struct HardwareService {
    state: AppState,
}

impl HardwareService {
    /// The hardware service on the shared state.
    pub fn new(state: AppState) -> Self {
        HardwareService { state }
    }
}

fn proto_mode(mode: Mode) -> i32 {
    match mode {
        Mode::Sim => v1::Mode::Sim,
        Mode::Mirror => v1::Mode::Mirror,
        Mode::Hil => v1::Mode::Hil,
    }
    .into()
}

fn bridge_mode(mode: i32) -> Result<Mode, Status> {
    match v1::Mode::try_from(mode) {
        Ok(v1::Mode::Sim) => Ok(Mode::Sim),
        Ok(v1::Mode::Mirror) => Ok(Mode::Mirror),
        Ok(v1::Mode::Hil) => Ok(Mode::Hil),
        _ => Err(status::invalid_argument(
            "mode",
            "mode must be MODE_SIM, MODE_MIRROR or MODE_HIL",
        )),
    }
}

fn sync_option(sync: i32) -> Result<SyncOption, Status> {
    match v1::SyncOption::try_from(sync) {
        Ok(v1::SyncOption::None) => Ok(SyncOption::None),
        Ok(v1::SyncOption::MoveArmToTwin) => Ok(SyncOption::MoveArmToTwin),
        Ok(v1::SyncOption::MoveTwinToArm) => Ok(SyncOption::MoveTwinToArm),
        Err(_) => Err(status::invalid_argument("sync", format!("unknown sync option {sync}"))),
    }
}

type SampleStream = Pin<Box<dyn Stream<Item = Result<v1::JointStatesSample, Status>> + Send>>;

#[tonic::async_trait]
impl HardwareApi for HardwareService {
    async fn set_mode(&self, request: Request<v1::SetModeRequest>) -> Result<Response<v1::SetModeResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let mode = bridge_mode(request.mode)?;
        let sync = sync_option(request.sync)?;
        let motion = Motion::SetMode {
            mode,
            sync,
            sync_speed_rad_s: request.sync_max_speed_rad_s,
        };
        let Done::ModeSwitched(switch) = self.state.run(&metadata, motion).await? else {
            return Err(mismatched());
        };
        Ok(Response::new(v1::SetModeResponse {
            mode: proto_mode(mode),
            previous_mode: proto_mode(switch.previous),
            max_joint_error_rad: switch.max_joint_error_rad,
            sync_duration_s: switch.sync_duration.as_secs_f64(),
        }))
    }

    async fn get_hardware_status(
        &self,
        request: Request<v1::GetHardwareStatusRequest>,
    ) -> Result<Response<v1::GetHardwareStatusResponse>, Status> {
        let unit = self.state.arm_named(&request.into_inner().arm)?;
        let bridge = &unit.bridge;
        let status = bridge.status();
        let lease = self.state.leases.holder_of(unit.side.map_or(0, Side::index));
        let twin = unit
            .twin
            .with_sim(|sim| sim.arm_qpos())
            .await
            .map_err(|e| status::from_twin(&e))?;
        let effective = bridge.limits();
        let calibrated = bridge.calibrated_limits();
        let (clamped, shadow) = {
            let sample = *bridge.samples().borrow();
            (sample.clamped, sample.shadow)
        };
        let servos = status
            .servos
            .iter()
            .map(|servo| {
                let reading = servo.reading.as_ref();
                let index = servo.joint.index();
                let calibrated = calibrated.map_or(effective[index], |c| c[index]);
                v1::ServoStatus {
                    id: u32::from(servo.id),
                    label: servo.joint.label().to_owned(),
                    twin_joint: unit.twin.arm().model_name(servo.joint),
                    position_deg: reading.map_or(0.0, |r| r.normalized),
                    twin_rad: servo.position_rad.unwrap_or(0.0),
                    twin_actual_rad: twin[servo.joint.index()],
                    temperature_c: reading.map_or(0.0, |r| r.temperature_c),
                    voltage_v: reading.map_or(0.0, |r| r.voltage_v),
                    load_percent: reading.map_or(0.0, |r| r.load_percent),
                    current_ma: reading.map_or(0.0, |r| r.current_ma),
                    error_flags: reading.map_or(0, |r| u32::from(r.error_flags.bits())),
                    errors: servo.error_flags.clone(),
                    comm_errors: Some(v1::CommErrorCounts {
                        timeouts: servo.comm.timeouts,
                        corrupt_replies: servo.comm.corrupt,
                        retries: servo.comm.retries,
                    }),
                    torque_enabled: servo.torque_enabled.unwrap_or(false),
                    torque_known: servo.torque_enabled.is_some(),
                    torque: convert::torque(Torque::confirmed(servo.torque_enabled)).into(),
                    resets: servo.resets,
                    calibrated_min_rad: calibrated.lo,
                    calibrated_max_rad: calibrated.hi,
                    effective_min_rad: effective[index].lo,
                    effective_max_rad: effective[index].hi,
                    outside_twin_range: clamped[index],
                    predicted_rad: shadow.map(|s| s[index].predicted_rad),
                    residual_rad: shadow.map(|s| s[index].residual_rad),
                    calibration_drift_rad: shadow.and_then(|s| s[index].drift_rad),
                }
            })
            .collect();
        Ok(Response::new(v1::GetHardwareStatusResponse {
            mode: proto_mode(bridge.mode()),
            port: status.port,
            bus_connected: status.bus_connected,
            servos,
            estop_latched: status.estop.latched,
            estop_reason: status.estop.reason,
            safety_events: bridge.safety_event_count(),
            mapping_file: bridge
                .port()
                .and(self.state.settings.mapping.as_ref())
                .map(|path| path.display().to_string()),
            lease_holder: lease.as_ref().map(|l| l.holder.clone()),
            lease_expires_in_ms: lease.map_or(0, |l| u64::try_from(l.expires_in.as_millis()).unwrap_or(u64::MAX)),
            lease_required: self.state.lease_required(Need::Motion),
            arm: unit.side.map(|side| side.name().to_owned()).unwrap_or_default(),
            link: status
                .link
                .map(|link| convert::bus_link(&link, status.last_error.clone())),
            torque: convert::torque(status.torque).into(),
        }))
    }

    type StreamJointStatesStream = SampleStream;

    async fn stream_joint_states(
        &self,
        request: Request<v1::StreamJointStatesRequest>,
    ) -> Result<Response<Self::StreamJointStatesStream>, Status> {
        let request = request.into_inner();
        let rate_hz = request.rate_hz;
        let arm = self.state.arm_named(&request.arm)?.clone();
        if !(rate_hz.is_finite() && rate_hz > 0.0 && rate_hz <= MAX_STREAM_RATE_HZ) {
            return Err(status::invalid_argument(
                "rate_hz",
                format!("rate_hz={rate_hz} must be above 0 and at most {MAX_STREAM_RATE_HZ} Hz"),
            ));
        }
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            let started = Instant::now();
            let mut interval = tokio::time::interval(Duration::from_secs_f64(1.0 / rate_hz));
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            let hardware = arm.bridge.health().is_some();
            let mut readings = arm.bridge.samples();
            let mut last_reading = readings.borrow_and_update().seq;
            let mut seq = 0u64;
            loop {
                interval.tick().await;
                let period = interval.period();
                let fresh = if hardware {
                    // The next reading not sent yet, if one arrives within a period; none is ever
                    // sent twice.
                    tokio::select! {
                        () = tx.closed() => break,
                        next = tokio::time::timeout(period, readings.wait_for(|s| s.seq > last_reading)) => match next {
                            Ok(Ok(sample)) => Some(*sample),
                            Ok(Err(_)) => break,
                            Err(_) => None,
                        },
                    }
                } else {
                    None
                };
                let shadow = fresh.and_then(|sample| sample.shadow);
                let (real, twin, reading) = match fresh {
                    Some(sample) => {
                        last_reading = sample.seq;
                        let at = if sample.at >= started {
                            (sample.at - started).as_secs_f64()
                        } else {
                            -(started - sample.at).as_secs_f64()
                        };
                        (sample.real_rad, sample.twin_rad, Some((sample.seq, at)))
                    }
                    // No new reading (or no arm): the twin as it is now, and no real values.
                    None => {
                        let Ok(twin) = arm.twin.with_sim(|sim| sim.arm_qpos()).await else {
                            break;
                        };
                        (None, twin, None)
                    }
                };
                let health = arm.bridge.health();
                let calibrated = latest_calibrated(health.as_ref());
                let torque = |joint: Joint| {
                    health
                        .as_ref()
                        .and_then(|h| h.servos.get(joint.index()))
                        .map_or(v1::TorqueState::Unspecified, |servo| {
                            convert::torque(Torque::confirmed(servo.torque_enabled))
                        })
                };
                let sample = v1::JointStatesSample {
                    seq,
                    elapsed_s: started.elapsed().as_secs_f64(),
                    mode: proto_mode(arm.bridge.mode()),
                    joints: Joint::ALL
                        .iter()
                        .map(|joint| {
                            let real_rad = real.map(|r| r[joint.index()]);
                            v1::JointSample {
                                twin_joint: arm.twin.arm().model_name(*joint),
                                label: arm.twin.arm().label(*joint),
                                real_rad,
                                real_deg: real_rad.and(calibrated[joint.index()]),
                                twin_rad: twin[joint.index()],
                                predicted_rad: shadow.map(|s| s[joint.index()].predicted_rad),
                                residual_rad: shadow.map(|s| s[joint.index()].residual_rad),
                                torque: torque(*joint).into(),
                            }
                        })
                        .collect(),
                    reading_seq: reading.map(|(n, _)| n),
                    reading_elapsed_s: reading.map(|(_, at)| at),
                };
                seq += 1;
                // A slow client drops samples instead of queueing them; a gone one ends the stream.
                match tx.try_send(Ok(sample)) {
                    Ok(()) | Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {}
                    Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => break,
                }
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))))
    }

    async fn emergency_stop(
        &self,
        request: Request<v1::EmergencyStopRequest>,
    ) -> Result<Response<v1::EmergencyStopResponse>, Status> {
        let request = request.into_inner();
        let reason = if request.reason.is_empty() {
            "EmergencyStop called".to_owned()
        } else {
            request.reason
        };
        let mut was_latched = false;
        for arm in self.state.arms_named(&request.arm)? {
            was_latched |= arm.bridge.emergency_stop(&reason).await;
        }
        Ok(Response::new(v1::EmergencyStopResponse {
            estop_latched: true,
            was_latched,
        }))
    }

    async fn reset_emergency_stop(
        &self,
        request: Request<v1::ResetEmergencyStopRequest>,
    ) -> Result<Response<v1::ResetEmergencyStopResponse>, Status> {
        let (metadata, _, request) = request.into_parts();
        let sides = self
            .state
            .arms_named(&request.arm)?
            .iter()
            .map(|arm| arm.side)
            .collect();
        let Done::EstopReset(was_latched) = self.state.run(&metadata, Motion::ResetEmergencyStop(sides)).await? else {
            return Err(mismatched());
        };
        Ok(Response::new(v1::ResetEmergencyStopResponse {
            estop_latched: false,
            was_latched,
        }))
    }

    async fn acquire_lease(
        &self,
        request: Request<v1::AcquireLeaseRequest>,
    ) -> Result<Response<v1::AcquireLeaseResponse>, Status> {
        let request = request.into_inner();
        let arms: Vec<usize> = self
            .state
            .arms_named(&request.arm)?
            .iter()
            .map(|arm| arm.side.map_or(0, Side::index))
            .collect();
        let granted = self
            .state
            .leases
            .acquire_arms(&request.holder, request.ttl_ms, request.takeover, &arms)
            .map_err(|e| from_lease(&e))?;
        Ok(Response::new(v1::AcquireLeaseResponse {
            previous_holder: granted.previous_holder.clone(),
            lease: Some(proto_lease(granted)),
        }))
    }

    async fn renew_lease(
        &self,
        request: Request<v1::RenewLeaseRequest>,
    ) -> Result<Response<v1::RenewLeaseResponse>, Status> {
        let granted = self
            .state
            .leases
            .renew(&request.into_inner().lease_id)
            .map_err(|e| from_lease(&e))?;
        Ok(Response::new(v1::RenewLeaseResponse {
            lease: Some(proto_lease(granted)),
        }))
    }

    async fn release_lease(
        &self,
        request: Request<v1::ReleaseLeaseRequest>,
    ) -> Result<Response<v1::ReleaseLeaseResponse>, Status> {
        self.state
            .leases
            .release(&request.into_inner().lease_id)
            .map_err(|e| from_lease(&e))?;
        Ok(Response::new(v1::ReleaseLeaseResponse {}))
    }
}

fn proto_lease(granted: Granted) -> v1::Lease {
    v1::Lease {
        lease_id: granted.lease_id,
        holder: granted.holder,
        ttl_ms: granted.ttl_ms,
    }
}

/// Each joint's latest servo reading in LeRobot's units (degrees, gripper percent), if any.
fn latest_calibrated(health: Option<&fakesim_arm::ArmHealth>) -> [Option<f64>; 6] {
    let mut out = [None; 6];
    for servo in health.map(|h| h.servos.as_slice()).unwrap_or_default() {
        out[servo.joint.index()] = servo.last_reading.and_then(|r| r.servo).map(|r| r.normalized);
    }
    out
}
