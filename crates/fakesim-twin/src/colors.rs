//! The colours the arm's parts are drawn in: the printed parts and the servo cases, each a
//! setting, so the twin can be painted like the user's arm.

use mujoco_rs::prelude::*;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// An opaque colour, written `#rrggbb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgb(pub [u8; 3]);

/// Text that is not a `#rrggbb` colour.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0:?} is not a colour: write it as # and six hexadecimal digits (#rrggbb), e.g. #ffd11f")]
pub struct BadColor(pub String);

impl FromStr for Rgb {
    type Err = BadColor;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadColor(text.chars().take(32).collect());
        let digits = text.strip_prefix('#').filter(|d| d.len() == 6).ok_or_else(bad)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let channel = |i: usize| u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).map_err(|_| bad());
        Ok(Rgb([channel(0)?, channel(1)?, channel(2)?]))
    }
}

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [r, g, b] = self.0;
        write!(f, "#{r:02x}{g:02x}{b:02x}")
    }
}

impl Rgb {
    /// The colour as MuJoCo's rgba, opaque.
    fn rgba(self) -> [f32; 4] {
        let [r, g, b] = self.0.map(|c| f32::from(c) / 255.0);
        [r, g, b, 1.0]
    }
}

/// The material of the printed parts in every arm's model.
pub const PRINTED_MATERIAL: &str = "printed";
/// The material of the servo cases in every arm's model.
pub const SERVO_MATERIAL: &str = "servo";

/// The colour of each group of the arm's parts, the same on both arms of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartColors {
    /// The printed parts (material `printed`).
    pub printed: Rgb,
    /// The STS3215 servo cases (material `servo`).
    pub servo: Rgb,
}

impl Default for PartColors {
    /// The published model's colours (MuJoCo Menagerie's SO-101): yellow parts, black servos.
    fn default() -> Self {
        PartColors {
            printed: Rgb([0xff, 0xd1, 0x1f]),
            servo: Rgb([0x1a, 0x1a, 0x1a]),
        }
    }
}

impl PartColors {
    /// Repaints `model`'s part materials (`printed` and `servo`, bare or under an arm's prefix
    /// such as `left/`) in these colours; other materials keep theirs.
    pub(crate) fn paint(&self, model: &mut MjModel) {
        let colour_of = |name: &str| {
            let bare = name.rsplit('/').next().unwrap_or(name);
            match bare {
                PRINTED_MATERIAL => Some(self.printed.rgba()),
                SERVO_MATERIAL => Some(self.servo.rgba()),
                _ => None,
            }
        };
        let colours: Vec<_> = (0..model.mat_rgba().len())
            .map(|id| model.id_to_name(MjtObjBase::mjOBJ_MATERIAL, id).and_then(colour_of))
            .collect();
        for (rgba, colour) in model.mat_rgba_mut().iter_mut().zip(colours) {
            if let Some(colour) = colour {
                *rgba = colour;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::scene::Scene;
    use fakesim_arm::ArmType;

    #[test]
    fn colours_parse_and_print_as_hex() {
        let colour: Rgb = "#FFd11f".parse().unwrap();
        assert_eq!(colour, Rgb([255, 209, 31]));
        assert_eq!(colour.to_string(), "#ffd11f");
        for bad in ["ffd11f", "#ffd11", "#ffd11f0", "#ffg11f", "", "#", "#ffé11f", "red"] {
            let err = bad.parse::<Rgb>().unwrap_err();
            assert!(err.to_string().contains("#rrggbb"), "{bad}: {err}");
        }
    }

    fn material(model: &MjModel, name: &str) -> [f32; 4] {
        model.mat_rgba()[model.name_to_id(MjtObjBase::mjOBJ_MATERIAL, name).unwrap()]
    }

    #[test]
    fn both_arms_of_a_pair_are_painted_and_nothing_else() {
        let colours = PartColors {
            printed: Rgb([255, 0, 0]),
            servo: Rgb([0, 0, 255]),
        };
        for arm in [ArmType::So101, ArmType::So100] {
            let mut model = Scene::Pair { arm, objects: true }.compile().unwrap();
            let before = model.mat_rgba().to_vec();
            colours.paint(&mut model);
            for side in ["left/", "right/"] {
                assert_eq!(
                    material(&model, &format!("{side}printed")),
                    [1.0, 0.0, 0.0, 1.0],
                    "{arm:?}"
                );
                assert_eq!(
                    material(&model, &format!("{side}servo")),
                    [0.0, 0.0, 1.0, 1.0],
                    "{arm:?}"
                );
            }
            let changed = before.iter().zip(model.mat_rgba()).filter(|(a, b)| a != b).count();
            assert_eq!(changed, 4, "{arm:?}: only the two materials of each arm change");
        }
    }
}
