//! What the SO-101's looks cost, side by side in one run: the arm drawn with primitive shapes
//! (its model before the published meshes, read from git at `FAKESIM_BENCH_BOXES_REV`, default
//! 9cda79e), with the published meshes as the twin ships them (today's), and, when
//! `FAKESIM_BENCH_FULL_MESHES` names a directory of the published full-size STL parts
//! (`scripts/decimate-meshes`' source), with those. For each: physics steps per second (the
//! tabletop scene, `Sim::step`) and both cameras drawn at 256x256 at `fast` in one call.
//! Rounds take turns across the looks. Run with `cargo bench -p fakesim-twin --bench looks`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{RenderQuality, Scene, Sim, TwinConfig, TwinHandle};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const STEPS: u32 = 20_000;
const SIZE: u32 = 256;
const FRAMES: u32 = 20;
const ROUNDS: usize = 5;
const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A copy of `assets/so101` and `assets/tabletop` under `dir`; returns its tabletop scene.
fn copy_assets(dir: &Path) -> PathBuf {
    for sub in ["so101", "so101/meshes", "tabletop"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for entry in std::fs::read_dir(root().join("assets").join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                std::fs::copy(&path, dir.join(sub).join(path.file_name().unwrap())).unwrap();
            }
        }
    }
    dir.join("so101/tabletop.xml")
}

/// The looks to compare: name and tabletop scene.
fn looks(dir: &Path) -> Vec<(&'static str, Scene)> {
    let mut looks = vec![("meshes, 1/10", Scene::Tabletop)];
    let rev = std::env::var("FAKESIM_BENCH_BOXES_REV").unwrap_or_else(|_| "9cda79e".to_owned());
    let old = Command::new("git")
        .arg("-C")
        .arg(root())
        .args(["show", &format!("{rev}:assets/so101/so101.xml")])
        .output()
        .expect("cannot run git");
    assert!(old.status.success(), "{}", String::from_utf8_lossy(&old.stderr));
    let boxes = copy_assets(&dir.join("boxes"));
    std::fs::write(boxes.with_file_name("so101.xml"), old.stdout).unwrap();
    looks.insert(0, ("boxes", Scene::File(boxes)));
    if let Ok(full) = std::env::var("FAKESIM_BENCH_FULL_MESHES") {
        let scene = copy_assets(&dir.join("full"));
        let meshes = scene.with_file_name("meshes");
        for entry in std::fs::read_dir(&meshes).unwrap() {
            let name = entry.unwrap().file_name();
            if name.to_string_lossy().ends_with(".stl") {
                std::fs::copy(Path::new(&full).join(&name), meshes.join(&name)).unwrap();
            }
        }
        looks.push(("meshes, full size", Scene::File(scene)));
    }
    looks
}

/// Median of the samples.
fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let looks = looks(dir.path());
    let mut twins = Vec::new();
    for (_, scene) in &looks {
        let config = TwinConfig {
            scene: scene.clone(),
            render_quality: RenderQuality::Fast,
            ..TwinConfig::default()
        };
        let twin = TwinHandle::spawn(config).unwrap();
        // The first frame builds the GL context.
        twin.render_cameras(&CAMERAS, SIZE, SIZE, false).await.unwrap();
        twins.push(twin);
    }
    let mut steps = vec![Vec::new(); looks.len()];
    let mut renders = vec![Vec::new(); looks.len()];
    for _ in 0..ROUNDS {
        for (i, (name, scene)) in looks.iter().enumerate() {
            let mut sim = Sim::load(scene, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
            let dt = sim.model().opt().timestep;
            let start = Instant::now();
            sim.step(STEPS).unwrap();
            let elapsed = start.elapsed().as_secs_f64();
            let expected = f64::from(STEPS) * dt;
            assert!(
                (sim.time() - expected).abs() < dt * 1e-3,
                "{name}: {} s simulated",
                sim.time()
            );
            steps[i].push(f64::from(STEPS) / elapsed);

            let start = Instant::now();
            for _ in 0..FRAMES {
                let frames = twins[i].render_cameras(&CAMERAS, SIZE, SIZE, false).await.unwrap();
                assert_eq!(frames.len(), CAMERAS.len(), "{name}");
                assert!(
                    frames.iter().all(|f| f.rgb.iter().any(|&b| b != f.rgb[0])),
                    "{name}: a uniform frame"
                );
            }
            renders[i].push(start.elapsed().as_secs_f64() * 1e3 / f64::from(FRAMES));
        }
    }
    println!(
        "medians of {ROUNDS} rounds: {STEPS} physics steps; {FRAMES} calls drawing both cameras at {SIZE}x{SIZE}, fast"
    );
    println!(
        "{:<18} {:>12} {:>8} {:>16} {:>8}",
        "look", "steps/s", "ratio", "2 cameras, ms", "ratio"
    );
    let base_steps = median(steps[0].clone());
    let base_render = median(renders[0].clone());
    for (i, (name, _)) in looks.iter().enumerate() {
        let (s, r) = (median(steps[i].clone()), median(renders[i].clone()));
        println!(
            "{name:<18} {s:>12.0} {:>8.3} {r:>16.2} {:>8.2}",
            s / base_steps,
            r / base_render
        );
    }
}
