//! The task suites (one arm's tabletop tasks, a pair's): instructions, seeded object layouts,
//! success predicates.

use fakesim_twin::{Sim, TwinError};
use serde::{Deserialize, Serialize};

/// The suite of one arm's tasks, the default (on the SO-100 too).
pub const SUITE: &str = "so101_tabletop";
/// The suite of a pair's tasks (`--pair`).
pub const PAIR_SUITE: &str = "pair_tabletop";
/// Initial layouts per task.
pub const N_INIT_STATES: u32 = 12;
/// Height of the table surface in the world frame (m).
pub const TABLE_Z: f64 = 0.80;
/// Half the edge of a task cube (m).
const CUBE_HALF: f64 = 0.015;
/// How far above the target pad the reach task's point is (m).
pub const REACH_HEIGHT: f64 = 0.05;
/// How close to that point the tool centre point must come (m).
pub const REACH_RADIUS: f64 = 0.04;

/// One task of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskDef {
    /// Short name.
    pub name: &'static str,
    /// What the robot should do, in words.
    pub instruction: &'static str,
    goal: Goal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Goal {
    Lift,
    InBowl,
    OnTarget,
    Stack,
    /// Both cubes lifted: the red on the left arm's side, the blue on the right's.
    LiftBoth,
    /// The tool centre point near a point above the target pad.
    Reach,
}

/// A suite: its tasks and the arms they need.
#[derive(Debug, PartialEq, Eq)]
pub struct Suite {
    /// Its name.
    pub name: &'static str,
    /// Its tasks, by index.
    pub tasks: &'static [TaskDef],
    /// The arms the twin must hold: 1, or 2 for a pair's tasks.
    pub arms: usize,
}

/// Every suite, the default first.
pub const SUITES: [Suite; 2] = [
    Suite {
        name: SUITE,
        tasks: &TASKS,
        arms: 1,
    },
    Suite {
        name: PAIR_SUITE,
        tasks: &PAIR_TASKS,
        arms: 2,
    },
];

/// The suites a twin holding `arms` arms runs, the default first.
pub fn suites_for(arms: usize) -> impl Iterator<Item = &'static Suite> {
    SUITES.iter().filter(move |suite| suite.arms <= arms)
}

/// The suite called `name`.
pub fn suite(name: &str) -> Result<&'static Suite, TaskError> {
    SUITES
        .iter()
        .find(|suite| suite.name == name)
        .ok_or_else(|| TaskError::UnknownSuite { suite: name.to_owned() })
}

/// One arm's tasks, by index (new tasks are appended: indices stay stable).
pub const TASKS: [TaskDef; 5] = [
    TaskDef {
        name: "lift_cube",
        instruction: "pick up the red cube and lift it",
        goal: Goal::Lift,
    },
    TaskDef {
        name: "cube_in_bowl",
        instruction: "put the red cube in the bowl",
        goal: Goal::InBowl,
    },
    TaskDef {
        name: "push_to_target",
        instruction: "push the red cube onto the yellow target",
        goal: Goal::OnTarget,
    },
    TaskDef {
        name: "stack_cubes",
        instruction: "stack the red cube on the blue cube",
        goal: Goal::Stack,
    },
    TaskDef {
        name: "reach_target",
        instruction: "bring the gripper's tip just above the yellow target",
        goal: Goal::Reach,
    },
];

/// A pair's tasks, by index.
pub const PAIR_TASKS: [TaskDef; 1] = [TaskDef {
    name: "lift_both",
    instruction: "lift the red cube with the left arm and the blue cube with the right arm",
    goal: Goal::LiftBoth,
}];

/// A task picked by suite, index and layout (in a config file: `suite`, `task-index`,
/// `init-state-index`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TaskRef {
    /// Suite name.
    pub suite: String,
    /// Task index in the suite.
    pub task_index: u32,
    /// Layout index.
    pub init_state_index: u32,
}

impl Default for TaskRef {
    fn default() -> Self {
        TaskRef {
            suite: SUITE.to_owned(),
            task_index: 0,
            init_state_index: 0,
        }
    }
}

/// Why a task reference does not name a task.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskError {
    /// No such suite.
    #[error("unknown suite {}; suites: {SUITE}, {PAIR_SUITE}", fakesim_twin::quote::Quoted(.suite))]
    UnknownSuite {
        /// The suite asked for.
        suite: String,
    },
    /// Task index past the end of the suite.
    #[error("task_index {index} out of range: suite {suite} has tasks 0..{count}")]
    UnknownTask {
        /// The suite.
        suite: &'static str,
        /// The index asked for.
        index: u32,
        /// Tasks in the suite.
        count: u32,
    },
    /// A pair's suite asked of a twin holding one arm.
    #[error("suite {suite} needs two arms: start the daemon with --pair (or --left-port and --right-port)")]
    NeedsPair {
        /// The suite's name.
        suite: &'static str,
    },
    /// Layout index past the end.
    #[error("init_state_index {index} out of range: each task has layouts 0..{count}")]
    UnknownInitState {
        /// The index asked for.
        index: u32,
        /// Layouts per task.
        count: u32,
    },
}

