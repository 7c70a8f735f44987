//! Shared fixtures: the virtual SO-101's calibration and an arm on a simulated virtual bus.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping, SO101_GRIPPER_RANGE};
use fakesim_feetech_arm::{FeetechArm, FeetechArmConfig};
use fakesim_twin::values::Bounds;
use fakesim_twin::{Scene, TwinConfig, TwinHandle};
use feetech::bus::{Bus, BusConfig};
use feetech::calibration::Calibration;
use feetech_emu::{ManualClock, RunningBus, ServoBus, VirtualSo101, spawn_duplex};
use std::time::Duration;

/// The twin's joint ranges as compiled from assets/so101/so101.xml (checked against the
/// loaded model in tests/twin_arm.rs).
pub const TWIN_RANGES: [Bounds; 6] = [
    Bounds {
        lo: -1.91986,
        hi: 1.91986,
    },
    Bounds {
        lo: -1.745_329_3,
        hi: 1.745_329_3,
    },
    Bounds { lo: -1.69, hi: 1.69 },
    Bounds {
        lo: -1.658_063,
        hi: 1.658_063,
    },
    Bounds {
        lo: -2.743_847_3,
        hi: 2.743_847_3,
    },
    SO101_GRIPPER_RANGE,
];

/// The calibration LeRobot would have written for the virtual SO-101.
pub fn virtual_calibration() -> Calibration {
    VirtualSo101::calibration()
}

/// The default mapping bound to the virtual calibration.
pub fn mapping() -> CalibratedMapping {
    JointMapping::so101()
        .bind(&virtual_calibration(), &TWIN_RANGES)
        .unwrap()
}

/// Bus settings for tests: 20 ms per attempt (elapsed instantly under paused time).
pub fn bus_config() -> BusConfig {
    BusConfig {
        timeout: Duration::from_millis(20),
        ..BusConfig::default()
    }
}

/// An arm on the virtual SO-101 served over an in-memory pipe, moving in simulated time.
pub struct VirtualArm {
    pub arm: FeetechArm,
    pub servos: ServoBus,
    pub clock: ManualClock,
    pub running: RunningBus,
}

/// Starts the virtual bus and an arm on it.
pub fn virtual_arm(config: FeetechArmConfig) -> VirtualArm {
    virtual_arm_with(config, mapping())
}

/// Same, with a given mapping.
pub fn virtual_arm_with(config: FeetechArmConfig, mapping: CalibratedMapping) -> VirtualArm {
    let (servos, clock) = ServoBus::simulated(&VirtualSo101::config());
    let (host, running) = spawn_duplex(servos.clone());
    let arm = FeetechArm::spawn(Bus::new(host, bus_config()), mapping, config);
    VirtualArm {
        arm,
        servos,
        clock,
        running,
    }
}

/// A twin of one arm on an empty table.
pub fn twin() -> TwinHandle {
    TwinHandle::spawn(TwinConfig {
        scene: Scene::EmptyTable,
        ..TwinConfig::default()
    })
    .unwrap()
}
