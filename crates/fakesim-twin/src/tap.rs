//! The twin's state after every physics advance, handed to an observer (the live view) that
//! does its work on a thread of its own: the physics thread only copies the positions.

use crate::sim::{RENDER_STATE, RenderSnapshot};
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// The twin as one physics advance (a tick, a `SendAction` hold, a `Step`) left it.
#[derive(Debug, Clone)]
pub struct TickSnapshot {
    /// Simulated time (s).
    pub time: f64,
    /// Control ticks of simulated time since the model was loaded (`time` over the control
    /// period, rounded), the same count whoever drove the advance.
    pub tick: u64,
    /// Every position of the scene: the arm's joints, the objects' free joints, mocap bodies.
    pub positions: RenderSnapshot,
    /// The arm's servo setpoints (rad), action-key order.
    pub ctrl: [f64; 6],
}

/// Called on the physics thread after every physics advance; it must only hand the snapshot
/// on (a bounded queue that drops when full), never wait.
pub type TickObserver = Box<dyn FnMut(TickSnapshot) + Send>;

impl RenderSnapshot {
    /// Writes these positions into `data`, which must belong to the twin's model (or a copy
    /// of it), and updates the poses of its bodies, geoms and sites from them.
    pub fn pose(&self, data: &mut MjData<Arc<MjModel>>) -> Result<(), String> {
        data.set_state(&self.0, RENDER_STATE)
            .map_err(|e| format!("the snapshot does not fit the model: {e}"))?;
        data.kinematics();
        Ok(())
    }
}
