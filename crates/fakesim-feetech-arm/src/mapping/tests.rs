#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use feetech::calibration::MotorCalibration;
use feetech::units::{CalibratedRange, NormMode};
use feetech_emu::VirtualSo101;
use uom::si::angle::{degree, radian};
use uom::si::f64::Angle;

/// The twin's joint ranges (assets/so101/so101.xml); the arm joints are symmetric. The
/// integration tests' `TWIN_RANGES` is the copy checked against the compiled model.
const TWIN: [Bounds; 6] = [
    symmetric(1.91986),
    symmetric(1.745_329_3),
    symmetric(1.69),
    symmetric(1.658_063),
    symmetric(2.743_847_3),
    SO101_GRIPPER_RANGE,
];

const fn symmetric(half_width: f64) -> Bounds {
    Bounds {
        lo: -half_width,
        hi: half_width,
    }
}

fn with_motor(change: impl FnOnce(&mut MotorCalibration), name: &str) -> Calibration {
    let mut cal = VirtualSo101::calibration();
    change(cal.motors.get_mut(name).unwrap());
    cal
}

fn bound() -> CalibratedMapping {
    JointMapping::so101().bind(&VirtualSo101::calibration(), &TWIN).unwrap()
}

fn rad(x: f64) -> Angle {
    Angle::new::<radian>(x)
}

#[test]
fn default_mapping_fits_the_virtual_so101_calibration() {
    let mapping = JointMapping::so101();
    mapping.validate(&VirtualSo101::calibration(), &TWIN).unwrap();
    let ids: Vec<u8> = mapping.joints.iter().map(|r| r.servo_id).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    assert_eq!(bound().servo_ids(), [1, 2, 3, 4, 5, 6]);
    assert_eq!(bound().joint_of_servo(3), Some(Joint::ElbowFlex));
    assert_eq!(bound().joint_of_servo(9), None);
}

#[test]
fn middle_of_the_calibrated_range_is_the_twin_zero_and_the_ends_its_limits() {
    let m = bound();
    for joint in &Joint::ALL[..4] {
        assert!(m.servo_to_twin(*joint, 2047).get::<radian>().abs() < 1e-12, "{joint}");
    }
    // The wrist roll's full turn 0..4095 has its middle at 2047.5: half a step off.
    let roll = m.servo_to_twin(Joint::WristRoll, 2047).get::<degree>();
    assert!((roll + 0.5 * 360.0 / 4095.0).abs() < 1e-9, "{roll}");
    // Shoulder pan 796..3298 is ±1251 steps = ±109.98 degrees.
    let lo = m.servo_to_twin(Joint::ShoulderPan, 796).get::<degree>();
    assert!((lo + 1251.0 * 360.0 / 4095.0).abs() < 1e-9, "{lo}");
    let limits = m.calibrated_limits(Joint::ShoulderPan);
    assert!(
        (limits.lo + 1.9195).abs() < 1e-3 && (limits.hi - 1.9195).abs() < 1e-3,
        "{limits:?}"
    );
    // The gripper's calibrated ends are the twin's gripper range ends.
    let g = m.calibrated_limits(Joint::Gripper);
    assert!((g.lo - SO101_GRIPPER_RANGE.lo).abs() < 1e-12);
    assert!((g.hi - SO101_GRIPPER_RANGE.hi).abs() < 1e-12);
}

#[test]
fn normalised_values_match_the_driver_lerobot_normalisation() {
    let m = bound();
    let cal = VirtualSo101::calibration();
    for joint in Joint::ALL {
        let range: CalibratedRange = cal.motors[joint.label()].range();
        let mode = if joint == Joint::Gripper {
            NormMode::Range0To100
        } else {
            NormMode::Degrees
        };
        for steps in (0..4096).step_by(61) {
            let expected = range.normalize(mode, steps).unwrap();
            assert!((m.normalized(joint, steps) - expected).abs() < 1e-9, "{joint} {steps}");
        }
    }
}

#[test]
fn steps_round_trip_through_radians_inside_the_calibrated_range() {
    let m = bound();
    let cal = VirtualSo101::calibration();
    for joint in Joint::ALL {
        let motor = cal.motors[joint.label()];
        for steps in (motor.range_min..=motor.range_max).step_by(7) {
            let angle = m.servo_to_twin(joint, steps);
            assert_eq!(m.twin_to_servo(joint, angle), Some(steps), "{joint} {steps}");
        }
    }
}