impl TaskRef {
    /// Checks the reference and returns the task it names.
    pub fn task(&self) -> Result<&'static TaskDef, TaskError> {
        let suite = suite(&self.suite)?;
        let task = suite
            .tasks
            .get(self.task_index as usize)
            .ok_or(TaskError::UnknownTask {
                suite: suite.name,
                index: self.task_index,
                count: suite.tasks.len() as u32,
            })?;
        if self.init_state_index >= N_INIT_STATES {
            return Err(TaskError::UnknownInitState {
                index: self.init_state_index,
                count: N_INIT_STATES,
            });
        }
        Ok(task)
    }

    /// [`TaskRef::task`] on a twin holding `arms` arms: a pair's task needs two.
    pub fn task_for(&self, arms: usize) -> Result<&'static TaskDef, TaskError> {
        let task = self.task()?;
        let suite = suite(&self.suite)?;
        if suite.arms > arms {
            return Err(TaskError::NeedsPair { suite: suite.name });
        }
        Ok(task)
    }

    /// Where the objects of this task's layout start: the same every time.
    pub fn layout(&self) -> Layout {
        if self.suite == PAIR_SUITE {
            let mut rng = Seeded(0x9A12_0000 ^ (u64::from(self.task_index) << 32) ^ u64::from(self.init_state_index));
            return pair_layout(&mut rng);
        }
        layout(self.task_index, self.init_state_index)
    }
}

/// Where the objects start, in the world frame (x, y in metres, yaw in radians).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Layout {
    /// Red cube (x, y, yaw).
    pub cube_red: [f64; 3],
    /// Blue cube (x, y, yaw).
    pub cube_blue: [f64; 3],
    /// Bowl centre (x, y).
    pub bowl: [f64; 2],
    /// Target pad centre (x, y).
    pub target: [f64; 2],
}

/// A small, fixed pseudo-random sequence (splitmix64), so layouts never depend on a library.
struct Seeded(u64);

impl Seeded {
    fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + self.next_unit() * (hi - lo)
    }

    fn point(&mut self, x: (f64, f64), y: (f64, f64)) -> [f64; 2] {
        [self.uniform(x.0, x.1), self.uniform(y.0, y.1)]
    }
}

fn far_enough(a: [f64; 2], b: [f64; 2], min: f64) -> bool {
    (a[0] - b[0]).hypot(a[1] - b[1]) >= min
}

/// The layout of one arm's task and index: the same every time.
pub fn layout(task_index: u32, init_state_index: u32) -> Layout {
    let mut rng = Seeded(0x5010_1000 ^ (u64::from(task_index) << 32) ^ u64::from(init_state_index));
    if TASKS
        .get(task_index as usize)
        .is_some_and(|task| task.goal == Goal::LiftBoth)
    {
        return pair_layout(&mut rng);
    }
    loop {
        let red = rng.point((0.16, 0.26), (-0.10, 0.10));
        let blue = rng.point((0.15, 0.26), (-0.14, 0.14));
        let bowl = rng.point((0.13, 0.24), (-0.22, 0.22));
        let target = rng.point((0.15, 0.26), (-0.14, 0.14));
        let yaw_red = rng.uniform(-0.6, 0.6);
        let yaw_blue = rng.uniform(-0.6, 0.6);
        let ok = far_enough(red, blue, 0.07)
            && far_enough(red, bowl, 0.11)
            && far_enough(blue, bowl, 0.11)
            && far_enough(red, target, 0.06)
            && far_enough(blue, target, 0.05);
        if ok {
            return Layout {
                cube_red: [red[0], red[1], yaw_red],
                cube_blue: [blue[0], blue[1], yaw_blue],
                bowl,
                target,
            };
        }
    }
}

/// A layout of the pair's task: each cube in front of its arm (the left arm's base stands at
/// y = +0.20, the right's at -0.20), the bowl and the target out of the way at the back.
fn pair_layout(rng: &mut Seeded) -> Layout {
    let red = rng.point((0.14, 0.24), (0.12, 0.26));
    let blue = rng.point((0.14, 0.24), (-0.26, -0.12));
    Layout {
        cube_red: [red[0], red[1], rng.uniform(-0.6, 0.6)],
        cube_blue: [blue[0], blue[1], rng.uniform(-0.6, 0.6)],
        bowl: [0.45, 0.0],
        target: [0.30, 0.0],
    }
}

/// Puts the objects of a layout on the table, at rest.
pub fn apply_layout(sim: &mut Sim, layout: &Layout) -> Result<(), TwinError> {
    let cube_z = TABLE_Z + CUBE_HALF + 0.0005;
    let [x, y, yaw] = layout.cube_red;
    sim.place_body("cube_red", [x, y, cube_z], yaw)?;
    let [x, y, yaw] = layout.cube_blue;
    sim.place_body("cube_blue", [x, y, cube_z], yaw)?;
    sim.place_body("bowl", [layout.bowl[0], layout.bowl[1], TABLE_Z + 0.0005], 0.0)?;
    sim.place_body("target", [layout.target[0], layout.target[1], TABLE_Z], 0.0)
}

