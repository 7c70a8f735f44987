//! The range a joint is commanded in on a real arm: the calibrated range (where the servo can
//! go) intersected with the twin's (where the model can go).

use fakesim_arm::Bounds;

use super::{CalibratedMapping, Joint};

/// One joint's ranges in the twin's radians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EffectiveRange {
    /// The calibrated range, mapped to radians.
    pub calibrated: Bounds,
    /// The twin's range.
    pub twin: Bounds,
    /// Both intersected; `None` when they do not overlap.
    pub effective: Option<Bounds>,
}

impl EffectiveRange {
    /// Intersects a calibrated and a twin range.
    pub fn new(calibrated: Bounds, twin: Bounds) -> Self {
        let lo = calibrated.lo.max(twin.lo);
        let hi = calibrated.hi.min(twin.hi);
        Self {
            calibrated,
            twin,
            effective: (lo < hi).then_some(Bounds { lo, hi }),
        }
    }

    /// Whether the arm can reach positions the twin cannot (the mirror clamps them).
    pub fn wider_than_twin(&self) -> bool {
        self.calibrated.lo < self.twin.lo || self.calibrated.hi > self.twin.hi
    }

    /// Whether the twin can reach positions the arm cannot (commands never go there).
    pub fn narrower_than_twin(&self) -> bool {
        self.calibrated.lo > self.twin.lo || self.calibrated.hi < self.twin.hi
    }
}

impl CalibratedMapping {
    /// Every joint's calibrated, twin and effective range, in action-key order.
    pub fn effective_ranges(&self, twin: &[Bounds; 6]) -> [EffectiveRange; 6] {
        Joint::ALL.map(|joint| EffectiveRange::new(self.calibrated_limits(joint), twin[joint.index()]))
    }
}
