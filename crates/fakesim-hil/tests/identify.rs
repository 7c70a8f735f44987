//! `fakesim-hil identify` end to end on the real binary: a trace of the twin recording itself
//! under perturbed dynamics (`fakesim_identify::synth`) is fitted, the figures printed and the
//! profile written beside the robot id's LeRobot calibration; a trace in which a joint never
//! moves is refused, naming the joint, and writes nothing; Ctrl-C during a fit writes the best
//! fit so far and says it was interrupted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
mod common;

use common::{after_marker, daemon};
use fakesim_identify::Recording;
use fakesim_identify::synth::{SynthOptions, record};
use fakesim_trace::{Extras, Header, Mode, Record, Writer};
use fakesim_twin::dynamics::profile::Profile;
use fakesim_twin::dynamics::{Dynamics, JointDynamics};
use fakesim_twin::{ArmType, Scene, Sim};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::io::{BufReader, Read};
use std::path::Path;
use std::process::Stdio;

/// Each parameter of the model's defaults moved by 30 %, and a 20 ms delay.
fn perturbed() -> Dynamics {
    let sim = Sim::load(&Scene::builtin(ArmType::So101, false), 1).unwrap();
    let d = Dynamics::read(sim.model(), ArmType::So101.spec()).unwrap();
    Dynamics {
        joints: d.joints.map(|j| {
            let v = j.values();
            JointDynamics::from_values([v[0] * 0.7, v[1] * 1.3, v[2] * 1.3, v[3] * 0.7, v[4] * 1.3, 0.02])
        }),
    }
}

/// Writes `rec` as the daemon's trace would hold it: goals and readings in time order, torque
/// on, in hil.
fn write_trace(path: &Path, rec: &Recording) {
    let header = Header {
        arm: "so101".into(),
        robot_id: Some("bench_arm".into()),
        side: None,
        started_unix_s: 0.0,
    };
    let mut records: Vec<Record> = rec
        .goals
        .iter()
        .map(|&(t, rad)| Record::Goal {
            t,
            rad,
            torque: true,
            mode: Mode::Hil,
        })
        .chain(rec.readings.iter().map(|&(t, rad)| Record::Reading {
            t,
            rad,
            extras: [Extras {
                voltage_v: 12.0,
                ..Extras::default()
            }; 6],
            torque: true,
            mode: Mode::Hil,
        }))
        .collect();
    let time = |r: &Record| match *r {
        Record::Goal { t, .. } | Record::Reading { t, .. } | Record::State { t, .. } => t,
    };
    records.sort_by(|a, b| time(a).total_cmp(&time(b)));
    let mut writer = Writer::create(path, &header).unwrap();
    records.iter().for_each(|r| writer.write(r).unwrap());
    writer.flush().unwrap();
}

fn recording(seconds: f64) -> Recording {
    let options = SynthOptions {
        seconds,
        ..SynthOptions::default()
    };
    record(ArmType::So101, &perturbed(), &options).unwrap()
}

/// A quick fit: few generations, two threads.
const QUICK: [&str; 8] = [
    "--generations",
    "6",
    "--population",
    "6",
    "--rounds",
    "1",
    "--threads",
    "2",
];

