//! The six joints' evolution strategies (the `cmaes` crate) run in lock step: each posts its
//! candidate on a board and waits until all six (or the final points of those that finished)
//! are in, then one rollout scores them all (told the generation it belongs to, so that a
//! generation can be scored on a part of the training segments). A strategy whose thread dies ends the others'
//! wait, and the run, with an error naming its joint.

use crate::error::FitFault;
use cmaes::{CMAESOptions, DVector as EsVector};
use fakesim_twin::joints::Joint;
use nalgebra::DVector;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Penalty per squared coordinate beyond a bound (a coordinate is a parameter's whole range).
const PENALTY: f64 = 1.0;

/// How the strategies search: their first step, candidates per generation, generations, seed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Search {
    /// First step size, in coordinates.
    pub sigma: f64,
    /// Candidates per generation.
    pub population: usize,
    /// Generations of each strategy.
    pub generations: usize,
    /// Seed of joint 0's strategy; joint `j`'s is this plus `j`.
    pub seed: u64,
}

/// Where the strategies meet.
struct Board<F> {
    /// Each joint's mean squared error at the 36 coordinates of one round of a generation.
    score_round: F,
    /// Rounds (candidates) per generation.
    population: usize,
    state: Mutex<Round>,
    turn: Condvar,
    /// Set when a strategy died: no one waits for a round any more.
    broken: AtomicBool,
}

/// One round of the board.
#[derive(Default)]
struct Round {
    /// Candidates posted this round.
    posted: [Option<[f64; 6]>; 6],
    /// Final points of strategies that have finished.
    finished: [Option<[f64; 6]>; 6],
    /// Rounds scored so far.
    scored: u64,
    /// Each joint's mean squared error in the last scored round.
    scores: [f64; 6],
}

impl<F: Fn(&DVector<f64>, usize) -> [f64; 6]> Board<F> {
    /// Posts joint `j`'s candidate and returns its mean squared error once the round is scored
    /// (the worst score at once if the board is broken).
    fn score(&self, j: usize, x: [f64; 6]) -> f64 {
        let Some(mut round) = self.lock() else {
            return f64::MAX;
        };
        round.posted[j] = Some(x);
        let mine = round.scored;
        self.score_if_full(&mut round);
        while round.scored == mine {
            if self.broken.load(Ordering::Acquire) {
                return f64::MAX;
            }
            round = match self.turn.wait(round) {
                Ok(r) => r,
                Err(poisoned) => {
                    drop(poisoned);
                    self.break_off();
                    return f64::MAX;
                }
            };
        }
        let beyond: f64 = x.iter().map(|u| (u - u.clamp(0.0, 1.0)).powi(2)).sum();
        round.scores[j] * (1.0 + PENALTY * beyond)
    }

    /// Records joint `j`'s final point; the others no longer wait for it.
    fn finish(&self, j: usize, x: [f64; 6]) {
        if let Some(mut round) = self.lock() {
            round.finished[j] = Some(x);
            self.score_if_full(&mut round);
        }
    }

    /// The round, unless the board is broken (a poisoned lock breaks it).
    fn lock(&self) -> Option<MutexGuard<'_, Round>> {
        if self.broken.load(Ordering::Acquire) {
            return None;
        }
        match self.state.lock() {
            Ok(round) => Some(round),
            Err(poisoned) => {
                drop(poisoned);
                self.break_off();
                None
            }
        }
    }

    /// Breaks the board and wakes every strategy waiting on it.
    fn break_off(&self) {
        self.broken.store(true, Ordering::Release);
        // Taken so that no strategy is between its check and its wait.
        let _round = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.turn.notify_all();
    }

    /// Scores the round when every joint has posted or finished (and one has posted).
    fn score_if_full(&self, round: &mut Round) {
        let full = (0..6).all(|j| round.posted[j].is_some() || round.finished[j].is_some());
        if !full || round.posted.iter().all(Option::is_none) {
            return;
        }
        let u = DVector::from_fn(36, |i, _| {
            let (j, m) = (i / 6, i % 6);
            round.posted[j].or(round.finished[j]).map_or(0.5, |x| x[m])
        });
        let generation = usize::try_from(round.scored).unwrap_or(usize::MAX) / self.population;
        round.scores = (self.score_round)(&u, generation);
        round.posted = [None; 6];
        round.scored += 1;
        self.turn.notify_all();
    }
}

/// Breaks the board if its strategy's thread unwinds, so the others stop waiting for it.
struct Watch<'b, F: Fn(&DVector<f64>, usize) -> [f64; 6]>(&'b Board<F>);

