//! Each joint replayed alone, the others moving as they were measured: a quick stand-in for the
//! arm's rollouts while the fit looks for the basin of its minimum.
//!
//! A joint's servo, damping, rotor inertia and friction act on it alone; the rest of the arm
//! reaches it only through the inertia it sees, gravity, and the pull of the other joints'
//! motion. Those are read once from the twin's model (MuJoCo's own mass matrix and bias forces)
//! at every reading, with the arm at its measured positions, velocities and accelerations, and
//! then each joint is a one-degree-of-freedom system stepped like MuJoCo's `implicitfast`
//! integrator at the replays' physics step: the servo's force `kp (goal − q) − kv q̇` within its
//! limit, the joint's and the servo's velocity terms implicit, the dry friction as the impulse
//! that stops the joint or slows it. A candidate costs the six joints a few hundred thousand
//! multiply-adds where a rollout of the arm costs MuJoCo 800 steps per 2 s stretch, and each
//! joint's error depends on its own parameters only, so six searches share nothing.
//!
//! It is an approximation (the arm's other joints do not answer back, MuJoCo's friction and
//! joint limits are soft constraints, the measured accelerations are differences of rounded
//! readings), so the fit scores its result on the arm itself before going on ([`crate::fit`]).

use crate::pool::Pool;
use crate::recording::Recording;
use crate::replay::{compared, slope, start_velocity, window};
use crate::split::Segment;
use fakesim_twin::TwinError;
use fakesim_twin::dynamics::{ArmModel, Dynamics, JointDynamics};
use mujoco_rs::prelude::*;

/// Half-width of the window the measured velocities and accelerations are taken over (s): wide
/// enough that the servo's rounding of a reading (a 4096th of a turn) leaves little noise in
/// the accelerations.
const SMOOTHING_S: f64 = 0.03;
/// Move of a joint's position for the slope of its gravity and bias forces (rad).
const SLOPE_STEP_RAD: f64 = 1e-3;

/// What the rest of the arm does to each joint at one reading.
#[derive(Debug, Clone, Copy, Default)]
struct Load {
    /// The measured position (rad).
    q: [f64; 6],
    /// The joint's own inertia from the arm's links (kg·m²), without its rotor's.
    inertia: [f64; 6],
    /// Gravity, velocity forces and the other joints' accelerations' pull (N·m, against the joint).
    bias: [f64; 6],
    /// The bias's slope in the joint's own position (N·m/rad).
    slope: [f64; 6],
}

/// One recording's loads, reading by reading.
struct Track {
    loads: Vec<Load>,
}

impl Track {
    /// The load at time `t`, between the readings of `rec` (linear).
    fn at(&self, rec: &Recording, k: usize, t: f64, j: usize) -> (f64, f64, f64, f64) {
        let a = &self.loads[k];
        let Some(b) = self.loads.get(k + 1) else {
            return (a.q[j], a.inertia[j], a.bias[j], a.slope[j]);
        };
        let (ta, tb) = (rec.readings[k].0, rec.readings[k + 1].0);
        let w = ((t - ta) / (tb - ta).max(1e-9)).clamp(0.0, 1.0);
        let mix = |x: f64, y: f64| x + w * (y - x);
        (
            mix(a.q[j], b.q[j]),
            mix(a.inertia[j], b.inertia[j]),
            mix(a.bias[j], b.bias[j]),
            mix(a.slope[j], b.slope[j]),
        )
    }
}

/// The parts of a joint's servo the fit does not move.
#[derive(Debug, Clone, Copy)]
struct Fixed {
    /// The servo's velocity gain (N·m·s/rad).
    kv: f64,
    /// The goals the servo accepts (rad).
    ctrl: [f64; 2],
    /// The joint's range (rad).
    range: [f64; 2],
}

/// The recordings' training segments, each joint replayed alone.
pub(crate) struct Solo<'a> {
    recordings: &'a [Recording],
    tracks: Vec<Track>,
    segments: Vec<(Segment, usize)>,
    fixed: [Fixed; 6],
    step: f64,
}