#[test]
fn a_trace_is_fitted_and_the_profile_written_beside_the_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bench_arm.fstrace");
    write_trace(&trace, &recording(12.0));
    let root = dir.path().join("calibration");
    let calibration = root.join("robots").join("so_follower").join("bench_arm.json");
    std::fs::create_dir_all(calibration.parent().unwrap()).unwrap();
    feetech::calibration::so101::nominal().save(&calibration).unwrap();
    let figures = dir.path().join("figures.json");
    let trace_arg = trace.to_str().unwrap();
    let mut args = vec!["identify", trace_arg, "--robot", "so101", "--robot-id", "bench_arm"];
    args.extend(["--json", figures.to_str().unwrap()]);
    args.extend(QUICK);
    let output = daemon(&args).env("HF_LEROBOT_CALIBRATION", &root).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    println!("{stdout}");
    assert!(
        stdout.contains("RMS position error") && stdout.contains("fit kept"),
        "{stdout}"
    );
    let profile_path = root.join("robots").join("so_follower").join("bench_arm.dynamics.toml");
    assert!(stdout.contains(profile_path.to_str().unwrap()), "{stdout}");
    let profile = Profile::load(&profile_path).unwrap();
    assert_eq!(
        (profile.arm.as_str(), profile.robot_id.as_deref()),
        ("so101", Some("bench_arm"))
    );
    // The step the fit's replays ran at: half the model's 5 ms.
    assert_eq!(profile.physics_step_s, Some(0.0025));
    let fit = profile.fit.as_ref().unwrap();
    assert_eq!(fit.recordings, [trace_arg]);
    let total = |i: usize| fit.validation_rms_rad.values().map(|r| r[i] * r[i]).sum::<f64>();
    assert!(total(1) < total(0), "validation error lowered: {fit:?}");
    let fitted = profile.dynamics().unwrap();
    assert!(
        fitted.joints.iter().any(|j| j.delay_s > 0.0),
        "the delay is fitted: {fitted:?}"
    );
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&figures).unwrap()).unwrap();
    assert_eq!(json["kept"], true);
    // Without --profiles the standard errors are not computed, and the report says how to get
    // them rather than giving a number.
    assert_eq!(
        (&json["profiled"], &json["interrupted"]),
        (&false.into(), &false.into())
    );
    let damping = &json["joints"]["wrist_flex"]["parameters"]["damping"];
    assert!(damping["standard_error"].is_null() && damping["well_determined"].is_null());
    assert!(stdout.contains("standard errors not computed: --profiles"), "{stdout}");
    let stages = json["stages"].as_array().unwrap();
    let rollouts: u64 = stages.iter().map(|s| s["rollouts"].as_u64().unwrap()).sum();
    assert_eq!(Some(rollouts), json["rollouts"].as_u64());
    assert!(stages.iter().any(|s| s["name"] == "joints alone"), "{stages:?}");
}

#[test]
fn ctrl_c_during_a_fit_writes_the_best_fit_so_far_and_says_it_was_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bench_arm.fstrace");
    write_trace(&trace, &recording(12.0));
    let (out, figures) = (dir.path().join("arm.dynamics.toml"), dir.path().join("fit.json"));
    let mut args = vec!["identify", trace.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend(["--json", figures.to_str().unwrap()]);
    // Strategies on the joints alone that run for tens of seconds (the line below comes within
    // one): the interruption ends this fit.
    args.extend(["--generations", "1000", "--population", "400", "--threads", "2"]);
    let mut child = daemon(&args).stdout(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // The strategies start after each joint's delay is picked alone, so a better fit than the
    // start is at hand.
    let line = after_marker(&mut stderr, &mut child, "progress: joints alone");
    println!("progress: joints alone{line}");
    assert!(
        line.contains("replays of a joint alone, RMS") && line.contains("mrad"),
        "{line}"
    );
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{rest}");
    assert!(
        rest.contains("interrupted: the profile written is the best fit so far"),
        "{rest}"
    );
    assert!(
        stdout.starts_with("INTERRUPTED") && stdout.contains("fit kept"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("profile written: {}", out.display())),
        "{stdout}"
    );
    let fitted = Profile::load(&out).unwrap().dynamics().unwrap();
    assert!(fitted.joints.iter().any(|j| j.delay_s > 0.0), "{fitted:?}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&figures).unwrap()).unwrap();
    assert_eq!((&json["interrupted"], &json["kept"]), (&true.into(), &true.into()));
    let stages: Vec<&str> = json["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["start", "joints alone", "checks"]);
}

#[test]
fn a_joint_that_never_moves_is_refused_by_name_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = recording(10.0);
    let held = rec.readings[0].1[3];
    rec.readings.iter_mut().for_each(|r| r.1[3] = held);
    rec.goals.iter_mut().for_each(|g| g.1[3] = held);
    let trace = dir.path().join("still_wrist.fstrace");
    write_trace(&trace, &rec);
    let out = dir.path().join("profile.toml");
    let mut args = vec!["identify", trace.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend(QUICK);
    let output = daemon(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no motion on joint wrist_flex") && stderr.contains("still_wrist.fstrace"),
        "{stderr}"
    );
    assert!(!out.exists(), "no profile is written for a refused recording");
}
