//! Which MJCF scene the twin loads: an arm's built-in tabletop, or a user's file.

use crate::board::{Board, add_boards};
use crate::cameras::{CameraProfile, add_profiles, fit_offscreen};
use crate::error::TwinError;
use crate::models::model;
use fakesim_arm::quote::Quoted;
use fakesim_arm::{ArmSpec, ArmType, Side};
use mujoco_rs::error::MjEditError;
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_auxiliary::MjVfs;
use mujoco_rs::wrappers::mj_editing::MjSpec;
use std::path::{Path, PathBuf};

/// The room every arm's scenes include (`assets/tabletop`), compiled into the binary.
const ROOM_FILES: [(&str, &[u8]); 2] = [
    ("tabletop/room.xml", include_bytes!("../assets/tabletop/room.xml")),
    ("tabletop/objects.xml", include_bytes!("../assets/tabletop/objects.xml")),
];

/// A scene to load into the twin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scene {
    /// The built-in table, SO-101 and task objects (`assets/so101/tabletop.xml`).
    Tabletop,
    /// The built-in table and SO-101 without objects (`assets/so101/scene.xml`).
    EmptyTable,
    /// Another arm's built-in table (`assets/<arm>/tabletop.xml` with the task objects,
    /// `scene.xml` without); [`Scene::builtin`] makes it, and gives the SO-101's as
    /// [`Scene::Tabletop`] and [`Scene::EmptyTable`].
    Builtin {
        /// The arm on the table.
        arm: ArmType,
        /// Whether the task objects are on it.
        objects: bool,
    },
    /// Two of an arm on the built-in table, `left/` and `right/` (`assets/<arm>/pair_tabletop.xml`
    /// with the task objects, `pair.xml` without).
    Pair {
        /// The arm both sides are.
        arm: ArmType,
        /// Whether the task objects are on the table.
        objects: bool,
    },
    /// An MJCF file on disk; it must name joints and sites as the built-in SO-101 does.
    File(PathBuf),
}

impl Scene {
    /// The built-in table with `arm` on it, and the task objects when `objects`.
    pub fn builtin(arm: ArmType, objects: bool) -> Scene {
        match (arm, objects) {
            (ArmType::So101, true) => Scene::Tabletop,
            (ArmType::So101, false) => Scene::EmptyTable,
            (arm, objects) => Scene::Builtin { arm, objects },
        }
    }

    /// The arms in the scene, left first in a pair (a user's file holds one SO-101).
    pub fn arms(&self) -> Vec<&'static ArmSpec> {
        match self.source() {
            Source::Builtin { arm, pair: false, .. } => vec![arm.spec()],
            Source::Builtin { arm, pair: true, .. } => Side::BOTH.map(|side| arm.on(side)).to_vec(),
            Source::File(_) => vec![ArmType::default().spec()],
        }
    }

    fn source(&self) -> Source<'_> {
        match self {
            Scene::Tabletop => Source::Builtin {
                arm: ArmType::So101,
                objects: true,
                pair: false,
            },
            Scene::EmptyTable => Source::Builtin {
                arm: ArmType::So101,
                objects: false,
                pair: false,
            },
            Scene::Builtin { arm, objects } => Source::Builtin {
                arm: *arm,
                objects: *objects,
                pair: false,
            },
            Scene::Pair { arm, objects } => Source::Builtin {
                arm: *arm,
                objects: *objects,
                pair: true,
            },
            Scene::File(path) => Source::File(path),
        }
    }

    /// Compiles the scene into a MuJoCo model.
    pub fn compile(&self) -> Result<MjModel, TwinError> {
        match self.source() {
            Source::Builtin { arm, objects, pair } => {
                let (main, vfs) = builtin_files(arm, objects, pair)?;
                MjModel::from_xml_vfs(main, &vfs).map_err(|e| TwinError::Scene(format!("{main}: {e}")))
            }
            Source::File(path) => {
                MjModel::from_xml(checked_path(path)?).map_err(|e| TwinError::Scene(format!("{}: {e}", path.display())))
            }
        }
    }

    /// Compiles the scene with each camera profile added as a camera of its model (its
    /// offscreen buffer grown to the largest profile's frame) and each board as a body's geom.
    pub fn compile_with(&self, cameras: &[CameraProfile], boards: &[Board]) -> Result<MjModel, TwinError> {
        if cameras.is_empty() && boards.is_empty() {
            return self.compile();
        }
        let mut model = match self.source() {
            Source::Builtin { arm, objects, pair } => {
                let (main, vfs) = builtin_files(arm, objects, pair)?;
                let failed = |e: MjEditError| TwinError::Scene(format!("{main}: {e}"));
                let mut spec = MjSpec::from_xml_vfs(main, &vfs).map_err(failed)?;
                add_profiles(&mut spec, cameras)?;
                add_boards(&mut spec, boards)?;
                spec.compile_with_vfs(&vfs).map_err(failed)?
            }
            Source::File(path) => {
                let failed = |e: MjEditError| TwinError::Scene(format!("{}: {e}", path.display()));
                let mut spec = MjSpec::from_xml(checked_path(path)?).map_err(failed)?;
                add_profiles(&mut spec, cameras)?;
                add_boards(&mut spec, boards)?;
                spec.compile().map_err(failed)?
            }
        };
        fit_offscreen(&mut model);
        Ok(model)
    }
}

/// The body a camera or board is mounted on: the world without `mount`, else the scene's body
/// of that name; the error says the name is not one and which names the arms use.
pub(crate) fn mount_body<'s>(
    spec: &'s mut MjSpec,
    mount: Option<&str>,
) -> Result<&'s mut mujoco_rs::wrappers::mj_editing::MjsBody, String> {
    match mount {
        None => Ok(spec.world_body_mut()),
        Some(mount) => spec.body_mut(mount).ok_or_else(|| {
            format!(
                "`mount` {} is not a body of the scene (the SO-101's gripper is `gripper`, the \
                 SO-100's `Fixed_Jaw`; a pair's are prefixed `left/` or `right/`)",
                Quoted(mount)
            )
        }),
    }
}

/// A scene file's path, if MuJoCo can be given it (no NUL byte).
fn checked_path(path: &Path) -> Result<&Path, TwinError> {
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(TwinError::Scene(format!(
            "{}: a path cannot hold a NUL byte",
            path.display()
        )));
    }
    Ok(path)
}

/// Where a scene's MJCF comes from.
enum Source<'a> {
    /// An arm's built-in files, alone or a pair, with or without the task objects.
    Builtin { arm: ArmType, objects: bool, pair: bool },
    /// A file on disk.
    File(&'a Path),
}

/// The main file of `arm`'s built-in scene (two of it when `pair`), and every file it reads, from
/// those compiled into the binary.
fn builtin_files(arm: ArmType, objects: bool, pair: bool) -> Result<(&'static str, MjVfs), TwinError> {
    let arm = model(arm);
    let mut vfs = MjVfs::new();
    for (name, bytes) in ROOM_FILES.iter().chain(arm.files) {
        vfs.add_from_buffer(name, bytes)
            .map_err(|e| TwinError::Scene(format!("{name}: {e}")))?;
    }
    let main = match (pair, objects) {
        (false, true) => arm.tabletop,
        (false, false) => arm.scene,
        (true, true) => arm.pair_tabletop,
        (true, false) => arm.pair,
    };
    Ok((main, vfs))
}
