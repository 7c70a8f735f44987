//! Model names: bodies, geoms and DOFs by id, for lookups and the messages that list them.

use super::*;
use crate::error::TwinError;
use crate::values::ValueError;
use nalgebra::{Matrix3, Rotation3};

impl Sim {
    pub(super) fn body_id(&self, name: &str) -> Result<usize, TwinError> {
        self.model
            .name_to_id(MjtObjBase::mjOBJ_BODY, model_name("body", name)?)
            .ok_or_else(|| {
                TwinError::Value(ValueError::UnknownName {
                    kind: "body",
                    unknown: vec![name.to_owned()],
                    known: self.names(MjtObjBase::mjOBJ_BODY, self.model.ffi().nbody as usize),
                })
            })
    }

    pub(super) fn site_pose(&self, id: usize) -> Pose {
        let xpos = self.data.site_xpos()[id];
        let m = self.data.site_xmat()[id];
        let rot = Rotation3::from_matrix_unchecked(Matrix3::from_row_slice(&m));
        Pose::from_parts(&xpos, rot)
    }

    pub(super) fn name_of(&self, kind: MjtObjBase, id: usize) -> String {
        match self.model.id_to_name(kind, id) {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => format!("#{id}"),
        }
    }

    pub(super) fn geom_name(&self, id: i32) -> String {
        usize::try_from(id).map_or_else(|_| "none".to_owned(), |id| self.name_of(MjtObjBase::mjOBJ_GEOM, id))
    }

    pub(super) fn names(&self, kind: MjtObjBase, count: usize) -> Vec<String> {
        (0..count).map(|id| self.name_of(kind, id)).collect()
    }

    pub(super) fn dof_names(&self) -> Vec<String> {
        let dof_jnt = self.model.dof_jntid();
        let jnt_dof = self.model.jnt_dofadr();
        dof_jnt
            .iter()
            .enumerate()
            .map(|(dof, &jnt)| {
                let Ok(j) = usize::try_from(jnt) else {
                    return format!("dof{dof}");
                };
                let name = self.name_of(MjtObjBase::mjOBJ_JOINT, j);
                let first = jnt_dof[j] as usize;
                let width = jnt_dof.get(j + 1).map_or(dof_jnt.len(), |&n| n as usize) - first;
                if width > 1 {
                    format!("{name}[{}]", dof - first)
                } else {
                    name
                }
            })
            .collect()
    }
}
