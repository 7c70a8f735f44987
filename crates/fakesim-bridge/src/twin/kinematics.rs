//! Forward kinematics of the TCP on a private copy of the twin, for the table layer.

use std::sync::{Mutex, PoisonError};

use fakesim_safety::TcpKinematics;
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{JointValues, Scene, Sim, TwinError};

/// Forward kinematics on a private copy of the twin (its own MuJoCo data): setting its joints
/// never disturbs the live twin. Calls are serialised by a mutex and take tens of
/// microseconds.
pub struct ScratchTwinKinematics {
    sim: Mutex<Sim>,
}

impl ScratchTwinKinematics {
    /// Loads a private copy of `scene` (the same scene the live twin runs).
    pub fn load(scene: &Scene) -> Result<Self, TwinError> {
        Self::for_arm(scene, 0)
    }

    /// The same for arm `index` of the scene's arms (a side of a pair).
    pub fn for_arm(scene: &Scene, index: usize) -> Result<Self, TwinError> {
        let mut sim = Sim::load(scene, DEFAULT_SUBSTEPS_PER_TICK)?;
        sim.focus(index)?;
        Ok(Self { sim: Mutex::new(sim) })
    }
}

impl TcpKinematics for ScratchTwinKinematics {
    fn tcp_position(&self, joints: &[f64; 6]) -> Result<[f64; 3], String> {
        let mut sim = self.sim.lock().unwrap_or_else(PoisonError::into_inner);
        sim.set_joint_positions(&JointValues::Ordered(joints.to_vec()), false)
            .map_err(|e| e.to_string())?;
        Ok(sim.tcp_pose().pos)
    }
}
