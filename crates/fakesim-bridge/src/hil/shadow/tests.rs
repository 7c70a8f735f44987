//! The shadow's detector alone: the prediction, the obstruction window and load gate, drift.
#![allow(clippy::unwrap_used)]

use super::*;

const PERIOD: Duration = Duration::from_millis(50);
/// Readings 10 ms apart.
const EVERY: Duration = Duration::from_millis(10);

struct Feed {
    shadow: Shadow,
    at: Instant,
}

impl Feed {
    fn new(pose: [f64; 6]) -> Self {
        Feed {
            shadow: Shadow::new(ShadowConfig::default(), PERIOD, pose),
            at: Instant::now(),
        }
    }

    /// `n` readings of the same arm; the findings of all of them.
    fn readings(&mut self, n: u32, measured: [f64; 6], load: [f64; 6], goals: Option<[f64; 6]>) -> Vec<Finding> {
        let mut findings = Vec::new();
        for _ in 0..n {
            self.at += EVERY;
            let input = ShadowInput {
                at: self.at,
                measured,
                load_percent: load,
                goals,
            };
            findings.extend(self.shadow.observe(&input).1);
        }
        findings
    }
}

fn one(joint: Joint, value: f64) -> [f64; 6] {
    let mut v = [0.0; 6];
    v[joint.index()] = value;
    v
}

#[test]
fn the_prediction_lags_the_goal_and_is_rate_limited() {
    let mut p = 0.0;
    predict(&mut p, 0.1, TIME_CONSTANT);
    assert!((p - 0.1 * (1.0 - (-1.0f64).exp())).abs() < 1e-9, "{p}");
    let mut far = 0.0;
    predict(&mut far, 10.0, Duration::from_millis(10));
    assert!((far - MAX_SPEED_RAD_S * 0.01).abs() < 1e-9, "{far}");
}

#[test]
fn a_residual_under_load_blocks_only_after_the_window_of_ticks() {
    let mut feed = Feed::new([0.0; 6]);
    let goals = one(Joint::WristFlex, 0.5);
    let held = one(Joint::WristFlex, 0.42);
    let load = one(Joint::WristFlex, 87.0);
    // The prediction reaches the goal; the joint stays at 0.42 rad under 87 % load. Three
    // ticks are 150 ms: 15 readings.
    let early = feed.readings(14, held, load, Some(goals));
    assert!(early.is_empty(), "{early:?}");
    let found = feed.readings(20, held, load, Some(goals));
    let Some(Finding::Obstructed {
        joint,
        position_rad,
        load_percent,
        ..
    }) = found.first().copied()
    else {
        panic!("{found:?}");
    };
    assert_eq!((joint, position_rad, load_percent), (Joint::WristFlex, 0.42, 87.0));
    feed.shadow.rebase(held);
    assert!(feed.readings(30, held, [0.0; 6], Some(held)).is_empty());
}

#[test]
fn a_residual_without_load_or_a_short_push_is_no_obstruction() {
    let goals = one(Joint::ElbowFlex, 0.5);
    let mut unloaded = Feed::new([0.0; 6]);
    let found = unloaded.readings(40, [0.0; 6], one(Joint::ElbowFlex, 10.0), Some(goals));
    assert!(
        found.iter().all(|f| !matches!(f, Finding::Obstructed { .. })),
        "{found:?}"
    );
    // A push that stops before three ticks, again and again, never blocks.
    let mut short = Feed::new([0.0; 6]);
    for _ in 0..5 {
        let mut found = short.readings(10, [0.0; 6], one(Joint::ElbowFlex, 90.0), Some(goals));
        found.extend(short.readings(1, [0.0; 6], [0.0; 6], Some(goals)));
        assert!(
            found.iter().all(|f| !matches!(f, Finding::Obstructed { .. })),
            "{found:?}"
        );
    }
    // The gripper closing on an object is a grasp.
    let mut grasp = Feed::new([0.0; 6]);
    let found = grasp.readings(40, [0.0; 6], one(Joint::Gripper, 90.0), Some(one(Joint::Gripper, -0.2)));
    assert!(
        found.iter().all(|f| !matches!(f, Finding::Obstructed { .. })),
        "{found:?}"
    );
}

