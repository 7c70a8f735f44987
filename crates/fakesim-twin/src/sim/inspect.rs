//! Looking into the model: forward kinematics, Jacobians by name, contacts.

use super::*;
use crate::error::TwinError;
use crate::values::ValueError;
use nalgebra::UnitQuaternion;

impl Sim {
    /// Refreshes every frame from the joint positions and returns all bodies and sites, or the
    /// one named.
    pub fn forward_kinematics(&mut self, name: Option<&str>) -> Result<Vec<FramePose>, TwinError> {
        self.data.forward_kinematics();
        let bodies = self.model.ffi().nbody as usize;
        let sites = self.model.ffi().nsite as usize;
        let mut frames = Vec::new();
        for id in 0..bodies {
            let xpos = self.data.xpos()[id];
            let [w, x, y, z] = self.data.xquat()[id];
            let q = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(w, x, y, z));
            frames.push(FramePose {
                name: self.name_of(MjtObjBase::mjOBJ_BODY, id),
                kind: FrameKind::Body,
                pose: Pose::from_parts(&xpos, q.to_rotation_matrix()),
            });
        }
        for id in 0..sites {
            frames.push(FramePose {
                name: self.name_of(MjtObjBase::mjOBJ_SITE, id),
                kind: FrameKind::Site,
                pose: self.site_pose(id),
            });
        }
        match name {
            None => Ok(frames),
            Some(wanted) => {
                let wanted = self.arm().strip_robot(wanted);
                let hits: Vec<_> = frames.iter().filter(|f| f.name == wanted).cloned().collect();
                if hits.is_empty() {
                    return Err(TwinError::Value(ValueError::UnknownName {
                        kind: "body or site",
                        unknown: vec![wanted.to_owned()],
                        known: frames.into_iter().map(|f| f.name).collect(),
                    }));
                }
                Ok(hits)
            }
        }
    }

    /// Jacobian of a body, site or geom frame; columns named by DOF.
    pub fn jacobian(&self, name: &str) -> Result<Jacobian, TwinError> {
        let name = model_name("body, site or geom", self.arm().strip_robot(name))?;
        let (position, rotation) = if let Some(id) = self.model.name_to_id(MjtObjBase::mjOBJ_SITE, name) {
            self.data.jac_site(true, true, id)
        } else if let Some(id) = self.model.name_to_id(MjtObjBase::mjOBJ_BODY, name) {
            self.data.jac_body(true, true, id)
        } else if let Some(id) = self.model.name_to_id(MjtObjBase::mjOBJ_GEOM, name) {
            self.data.jac_geom(true, true, id)
        } else {
            let mut known = self.names(MjtObjBase::mjOBJ_BODY, self.model.ffi().nbody as usize);
            known.extend(self.names(MjtObjBase::mjOBJ_SITE, self.model.ffi().nsite as usize));
            return Err(TwinError::Value(ValueError::UnknownName {
                kind: "body, site or geom",
                unknown: vec![name.to_owned()],
                known,
            }));
        };
        Ok(Jacobian {
            dof_names: self.dof_names(),
            position,
            rotation,
        })
    }

    /// Geom pairs inside the detection range, active ones marked.
    pub fn contacts(&self) -> Vec<ContactInfo> {
        self.data
            .contact()
            .iter()
            .map(|c| ContactInfo {
                geom1: self.geom_name(c.geom[0]),
                geom2: self.geom_name(c.geom[1]),
                dist: c.dist,
                active: c.exclude == 0 && c.efc_address >= 0,
            })
            .collect()
    }
}
