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

/// Whether parameter `m` ([`PARAMETERS`] order) with standard error `se` is well determined
/// (then it does not trade off, [`crate::TradeOffs`]).
pub fn well_determined(m: usize, se: f64) -> bool {
    if PARAMETERS[m].name == "delay_s" {
        se <= WELL_DETERMINED_DELAY_S
    } else {
        se <= WELL_DETERMINED_RELATIVE
    }
}

/// Why a run has no standard errors, and how to get them.
fn no_standard_errors(o: &Outcome) -> &'static str {
    if o.interrupted {
        "standard errors not computed: the fit was interrupted"
    } else {
        "standard errors not computed: --profiles (Options::profiles) measures them, at more than twice the rollouts"
    }
}

/// The run's figures as text: errors before and after, the verdict, each parameter with its
/// standard error (when profiled), and what each stage cost.
pub fn text(o: &Outcome) -> String {
    let mut s = String::new();
    if o.interrupted {
        let _ = writeln!(
            s,
            "INTERRUPTED: the fitted dynamics are the best the fit had scored on the training part when it stopped\n"
        );
    }
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
    match &o.standard_errors {
        Some(_) => {
            let _ = writeln!(
                s,
                "\nfitted (± standard error from each parameter's profile: moved {:.0} % either way, the joint's others fitted again; * well determined, ~ trades off (below), ? poorly):",
                100.0 * crate::profile::MOVE
            );
        }
        None => {
            let _ = writeln!(s, "\nfitted ({}):", no_standard_errors(o));
        }
    }
    let _ = write!(s, "{:<14}", "joint");
    for p in PARAMETERS {
        let _ = write!(s, "{:>22}", format!("{} ({})", p.name, p.unit));
    }
    let _ = writeln!(s);
    for joint in Joint::ALL {
        let j = joint.index();
        let _ = write!(s, "{:<14}", joint.label());
        for (m, value) in o.fitted.joints[j].values().into_iter().enumerate() {
            let _ = write!(s, "{:>22}", format!("{value:.4}{}", spread(o, j, m)));
        }
        let _ = writeln!(s);
    }
    let lines = trade_off_lines(o);
    if !lines.is_empty() {
        let _ = writeln!(
            s,
            "\ntrade-offs (a {:.0} % move of one made up by at least {:.0} % by the others of its joint):",
            100.0 * crate::profile::MOVE,
            100.0 * crate::profile::MADE_UP
        );
        lines.iter().for_each(|line| {
            let _ = writeln!(s, "  {line}");
        });
    }
    let _ = writeln!(
        s,
        "\n{:<20}{:>10}{:>10}{:>10}",
        "stage", "wall (s)", "CPU (s)", "rollouts"
    );
    for stage in &o.stages {
        let _ = writeln!(
            s,
            "{:<20}{:>10.1}{:>10.1}{:>10}",
            stage.name, stage.wall_s, stage.cpu_s, stage.rollouts
        );
    }
    s
}

/// Parameter `m` of joint `j`'s mark: `*` well determined, `~` trades off, `?` hardly
/// constrained (`None` without standard errors).
pub fn mark(o: &Outcome, j: usize, m: usize) -> Option<&'static str> {
    let se = o.standard_errors?[j][m];
    Some(if well_determined(m, se) {
        "*"
    } else if trades(o, j, m) != 0 {
        "~"
    } else {
        "?"
    })
}

/// Parameter `m` of joint `j`'s standard error and mark as the text shows them (nothing
/// without standard errors).
fn spread(o: &Outcome, j: usize, m: usize) -> String {
    let (Some(se), Some(mark)) = (o.standard_errors.map(|se| se[j][m]), mark(o, j, m)) else {
        return String::new();
    };
    match (PARAMETERS[m].name, se.is_finite()) {
        (_, false) => format!(" ±∞{mark}"),
        ("delay_s", true) => format!(" ±{:.1}ms{mark}", 1e3 * se),
        (_, true) => format!(" ±{:.0}%{mark}", 100.0 * se),
    }
}

/// The parameters joint `j`'s parameter `m` trades off against ([`crate::TradeOffs`]).
fn trades(o: &Outcome, j: usize, m: usize) -> u8 {
    o.trade_offs.map_or(0, |t| t[j][m])
}

/// Each joint's trade-offs as text lines: `wrist_roll: damping, armature, force_limit`.
fn trade_off_lines(o: &Outcome) -> Vec<String> {
    let Some(trade_offs) = o.trade_offs else {
        return Vec::new();
    };
    Joint::ALL
        .into_iter()
        .filter_map(|joint| {
            let j = joint.index();
            let together = trade_offs[j].iter().enumerate().fold(
                0u8,
                |mask, (m, t)| {
                    if *t != 0 { mask | t | (1 << m) } else { mask }
                },
            );
            (together != 0).then(|| format!("{}: {}", joint.label(), names(together).join(", ")))
        })
        .collect()
}

/// The names of the parameters marked in `mask` (bit `k` for parameter `k`).
fn names(mask: u8) -> Vec<&'static str> {
    (0..6)
        .filter(|m| mask & (1 << m) != 0)
        .map(|m| PARAMETERS[m].name)
        .collect()
}

/// The run's figures as JSON (radians, seconds; standard errors relative except the delay's,
/// and `null` with `well_determined` where not computed).
pub fn json(o: &Outcome) -> serde_json::Value {
    let joints: serde_json::Map<String, serde_json::Value> = Joint::ALL
        .into_iter()
        .map(|joint| {
            let j = joint.index();
            let params: serde_json::Map<String, serde_json::Value> = PARAMETERS
                .iter()
                .enumerate()
                .map(|(m, p)| {
                    let se = o.standard_errors.map(|se| se[j][m]);
                    (
                        p.name.to_owned(),
                        json!({
                            "start": o.start.joints[j].values()[m],
                            "fitted": o.fitted.joints[j].values()[m],
                            "standard_error": se.filter(|se| se.is_finite()),
                            "well_determined": se.map(|se| well_determined(m, se)),
                            "trades_off_with": o.trade_offs.map(|_| names(trades(o, j, m))),
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
        "interrupted": o.interrupted,
        "profiled": o.standard_errors.is_some(),
        "stages": o.stages.iter().map(|st| json!({
            "name": st.name,
            "rollouts": st.rollouts,
            "wall_s": st.wall_s,
            "cpu_s": st.cpu_s.is_finite().then_some(st.cpu_s),
        })).collect::<Vec<_>>(),
        "joints": joints,
    })
}