#[test]
fn a_joint_that_lags_but_gains_on_its_goal_is_not_blocked_until_it_stops() {
    let mut feed = Feed::new([0.0; 6]);
    let goals = one(Joint::ShoulderLift, 1.0);
    let load = one(Joint::ShoulderLift, 70.0);
    // Under load at a fifth of the predicted speed (readings late, or a slow acceleration):
    // the residual stands far over the threshold, yet the joint gains 10 mrad a reading.
    let mut found = Vec::new();
    for n in 1..=40 {
        found.extend(feed.readings(1, one(Joint::ShoulderLift, 0.01 * f64::from(n)), load, Some(goals)));
    }
    assert!(found.is_empty(), "{found:?}");
    let residual = feed.shadow.observe(&ShadowInput {
        at: feed.at,
        measured: one(Joint::ShoulderLift, 0.4),
        load_percent: load,
        goals: Some(goals),
    });
    assert!(
        residual.0[Joint::ShoulderLift.index()].residual_rad < -0.3,
        "{residual:?}"
    );
    // Where it stops under load, it is blocked within two windows (30 readings).
    let found = feed.readings(30, one(Joint::ShoulderLift, 0.4), load, Some(goals));
    assert!(
        matches!(
            found.first(),
            Some(Finding::Obstructed {
                joint: Joint::ShoulderLift,
                ..
            })
        ),
        "{found:?}"
    );
}

#[test]
fn a_steady_offset_at_rest_is_drift_reported_once() {
    // The twin starts at zero; the passive arm rests 3 degrees off on the wrist roll.
    let offset = 3f64.to_radians();
    let mut feed = Feed::new([0.0; 6]);
    let measured = one(Joint::WristRoll, offset);
    let found = feed.readings(60, measured, [0.0; 6], None);
    assert_eq!(
        found,
        vec![Finding::Drift {
            joint: Joint::WristRoll,
            offset_rad: offset
        }]
    );
    assert!(feed.readings(60, measured, [0.0; 6], None).is_empty(), "once");
    let (residuals, _) = feed.shadow.observe(&ShadowInput {
        at: feed.at + EVERY,
        measured,
        load_percent: [0.0; 6],
        goals: None,
    });
    assert_eq!(residuals[Joint::WristRoll.index()].drift_rad, Some(offset));
}

#[test]
fn a_held_joint_settled_off_its_goal_without_load_is_drift() {
    let mut feed = Feed::new([0.0; 6]);
    let goals = one(Joint::ShoulderPan, 0.5);
    let found = feed.readings(200, one(Joint::ShoulderPan, 0.53), [0.0; 6], Some(goals));
    let [Finding::Drift { joint, offset_rad }] = found.as_slice() else {
        panic!("{found:?}");
    };
    assert_eq!(*joint, Joint::ShoulderPan);
    assert!((offset_rad - 0.03).abs() < REST_SPREAD_RAD, "{offset_rad}");
}

#[test]
fn no_drift_while_loaded_moving_or_too_far_off() {
    let mut loaded = Feed::new([0.0; 6]);
    let measured = one(Joint::ShoulderLift, 0.03);
    let load = one(Joint::ShoulderLift, 40.0);
    assert!(loaded.readings(100, measured, load, Some([0.0; 6])).is_empty());
    // A hand moves the passive arm: the prediction follows it, no residual stays.
    let mut moved = Feed::new([0.0; 6]);
    for k in 1..=10 {
        let found = moved.readings(10, one(Joint::ElbowFlex, 0.01 * f64::from(k)), [0.0; 6], None);
        assert!(found.is_empty(), "{found:?}");
    }
    assert!(
        moved
            .readings(100, one(Joint::ElbowFlex, 0.1), [0.0; 6], None)
            .is_empty()
    );
    // Far from the twin's pose the arm is elsewhere, not drifted.
    let mut far = Feed::new([0.0; 6]);
    assert!(far.readings(100, one(Joint::ElbowFlex, 0.5), [0.0; 6], None).is_empty());
    // A goal that keeps moving is no rest, however steady the lag.
    let mut tracking = Feed::new([0.0; 6]);
    for k in 0..100 {
        let goal = 0.002 * f64::from(k);
        let found = tracking.readings(
            1,
            one(Joint::ElbowFlex, goal - 0.03),
            [0.0; 6],
            Some(one(Joint::ElbowFlex, goal)),
        );
        assert!(found.is_empty(), "{found:?}");
    }
}

#[test]
fn settings_out_of_range_are_named() {
    assert!(ShadowConfig::default().check().is_ok());
    let bad = [
        ShadowConfig {
            residual_rad: 0.0,
            ..ShadowConfig::default()
        },
        ShadowConfig {
            load_percent: 120.0,
            ..ShadowConfig::default()
        },
        ShadowConfig {
            ticks: 0,
            ..ShadowConfig::default()
        },
        ShadowConfig {
            drift_rad: f64::NAN,
            ..ShadowConfig::default()
        },
    ];
    let names: Vec<String> = bad.iter().map(|c| c.check().unwrap_err()).collect();
    for (message, name) in names
        .iter()
        .zip(["shadow-residual", "shadow-load", "shadow-ticks", "shadow-drift"])
    {
        assert!(message.starts_with(name), "{message}");
    }
}
