//! Shared fixtures of the pipeline tests: a hand-advanced clock, an arm that records every
//! call, the layers with a simple table and a preview that refuses by rule.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use fakesim_arm::Bounds;
use fakesim_arm::Joint;
use fakesim_arm::{
    Arm, ArmError, ArmHealth, ArmState, BoxFuture, JointState, LinkHealth, LinkState, ServoHealth, ServoReading,
};
use fakesim_safety::{
    CommandPreview, DeltaCap, EstopLatch, GuardError, Layers, PipelineTiming, RangeGuard, SafetyError, SafetyPipeline,
    TableGuard,
};
use feetech::protocol::status::ServoError;
use std::cell::Cell;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const PERIOD: Duration = Duration::from_millis(20);
pub const WATCHDOG: Duration = Duration::from_millis(200);
pub const RAMP_SPEED: f64 = 0.5;
pub const MAX_DELTA: f64 = 0.2;

thread_local! {
    static ELAPSED: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// A clock each test thread advances by hand.
pub fn clock() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now) + ELAPSED.with(Cell::get)
}

pub fn advance(by: Duration) {
    ELAPSED.with(|e| e.set(e.get() + by));
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Call {
    Read,
    Command([f64; 6]),
    Torque(bool),
    JointTorque(Joint, bool),
}

/// A link that was lost and is not back.
pub fn lost_link() -> LinkHealth {
    LinkHealth {
        state: LinkState::Lost,
        losses: 1,
        ..LinkHealth::connected()
    }
}

/// An arm that records every call, reads a settable pose and reports settable flags.
pub struct ScriptedArm {
    pub calls: Mutex<Vec<Call>>,
    pub pose: Mutex<[f64; 6]>,
    pub flags: Mutex<ServoError>,
    pub bus_lost: Mutex<bool>,
}

impl ScriptedArm {
    pub fn at(pose: [f64; 6]) -> Arc<Self> {
        Arc::new(ScriptedArm {
            calls: Mutex::new(Vec::new()),
            pose: Mutex::new(pose),
            flags: Mutex::new(ServoError::empty()),
            bus_lost: Mutex::new(false),
        })
    }

    pub fn calls(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    pub fn commands(&self) -> Vec<[f64; 6]> {
        self.calls()
            .into_iter()
            .filter_map(|c| match c {
                Call::Command(goals) => Some(goals),
                _ => None,
            })
            .collect()
    }

    pub fn raise(&self, flags: ServoError) {
        *self.flags.lock().unwrap() = flags;
    }
}

pub fn reading(id: u8, error_flags: ServoError) -> ServoReading {
    ServoReading {
        id,
        steps: 2048,
        degrees: 0.0,
        normalized: 0.0,
        temperature_c: 30.0,
        voltage_v: 12.0,
        load_percent: 0.0,
        current_ma: 0.0,
        error_flags,
        moving: false,
    }
}

impl Arm for ScriptedArm {
    fn port(&self) -> Option<&str> {
        Some("scripted")
    }

    fn read_state(&self) -> BoxFuture<'_, Result<ArmState, ArmError>> {
        self.calls.lock().unwrap().push(Call::Read);
        let pose = *self.pose.lock().unwrap();
        let flags = *self.flags.lock().unwrap();
        Box::pin(async move {
            Ok(ArmState {
                joints: std::array::from_fn(|i| JointState {
                    position_rad: pose[i],
                    servo: Some(reading(i as u8 + 1, if i == 2 { flags } else { ServoError::empty() })),
                }),
            })
        })
    }

    fn command(&self, goals_rad: [f64; 6]) -> BoxFuture<'_, Result<(), ArmError>> {
        self.calls.lock().unwrap().push(Call::Command(goals_rad));
        Box::pin(async { Ok(()) })
    }

    fn set_torque(&self, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
        self.calls.lock().unwrap().push(Call::Torque(enabled));
        Box::pin(async { Ok(()) })
    }

    fn set_joint_torque(&self, joint: Joint, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
        self.calls.lock().unwrap().push(Call::JointTorque(joint, enabled));
        Box::pin(async { Ok(()) })
    }

    fn health(&self) -> ArmHealth {
        let flags = *self.flags.lock().unwrap();
        let lost = *self.bus_lost.lock().unwrap();
        ArmHealth {
            link: if lost { lost_link() } else { LinkHealth::connected() },
            torque: fakesim_arm::Torque::Off,
            servos: Joint::ALL
                .into_iter()
                .map(|joint| {
                    let mut servo = ServoHealth::new(joint, joint.index() as u8 + 1);
                    if joint.index() == 2 {
                        servo.error_flags = flags;
                    }
                    servo
                })
                .collect(),
            last_error: lost.then(|| "port closed".to_owned()),
        }
    }
}

/// Every joint within ±1.5 rad; the TCP is 0.1 m below the table when joint 2 passes 1 rad.
pub fn layers() -> Layers {
    Layers {
        estop: EstopLatch::new(),
        range: RangeGuard::model_only([Bounds { lo: -1.5, hi: 1.5 }; 6]),
        table: TableGuard::default(),
        kinematics: Arc::new(|joints: &[f64; 6]| {
            let z = if joints[1] > 1.0 { 0.7 } else { 1.0 };
            Ok([0.2, 0.0, z])
        }),
        delta: DeltaCap::uniform(MAX_DELTA).unwrap(),
        preview: None,
    }
}

/// A preview that refuses targets turning the pan past 0.3 rad and remembers what it saw.
#[derive(Default)]
pub struct PanPreview {
    pub seen: Mutex<Vec<[f64; 6]>>,
}

impl CommandPreview for PanPreview {
    fn check(&self, targets: [f64; 6], _measured: [f64; 6]) -> BoxFuture<'_, Result<(), SafetyError>> {
        self.seen.lock().unwrap().push(targets);
        Box::pin(async move {
            if targets[0] > 0.3 {
                return Err(SafetyError::PreviewRefused {
                    violations: "base_contact: upper_arm / base".into(),
                });
            }
            Ok(())
        })
    }
}

pub fn pipeline(arm: Option<Arc<ScriptedArm>>) -> SafetyPipeline {
    let timing = PipelineTiming {
        ramp_speed_rad_s: RAMP_SPEED,
        period: PERIOD,
        watchdog_timeout: WATCHDOG,
    };
    SafetyPipeline::new(arm.map(|a| a as Arc<dyn Arm>), layers(), timing, clock)
}

pub fn refusal<T: std::fmt::Debug>(outcome: Result<T, GuardError>) -> SafetyError {
    match outcome {
        Err(GuardError::Refused(refusal)) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}
