//! Which MJCF scene the twin loads: the built-in SO-101 tabletop, or a user's file.

use crate::error::TwinError;
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_auxiliary::MjVfs;
use std::path::PathBuf;

/// The SO-101 model and scenes shipped in `assets/so101`, compiled into the binary.
const BUILTIN_FILES: [(&str, &[u8]); 3] = [
    ("so101.xml", include_bytes!("../../../assets/so101/so101.xml")),
    ("scene.xml", include_bytes!("../../../assets/so101/scene.xml")),
    ("tabletop.xml", include_bytes!("../../../assets/so101/tabletop.xml")),
];

/// A scene to load into the twin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scene {
    /// The built-in table, arm, and task objects (`assets/so101/tabletop.xml`).
    Tabletop,
    /// The built-in table and arm without objects (`assets/so101/scene.xml`).
    EmptyTable,
    /// An MJCF file on disk; it must name joints and sites as the built-in model does.
    File(PathBuf),
}

impl Scene {
    /// Compiles the scene into a MuJoCo model.
    pub fn compile(&self) -> Result<MjModel, TwinError> {
        let builtin = match self {
            Scene::Tabletop => "tabletop.xml",
            Scene::EmptyTable => "scene.xml",
            Scene::File(path) if path.as_os_str().as_encoded_bytes().contains(&0) => {
                return Err(TwinError::Scene(format!(
                    "{}: a path cannot hold a NUL byte",
                    path.display()
                )));
            }
            Scene::File(path) => {
                return MjModel::from_xml(path).map_err(|e| TwinError::Scene(format!("{}: {e}", path.display())));
            }
        };
        let mut vfs = MjVfs::new();
        for (name, bytes) in BUILTIN_FILES {
            vfs.add_from_buffer(name, bytes)
                .map_err(|e| TwinError::Scene(format!("{name}: {e}")))?;
        }
        MjModel::from_xml_vfs(builtin, &vfs).map_err(|e| TwinError::Scene(format!("{builtin}: {e}")))
    }
}
