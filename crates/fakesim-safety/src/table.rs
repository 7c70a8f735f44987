//! Refuses joint targets that put the tool centre point below the table surface plus a
//! margin.

use super::{InvalidSetting, SafetyError, require_finite};

/// Height of the table surface in the built-in scenes (m, world frame).
pub const TABLE_SURFACE_Z: f64 = 0.80;

/// Default margin above the surface (m): low enough to grasp the scene's 3 cm cubes, whose
/// centres sit 1.5 cm above the table.
pub const DEFAULT_TABLE_MARGIN: f64 = 0.01;

/// Forward kinematics of the TCP for given joint positions (rad, action-key order), without
/// touching the live twin (the twin's scratch copy is in `fakesim-bridge`).
pub trait TcpKinematics: Send + Sync {
    /// World position of the TCP (m), or why it cannot be computed.
    fn tcp_position(&self, joints: &[f64; 6]) -> Result<[f64; 3], String>;
}

impl<F> TcpKinematics for F
where
    F: Fn(&[f64; 6]) -> Result<[f64; 3], String> + Send + Sync,
{
    fn tcp_position(&self, joints: &[f64; 6]) -> Result<[f64; 3], String> {
        self(joints)
    }
}

/// The table layer: a target whose TCP would be lower than `surface_z + margin` is refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TableGuard {
    surface_z: f64,
    margin: f64,
}

impl Default for TableGuard {
    fn default() -> Self {
        Self {
            surface_z: TABLE_SURFACE_Z,
            margin: DEFAULT_TABLE_MARGIN,
        }
    }
}

impl TableGuard {
    /// A guard for a surface height and a margin (m; the margin finite and not negative).
    pub fn new(surface_z: f64, margin: f64) -> Result<Self, InvalidSetting> {
        if !surface_z.is_finite() {
            return Err(InvalidSetting {
                setting: "table_surface_z",
                value: surface_z,
            });
        }
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(InvalidSetting {
                setting: "table_margin",
                value: margin,
            });
        }
        Ok(Self { surface_z, margin })
    }

    /// The lowest TCP height accepted (m).
    pub fn min_z(&self) -> f64 {
        self.surface_z + self.margin
    }

    /// Accepts the targets or refuses them with the TCP height they would give; a target
    /// whose TCP cannot be computed is refused too.
    pub fn check(&self, goals: &[f64; 6], kinematics: &dyn TcpKinematics) -> Result<(), SafetyError> {
        require_finite(goals)?;
        let tcp = kinematics.tcp_position(goals).map_err(SafetyError::Kinematics)?;
        if tcp[2] >= self.min_z() {
            return Ok(());
        }
        Err(SafetyError::BelowTable {
            tcp,
            surface_z: self.surface_z,
            margin: self.margin,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::SafetyEvent;

    /// A fake arm whose TCP height is 1.0 m minus the shoulder lift angle / 10.
    fn fake(joints: &[f64; 6]) -> Result<[f64; 3], String> {
        Ok([0.2, 0.0, 1.0 - joints[1] / 10.0])
    }

    #[test]
    fn above_the_margin_passes_and_below_is_refused_with_the_height() {
        let guard = TableGuard::default();
        assert!((guard.min_z() - 0.81).abs() < 1e-12);
        guard.check(&[0.0, 1.8, 0.0, 0.0, 0.0, 0.0], &fake).unwrap();
        let err = guard.check(&[0.0, 1.95, 0.0, 0.0, 0.0, 0.0], &fake).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the target puts the TCP at z=0.8050 m, below the table surface 0.800 m plus margin 0.010 m"
        );
        let SafetyEvent::TableRefused { tcp, min_z } = err.event() else {
            panic!("wrong event {:?}", err.event());
        };
        assert!((tcp[2] - 0.805).abs() < 1e-12 && (min_z - 0.81).abs() < 1e-12);
    }

    #[test]
    fn kinematics_failures_and_bad_settings_are_refused() {
        let broken = |_: &[f64; 6]| -> Result<[f64; 3], String> { Err("joint 2 out of range".into()) };
        let err = TableGuard::default().check(&[0.0; 6], &broken).unwrap_err();
        assert_eq!(err, SafetyError::Kinematics("joint 2 out of range".into()));
        assert!(TableGuard::new(0.8, -0.01).is_err());
        assert!(TableGuard::new(f64::NAN, 0.01).is_err());
        assert!(TableGuard::default().check(&[f64::NAN; 6], &fake).is_err());
    }
}