impl<'a> Solo<'a> {
    /// The loads of `pool`'s recordings read from `arm` (its dynamics are not used but for the
    /// fixed parts of the servo), for `segments` compared as `pool` compares them.
    pub fn new(arm: &mut ArmModel, pool: &Pool<'a>, segments: &[Segment]) -> Result<Self, TwinError> {
        let (recordings, strides) = (pool.recordings(), pool.strides());
        let at = arm.at;
        for a in &at {
            arm.model.dof_armature_mut()[a.dof] = 0.0;
        }
        let model = &arm.model;
        let fixed = at.map(|a| {
            let joint = model.dof_jntid()[a.dof] as usize;
            Fixed {
                kv: -model.actuator_biasprm()[a.actuator][2],
                ctrl: model.actuator_ctrlrange()[a.actuator],
                range: model.jnt_range()[joint],
            }
        });
        let nv = model.ffi().nv as usize;
        let mut data = MjData::new(model);
        let mut mass = vec![0.0; nv * nv];
        let tracks = recordings
            .iter()
            .enumerate()
            .map(|(r, rec)| {
                // Only the readings a segment replays are read (the validation part's are not).
                let replayed = |k: usize| {
                    segments
                        .iter()
                        .any(|s| s.recording == r && (s.first..=s.last).contains(&k))
                };
                let loads = (0..rec.readings.len())
                    .map(|k| {
                        if !replayed(k) {
                            return Load::default();
                        }
                        let (q, v, acc) = measured(rec, k);
                        let mut bias_at = |q: &[f64; 6]| -> [f64; 6] {
                            for (j, a) in at.iter().enumerate() {
                                data.qpos_mut()[a.qpos] = q[j];
                                data.qvel_mut()[a.dof] = v[j];
                            }
                            data.forward();
                            let bias = data.qfrc_bias();
                            at.map(|a| bias[a.dof])
                        };
                        let mut slope = [0.0; 6];
                        for j in 0..6 {
                            let (mut lo, mut hi) = (q, q);
                            lo[j] -= SLOPE_STEP_RAD;
                            hi[j] += SLOPE_STEP_RAD;
                            slope[j] = (bias_at(&hi)[j] - bias_at(&lo)[j]) / (2.0 * SLOPE_STEP_RAD);
                        }
                        let bias = bias_at(&q);
                        let _ = data.full_m(&mut mass);
                        let m = |r: usize, c: usize| mass[at[r].dof * nv + at[c].dof];
                        Load {
                            q,
                            inertia: std::array::from_fn(|j| m(j, j)),
                            bias: std::array::from_fn(|j| {
                                bias[j] + (0..6).filter(|&k| k != j).map(|k| m(j, k) * acc[k]).sum::<f64>()
                            }),
                            slope,
                        }
                    })
                    .collect();
                Track { loads }
            })
            .collect();
        Ok(Solo {
            recordings,
            tracks,
            segments: segments.iter().map(|s| (*s, strides[s.recording])).collect(),
            fixed,
            step: arm.timestep(),
        })
    }

    /// Each joint's mean squared error over the segments under its own part of `dynamics`.
    pub fn costs(&self, dynamics: &Dynamics) -> [f64; 6] {
        std::array::from_fn(|j| self.cost(j, &dynamics.joints[j]))
    }

    /// Joint `j`'s mean squared error over the segments under `d`.
    pub fn cost(&self, j: usize, d: &JointDynamics) -> f64 {
        let errors = self.errors(j, d);
        errors.iter().map(|e| e * e).sum::<f64>() / errors.len().max(1) as f64
    }

