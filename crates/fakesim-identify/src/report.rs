//! The figures of a run, as a table for people and as JSON for scripts.

use crate::Outcome;
use fakesim_twin::dynamics::PARAMETERS;
use fakesim_twin::joints::Joint;
use serde_json::json;
use std::fmt::Write;

/// Largest relative standard error (±) of a parameter called well determined.
pub const WELL_DETERMINED_RELATIVE: f64 = 0.03;
/// Largest standard error of a delay called well determined (s).
pub const WELL_DETERMINED_DELAY_S: f64 = 0.002;

/// Whether parameter `m` ([`PARAMETERS`] order) with standard error `se` is well determined.
pub fn well_determined(m: usize, se: f64) -> bool {
    if PARAMETERS[m].name == "delay_s" {
        se <= WELL_DETERMINED_DELAY_S
    } else {
        se <= WELL_DETERMINED_RELATIVE
    }
}

/// The run's figures as text: errors before and after, the verdict, each parameter with its
/// standard error.
pub fn text(o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:.1} s training, {:.1} s validation; {} rollouts on {} threads in {:.1} s",
        o.seconds[0], o.seconds[1], o.rollouts, o.threads, o.elapsed_s
    );
    let _ = writeln!(
        s,
        "\nRMS position error (mrad)   training          validation        delay"
    );
    let _ = writeln!(s, "{:<16}            before   after    before   after    (ms)", "joint");
    for joint in Joint::ALL {
        let j = joint.index();
        let (t, v) = (o.train_rms[j], o.validation_rms[j]);
        let _ = writeln!(
            s,
            "{:<28}{:>7.2} {:>7.2}   {:>7.2} {:>7.2}   {:>5.1}",
            joint.label(),
            1e3 * t[0],
            1e3 * t[1],
            1e3 * v[0],
            1e3 * v[1],
            1e3 * o.fitted.joints[j].delay_s
        );
    }
    let [before, after] = o.validation_total();
    let verdict = if o.kept {
        "kept"
    } else {
        "NOT kept (it did not lower the validation error)"
    };
    let _ = writeln!(
        s,
        "\nvalidation RMS, all joints: {:.2} → {:.2} mrad: fit {verdict}",
        1e3 * before,
        1e3 * after
    );
    let _ = writeln!(
        s,
        "\nfitted (± standard error from each parameter's profile: moved {:.0} % either way, the joint's others fitted again; * well determined, ? poorly):",
        100.0 * crate::profile::MOVE
    );
    let _ = write!(s, "{:<14}", "joint");
    for p in PARAMETERS {
        let _ = write!(s, "{:>22}", format!("{} ({})", p.name, p.unit));
    }
    let _ = writeln!(s);
    for joint in Joint::ALL {
        let j = joint.index();
        let _ = write!(s, "{:<14}", joint.label());
        for (m, value) in o.fitted.joints[j].values().into_iter().enumerate() {
            let se = o.standard_errors[j][m];
            let mark = if well_determined(m, se) { '*' } else { '?' };
            let spread = match (PARAMETERS[m].name, se.is_finite()) {
                (_, false) => "±∞".to_owned(),
                ("delay_s", true) => format!("±{:.1}ms", 1e3 * se),
                (_, true) => format!("±{:.0}%", 100.0 * se),
            };
            let _ = write!(s, "{:>22}", format!("{value:.4} {spread}{mark}"));
        }
        let _ = writeln!(s);
    }
    s
}

/// The run's figures as JSON (radians, seconds; standard errors relative except the delay's).
pub fn json(o: &Outcome) -> serde_json::Value {
    let joints: serde_json::Map<String, serde_json::Value> = Joint::ALL
        .into_iter()
        .map(|joint| {
            let j = joint.index();
            let params: serde_json::Map<String, serde_json::Value> = PARAMETERS
                .iter()
                .enumerate()
                .map(|(m, p)| {
                    let se = o.standard_errors[j][m];
                    (
                        p.name.to_owned(),
                        json!({
                            "start": o.start.joints[j].values()[m],
                            "fitted": o.fitted.joints[j].values()[m],
                            "standard_error": se.is_finite().then_some(se),
                            "well_determined": well_determined(m, se),
                        }),
                    )
                })
                .collect();
            (
                joint.label().to_owned(),
                json!({
                    "train_rms_rad": o.train_rms[j],
                    "validation_rms_rad": o.validation_rms[j],
                    "parameters": params,
                }),
            )
        })
        .collect();
    json!({
        "kept": o.kept,
        "seconds": {"train": o.seconds[0], "validation": o.seconds[1]},
        "validation_rms_rad": o.validation_total(),
        "rollouts": o.rollouts,
        "threads": o.threads,
        "elapsed_s": o.elapsed_s,
        "joints": joints,
    })
}