#[test]
fn sign_and_offset_apply_after_the_conversion_and_invert_cleanly() {
    let mut table = JointMapping::so101();
    table.joints[2].sign = -1;
    table.joints[2].offset_rad = 0.05;
    let m = table.bind(&VirtualSo101::calibration(), &TWIN).unwrap();
    let steps = 2047 + 300;
    let expected = -(300.0 * 360.0 / 4095.0_f64).to_radians() + 0.05;
    let got = m.servo_to_twin(Joint::ElbowFlex, steps).get::<radian>();
    assert!((got - expected).abs() < 1e-12, "{got} vs {expected}");
    assert_eq!(m.twin_to_servo(Joint::ElbowFlex, rad(expected)), Some(steps));
    // A negative sign swaps which end of the calibrated range is the lower limit.
    let limits = m.calibrated_limits(Joint::ElbowFlex);
    assert!(limits.lo < limits.hi);
    assert!((limits.lo - (m.servo_to_twin(Joint::ElbowFlex, 3148).get::<radian>())).abs() < 1e-12);
}

#[test]
fn gripper_percent_maps_linearly_and_the_drive_mode_inverts_it() {
    let m = bound();
    let span = SO101_GRIPPER_RANGE.hi - SO101_GRIPPER_RANGE.lo;
    // 1933..3185: a quarter of the way is 25 %.
    let quarter = 1933 + (3185 - 1933) / 4;
    let expected = SO101_GRIPPER_RANGE.lo + 0.25 * span;
    assert!((m.servo_to_twin(Joint::Gripper, quarter).get::<radian>() - expected).abs() < 1e-12);
    // Beyond the calibrated range the gripper reads as its end, like LeRobot.
    assert_eq!(
        m.servo_to_twin(Joint::Gripper, 4000).get::<radian>(),
        SO101_GRIPPER_RANGE.hi
    );
    let inverted = with_motor(|g| g.drive_mode = 1, "gripper");
    let m = JointMapping::so101().bind(&inverted, &TWIN).unwrap();
    let got = m.servo_to_twin(Joint::Gripper, quarter).get::<radian>();
    assert!((got - (SO101_GRIPPER_RANGE.lo + 0.75 * span)).abs() < 1e-12, "{got}");
    assert_eq!(m.twin_to_servo(Joint::Gripper, rad(got)), Some(quarter));
}

#[test]
fn goals_are_clamped_into_the_calibrated_range_and_non_finite_ones_refused() {
    let m = bound();
    assert_eq!(m.twin_to_servo(Joint::ShoulderPan, rad(3.0)), Some(3298));
    assert_eq!(m.twin_to_servo(Joint::ShoulderPan, rad(-3.0)), Some(796));
    assert_eq!(m.twin_to_servo(Joint::Gripper, rad(-1.0)), Some(1933));
    assert_eq!(m.twin_to_servo(Joint::ShoulderPan, rad(f64::NAN)), None);
    assert_eq!(m.twin_to_servo(Joint::Gripper, rad(f64::INFINITY)), None);
}

#[test]
fn a_missing_motor_is_named() {
    let mut cal = VirtualSo101::calibration();
    cal.motors.remove("wrist_flex");
    let err = JointMapping::so101().validate(&cal, &TWIN).unwrap_err();
    assert_eq!(
        err,
        MappingError::MissingMotor {
            joint: "wrist_flex".into(),
            servo_id: 4
        }
    );
    assert!(err.to_string().contains("wrist_flex"), "{err}");
}

#[test]
fn differing_ids_are_named() {
    let cal = with_motor(|m| m.id = 7, "elbow_flex");
    let err = JointMapping::so101().validate(&cal, &TWIN).unwrap_err();
    assert_eq!(
        err.to_string(),
        "joint elbow_flex: the mapping drives servo 3, the calibration says servo 7"
    );
}

