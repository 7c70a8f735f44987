//! Named states, snapshots, and bodies found and placed by name.

use super::*;
use crate::error::TwinError;
use crate::values::ValueError;
use nalgebra::UnitQuaternion;

impl Sim {
    /// Keeps the full physics state, and the fraction of a step the tick clock owes, under a
    /// name (replacing one of the same name).
    pub fn save_state(&mut self, name: &str) {
        let saved = Saved {
            state: self.data.state(SAVED_STATE),
            carry: self.clock.carry(),
        };
        self.saved.insert(name.to_owned(), saved);
    }

    /// Restores a state saved under `name`.
    pub fn load_state(&mut self, name: &str) -> Result<(), TwinError> {
        let Some(Saved { state, carry }) = self.saved.get(name) else {
            return Err(TwinError::Value(ValueError::UnknownName {
                kind: "saved state",
                unknown: vec![name.to_owned()],
                known: self.saved.keys().cloned().collect(),
            }));
        };
        self.data
            .set_state(state, SAVED_STATE)
            .map_err(|_| TwinError::StaleState { name: name.to_owned() })?;
        self.clock.restore_carry(*carry);
        self.restart_all_delays();
        self.data.forward();
        Ok(())
    }

    /// Runs `f` and keeps what it did only if it succeeds: on an error the physics state, the
    /// tick clock's carry and the focus are put back as they were.
    pub fn all_or_nothing<R>(&mut self, f: impl FnOnce(&mut Sim) -> Result<R, TwinError>) -> Result<R, TwinError> {
        let (state, carry, focus) = (self.data.state(SAVED_STATE), self.clock.carry(), self.focus);
        let result = f(self);
        if result.is_err() {
            // The state was taken from this model a moment ago: it always fits.
            let _ = self.data.set_state(&state, SAVED_STATE);
            self.clock.restore_carry(carry);
            self.restart_all_delays();
            self.focus = focus;
            self.data.forward();
        }
        result
    }

    /// Full physics state, for determinism checks and journals.
    pub fn physics_state(&self) -> Box<[f64]> {
        self.data.state(SAVED_STATE)
    }

    /// The positions the renderer needs.
    pub fn render_snapshot(&self) -> RenderSnapshot {
        RenderSnapshot(self.data.state(RENDER_STATE))
    }

    /// Camera id by name.
    pub fn camera_id(&self, name: &str) -> Result<usize, TwinError> {
        self.model
            .name_to_id(MjtObjBase::mjOBJ_CAMERA, model_name("camera", name)?)
            .ok_or_else(|| {
                TwinError::Value(ValueError::UnknownName {
                    kind: "camera",
                    unknown: vec![name.to_owned()],
                    known: self.names(MjtObjBase::mjOBJ_CAMERA, self.model.ffi().ncam as usize),
                })
            })
    }

    /// World position of a body (m).
    pub fn body_position(&self, name: &str) -> Result<[f64; 3], TwinError> {
        let id = self.body_id(name)?;
        Ok(self.data.xpos()[id])
    }

    /// Places a free-floating body (or a mocap body) at a world pose and zeroes its velocity.
    pub fn place_body(&mut self, name: &str, pos: [f64; 3], yaw: f64) -> Result<(), TwinError> {
        let id = self.body_id(name)?;
        let q = UnitQuaternion::from_euler_angles(0.0, 0.0, yaw);
        let quat = [q.w, q.i, q.j, q.k];
        let mocap = self.model.body_mocapid()[id];
        if let Ok(m) = usize::try_from(mocap) {
            self.data.mocap_pos_mut()[m] = pos;
            self.data.mocap_quat_mut()[m] = quat;
        } else {
            let joint = self.model.body_jntadr()[id];
            let joint = usize::try_from(joint).map_err(|_| TwinError::Scene(format!("body {name:?} cannot move")))?;
            let qadr = self.model.jnt_qposadr()[joint] as usize;
            let dadr = self.model.jnt_dofadr()[joint] as usize;
            let qpos = self.data.qpos_mut();
            qpos[qadr..qadr + 3].copy_from_slice(&pos);
            qpos[qadr + 3..qadr + 7].copy_from_slice(&quat);
            self.data.qvel_mut()[dadr..dadr + 6].fill(0.0);
        }
        self.data.forward();
        Ok(())
    }
}
