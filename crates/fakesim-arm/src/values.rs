//! Joint values as callers give them, the ranges they are checked against, and the refusals
//! every write runs before touching a twin or an arm.

use thiserror::Error;

use crate::arms::ArmSpec;
use crate::joints::Joint;
use crate::quote::QuotedList;

/// A name or value a caller gave that does not fit: named with the unit and the range, so the
/// caller can act on it. A refused call changed nothing.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ValueError {
    /// Names that do not resolve; all of them are listed.
    #[error("unknown {kind} {}; known: {known}", QuotedList(.unknown), known = .known.join(", "))]
    UnknownName {
        /// What kind of thing was looked up (joint, body, site, camera, state).
        kind: &'static str,
        /// Every name that did not resolve.
        unknown: Vec<String>,
        /// The names that would have resolved.
        known: Vec<String>,
    },
    /// The same joint was given twice, under one name or two.
    #[error("joint {joint} is given more than once")]
    DuplicateJoint {
        /// The joint, as `name (label)`.
        joint: String,
    },
    /// An ordered vector of the wrong length.
    #[error("expected {expected} values in the order [{order}], got {got}", order = .order.join(", "))]
    WrongLength {
        /// How many values are needed.
        expected: usize,
        /// How many were given.
        got: usize,
        /// The order the values bind to.
        order: Vec<String>,
    },
    /// A NaN or infinite number.
    #[error("{key}={value} is not a finite number")]
    NonFinite {
        /// The joint or field the number was for.
        key: String,
        /// The number as given.
        value: f64,
    },
    /// A value outside a joint's or actuator's range.
    #[error("{joint}={value} outside [{lo}, {hi}] {unit}{hint}", hint = .hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
    OutOfRange {
        /// The joint label.
        joint: String,
        /// The value as given.
        value: f64,
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
        /// Unit of the bounds and the value.
        unit: &'static str,
        /// A likely unit mix-up, spelled out with the conversion.
        hint: Option<String>,
    },
}

/// Values for some or all arm joints, in the joint's own unit (radians for the SO-101 hinges).
#[derive(Debug, Clone, PartialEq)]
pub enum JointValues {
    /// `(name or label, value)` pairs; a subset of joints is fine.
    Named(Vec<(String, f64)>),
    /// One value per joint in action-key order.
    Ordered(Vec<f64>),
}

/// Bounds a value is checked against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// What to check values against: finite only, or finite and within per-joint bounds.
#[derive(Debug, Clone, Copy)]
pub enum Check<'a> {
    /// Any finite number (velocities).
    Finite,
    /// Within the given bounds, in radians, one per arm joint.
    Within(&'a [Bounds; 6]),
}

/// Resolves names on `arm`, checks every value, and returns `(joint index, value)` pairs;
/// nothing is written by the caller unless this succeeds for all of them.
pub fn resolve(arm: &ArmSpec, values: &JointValues, check: Check<'_>) -> Result<Vec<(usize, f64)>, ValueError> {
    let pairs = match values {
        JointValues::Ordered(v) => {
            if v.len() != Joint::ALL.len() {
                return Err(ValueError::WrongLength {
                    expected: Joint::ALL.len(),
                    got: v.len(),
                    order: arm.known_joint_names(),
                });
            }
            v.iter().copied().enumerate().collect::<Vec<_>>()
        }
        JointValues::Named(named) => resolve_names(arm, named)?,
    };
    for &(index, value) in &pairs {
        check_value(index, value, check)?;
    }
    Ok(pairs)
}

fn resolve_names(arm: &ArmSpec, named: &[(String, f64)]) -> Result<Vec<(usize, f64)>, ValueError> {
    let unknown: Vec<String> = named
        .iter()
        .filter(|(key, _)| arm.resolve_joint(key).is_none())
        .map(|(key, _)| key.clone())
        .collect();
    if !unknown.is_empty() {
        return Err(ValueError::UnknownName {
            kind: "joint",
            unknown,
            known: arm.known_joint_names(),
        });
    }
    let mut seen = [false; 6];
    let mut pairs = Vec::with_capacity(named.len());
    for (key, value) in named {
        let Some(joint) = arm.resolve_joint(key) else {
            continue;
        };
        if std::mem::replace(&mut seen[joint.index()], true) {
            return Err(ValueError::DuplicateJoint {
                joint: arm.joint_display(joint),
            });
        }
        pairs.push((joint.index(), *value));
    }
    Ok(pairs)
}

fn check_value(index: usize, value: f64, check: Check<'_>) -> Result<(), ValueError> {
    let label = Joint::ALL[index].label();
    if !value.is_finite() {
        return Err(ValueError::NonFinite {
            key: label.to_owned(),
            value,
        });
    }
    if let Check::Within(bounds) = check {
        let Bounds { lo, hi } = bounds[index];
        if value < lo || value > hi {
            return Err(out_of_range(label, value, lo, hi));
        }
    }
    Ok(())
}

