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
    /// Every position of the scene: the arms' joints, the objects' free joints, mocap bodies.
    pub positions: RenderSnapshot,
    /// Each arm's joints and setpoints, in the order of `Sim::arms` (a pair's left first).
    pub arms: Vec<ArmJoints>,
}

/// One arm's joints and servo setpoints (rad), action-key order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArmJoints {
    /// The joint positions.
    pub joints: [f64; 6],
    /// The servo setpoints.
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::sim::{DEFAULT_SUBSTEPS_PER_TICK, Sim, TCP_SITE};
    use crate::{JointValues, Scene};

    #[test]
    fn every_physics_advance_hands_on_a_snapshot_that_poses_a_copy_of_the_model_alike() {
        let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        sim.set_tick_observer(Some(Box::new(move |snapshot| {
            let _ = tx.send(snapshot);
        })));
        let mut targets = sim.arm_ctrl();
        targets[1] -= 0.3;
        sim.set_arm_ctrl(&targets);
        sim.step_tick();
        sim.step_tick();
        sim.step(3).unwrap();
        sim.send_action(&JointValues::Ordered(targets.to_vec()), DEFAULT_SUBSTEPS_PER_TICK)
            .unwrap();
        let (time, ctrl, tcp_pos) = (sim.time(), sim.arm_ctrl(), sim.tcp_pose().pos);
        sim.set_joint_positions(&JointValues::Ordered(sim.arm_qpos().to_vec()), true)
            .unwrap();
        let snapshots: Vec<TickSnapshot> = rx.try_iter().collect();
        // 0.05 s, 0.10 s, 0.115 s (3 steps of 5 ms are not a tick), 0.165 s; a teleport is no advance.
        let ticks: Vec<u64> = snapshots.iter().map(|s| s.tick).collect();
        assert_eq!(ticks, [1, 2, 2, 3]);
        let last = snapshots.last().unwrap();
        assert_eq!(last.time, time);
        let joints = sim.arm_qpos();
        assert_eq!(last.arms, [ArmJoints { joints, ctrl }]);

        let mut copy = MjData::new(sim.model().clone());
        last.positions.pose(&mut copy).unwrap();
        let tcp = sim.model().name_to_id(MjtObjBase::mjOBJ_SITE, TCP_SITE).unwrap();
        assert_eq!(copy.site_xpos()[tcp], tcp_pos);
        let start = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
        assert_ne!(tcp_pos, start.tcp_pose().pos, "the arm moved");

        sim.set_tick_observer(None);
        sim.step_tick();
        assert!(rx.try_recv().is_err(), "nothing after the observer is removed");
    }
}
