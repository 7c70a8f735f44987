//! Benchmark of a fit: six-joint recordings the twin makes of itself under the known truth (two
//! of 30 s by default), fitted from the defaults with the library's default budget unless told
//! otherwise; prints the fit's time, rollouts per second, the validation error before and after,
//! the noise floor, and how far each fitted parameter is from the truth (marked `*` well
//! determined, `~` trading off or `?` poorly determined, when profiled). Run it optimised:
//! `cargo run --release -p fakesim-identify --example fit_bench [--profiles] [--runs=N] [THREADS
//! [SECONDS_EACH [GENERATIONS POPULATION ROUNDS [SEGMENT_S]]]]`.

use fakesim_identify::pool::{Pool, rms_per_joint};
use fakesim_identify::synth::known_truth;
use fakesim_identify::{Options, identify, report};
use fakesim_twin::ArmType;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let profiles = std::env::args().any(|a| a == "--profiles");
    let runs = std::env::args().find_map(|a| a.strip_prefix("--runs=").map(str::to_owned));
    let args: Vec<String> = std::env::args()
        .filter(|a| a != "--profiles" && !a.starts_with("--runs="))
        .collect();
    let arg = |n: usize| args.get(n).cloned();
    let threads: usize = arg(1).map_or(Ok(2), |s| s.parse())?;
    let seconds: f64 = arg(2).map_or(Ok(30.0), |s| s.parse())?;
    let (truth, recordings) = known_truth(ArmType::So101, seconds)?;
    let mut opts = Options {
        threads,
        profiles,
        ..Options::default()
    };
    if let (Some(g), Some(p), Some(r)) = (arg(3), arg(4), arg(5)) {
        (opts.fit.generations, opts.fit.population, opts.fit.rounds) = (g.parse()?, p.parse()?, r.parse()?);
    }
    if let Some(r) = runs {
        opts.fit.runs = r.parse()?;
    }
    if let Some(s) = arg(6) {
        opts.split.segment_s = s.parse()?;
    }
    let outcome = identify(&recordings, &opts)?;
    println!("{}", report::text(&outcome));
    if let Some((replays, rms)) = opts.progress.status().alone {
        println!("joints alone: {replays} replays of a joint, RMS {:.2} mrad", 1e3 * rms);
    }
    let parts = fakesim_identify::split::split(&recordings, &opts.split);
    let pool = Pool::new(ArmType::So101, &recordings, threads)?;
    let floor = rms_per_joint(&pool.errors(&[truth], &parts.validation)[0]);
    let total = |r: [f64; 6]| 1e3 * (r.iter().map(|x| x * x).sum::<f64>() / 6.0).sqrt();
    let [before, after] = outcome.validation_total();
    println!(
        "fit: {:.1} s of recordings, {} strategies of {} generations of {} per joint, {} rounds, {}profiles, {threads} threads: {:.1} s wall, {:.1} s CPU, {} rollouts ({:.0}/s), validation {:.2} -> {:.2} mrad, noise floor {:.2} mrad",
        outcome.seconds[0] + outcome.seconds[1],
        opts.fit.runs,
        opts.fit.generations,
        opts.fit.population,
        opts.fit.rounds,
        if profiles { "" } else { "no " },
        outcome.elapsed_s,
        outcome.stages.iter().map(|s| s.cpu_s).sum::<f64>(),
        outcome.rollouts,
        outcome.rollouts as f64 / outcome.elapsed_s,
        1e3 * before,
        1e3 * after,
        total(floor),
    );
    for (j, (fitted, real)) in outcome.fitted.joints.iter().zip(&truth.joints).enumerate() {
        let off: Vec<String> = (0..6)
            .map(|m| {
                let (f, r) = (fitted.values()[m], real.values()[m]);
                let mark = report::mark(&outcome, j, m).unwrap_or("");
                if m == 5 {
                    format!("{:+.1}ms{mark}", 1e3 * (f - r))
                } else {
                    format!("{:+.1}%{mark}", 100.0 * (f / r - 1.0))
                }
            })
            .collect();
        println!("joint {j} off the truth: {}", off.join(" "));
    }
    Ok(())
}