    /// Joint `j`'s position errors (predicted − measured, rad) over every segment under `d`.
    pub fn errors(&self, j: usize, d: &JointDynamics) -> Vec<f64> {
        let mut out = Vec::new();
        for &(seg, stride) in &self.segments {
            let rec = &self.recordings[seg.recording];
            let track = &self.tracks[seg.recording];
            let predicted = self.rollout(rec, track, &seg, stride, j, d);
            out.extend(
                compared(&seg, stride)
                    .zip(predicted)
                    .map(|(k, p)| p - rec.readings[k].1[j]),
            );
        }
        out
    }

    /// Joint `j` alone through `seg` under `d`: its predicted position at each compared reading.
    fn rollout(
        &self,
        rec: &Recording,
        track: &Track,
        seg: &Segment,
        stride: usize,
        j: usize,
        d: &JointDynamics,
    ) -> Vec<f64> {
        let h = self.step;
        let f = self.fixed[j];
        let (t0, start) = rec.readings[seg.first];
        let mut delays = [0.0; 6];
        delays[j] = d.delay_s;
        let line = rec.delay_line(delays, t0 - d.delay_s - h, rec.readings[seg.last].0, start);
        let mut q = start[j];
        let mut v = start_velocity(rec, seg.first)[j];
        let (mut tau, mut prev, mut k) = (t0, q, seg.first);
        let mut out = Vec::with_capacity((seg.last - seg.first) / stride.max(1) + 1);
        for target in compared(seg, stride) {
            let tk = rec.readings[target].0;
            while tau < tk - 1e-9 {
                while k + 1 < rec.readings.len() && rec.readings[k + 1].0 <= tau {
                    k += 1;
                }
                let (q_measured, inertia, bias, slope) = track.at(rec, k, tau, j);
                let goal = line.acting_over(j, tau, tau + h).clamp(f.ctrl[0], f.ctrl[1]);
                let drive = d.kp * (goal - q) - f.kv * v;
                let limited = drive.abs() > d.force_limit;
                let servo = drive.clamp(-d.force_limit, d.force_limit);
                let force = servo - d.damping * v - bias - slope * (q - q_measured);
                let implicit = d.damping + if limited { 0.0 } else { f.kv };
                let m = inertia + d.armature + h * implicit;
                let free = v + h * force / m;
                let stop = h * d.frictionloss / m;
                v = if free.abs() <= stop {
                    0.0
                } else {
                    free - stop.copysign(free)
                };
                prev = q;
                q += h * v;
                if q < f.range[0] || q > f.range[1] {
                    q = q.clamp(f.range[0], f.range[1]);
                    v = 0.0;
                }
                tau += h;
            }
            let w = ((tk - (tau - h)) / h).clamp(0.0, 1.0);
            out.push(prev + w * (q - prev));
        }
        out
    }
}

