//! Each joint's evolution strategies (CMA-ES, the `cmaes` crate) on a cost of that joint's own
//! six coordinates: [`Strategies::runs`] strategies per joint from its start, the `r`-th with
//! seed `seed + 6 r + j` and a first step `r + 1` times [`INITIAL_STEP`], all of them spread
//! over the threads as jobs; each joint keeps the best point any of its strategies scored, or
//! its start where none beat it.
//!
//! The costs are deterministic and a joint's depends on nothing but its own coordinates
//! ([`crate::solo`]), so the best point scored is the answer (not the last mean, as with a noisy
//! cost) and the strategies need no lock step. Coordinates lie in [0, 1] (a parameter's range,
//! [`crate::fit`]); a candidate beyond is scored where it is clamped to, with a penalty.

use crate::error::FitFault;
use cmaes::{CMAESOptions, DVector};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Penalty per squared coordinate beyond a bound (a coordinate is a parameter's whole range).
const PENALTY: f64 = 1.0;
/// The first strategy's first step, in coordinates (a tenth of each parameter's range).
pub const INITIAL_STEP: f64 = 0.1;

/// One joint's coordinates.
pub(crate) type Point = [f64; 6];

/// How far each joint's strategies go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Strategies {
    /// Generations of each strategy.
    pub generations: usize,
    /// Candidates per generation.
    pub population: usize,
    /// Strategies per joint.
    pub runs: usize,
    /// Seed of joint 0's first strategy.
    pub seed: u64,
}

/// The six joints' best points from `start` under `cost(joint, point)` (see the module's doc),
/// the strategies run on `threads` threads. Once `stop` is set no strategy starts and those
/// under way end at their next generation. A thread that panics ends the search with
/// [`FitFault::SearchPanicked`].
pub(crate) fn each_joint(
    cost: &(dyn Fn(usize, &Point) -> f64 + Sync),
    start: &[Point; 6],
    opts: &Strategies,
    threads: usize,
    stop: &AtomicBool,
) -> Result<[Point; 6], FitFault> {
    let jobs: Vec<(usize, usize)> = (0..6)
        .flat_map(|j| (0..opts.runs.max(1)).map(move |r| (j, r)))
        .collect();
    let next = AtomicUsize::new(0);
    let found: Mutex<Vec<(usize, f64, Point)>> = Mutex::new(Vec::new());
    let stopped = || stop.load(Ordering::Acquire);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    while !stopped()
                        && let Some(&(j, r)) = jobs.get(next.fetch_add(1, Ordering::Relaxed))
                    {
                        if let Some((value, point)) = strategy(cost, j, r, &start[j], opts, &stopped) {
                            found
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .push((j, value, point));
                        }
                    }
                })
            })
            .collect();
        // Every thread joined (a panic left to the scope would be the scope's).
        let joined: Vec<bool> = handles.into_iter().map(|h| h.join().is_ok()).collect();
        match joined.iter().position(|ok| !ok) {
            Some(thread) => Err(FitFault::SearchPanicked { thread }),
            None => Ok(()),
        }
    })?;
    let found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    Ok(std::array::from_fn(|j| {
        let best = found.iter().filter(|f| f.0 == j).min_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some(&(_, value, point)) if value < cost(j, &start[j]) => point,
            _ => start[j],
        }
    }))
}

/// Run `r` of joint `j`'s strategies from `from`: the best point it scored and its cost.
fn strategy(
    cost: &(dyn Fn(usize, &Point) -> f64 + Sync),
    j: usize,
    r: usize,
    from: &Point,
    opts: &Strategies,
    stopped: &dyn Fn() -> bool,
) -> Option<(f64, Point)> {
    let objective = |x: &DVector<f64>| {
        let clamped: Point = std::array::from_fn(|m| x[m].clamp(0.0, 1.0));
        let beyond: f64 = x.iter().zip(&clamped).map(|(u, c)| (u - c).powi(2)).sum();
        cost(j, &clamped) * (1.0 + PENALTY * beyond)
    };
    let mut es = CMAESOptions::new(from.to_vec(), INITIAL_STEP * (r + 1) as f64)
        .population_size(opts.population.max(4))
        .max_generations(opts.generations.max(1))
        .seed(opts.seed.wrapping_add((6 * r + j) as u64))
        .build(objective)
        .ok()?;
    while es.next().is_none() && !stopped() {}
    let best = es.overall_best_individual()?;
    Some((best.value, std::array::from_fn(|m| best.point[m].clamp(0.0, 1.0))))
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: Strategies = Strategies {
        generations: 60,
        population: 8,
        runs: 2,
        seed: 1,
    };

    /// Joint `j`'s own minimum of the test costs: a different point for each joint.
    fn minimum(j: usize) -> Point {
        std::array::from_fn(|m| 0.2 + 0.1 * ((j + m) % 6) as f64)
    }

    /// A quadratic about each joint's [`minimum`], scaled differently per coordinate.
    fn quadratic(j: usize, x: &Point) -> f64 {
        (0..6).map(|m| (m + 1) as f64 * (x[m] - minimum(j)[m]).powi(2)).sum()
    }

    #[test]
    fn each_joint_ends_at_its_own_minimum_of_a_known_quadratic() {
        let start = [[0.5; 6]; 6];
        let found = each_joint(&quadratic, &start, &QUICK, 2, &AtomicBool::new(false)).unwrap();
        for (j, point) in found.iter().enumerate() {
            for m in 0..6 {
                assert!((point[m] - minimum(j)[m]).abs() < 0.01, "joint {j}: {point:?}");
            }
        }
    }

    #[test]
    fn a_minimum_beyond_a_bound_is_found_on_the_bound() {
        // Falling towards coordinate 0 = -0.5: the best within [0, 1] is 0.
        let cost = |_: usize, x: &Point| (x[0] + 0.5).powi(2) + (1..6).map(|m| (x[m] - 0.5).powi(2)).sum::<f64>();
        let found = each_joint(&cost, &[[0.5; 6]; 6], &QUICK, 1, &AtomicBool::new(false)).unwrap();
        for point in found {
            assert_eq!(point[0], 0.0, "{point:?}");
            assert!(point[1..].iter().all(|u| (u - 0.5).abs() < 0.01), "{point:?}");
        }
    }

    #[test]
    fn a_joint_already_at_its_minimum_keeps_its_start_exactly() {
        let start: [Point; 6] = std::array::from_fn(minimum);
        let found = each_joint(&quadratic, &start, &QUICK, 2, &AtomicBool::new(false)).unwrap();
        assert_eq!(found, start);
    }

    #[test]
    fn a_search_asked_to_stop_before_it_starts_leaves_every_joint_at_its_start() {
        let start = [[0.5; 6]; 6];
        let found = each_joint(&quadratic, &start, &QUICK, 2, &AtomicBool::new(true)).unwrap();
        assert_eq!(found, start);
    }

    #[test]
    fn a_cost_that_panics_ends_the_search_with_a_fault() {
        let cost = |j: usize, x: &Point| {
            assert!(j != 3, "a cost that fails");
            quadratic(j, x)
        };
        let err = each_joint(&cost, &[[0.5; 6]; 6], &QUICK, 2, &AtomicBool::new(false)).unwrap_err();
        assert!(matches!(err, FitFault::SearchPanicked { .. }), "{err}");
    }
}
