//! Recordings the twin makes of itself under given dynamics: each joint stepped and ramped
//! about its range with the arm kept clear of the table, goals held back by each joint's delay,
//! readings rounded to the servo's 4096 steps a turn. The known-truth test and the benchmarks
//! fit these.

use crate::recording::Recording;
use crate::replay;
use crate::room::Room;
use fakesim_twin::dynamics::{Dynamics, JointDynamics};
use fakesim_twin::values::Bounds;
use fakesim_twin::{ArmType, Scene, Sim, TwinError};
use feetech::delay::DelayLine;
use mujoco_rs::prelude::*;
use std::f64::consts::TAU;

/// One step of the STS3215's position reading (rad).
pub const SERVO_STEP_RAD: f64 = TAU / 4096.0;

/// What to record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthOptions {
    /// Length (s).
    pub seconds: f64,
    /// Time between goals (s).
    pub goal_period_s: f64,
    /// Time between readings (s).
    pub reading_period_s: f64,
    /// Round readings to the servo's steps.
    pub quantise: bool,
    /// Seed of the motion program.
    pub seed: u64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            seconds: 20.0,
            goal_period_s: 0.02,
            reading_period_s: 0.01,
            quantise: true,
            seed: 1,
        }
    }
}

/// Each parameter's factor on the defaults in [`perturbed`], joint by joint (within ±20–50 %).
/// shoulder_pan's damping is raised: lowered (× 0.7) beside its stiffer, weaker servo, the
/// joint rang about its goals and its replay under the truth itself, from a start rounded to
/// the servo's steps, parted from the recording by up to 173 mrad within 2 s (7 mrad RMS
/// still at a physics step of 0.625 ms): a chaotic joint no fit recovers from rounded readings.
pub const KNOWN_TRUTH_FACTORS: [[f64; 5]; 6] = [
    [1.3, 1.3, 1.4, 0.6, 0.75],
    [0.75, 1.4, 1.3, 1.5, 1.25],
    [1.25, 1.3, 0.7, 0.7, 0.8],
    [0.7, 0.6, 1.5, 1.3, 1.3],
    [1.4, 1.25, 0.75, 0.8, 0.7],
    [0.8, 1.5, 1.2, 1.4, 1.2],
];
/// The transport delay of [`perturbed`] (s).
pub const KNOWN_TRUTH_DELAY_S: f64 = 0.02;

/// A known truth: each parameter's factor on the defaults and each delay, joint by joint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KnownTruth {
    /// Factors on kp, damping, armature, frictionloss and force limit.
    pub factors: [[f64; 5]; 6],
    /// Each joint's transport delay (s).
    pub delay_s: [f64; 6],
}

/// The known truths the tests fit: [`KNOWN_TRUTH_FACTORS`] with a 20 ms delay (its wrist_roll
/// stiff and weak, ringing against its torque limit); one whose elbow_flex is the stiffest and
/// weakest (kp × 1.6, torque limit × 0.6); one whose wrist_flex and shoulder_pan are (kp × 1.6
/// and × 1.5, torque limit × 0.6 and × 0.65); the last two with delays of 12.5–30 ms on the
/// replays' 2.5 ms grid, every other parameter moved 10–50 %.
pub const KNOWN_TRUTHS: [KnownTruth; 3] = [
    KnownTruth {
        factors: KNOWN_TRUTH_FACTORS,
        delay_s: [KNOWN_TRUTH_DELAY_S; 6],
    },
    KnownTruth {
        factors: [
            [0.8, 1.2, 0.8, 1.4, 1.3],
            [1.2, 0.8, 1.4, 0.7, 1.4],
            [1.6, 1.1, 0.8, 1.2, 0.6],
            [1.3, 1.4, 0.7, 0.6, 0.8],
            [0.7, 1.5, 1.3, 1.4, 1.2],
            [1.2, 0.8, 1.4, 0.7, 0.8],
        ],
        delay_s: [0.015, 0.02, 0.025, 0.0175, 0.0225, 0.03],
    },
    KnownTruth {
        factors: [
            [1.5, 1.1, 0.8, 1.2, 0.65],
            [0.8, 1.3, 0.8, 1.3, 1.2],
            [0.7, 1.4, 1.3, 0.8, 1.3],
            [1.6, 1.2, 0.8, 1.3, 0.6],
            [1.2, 0.7, 1.4, 0.6, 1.4],
            [0.7, 1.3, 0.8, 1.3, 1.3],
        ],
        delay_s: [0.025, 0.0125, 0.02, 0.03, 0.015, 0.02],
    },
];

