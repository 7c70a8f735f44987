//! Refusals before a fit: a recording with torque off for most of it, a joint whose goals lie
//! beyond its range, and a joint at full load, each for more than the share the gate allows,
//! are refused naming the joint; the same recordings a little under each share pass the gate.

#![allow(clippy::unwrap_used, reason = "test helpers: a failure is the test failing")]

use fakesim_identify::fit::FitOptions;
use fakesim_identify::replay::Replayer;
use fakesim_identify::split::{SplitOptions, check};
use fakesim_identify::synth::known_truth;
use fakesim_identify::{IdentifyError, Options, Recording, Unusable, identify};
use fakesim_twin::ArmType;
use fakesim_twin::joints::Joint;
use fakesim_twin::values::Bounds;

/// The known-truth recordings (two of 8 s, readings every 10 ms, goals every 20 ms).
fn recordings() -> Vec<Recording> {
    known_truth(ArmType::So101, 8.0).unwrap().1
}

/// The twin's joint ranges, as `identify` checks goals against them.
fn ranges() -> [Bounds; 6] {
    Replayer::new(ArmType::So101).unwrap().ranges()
}

/// Whether item `k` of `n` falls in the first `share` of them.
fn within(k: usize, n: usize, share: f64) -> bool {
    (k as f64) < share * n as f64
}

/// Torque off for the first `share` of every recording's readings.
fn torque_off(recs: &mut [Recording], share: f64) {
    for rec in recs {
        let n = rec.readings.len();
        rec.torque = Some((0..n).map(|k| !within(k, n, share)).collect());
    }
}

/// `joint`'s goals put `beyond` rad past the top of its range for the first `share` of them.
fn goals_beyond(recs: &mut [Recording], joint: Joint, share: f64, beyond: f64) {
    let hi = ranges()[joint.index()].hi;
    for rec in recs {
        let n = rec.goals.len();
        for (k, goal) in rec.goals.iter_mut().enumerate() {
            if within(k, n, share) {
                goal.1[joint.index()] = hi + beyond;
            }
        }
    }
}

/// Every reading's load 10 %, `joint`'s `load` for the first `share` of the readings.
fn loaded(recs: &mut [Recording], joint: Joint, share: f64, load: f64) {
    for rec in recs {
        let n = rec.readings.len();
        rec.load = Some(
            (0..n)
                .map(|k| {
                    let mut row = [10.0; 6];
                    if within(k, n, share) {
                        row[joint.index()] = load;
                    }
                    row
                })
                .collect(),
        );
    }
}

/// The refusal `identify` gives (it refuses before fitting anything; the budget is the least,
/// so that a recording the gate wrongly lets through fails the test in seconds, not a fit's
/// minutes).
fn refusal(recs: &[Recording]) -> (Unusable, String) {
    let least = Options {
        fit: FitOptions {
            generations: 1,
            population: 2,
            runs: 1,
            seed: 1,
            rounds: 0,
        },
        threads: 1,
        ..Options::default()
    };
    let Err(err) = identify(recs, &least) else {
        panic!("not refused");
    };
    let text = err.to_string();
    let IdentifyError::Unusable { name, reason } = err else {
        panic!("refused otherwise than as unusable: {text}");
    };
    assert_eq!(name, recs[0].name, "the first recording is refused by name");
    assert!(
        text.starts_with(&format!("{name}: cannot use this recording: ")),
        "{text}"
    );
    (reason, text)
}

/// Every recording passes the gate.
fn passes(recs: &[Recording]) {
    let ranges = ranges();
    for rec in recs {
        check(rec, &ranges, &SplitOptions::default()).unwrap_or_else(|e| panic!("{}: refused: {e}", rec.name));
    }
}

#[test]
fn the_recordings_pass_the_gate_as_they_are() {
    let mut recs = recordings();
    passes(&recs);
    // Recorded torque and load of no concern pass too.
    torque_off(&mut recs, 0.0);
    loaded(&mut recs, Joint::Gripper, 0.0, 100.0);
    passes(&recs);
}

#[test]
fn torque_off_for_most_of_a_recording_is_refused_saying_to_record_with_torque_on() {
    let mut recs = recordings();
    torque_off(&mut recs, 0.6);
    let (reason, text) = refusal(&recs);
    let Unusable::TorqueOff { off_s, total_s } = reason else {
        panic!("not refused as torque off: {text}");
    };
    let total = recs[0].duration();
    assert!(
        (total_s - total).abs() < 1e-9,
        "{total_s} s in all, the recording is {total} s"
    );
    assert!(
        (off_s - 0.6 * total).abs() <= 2.0 * recs[0].reading_period(),
        "{off_s} s off, about {} s was",
        0.6 * total
    );
    assert!(
        text.contains(&format!("torque off for {off_s:.1} of {total_s:.1} s")),
        "{text}"
    );
    assert!(text.contains("record in hil mode with torque on"), "{text}");
}

#[test]
fn torque_off_for_less_than_half_of_a_recording_is_not_refused_as_torque_off() {
    let mut recs = recordings();
    // 40 % off leaves 4.8 s of the 8 s on, under the 6 s the fit needs: too short, not torque off.
    torque_off(&mut recs, 0.4);
    let (reason, text) = refusal(&recs);
    assert!(matches!(reason, Unusable::TooShort { .. }), "{text}");
    // A fifth off leaves 6.4 s: the gate passes it (the split uses only the torque-on part).
    torque_off(&mut recs, 0.2);
    passes(&recs);
}

/// Asserts `recs` are refused as saturated: `label`'s share `percent` of `what`, said so.
fn refused_as_saturated(recs: &[Recording], label: &str, what_saturated: &str, percent_expected: f64) {
    let (reason, text) = refusal(recs);
    let Unusable::Saturated { joint, what, percent } = reason else {
        panic!("not refused as saturated: {text}");
    };
    assert_eq!((joint, what), (label, what_saturated), "{text}");
    assert!((percent - percent_expected).abs() < 0.5, "{percent} %");
    let said = format!("joint {label} saturated: {percent_expected:.0} % {what_saturated}");
    assert!(text.contains(&said), "{text}");
}

#[test]
fn goals_beyond_a_joints_range_are_refused_as_saturated_naming_the_joint() {
    let mut recs = recordings();
    goals_beyond(&mut recs, Joint::ElbowFlex, 0.3, 0.1);
    refused_as_saturated(&recs, "elbow_flex", "of its goals beyond its range", 30.0);
}

#[test]
fn goals_beyond_a_joints_range_for_less_than_a_fifth_or_within_its_margin_pass() {
    let mut recs = recordings();
    goals_beyond(&mut recs, Joint::ElbowFlex, 0.15, 0.1);
    passes(&recs);
    // Within 0.01 rad of the range counts as inside it.
    let mut recs = recordings();
    goals_beyond(&mut recs, Joint::ElbowFlex, 0.5, 0.005);
    passes(&recs);
}

#[test]
fn a_joint_at_full_load_is_refused_as_saturated_naming_the_joint() {
    let mut recs = recordings();
    // Full load either way: the load is signed.
    loaded(&mut recs, Joint::WristRoll, 0.25, -95.0);
    refused_as_saturated(&recs, "wrist_roll", "of the readings at full load", 25.0);
}

#[test]
fn a_joint_under_full_load_or_at_it_for_less_than_a_fifth_passes() {
    let mut recs = recordings();
    loaded(&mut recs, Joint::WristRoll, 1.0, 94.9);
    passes(&recs);
    loaded(&mut recs, Joint::WristRoll, 0.15, 100.0);
    passes(&recs);
}
