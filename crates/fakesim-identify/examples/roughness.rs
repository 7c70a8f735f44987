//! How rough the twin's replays are in the parameters: the known-truth recordings (two of 16 s)
//! replayed under the truth (the noise floor), under the truth with every parameter moved at
//! random by at most ±0.1–3 % (four draws each), and with one joint's torque limit moved by
//! 0.1 %, on the training stretches. The manual's "How close a fit gets" quotes it:
//! `cargo run --release -p fakesim-identify --example roughness`.

use fakesim_identify::pool::{Pool, rms_per_joint};
use fakesim_identify::split::split;
use fakesim_identify::synth::known_truth;
use fakesim_twin::ArmType;
use fakesim_twin::dynamics::{Dynamics, JointDynamics};

/// Index of the torque limit among a joint's parameters.
const FORCE_LIMIT: usize = 4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (truth, recordings) = known_truth(ArmType::So101, 16.0)?;
    let parts = split(&recordings, &Default::default());
    let pool = Pool::new(ArmType::So101, &recordings, 2)?;
    let mrad = |r: [f64; 6]| r.map(|x| format!("{:.2}", 1e3 * x)).join(" ");
    let total = |r: [f64; 6]| 1e3 * (r.iter().map(|x| x * x).sum::<f64>() / 6.0).sqrt();
    let floor = rms_per_joint(&pool.errors(&[truth], &parts.validation)[0]);
    println!(
        "noise floor (validation): {:.2} mrad; per joint {}",
        total(floor),
        mrad(floor)
    );
    let mut state = 12345u64;
    let mut draw = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    for share in [0.001, 0.003, 0.01, 0.03] {
        let sets: Vec<Dynamics> = (0..4)
            .map(|_| Dynamics {
                joints: std::array::from_fn(|j| {
                    let v = truth.joints[j].values();
                    JointDynamics::from_values(std::array::from_fn(|m| {
                        if m == 5 {
                            v[5] + share * 0.01 * draw()
                        } else {
                            v[m] * (1.0 + share * draw())
                        }
                    }))
                }),
            })
            .collect();
        let totals: Vec<String> = pool
            .errors(&sets, &parts.validation)
            .iter()
            .map(|e| format!("{:.2}", total(rms_per_joint(e))))
            .collect();
        println!(
            "every parameter within ±{:.1} %: {} mrad",
            100.0 * share,
            totals.join(", ")
        );
    }
    let base = rms_per_joint(&pool.errors(&[truth], &parts.train)[0]);
    println!("training, under the truth: {}", mrad(base));
    for j in 0..6 {
        let mut moved = truth;
        let mut v = moved.joints[j].values();
        v[FORCE_LIMIT] *= 1.001;
        moved.joints[j] = JointDynamics::from_values(v);
        let r = rms_per_joint(&pool.errors(&[moved], &parts.train)[0]);
        println!("training, joint {j}'s torque limit +0.1 %: {}", mrad(r));
    }
    Ok(())
}
