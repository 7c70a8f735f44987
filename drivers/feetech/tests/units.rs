#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Steps/degrees and LeRobot normalisation.

use feetech::units::{CalibratedRange, NormMode, degrees_to_steps, steps_to_degrees};
use proptest::prelude::*;

const RANGE: CalibratedRange = CalibratedRange {
    min: 1000,
    max: 3000,
    inverted: false,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn steps_and_degrees() {
    assert!(close(steps_to_degrees(4096), 360.0));
    assert!(close(steps_to_degrees(-1024), -90.0));
    assert_eq!(degrees_to_steps(90.0), 1024);
    assert_eq!(degrees_to_steps(0.05), 1);
}

#[test]
fn degrees_mode_is_about_the_middle_with_lerobot_scale() {
    let n = RANGE.normalize(NormMode::Degrees, 2000).unwrap();
    assert!(close(n, 0.0));
    let n = RANGE.normalize(NormMode::Degrees, 3000).unwrap();
    assert!(close(n, 1000.0 * 360.0 / 4095.0));
    // No clamping in degrees mode.
    let n = RANGE.normalize(NormMode::Degrees, 4000).unwrap();
    assert!(close(n, 2000.0 * 360.0 / 4095.0));
    // Nor drive mode inversion.
    let inverted = CalibratedRange {
        inverted: true,
        ..RANGE
    };
    assert!(close(inverted.normalize(NormMode::Degrees, 3000).unwrap(), n / 2.0));
}

#[test]
fn range_modes_clamp_and_invert() {
    assert!(close(RANGE.normalize(NormMode::RangeM100To100, 1000).unwrap(), -100.0));
    assert!(close(RANGE.normalize(NormMode::RangeM100To100, 2500).unwrap(), 50.0));
    assert!(close(RANGE.normalize(NormMode::RangeM100To100, 9999).unwrap(), 100.0));
    assert!(close(RANGE.normalize(NormMode::Range0To100, 1500).unwrap(), 25.0));
    let inverted = CalibratedRange {
        inverted: true,
        ..RANGE
    };
    assert!(close(
        inverted.normalize(NormMode::RangeM100To100, 2500).unwrap(),
        -50.0
    ));
    assert!(close(inverted.normalize(NormMode::Range0To100, 1500).unwrap(), 75.0));
    assert_eq!(inverted.unnormalize(NormMode::Range0To100, 75.0).unwrap(), 1500);
    assert_eq!(RANGE.unnormalize(NormMode::RangeM100To100, 250.0).unwrap(), 3000);
}

#[test]
fn empty_range_is_an_error() {
    let empty = CalibratedRange {
        min: 5,
        max: 5,
        inverted: false,
    };
    assert!(empty.normalize(NormMode::Range0To100, 5).is_err());
    assert!(empty.unnormalize(NormMode::RangeM100To100, 0.0).is_err());
    assert!(empty.normalize(NormMode::Degrees, 5).is_ok());
}

proptest! {
    #[test]
    fn normalisation_round_trips(min in 0_i32..4000, width in 1_i32..4095, inverted in any::<bool>(), pick in any::<prop::sample::Index>()) {
        let range = CalibratedRange { min, max: min + width, inverted };
        let raw = min + i32::try_from(pick.index(usize::try_from(width).unwrap() + 1)).unwrap();
        for mode in [NormMode::Degrees, NormMode::RangeM100To100, NormMode::Range0To100] {
            let value = range.normalize(mode, raw).unwrap();
            prop_assert_eq!(range.unnormalize(mode, value).unwrap(), raw, "{:?}", mode);
        }
    }
}
