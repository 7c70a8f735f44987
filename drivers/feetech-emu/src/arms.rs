//! The arms a virtual bus can be: six STS3215 servos holding the calibration LeRobot would have
//! written for an SO-101 or an SO-100.

use feetech::calibration::Calibration;

use crate::so101::{NominalJoint, calibration_of};

/// Which arm's calibration the six servos hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum VirtualArm {
    /// The SO-101 (the default).
    #[default]
    So101,
    /// The SO-100.
    So100,
}

impl VirtualArm {
    /// The arm's joints, in servo id order.
    pub fn joints(self) -> &'static [NominalJoint; 6] {
        match self {
            VirtualArm::So101 => &crate::so101::JOINTS,
            VirtualArm::So100 => &feetech::calibration::so100::JOINTS,
        }
    }

    /// The calibration LeRobot would have written for the arm (its file, in memory).
    pub fn calibration(self) -> Calibration {
        calibration_of(self.joints())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::so101::VirtualSo101;

    #[test]
    fn each_arm_holds_lerobot_s_six_motors_and_the_so100_its_own_ranges() {
        assert_eq!(VirtualArm::default().calibration(), VirtualSo101::calibration());
        let so101 = VirtualArm::So101.calibration();
        let so100 = VirtualArm::So100.calibration();
        so100.validate().unwrap_or_else(|e| panic!("{e}"));
        for (name, motor) in &so100.motors {
            let other = so101.motors[name];
            assert_eq!(motor.id, other.id, "{name}");
            assert_ne!(motor.homing_offset, other.homing_offset, "{name}");
        }
        // The SO-100's elbow sweeps 190° (the SO-101's 194°), its shoulder lift 200°.
        let span = |name: &str| so100.motors[name].range_max - so100.motors[name].range_min;
        assert_eq!((span("shoulder_lift"), span("elbow_flex")), (2278, 2160));
    }
}
