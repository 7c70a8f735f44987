//! Room around the arm for a synthetic motion program: whether a pose keeps every collision geom
//! of the arm a given distance from everything else in its scene (the table, the floor). A
//! recording whose arm strikes the table holds contacts the twin's replays cannot follow
//! smoothly: which step a sliding jaw leaves the table top on moves with a change of a
//! parameter by a thousandth, and the rest of the replay with it.

use fakesim_twin::dynamics::{JointAddress, joint_addresses};
use fakesim_twin::{ArmType, Scene, TwinError};
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// The arm's built-in scene without task objects, posed and measured without stepping.
pub struct Room {
    data: MjData<Arc<MjModel>>,
    at: [JointAddress; 6],
    /// Pairs of an arm geom and a geom of the rest of the scene that may collide.
    pairs: Vec<(usize, usize)>,
}

impl Room {
    /// `arm` on its built-in table.
    pub fn new(arm: ArmType) -> Result<Self, TwinError> {
        let model = Arc::new(Scene::builtin(arm, false).compile()?);
        let at = joint_addresses(&model, arm.spec())?;
        let root = |body: i32| model.body_rootid()[body as usize];
        let arm_root = root(model.jnt_bodyid()[model.dof_jntid()[at[0].dof] as usize]);
        let collides = |g: usize| model.geom_contype()[g] != 0 || model.geom_conaffinity()[g] != 0;
        let body = |g: usize| model.geom_bodyid()[g];
        let (arm, rest): (Vec<usize>, Vec<usize>) = (0..model.geom_bodyid().len())
            .filter(|&g| collides(g))
            .partition(|&g| root(body(g)) == arm_root);
        // The base is welded to the table: only the geoms its joints move can strike anything.
        let mine: Vec<usize> = arm
            .into_iter()
            .filter(|&g| model.body_weldid()[body(g) as usize] != 0)
            .collect();
        let pairs = mine.iter().flat_map(|&a| rest.iter().map(move |&b| (a, b))).collect();
        Ok(Room {
            data: MjData::new(model),
            at,
            pairs,
        })
    }

    /// Whether the arm posed at `q` (action-key order) keeps `clearance` (m) from the rest of
    /// the scene.
    pub fn clear(&mut self, q: &[f64; 6], clearance: f64) -> bool {
        for (j, a) in self.at.iter().enumerate() {
            self.data.qpos_mut()[a.qpos] = q[j];
        }
        self.data.kinematics();
        let pairs = &self.pairs;
        pairs
            .iter()
            .all(|&(a, b)| self.data.geom_distance(a, b, clearance, None) >= clearance)
    }
}
