//! What watches the twin as it advances: the tick observer and its snapshots, and the watch
//! of joint-limit hits and the tool's lowest height.

use super::Sim;
use crate::tap::{ArmJoints, TickObserver, TickSnapshot};
use crate::watch::Watch;

impl Sim {
    /// Hands a [`TickSnapshot`] to `observer` after every physics advance from now on
    /// (`None`: to nobody). The observer runs on the physics thread and must not wait.
    pub fn set_tick_observer(&mut self, observer: Option<TickObserver>) {
        self.observer = observer;
    }

    pub(super) fn offer_snapshot(&mut self) {
        if self.observer.is_none() {
            return;
        }
        let snapshot = self.tick_snapshot();
        if let Some(observer) = self.observer.as_mut() {
            observer(snapshot);
        }
    }

    /// The twin now, as a tick observer receives it: every arm's joints, whichever arm is in
    /// focus.
    pub fn tick_snapshot(&self) -> TickSnapshot {
        let time = self.time();
        let period = self.model.opt().timestep * f64::from(self.substeps_per_tick);
        let (qpos, ctrl) = (self.data.qpos(), self.data.ctrl());
        TickSnapshot {
            time,
            // Saturating float-to-int conversion; time is never negative.
            tick: (time / period).round() as u64,
            positions: self.render_snapshot(),
            arms: (self.arms.iter())
                .map(|arm| ArmJoints {
                    joints: std::array::from_fn(|i| qpos[arm.joints[i].qpos_adr]),
                    ctrl: std::array::from_fn(|i| ctrl[arm.joints[i].actuator]),
                })
                .collect(),
        }
    }

    /// Joint-limit hits and the lowest tool height since [`Sim::reset_watch`].
    pub fn watch(&self) -> Watch {
        self.watch
    }

    /// Starts the watch afresh from the current state.
    pub fn reset_watch(&mut self) {
        self.watch = Watch::default();
        self.sample_watch();
    }

    /// Samples every arm into the watch.
    pub(super) fn sample_watch(&mut self) {
        // Infallible per arm: a reading.
        let _ = self.every_arm(|sim| {
            let xpos = sim.data.site_xpos();
            let slot = sim.slot();
            let tool_z = [slot.tcp_site, slot.jaw_sites.0, slot.jaw_sites.1]
                .iter()
                .map(|&site| xpos[site][2])
                .fold(f64::INFINITY, f64::min);
            let (qpos, ranges) = (sim.arm_qpos(), sim.joint_ranges());
            sim.watch.sample(&qpos, &ranges, tool_z);
            Ok(())
        });
    }
}