impl<F: Fn(&DVector<f64>, usize) -> [f64; 6]> Drop for Watch<'_, F> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.break_off();
        }
    }
}

/// Runs the six joints' strategies from `u0`, a round of generation `g` scored by
/// `score_round(u, g)`; each ends at the
/// mean of its last generation (on a cost this rough the best single candidate is partly luck).
pub(crate) fn strategies<F>(score_round: F, u0: &DVector<f64>, search: Search) -> Result<DVector<f64>, FitFault>
where
    F: Fn(&DVector<f64>, usize) -> [f64; 6] + Sync,
{
    let population = search.population.max(4);
    let board = Board {
        score_round,
        population,
        state: Mutex::new(Round::default()),
        turn: Condvar::new(),
        broken: AtomicBool::new(false),
    };
    let mut best = u0.clone();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|j| {
                let board = &board;
                let mean: Vec<f64> = (0..6).map(|m| u0[6 * j + m]).collect();
                scope.spawn(move || {
                    let _watch = Watch(board);
                    let objective = |x: &EsVector<f64>| board.score(j, std::array::from_fn(|m| x[m]));
                    let fallback: [f64; 6] = std::array::from_fn(|m| mean[m]);
                    let point = CMAESOptions::new(mean, search.sigma)
                        .population_size(population)
                        .max_generations(search.generations.max(1))
                        .seed(search.seed.wrapping_add(j as u64))
                        .build(objective)
                        .ok()
                        .map_or(fallback, |mut es| {
                            es.run();
                            std::array::from_fn(|m| es.mean()[m].clamp(0.0, 1.0))
                        });
                    board.finish(j, point);
                    point
                })
            })
            .collect();
        let mut died = None;
        for (j, handle) in handles.into_iter().enumerate() {
            match handle.join() {
                Ok(point) => (0..6).for_each(|m| best[6 * j + m] = point[m]),
                Err(_) => {
                    died.get_or_insert(FitFault::StrategyDied {
                        joint: Joint::ALL[j].label(),
                    });
                }
            }
        }
        died.map_or(Ok(best), Err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn search() -> Search {
        Search {
            sigma: 0.1,
            population: 4,
            generations: 6,
            seed: 3,
        }
    }

    #[test]
    fn the_strategies_descend_a_bowl_each_joint_to_its_own_minimum() {
        let target = |i: usize| 0.2 + 0.1 * (i % 6) as f64 + 0.05 * (i / 6) as f64;
        let bowl = |u: &DVector<f64>, _: usize| {
            std::array::from_fn(|j| (0..6).map(|m| (u[6 * j + m] - target(6 * j + m)).powi(2)).sum())
        };
        let start = DVector::from_element(36, 0.5);
        let long = Search {
            generations: 60,
            ..search()
        };
        let found = strategies(bowl, &start, long).unwrap();
        let before: f64 = bowl(&start, 0).iter().sum();
        let after: f64 = bowl(&found, 0).iter().sum();
        assert!(after < before / 20.0, "{before} -> {after}");
    }

    #[test]
    fn each_round_is_told_its_generation_a_population_of_rounds_each() {
        let told = std::sync::Mutex::new(Vec::new());
        let bowl = |u: &DVector<f64>, generation: usize| {
            told.lock().unwrap().push(generation);
            std::array::from_fn(|j| (0..6).map(|m| (u[6 * j + m] - 0.3).powi(2)).sum())
        };
        strategies(bowl, &DVector::from_element(36, 0.5), search()).unwrap();
        let told = told.into_inner().unwrap();
        let expected: Vec<usize> = (0..6).flat_map(|g| [g; 4]).collect();
        assert_eq!(told, expected);
    }

    #[test]
    fn a_strategy_that_dies_ends_the_others_wait_with_an_error_naming_a_joint() {
        let rounds = AtomicUsize::new(0);
        // The third round's scoring panics, in whichever strategy's thread completes it.
        let dies = |_: &DVector<f64>, _: usize| {
            assert!(rounds.fetch_add(1, Ordering::Relaxed) != 2, "a rollout failed");
            [1.0; 6]
        };
        let outcome = strategies(dies, &DVector::from_element(36, 0.5), search());
        let Err(FitFault::StrategyDied { joint }) = outcome else {
            panic!("expected a dead strategy, got {outcome:?}");
        };
        assert!(Joint::ALL.iter().any(|j| j.label() == joint), "{joint}");
        assert_eq!(rounds.load(Ordering::Relaxed), 3, "no round is scored after the death");
    }
}