/// The range refusal, naming the unit and, when reading the value as degrees lands inside the
/// range, the conversion.
pub fn out_of_range(label: &str, value: f64, lo: f64, hi: f64) -> ValueError {
    let as_radians = value.to_radians();
    let hint = (as_radians >= lo && as_radians <= hi)
        .then(|| format!("radians, not degrees: {value} deg = {as_radians:.3} rad"));
    ValueError::OutOfRange {
        joint: label.to_owned(),
        value,
        lo: round3(lo),
        hi: round3(hi),
        unit: "rad",
        hint,
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arms::{SO100, SO101};

    const PAN: Bounds = Bounds {
        lo: -1.91986,
        hi: 1.91986,
    };
    const BOUNDS: [Bounds; 6] = [PAN; 6];

    fn named(pairs: &[(&str, f64)]) -> JointValues {
        JointValues::Named(pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
    }

    #[test]
    fn degrees_given_as_radians_names_the_conversion() {
        let err = resolve(&SO101, &named(&[("shoulder_pan", -96.2)]), Check::Within(&BOUNDS)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shoulder_pan=-96.2 outside [-1.92, 1.92] rad (radians, not degrees: -96.2 deg = -1.679 rad)"
        );
    }

    #[test]
    fn far_out_of_range_has_no_degree_hint() {
        let err = resolve(&SO101, &named(&[("1", 500.0)]), Check::Within(&BOUNDS)).unwrap_err();
        assert_eq!(err.to_string(), "shoulder_pan=500 outside [-1.92, 1.92] rad");
    }

    #[test]
    fn every_unknown_name_is_listed() {
        let err = resolve(&SO101, &named(&[("1", 0.0), ("elbow", 0.1), ("7", 0.2)]), Check::Finite).unwrap_err();
        match err {
            ValueError::UnknownName { unknown, known, .. } => {
                assert_eq!(unknown, vec!["elbow".to_owned(), "7".to_owned()]);
                assert_eq!(known.len(), 6);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn wrong_length_names_count_and_order() {
        let err = resolve(&SO101, &JointValues::Ordered(vec![0.0; 5]), Check::Finite).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("expected 6 values"), "{text}");
        assert!(text.contains("got 5"), "{text}");
        assert!(text.contains("1 (shoulder_pan), 2 (shoulder_lift)"), "{text}");
    }

    #[test]
    fn non_finite_and_duplicates_are_refused() {
        assert!(matches!(
            resolve(&SO101, &named(&[("gripper", f64::NAN)]), Check::Finite),
            Err(ValueError::NonFinite { .. })
        ));
        assert!(matches!(
            resolve(
                &SO101,
                &JointValues::Ordered(vec![0.0, 0.0, f64::INFINITY, 0.0, 0.0, 0.0]),
                Check::Finite
            ),
            Err(ValueError::NonFinite { .. })
        ));
        assert!(matches!(
            resolve(&SO101, &named(&[("1", 0.0), ("shoulder_pan", 0.1)]), Check::Finite),
            Err(ValueError::DuplicateJoint { .. })
        ));
    }

    #[test]
    fn valid_values_resolve_to_indices() {
        let pairs = resolve(
            &SO101,
            &named(&[("so101/Gripper", 0.5), ("2", -0.1)]),
            Check::Within(&BOUNDS),
        )
        .unwrap();
        assert_eq!(pairs, vec![(5, 0.5), (1, -0.1)]);
    }

    #[test]
    fn the_so100_takes_cad_names_and_labels_and_refuses_with_the_label() {
        let pairs = resolve(
            &SO100,
            &named(&[("Jaw", 0.5), ("so100/shoulder_lift", -0.1)]),
            Check::Finite,
        )
        .unwrap();
        assert_eq!(pairs, vec![(5, 0.5), (1, -0.1)]);
        let err = resolve(&SO100, &named(&[("Rotation", -96.2)]), Check::Within(&BOUNDS)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shoulder_pan=-96.2 outside [-1.92, 1.92] rad (radians, not degrees: -96.2 deg = -1.679 rad)"
        );
        let err = resolve(&SO100, &named(&[("so101/1", 0.0)]), Check::Finite).unwrap_err();
        assert!(
            err.to_string()
                .contains("known: Rotation (shoulder_pan), Pitch (shoulder_lift)"),
            "{err}"
        );
        let err = resolve(
            &SO100,
            &named(&[("Rotation", 0.0), ("SHOULDER_PAN", 0.1)]),
            Check::Finite,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "joint Rotation (shoulder_pan) is given more than once");
    }
}
