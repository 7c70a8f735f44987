//! What a hand does to a servo's shaft: guides a passive arm, or holds the shaft harder than the
//! servo pushes; with torque on, the servo strains against it.

use crate::hindrance::{Hindrance, LOAD_PER_BLOCKED_STEP};
use crate::motion::{Drive, Motion};

/// What a hand does to a shaft at one moment (present positions in steps).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Grip {
    /// Moves a passive arm to `at`, going at `velocity` steps/s; a servo with torque on keeps
    /// to its goal and strains against the hand.
    Guide {
        /// Where the hand holds the shaft.
        at: f64,
        /// How fast the hand moves it.
        velocity: f64,
    },
    /// Holds the shaft at `at`, harder than the servo pushes.
    Hold {
        /// Where the hand holds the shaft.
        at: f64,
    },
}

impl Grip {
    /// Acts on a shaft after its motion update, given the homing offset and what the position
    /// loop does (`None`: torque off); returns the signed load (0.1 % units, uncapped) of the
    /// servo straining against the hand. With torque off the shaft goes where the hand takes it;
    /// with torque on a guiding hand only loads the servo, a holding one displaces it.
    pub(crate) fn apply(
        self,
        motion: &mut Motion,
        hindrance: &mut Hindrance,
        offset: f64,
        drive: Option<&Drive>,
    ) -> f64 {
        match (self, drive) {
            (Grip::Guide { at, velocity }, None) => {
                motion.follow(at + offset, velocity);
                hindrance.rest_at(motion.present(offset));
                0.0
            }
            (Grip::Guide { at, .. }, Some(_)) => (motion.present(offset) - at) * LOAD_PER_BLOCKED_STEP,
            (Grip::Hold { at }, drive) => {
                motion.place(at + offset);
                hindrance.rest_at(motion.present(offset));
                drive.map_or(0.0, |drive| {
                    (drive.goal - motion.present(offset)) * LOAD_PER_BLOCKED_STEP
                })
            }
        }
    }
}