#[test]
fn wider_and_narrower_calibrated_ranges_are_accepted_and_intersected() {
    // ±1750 steps is about ±154 degrees, far beyond the pan's ±110; the old LeRobot wrist
    // roll sweep (1103..3182) is narrower than the twin's.
    let mut cal = with_motor(
        |m| {
            m.range_min = 297;
            m.range_max = 3797;
        },
        "shoulder_pan",
    );
    let roll = cal.motors.get_mut("wrist_roll").unwrap();
    roll.range_min = 1103;
    roll.range_max = 3182;
    let mapping = JointMapping::so101().bind(&cal, &TWIN).unwrap();
    let ranges = mapping.effective_ranges(&TWIN);
    let pan = ranges[0];
    assert!(pan.wider_than_twin() && !pan.narrower_than_twin());
    assert_eq!(pan.effective, Some(TWIN[0]));
    assert!((pan.calibrated.hi - 2.6851).abs() < 1e-3, "{pan:?}");
    let roll = ranges[4];
    assert!(roll.narrower_than_twin() && !roll.wider_than_twin());
    assert_eq!(roll.effective, Some(roll.calibrated));
    assert!((roll.calibrated.hi - 1.5955).abs() < 1e-3, "{roll:?}");
}

#[test]
fn a_range_that_does_not_overlap_the_twin_is_refused_naming_the_joint_and_the_fix() {
    let mut table = JointMapping::so101();
    table.joints[3].offset_rad = 4.0;
    let err = table.validate(&VirtualSo101::calibration(), &TWIN).unwrap_err();
    assert!(matches!(err, MappingError::NoOverlap { ref joint, .. } if joint == "wrist_flex"));
    let text = err.to_string();
    assert!(text.starts_with("joint wrist_flex: calibrated range maps to"), "{text}");
    assert!(
        text.contains("does not overlap the twin's") && text.contains("fakesim-hil align"),
        "{text}"
    );
}

#[test]
fn a_table_file_round_trips_and_unknown_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapping.json");
    let mut table = JointMapping::so101();
    table.joints[2].sign = -1;
    table.joints[4].offset_rad = 0.125;
    std::fs::write(&path, table.to_json()).unwrap();
    assert_eq!(JointMapping::load(&path).unwrap(), table);
    std::fs::write(&path, table.to_json().replace("\"sign\"", "\"sing\"")).unwrap();
    let err = JointMapping::load(&path).unwrap_err().to_string();
    assert!(err.contains("mapping.json") && err.contains("sing"), "{err}");
    assert!(JointMapping::load(&dir.path().join("none.json")).is_err());
}

#[test]
fn malformed_tables_are_refused_naming_the_row() {
    let cal = VirtualSo101::calibration();
    let mut t = JointMapping::so101();
    t.joints[1].sign = 2;
    assert_eq!(
        t.validate(&cal, &TWIN).unwrap_err().to_string(),
        "joint shoulder_lift: sign must be +1 or -1, got 2"
    );
    let mut t = JointMapping::so101();
    t.joints[4].servo_id = 2;
    assert_eq!(
        t.validate(&cal, &TWIN).unwrap_err().to_string(),
        "servo 2 is mapped to both shoulder_lift and wrist_roll"
    );
    let mut t = JointMapping::so101();
    t.joints[0].twin_joint = "2".into();
    assert!(matches!(
        t.validate(&cal, &TWIN),
        Err(MappingError::WrongTwinJoint { row: 0, .. })
    ));
    let mut t = JointMapping::so101();
    t.joints[5].conversion = Conversion::Percent {
        at_0_rad: 0.5,
        at_100_rad: 0.5,
    };
    assert!(matches!(t.validate(&cal, &TWIN), Err(MappingError::InvalidRow { ref joint, .. }) if joint == "gripper"));
}

#[test]
fn an_empty_calibrated_range_is_refused() {
    let cal = with_motor(
        |m| {
            m.range_min = 2000;
            m.range_max = 2000;
        },
        "wrist_flex",
    );
    let err = JointMapping::so101().validate(&cal, &TWIN).unwrap_err();
    assert_eq!(
        err.to_string(),
        "joint wrist_flex: invalid calibration: calibrated range 2000..2000 is empty"
    );
}

