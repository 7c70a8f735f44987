//! Where LeRobot keeps calibration files.
//!
//! Root: `$HF_LEROBOT_CALIBRATION`, else `$HF_LEROBOT_HOME/calibration`, else
//! `$HF_HOME/lerobot/calibration` where `HF_HOME` defaults (as in `huggingface_hub`) to
//! `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`. Files are
//! `<root>/<robots|teleoperators>/<arm>/<robot_id>.json`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::CalibrationError;

/// The arm directories LeRobot has used for SO-100/SO-101 arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArmKind {
    /// `robots/so101_follower` (LeRobot before the SO merge).
    So101Follower,
    /// `robots/so_follower` (current LeRobot).
    SoFollower,
    /// `teleoperators/so101_leader` (LeRobot before the SO merge).
    So101Leader,
    /// `teleoperators/so_leader` (current LeRobot).
    SoLeader,
}

/// Follower (robot) or leader (teleoperator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArmRole {
    /// The driven arm.
    Follower,
    /// The hand-moved arm.
    Leader,
}

impl ArmKind {
    /// `robots` or `teleoperators`.
    pub fn category(self) -> &'static str {
        match self.role() {
            ArmRole::Follower => "robots",
            ArmRole::Leader => "teleoperators",
        }
    }

    /// Directory name, e.g. `so101_follower`.
    pub fn name(self) -> &'static str {
        match self {
            Self::So101Follower => "so101_follower",
            Self::SoFollower => "so_follower",
            Self::So101Leader => "so101_leader",
            Self::SoLeader => "so_leader",
        }
    }

    /// Follower or leader.
    pub fn role(self) -> ArmRole {
        match self {
            Self::So101Follower | Self::SoFollower => ArmRole::Follower,
            Self::So101Leader | Self::SoLeader => ArmRole::Leader,
        }
    }
}

impl ArmRole {
    /// Directories searched for this role, newest LeRobot layout first.
    pub fn kinds(self) -> [ArmKind; 2] {
        match self {
            Self::Follower => [ArmKind::SoFollower, ArmKind::So101Follower],
            Self::Leader => [ArmKind::SoLeader, ArmKind::So101Leader],
        }
    }
}

/// The calibration root from the process environment.
pub fn calibration_root() -> Result<PathBuf, CalibrationError> {
    calibration_root_with(|key| std::env::var_os(key))
}

/// The calibration root from an arbitrary environment lookup (for tests and embedding).
pub fn calibration_root_with(lookup: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, CalibrationError> {
    let var = |key: &str| lookup(key).filter(|v| !v.is_empty());
    let home = || var("HOME").map(PathBuf::from);
    let expand = |value: OsString| expand_tilde(PathBuf::from(value), home());
    if let Some(root) = var("HF_LEROBOT_CALIBRATION") {
        return Ok(expand(root));
    }
    if let Some(lerobot_home) = var("HF_LEROBOT_HOME") {
        return Ok(expand(lerobot_home).join("calibration"));
    }
    let hf_home = match (var("HF_HOME"), var("XDG_CACHE_HOME"), home()) {
        (Some(hf_home), _, _) => expand(hf_home),
        (None, Some(cache), _) => expand(cache).join("huggingface"),
        (None, None, Some(home)) => home.join(".cache").join("huggingface"),
        (None, None, None) => return Err(CalibrationError::NoHome),
    };
    Ok(hf_home.join("lerobot").join("calibration"))
}

/// Replaces a leading `~` with the home directory, as Python's `expanduser` does.
fn expand_tilde(path: PathBuf, home: Option<PathBuf>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path,
    }
}

/// `<root>/<category>/<arm>/<robot_id>.json`.
pub fn calibration_path(root: &Path, kind: ArmKind, robot_id: &str) -> PathBuf {
    root.join(kind.category())
        .join(kind.name())
        .join(format!("{robot_id}.json"))
}

/// The existing calibration file of `robot_id` for `role`, looking in the current LeRobot
/// directory first, then the older `so101_*` one.
pub fn find_calibration(root: &Path, role: ArmRole, robot_id: &str) -> Option<PathBuf> {
    role.kinds()
        .into_iter()
        .map(|kind| calibration_path(root, kind, robot_id))
        .find(|path| path.is_file())
}