/// `defaults` moved by `truth`'s factors, with its delays.
pub fn moved_by(defaults: &Dynamics, truth: &KnownTruth) -> Dynamics {
    Dynamics {
        joints: std::array::from_fn(|j| {
            let v = defaults.joints[j].values();
            let f = truth.factors[j];
            JointDynamics::from_values(std::array::from_fn(
                |m| {
                    if m < 5 { v[m] * f[m] } else { truth.delay_s[j] }
                },
            ))
        }),
    }
}

/// The known truth the benchmark fits: `defaults` moved by the first of [`KNOWN_TRUTHS`].
pub fn perturbed(defaults: &Dynamics) -> Dynamics {
    moved_by(defaults, &KNOWN_TRUTHS[0])
}

/// The known truth of `arm` ([`perturbed`] from the twin's defaults) and two recordings of
/// `seconds` each made under it (seeds 1 and 2, the other [`SynthOptions`] as by default).
pub fn known_truth(arm: ArmType, seconds: f64) -> Result<(Dynamics, Vec<Recording>), TwinError> {
    known_truth_of(arm, &KNOWN_TRUTHS[0], seconds)
}

/// `truth` on `arm`'s defaults and two recordings of `seconds` each made under it (seeds 1 and
/// 2, the other [`SynthOptions`] as by default).
pub fn known_truth_of(arm: ArmType, truth: &KnownTruth, seconds: f64) -> Result<(Dynamics, Vec<Recording>), TwinError> {
    let sim = Sim::load(&Scene::builtin(arm, false), 1)?;
    let truth = moved_by(&Dynamics::read(sim.model(), arm.spec())?, truth);
    let recordings = (1..=2)
        .map(|seed| {
            let opts = SynthOptions {
                seconds,
                seed,
                ..SynthOptions::default()
            };
            record(arm, &truth, &opts)
        })
        .collect::<Result<_, _>>()?;
    Ok((truth, recordings))
}

/// A xorshift generator: enough to vary a motion program, reproducibly.
struct Rng(u64);

