//! What the arm came close to since the last reset of the watch: its joint limits and the table.
//! Sampled after every call that moves the twin, whoever makes it.

use crate::values::Bounds;

/// How close to a range end a joint counts as at its limit (rad; half a degree).
pub const LIMIT_MARGIN_RAD: f64 = 0.008_726_646;

/// Joint-limit hits and the lowest tool height since the watch was reset.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Watch {
    /// Per arm joint, in action-key order: samples that found it within [`LIMIT_MARGIN_RAD`] of
    /// an end of its range.
    pub joint_limit_hits: [u64; 6],
    /// Lowest world height reached by the TCP or a jaw tip (m); `None` before any sample.
    pub lowest_tool_z: Option<f64>,
    /// Samples taken.
    pub samples: u64,
}

impl Watch {
    /// Records one state: the arm's joint positions with their ranges, and the tool's lowest point.
    pub fn sample(&mut self, qpos: &[f64; 6], ranges: &[Bounds; 6], tool_z: f64) {
        for ((hits, q), range) in self.joint_limit_hits.iter_mut().zip(qpos).zip(ranges) {
            if *q <= range.lo + LIMIT_MARGIN_RAD || *q >= range.hi - LIMIT_MARGIN_RAD {
                *hits += 1;
            }
        }
        self.lowest_tool_z = Some(self.lowest_tool_z.map_or(tool_z, |z| z.min(tool_z)));
        self.samples += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_joints_at_their_limits_and_keeps_the_lowest_height() {
        let ranges = [Bounds { lo: -1.0, hi: 1.0 }; 6];
        let mut watch = Watch::default();
        watch.sample(&[0.0, 0.995, -1.0, 0.5, 0.0, 0.0], &ranges, 0.9);
        watch.sample(&[0.0, 0.0, -0.99, 0.5, 0.0, 1.2], &ranges, 0.85);
        watch.sample(&[0.0; 6], &ranges, 0.95);
        assert_eq!(watch.joint_limit_hits, [0, 1, 1, 0, 0, 1]);
        assert_eq!(watch.lowest_tool_z, Some(0.85));
        assert_eq!(watch.samples, 3);
    }
}