/// Whether the task's goal holds in the twin now (the run summary's judgement, and the session
/// info's while a run is live).
pub fn success(task: &TaskDef, sim: &Sim) -> Result<bool, TwinError> {
    let red = sim.body_position("cube_red")?;
    let planar = |a: [f64; 3], b: [f64; 3]| (a[0] - b[0]).hypot(a[1] - b[1]);
    let lifted = |cube: [f64; 3]| cube[2] > TABLE_Z + CUBE_HALF + 0.05;
    Ok(match task.goal {
        Goal::Lift => lifted(red),
        Goal::LiftBoth => lifted(red) && lifted(sim.body_position("cube_blue")?),
        Goal::InBowl => {
            let bowl = sim.body_position("bowl")?;
            planar(red, bowl) < 0.04 && red[2] < TABLE_Z + 0.05
        }
        Goal::OnTarget => {
            let target = sim.body_position("target")?;
            planar(red, target) < 0.025 && red[2] < TABLE_Z + CUBE_HALF + 0.005
        }
        Goal::Stack => {
            let blue = sim.body_position("cube_blue")?;
            let height = red[2] - blue[2];
            planar(red, blue) < 0.015 && (height - 2.0 * CUBE_HALF).abs() < 0.006
        }
        Goal::Reach => {
            let [x, y, z] = sim.body_position("target")?;
            let tcp = sim.tcp_pose().pos;
            let point = [x, y, z + REACH_HEIGHT];
            let distance = (0..3).map(|i| (tcp[i] - point[i]).powi(2)).sum::<f64>().sqrt();
            distance < REACH_RADIUS
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_reproducible_distinct_and_separated() {
        for task in 0..TASKS.len() as u32 {
            let all: Vec<Layout> = (0..N_INIT_STATES).map(|i| layout(task, i)).collect();
            for (i, l) in all.iter().enumerate() {
                assert_eq!(*l, layout(task, i as u32));
                assert!(far_enough(
                    [l.cube_red[0], l.cube_red[1]],
                    [l.cube_blue[0], l.cube_blue[1]],
                    0.07
                ));
            }
            for i in 1..all.len() {
                assert_ne!(all[0], all[i]);
            }
        }
    }

    #[test]
    fn references_are_checked() {
        let r = |suite: &str, t, i| TaskRef {
            suite: suite.into(),
            task_index: t,
            init_state_index: i,
        };
        assert!(r(SUITE, 3, 11).task().is_ok());
        assert_eq!(r(PAIR_SUITE, 0, 0).task().map(|t| t.name), Ok("lift_both"));
        assert_eq!(
            r(PAIR_SUITE, 0, 0).task_for(1),
            Err(TaskError::NeedsPair { suite: PAIR_SUITE })
        );
        assert!(r(PAIR_SUITE, 0, 0).task_for(2).is_ok());
        assert!(r(SUITE, 0, 0).task_for(2).is_ok());
        assert_eq!(
            r("libero_10", 0, 0).task(),
            Err(TaskError::UnknownSuite {
                suite: "libero_10".into()
            })
        );
        assert_eq!(
            r(SUITE, 5, 0).task(),
            Err(TaskError::UnknownTask {
                suite: SUITE,
                index: 5,
                count: 5
            })
        );
        assert_eq!(
            r(SUITE, 0, 12).task(),
            Err(TaskError::UnknownInitState { index: 12, count: 12 })
        );
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn lift_both_holds_only_with_both_cubes_up_each_laid_in_front_of_its_arm() {
        use fakesim_twin::{ArmType, Scene};
        let mut sim = Sim::load(
            &Scene::Pair {
                arm: ArmType::So101,
                objects: true,
            },
            10,
        )
        .unwrap();
        for index in 0..N_INIT_STATES {
            let r = TaskRef {
                suite: PAIR_SUITE.into(),
                task_index: 0,
                init_state_index: index,
            };
            let layout = r.layout();
            assert!(layout.cube_red[1] > 0.1 && layout.cube_blue[1] < -0.1, "{layout:?}");
            assert_eq!(layout, r.layout());
        }
        let r = TaskRef {
            suite: PAIR_SUITE.into(),
            task_index: 0,
            init_state_index: 0,
        };
        let task = r.task_for(2).unwrap();
        apply_layout(&mut sim, &r.layout()).unwrap();
        assert!(!success(task, &sim).unwrap(), "both cubes on the table");
        sim.place_body("cube_red", [0.2, 0.2, TABLE_Z + 0.1], 0.0).unwrap();
        assert!(!success(task, &sim).unwrap(), "the red cube alone up");
        sim.place_body("cube_blue", [0.2, -0.2, TABLE_Z + 0.1], 0.0).unwrap();
        assert!(success(task, &sim).unwrap(), "both cubes up");
    }
}