#[test]
fn the_table_reads_back_from_json() {
    let table = JointMapping::so101();
    let json = serde_json::to_string(&table).unwrap();
    assert!(
        json.contains(r#""conversion":{"kind":"percent","at_0_rad":-0.174533,"at_100_rad":1.7453292}"#),
        "{json}"
    );
    let back: JointMapping = serde_json::from_str(&json).unwrap();
    assert_eq!(back, table);
}

#[test]
fn lerobot_units_match_the_driver_normalisation_and_round_trip() {
    let m = bound();
    let cal = VirtualSo101::calibration();
    for (unit, body_mode) in [
        (LeRobotUnit::Degrees, NormMode::Degrees),
        (LeRobotUnit::Range, NormMode::RangeM100To100),
    ] {
        for joint in Joint::ALL {
            let range: CalibratedRange = cal.motors[joint.label()].range();
            let mode = if joint == Joint::Gripper {
                NormMode::Range0To100
            } else {
                body_mode
            };
            for steps in (range.min..=range.max).step_by(37) {
                let rad = m.servo_to_rad(joint, steps);
                let value = m.rad_to_lerobot(joint, rad, unit);
                let expected = range.normalize(mode, steps).unwrap();
                assert!(
                    (value - expected).abs() < 1e-9,
                    "{joint} {steps}: {value} vs {expected}"
                );
                let back = m.lerobot_to_rad(joint, value, unit);
                assert!((back - rad).abs() < 1e-9, "{joint} {steps}: {back} vs {rad}");
            }
        }
    }
}

/// The SO-100 model's joint ranges (assets/so100/so100.xml; the twin's `so100` tests check
/// them against the compiled model). The elbow's upper end is 3.14 as written, not π.
#[allow(clippy::approx_constant)]
const SO100_TWIN: [Bounds; 6] = [
    symmetric(1.92),
    Bounds { lo: -3.32, hi: 0.174 },
    Bounds { lo: -0.174, hi: 3.14 },
    symmetric(1.66),
    symmetric(2.79),
    SO100_GRIPPER_RANGE,
];

#[test]
fn the_so100_default_puts_the_emulated_so100_s_calibrated_ends_on_the_model_s_range_ends() {
    let table = JointMapping::so100();
    assert_eq!(table.arm(), Some(ArmType::So100));
    assert_eq!(JointMapping::so101().arm(), Some(ArmType::So101));
    assert_eq!(JointMapping::for_arm(ArmType::So100), table);
    let names: Vec<&str> = table.joints.iter().map(|r| r.twin_joint.as_str()).collect();
    assert_eq!(
        names,
        ["Rotation", "Pitch", "Elbow", "Wrist_Pitch", "Wrist_Roll", "Jaw"]
    );
    let mapping = table
        .bind(&feetech_emu::VirtualArm::So100.calibration(), &SO100_TWIN)
        .unwrap();
    // The wrist roll's calibrated range is a full turn, wider than the model's; every other
    // joint's calibrated range is the model's, to a step (0.0015 rad).
    for joint in Joint::ALL.into_iter().filter(|j| *j != Joint::WristRoll) {
        let (calibrated, twin) = (mapping.calibrated_limits(joint), SO100_TWIN[joint.index()]);
        assert!(
            (calibrated.lo - twin.lo).abs() < 2e-3,
            "{joint}: {calibrated:?} vs {twin:?}"
        );
        assert!(
            (calibrated.hi - twin.hi).abs() < 2e-3,
            "{joint}: {calibrated:?} vs {twin:?}"
        );
    }
    // LeRobot's 0° is the middle of the model's range on the shoulder lift and elbow.
    for joint in [Joint::ShoulderLift, Joint::ElbowFlex] {
        let twin = SO100_TWIN[joint.index()];
        let zero = mapping.lerobot_to_rad(joint, 0.0, LeRobotUnit::Degrees);
        assert!((zero - (twin.lo + twin.hi) / 2.0).abs() < 1e-12, "{joint}");
    }
}

#[test]
fn a_table_naming_two_arms_joints_is_refused() {
    let mut t = JointMapping::so100();
    t.joints[2].twin_joint = "3".into();
    assert!(matches!(
        t.validate(&feetech_emu::VirtualArm::So100.calibration(), &SO100_TWIN),
        Err(MappingError::WrongTwinJoint {
            row: 2,
            expected: "Elbow",
            ..
        })
    ));
}