impl Rng {
    /// A number in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Distance (m) every target pose, and the way to it, keeps between the arm and the table.
const CLEARANCE_M: f64 = 0.03;
/// Targets drawn for a move before the joint holds where it is instead.
const TRIES: usize = 8;

/// One joint's motion program: moves of 0.4–1.2 s, each a step or a ramp to a new target,
/// small or large, within 45 % of the middle of the range, where `fits` allows it.
struct Program {
    from: f64,
    to: f64,
    begin: f64,
    end: f64,
    ramp: bool,
    middle: f64,
    half_range: f64,
}

impl Program {
    fn goal(&mut self, t: f64, rng: &mut Rng, mut fits: impl FnMut(f64, f64) -> bool) -> f64 {
        if t >= self.end {
            self.from = self.to;
            let (lo, hi) = (
                self.middle - 0.45 * self.half_range,
                self.middle + 0.45 * self.half_range,
            );
            let mut draw = || {
                let size = if rng.next() < 0.4 {
                    0.04 + 0.1 * rng.next()
                } else {
                    0.25 + 0.5 * rng.next()
                };
                let sign = if rng.next() < 0.5 { -1.0 } else { 1.0 };
                (self.from + sign * size * self.half_range).clamp(lo, hi)
            };
            let from = self.from;
            self.to = (0..TRIES).map(|_| draw()).find(|&to| fits(from, to)).unwrap_or(from);
            self.ramp = rng.next() < 0.35;
            self.begin = t;
            self.end = t + 0.4 + 0.8 * rng.next();
        }
        if self.ramp {
            let s = ((t - self.begin) / (0.7 * (self.end - self.begin))).min(1.0);
            self.from + s * (self.to - self.from)
        } else {
            self.to
        }
    }
}

/// Records `arm` under `dynamics` running a motion program from its initial pose, on the
/// twin's model stepped as the replays step it ([`replay::model`]): each goal drives the servo
/// `delay_s` after it was written ([`feetech::delay`]).
pub fn record(arm: ArmType, dynamics: &Dynamics, opts: &SynthOptions) -> Result<Recording, TwinError> {
    let mut alone = replay::model(arm)?;
    alone.apply(dynamics);
    let (model, at) = (&alone.model, alone.at);
    let ranges: [Bounds; 6] = at.map(|a| {
        let [jlo, jhi] = model.jnt_range()[model.dof_jntid()[a.dof] as usize];
        let [clo, chi] = model.actuator_ctrlrange()[a.actuator];
        Bounds {
            lo: jlo.max(clo),
            hi: jhi.min(chi),
        }
    });
    let dt = model.opt().timestep;
    let mut data = MjData::new(model);
    data.forward();
    let qpos = |data: &MjData<&MjModel>| at.map(|a| data.qpos()[a.qpos]);
    let mut room = Room::new(arm)?;
    let mut rng = Rng(opts.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let start = qpos(&data);
    let mut line = DelayLine::new(dynamics.joints.map(|j| j.delay_s), start);
    let mut programs: Vec<Program> = (0..6)
        .map(|j| Program {
            from: start[j],
            to: start[j],
            begin: 0.0,
            end: 0.2 * rng.next(),
            ramp: false,
            middle: 0.5 * (ranges[j].hi + ranges[j].lo),
            half_range: 0.5 * (ranges[j].hi - ranges[j].lo),
        })
        .collect();
    let steps = (opts.seconds / dt).round() as u64;
    let read_every = ((opts.reading_period_s / dt).round() as u64).max(1);
    let goal_every = ((opts.goal_period_s / dt).round() as u64).max(1);
    let mut rec = Recording {
        name: format!("twin-{}", opts.seed),
        arm,
        goals: Vec::new(),
        readings: Vec::new(),
        torque: None,
        load: None,
    };
    let round = |q: f64| {
        if opts.quantise {
            (q / SERVO_STEP_RAD).round() * SERVO_STEP_RAD
        } else {
            q
        }
    };
    for n in 0..=steps {
        let t = n as f64 * dt;
        if n % read_every == 0 {
            rec.readings.push((t, qpos(&data).map(round)));
        }
        if n % goal_every == 0 {
            let mut goal = [0.0; 6];
            for j in 0..6 {
                let targets: [f64; 6] = std::array::from_fn(|k| programs[k].to);
                goal[j] = programs[j].goal(t, &mut rng, |from, to| path_clear(&mut room, targets, j, from, to));
            }
            rec.goals.push((t, goal));
            line.write(t, goal);
        }
        for (j, a) in at.iter().enumerate() {
            // MuJoCo clamps a setpoint into the actuator's range itself.
            data.ctrl_mut()[a.actuator] = line.acting_over(j, t, t + dt);
        }
        line.forget_before(t);
        data.step();
    }
    Ok(rec)
}

/// Whether joint `j` moving from `from` to `to`, a tenth past it (an overshoot) included, with
/// the other joints at `targets`, keeps the arm [`CLEARANCE_M`] from the table.
fn path_clear(room: &mut Room, mut targets: [f64; 6], j: usize, from: f64, to: f64) -> bool {
    [0.25, 0.5, 0.75, 1.0, 1.1].into_iter().all(|f| {
        targets[j] = from + f * (to - from);
        room.clear(&targets, CLEARANCE_M)
    })
}
