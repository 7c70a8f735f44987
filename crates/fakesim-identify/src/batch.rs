//! Mini-batches for the strategies: the training segments dealt into parts, every part taking
//! segments from the whole recording (segment `k` to part `k mod parts`), and each generation
//! of the strategies scored on the next part in turn. A strategy only ranks one generation's
//! candidates against each other, and they all meet the same part, so a part ranks them nearly
//! as the whole would at a fraction of the rollouts; over `parts` generations every segment is
//! scored once. The last fifth of a run's generations meet every segment: the strategies end
//! at the mean of their last generation, which should not be one part's best (see the
//! benchmarks' "Where the time goes").

/// A run's last `1 / WHOLE_PART` of its generations are scored on every segment.
const WHOLE_PART: usize = 5;

/// The parts in use for `segments` training segments when `batches` are asked for: at least
/// one, at most one a segment.
fn parts(segments: usize, batches: usize) -> usize {
    batches.clamp(1, segments.max(1))
}

/// The first generation of a run of `generations` scored on every segment: its last fifth.
pub(crate) fn whole_from(generations: usize) -> usize {
    generations - generations.div_ceil(WHOLE_PART)
}

/// Indices of the training segments (of `segments`) generation `generation` is scored on, the
/// segments dealt into `batches` parts.
pub(crate) fn part(segments: usize, batches: usize, generation: usize) -> Vec<usize> {
    let parts = parts(segments, batches);
    (generation % parts..segments).step_by(parts).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_of_parts_generations_scores_each_segment_exactly_once() {
        for segments in [1, 2, 7, 21, 22] {
            for batches in [1, 3, 4, 30] {
                let parts = parts(segments, batches);
                for first in 0..2 * parts {
                    let mut seen = vec![0; segments];
                    for g in first..first + parts {
                        part(segments, batches, g).iter().for_each(|&k| seen[k] += 1);
                    }
                    assert!(seen.iter().all(|&n| n == 1), "{segments} in {batches}: {seen:?}");
                }
            }
        }
    }

    #[test]
    fn the_parts_are_as_even_as_the_segments_allow_and_none_is_empty() {
        for g in 0..6 {
            let len = part(22, 3, g).len();
            assert!(len == 7 || len == 8, "generation {g}: {len}");
        }
        assert_eq!(part(21, 1, 5), (0..21).collect::<Vec<_>>(), "one part is the whole");
        assert_eq!(part(2, 3, 1), vec![1], "no more parts than segments");
        assert!(part(0, 3, 0).is_empty());
    }

    #[test]
    fn the_last_fifth_of_a_run_meets_every_segment() {
        assert_eq!(whole_from(100), 80);
        assert_eq!(whole_from(50), 40);
        assert_eq!(whole_from(15), 12);
        assert_eq!(whole_from(1), 0, "a run of one generation meets every segment");
        assert_eq!(whole_from(0), 0);
    }

    #[test]
    fn a_part_spans_the_whole_recording() {
        let third = part(21, 3, 2);
        assert_eq!(third.first(), Some(&2));
        assert_eq!(third.last(), Some(&20));
    }
}