/// The measured positions, velocities and accelerations at reading `k`: differences across
/// about ±[`SMOOTHING_S`].
fn measured(rec: &Recording, k: usize) -> ([f64; 6], [f64; 6], [f64; 6]) {
    let (a, b) = window(rec, k, SMOOTHING_S);
    let (ta, tk, tb) = (rec.readings[a].0, rec.readings[k].0, rec.readings[b].0);
    let (qa, qk, qb) = (rec.readings[a].1, rec.readings[k].1, rec.readings[b].1);
    let acceleration = std::array::from_fn(|j| {
        if tb > tk && tk > ta {
            let (left, right) = ((qk[j] - qa[j]) / (tk - ta), (qb[j] - qk[j]) / (tb - tk));
            (right - left) / (0.5 * (tb - ta))
        } else {
            0.0
        }
    });
    (qk, slope(rec, (a, b)), acceleration)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Replayer, model};
    use crate::split::{SplitOptions, split};
    use crate::synth::known_truth;
    use fakesim_twin::ArmType;

    #[test]
    fn each_joint_alone_follows_its_recording_under_the_truth_and_not_under_the_defaults() {
        let (truth, recordings) = known_truth(ArmType::So101, 8.0).unwrap();
        let defaults = Replayer::new(ArmType::So101).unwrap().defaults(ArmType::So101).unwrap();
        let pool = Pool::new(ArmType::So101, &recordings, 1).unwrap();
        let segments = split(&recordings, &SplitOptions::default()).train;
        let solo = Solo::new(&mut model(ArmType::So101).unwrap(), &pool, &segments).unwrap();
        let rms = |d: &Dynamics| solo.costs(d).map(f64::sqrt);
        let arm = crate::pool::rms_per_joint(&pool.errors(&[truth], &segments)[0]);
        let (at_truth, at_defaults) = (rms(&truth), rms(&defaults));
        eprintln!("arm at truth {arm:?}\nalone at truth {at_truth:?}\nalone at defaults {at_defaults:?}");
        for j in 0..6 {
            assert!(
                at_truth[j] < 5e-3,
                "joint {j} alone under the truth: {} rad",
                at_truth[j]
            );
            assert!(
                at_defaults[j] > 2.0 * at_truth[j],
                "joint {j}: defaults {} truth {}",
                at_defaults[j],
                at_truth[j]
            );
        }
    }

    /// A recording of the arm held at zero, read every physics step for 200 ms, its goals
    /// written every step; with `stepped` the shoulder's goal steps by 1 mrad at 100 ms (short
    /// of the servo's torque limit, so that its pull is in proportion to the goal's share).
    fn held(stepped: bool) -> Recording {
        let times: Vec<f64> = (0..=80).map(|k| k as f64 * crate::replay::PHYSICS_STEP_S).collect();
        let goal = |t: f64| {
            let mut g = [0.0; 6];
            if stepped && t >= 0.1 - 1e-9 {
                g[0] = 0.001;
            }
            g
        };
        Recording {
            name: "held".into(),
            arm: ArmType::So101,
            goals: times.iter().map(|&t| (t, goal(t))).collect(),
            readings: times.iter().map(|&t| (t, [0.0; 6])).collect(),
            torque: None,
            load: None,
        }
    }

    /// When (s) and by how much (rad) the shoulder alone first feels the goal's step, delayed
    /// by `delay_s`: the end of the first physics step whose position differs.
    fn first_felt(delay_s: f64) -> (f64, f64) {
        let recordings = [held(true), held(false)];
        let pool = Pool::new(ArmType::So101, &recordings, 1).unwrap();
        let segment = |recording| Segment {
            recording,
            first: 0,
            last: 80,
        };
        let solo = Solo::new(&mut model(ArmType::So101).unwrap(), &pool, &[segment(0), segment(1)]).unwrap();
        let mut d = Replayer::new(ArmType::So101)
            .unwrap()
            .defaults(ArmType::So101)
            .unwrap()
            .joints[0];
        // Without dry friction, whose fixed impulse would take a share off each push.
        (d.delay_s, d.frictionloss) = (delay_s, 0.0);
        let trace = |r: usize| solo.rollout(&recordings[r], &solo.tracks[r], &segment(r), 1, 0, &d);
        let (with, without) = (trace(0), trace(1));
        let k = with
            .iter()
            .zip(&without)
            .position(|(a, b)| (a - b).abs() > 1e-12)
            .unwrap();
        ((k + 1) as f64 * crate::replay::PHYSICS_STEP_S, with[k] - without[k])
    }

    #[test]
    fn a_joint_alone_acts_on_a_goal_its_delay_after_the_write_as_every_model_of_the_arm_does() {
        // The goal arrives 21.25 ms after its write at 100 ms, half way through the step from
        // 120 to 122.5 ms, which feels half of it (the time-weighted mean of the delay line);
        // at 20 ms it arrives at that step's start, which feels all of it.
        let (half_at, half_by) = first_felt(0.02125);
        let (whole_at, whole_by) = first_felt(0.02);
        assert!((half_at - 0.1225).abs() < 1e-9, "felt at {half_at} s");
        assert!((whole_at - 0.1225).abs() < 1e-9, "felt at {whole_at} s");
        assert!(
            (whole_by / half_by - 2.0).abs() < 0.01,
            "{whole_by} rad against {half_by} rad"
        );
    }
}
