//! `fakesim-hil align`: measures, per joint, the sign and offset between a calibrated real
//! arm and the twin. The user holds the arm (torque off) in a few poses whose twin angles are
//! known; each joint's reading is compared with the twin's angle, and a joint-mapping file is
//! written for `fakesim-hil --mapping FILE`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use fakesim_arm::{ArmType, Joint};
use fakesim_feetech_arm::mapping::{CalibratedMapping, Conversion, JointMapping};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{Scene, Sim};
use feetech::calibration::{Calibration, SO101_MOTORS};
use feetech::control_table::DEFAULT_BAUD_RATE;
use uom::si::angle::radian;

use super::port::open_bus;
use super::{Console, ReplyTimeout, parse_baud};

/// Two poses must differ by at least this on a joint (rad) for its sign to be measured.
const SIGN_SPREAD_RAD: f64 = 0.3;

/// A pose the user puts the arm in, with the twin's joint angles there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlignPose {
    /// How the prompt names it.
    pub name: &'static str,
    /// Twin joint angles (rad), action-key order.
    pub twin_rad: [f64; 6],
}

/// The poses of `arm`, in the order they are asked for: the middle of every joint's travel
/// (LeRobot's 0°: the model's zero on the SO-101, which stands straight up there), its rest
/// (the episodes' home pose), and the middle pose with the jaws closed.
pub fn align_poses(arm: ArmType) -> [AlignPose; 3] {
    let table = JointMapping::for_arm(arm);
    let mut middle = Joint::ALL.map(|joint| table.get(joint).offset_rad);
    middle[Joint::Gripper.index()] = 0.0;
    let mut closed = middle;
    if let Conversion::Percent { at_0_rad, .. } = table.get(Joint::Gripper).conversion {
        closed[Joint::Gripper.index()] = at_0_rad;
    }
    [
        AlignPose {
            name: "zero (arm straight up, every joint in the middle of its travel, jaws slightly open)",
            twin_rad: middle,
        },
        AlignPose {
            name: "rest (the episodes' home pose)",
            twin_rad: arm.spec().home,
        },
        AlignPose {
            name: "zero with the jaws closed",
            twin_rad: closed,
        },
    ]
}

/// Arguments of `fakesim-hil align`.
#[derive(Debug, Clone, clap::Args)]
pub struct AlignArgs {
    /// Serial port of the arm's servo bus.
    #[arg(long, value_name = "PATH")]
    pub port: PathBuf,
    /// The arm's LeRobot calibration file.
    #[arg(long, value_name = "FILE")]
    pub calibration: PathBuf,
    /// Where to write the joint-mapping file.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Baud rate of the bus.
    #[arg(long, default_value_t = DEFAULT_BAUD_RATE, value_parser = parse_baud)]
    pub baud: u32,
    /// The arm: so101 or so100 (its twin, poses and default table).
    #[arg(long, value_name = "ARM", default_value_t)]
    pub arm: ArmType,
    /// Reply timeout.
    #[command(flatten)]
    pub timeout: ReplyTimeout,
}

/// Runs the procedure and writes the mapping file.
pub async fn run(args: AlignArgs, mut io: Console) -> anyhow::Result<()> {
    check_out(&args.out)?;
    let calibration = Calibration::load(&args.calibration)?;
    calibration
        .check_usable(&SO101_MOTORS)
        .with_context(|| format!("calibration {}", args.calibration.display()))?;
    let twin = Sim::load(&Scene::builtin(args.arm, true), DEFAULT_SUBSTEPS_PER_TICK)?.joint_ranges();
    let mapping = unit_table(args.arm).bind(&calibration, &twin)?;
    let mut bus = open_bus(&args.port, args.baud, args.timeout.bus_config())?;
    let ids = mapping.servo_ids();
    for id in ids {
        bus.torque_off(id).await?;
    }
    let mut samples = Vec::new();
    for pose in align_poses(args.arm) {
        let degrees: Vec<String> = Joint::ALL
            .iter()
            .map(|j| format!("{} {:.0}°", j.label(), pose.twin_rad[j.index()].to_degrees()))
            .collect();
        io.prompt(&format!(
            "Torque is off. Put the arm in the {} pose ({}), then press Enter.",
            pose.name,
            degrees.join(", ")
        ))
        .await?;
        let mut steps = [0; 6];
        for (joint, result) in Joint::ALL.into_iter().zip(bus.sync_read_positions(&ids).await?) {
            steps[joint.index()] = result.with_context(|| format!("reading {}", joint.label()))?.value;
        }
        samples.push((pose.twin_rad, steps));
    }
    let table = fit(args.arm, &mapping, &samples);
    for (row, joint) in table.joints.iter().zip(Joint::ALL) {
        io.say(&format!(
            "{:<13} sign {:+} offset {:+.4} rad ({:+.1}°)",
            joint.label(),
            row.sign,
            row.offset_rad,
            row.offset_rad.to_degrees()
        ))?;
    }
    table
        .bind(&calibration, &twin)
        .context("the measured mapping does not fit the twin; check the poses and run align again")?;
    write(&args.out, &table)?;
    io.say(&format!(
        "Wrote {}; start the daemon with --mapping {}",
        args.out.display(),
        args.out.display()
    ))
}

fn write(path: &Path, table: &JointMapping) -> anyhow::Result<()> {
    std::fs::write(path, table.to_json()).with_context(|| format!("writing {}", path.display()))
}

/// The default table of `arm` with sign +1 and no offset on every joint: what [`fit`] measures
/// against.
pub fn unit_table(arm: ArmType) -> JointMapping {
    let mut table = JointMapping::for_arm(arm);
    for row in &mut table.joints {
        row.sign = 1;
        row.offset_rad = 0.0;
    }
    table
}

/// `arm`'s table with each joint's sign and offset fitted to `samples` (twin angles and the
/// servo steps read there), given the mapping bound from [`unit_table`]. A joint whose poses
/// do not differ enough keeps sign +1.
pub fn fit(arm: ArmType, unit: &CalibratedMapping, samples: &[([f64; 6], [i32; 6])]) -> JointMapping {
    let mut table = unit_table(arm);
    for joint in Joint::ALL {
        let points: Vec<(f64, f64)> = samples
            .iter()
            .map(|(twin, steps)| {
                let base = unit.servo_to_twin(joint, steps[joint.index()]).get::<radian>();
                (twin[joint.index()], base)
            })
            .collect();
        let sign = sign_of(&points);
        let offset = points.iter().map(|(twin, base)| twin - sign * base).sum::<f64>() / points.len().max(1) as f64;
        let row = &mut table.joints[joint.index()];
        row.sign = if sign < 0.0 { -1 } else { 1 };
        row.offset_rad = offset;
    }
    table
}

/// +1 or -1 from the pair of points farthest apart in twin angle, +1 when none is far enough.
fn sign_of(points: &[(f64, f64)]) -> f64 {
    let mut best: Option<((f64, f64), (f64, f64))> = None;
    for (i, a) in points.iter().enumerate() {
        for b in points.iter().skip(i + 1) {
            let spread = (a.0 - b.0).abs();
            if spread >= SIGN_SPREAD_RAD && best.is_none_or(|(x, y)| spread > (x.0 - y.0).abs()) {
                best = Some((*a, *b));
            }
        }
    }
    match best {
        Some((a, b)) if (a.0 - b.0) * (a.1 - b.1) < 0.0 => -1.0,
        _ => 1.0,
    }
}

/// Refuses an output path that is a directory.
fn check_out(path: &Path) -> anyhow::Result<()> {
    if path.is_dir() {
        bail!("{} is a directory; give a file name for the mapping", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use feetech_emu::{VirtualArm, VirtualSo101};
    use uom::si::f64::Angle;

    #[test]
    fn a_joint_turning_the_other_way_gets_sign_minus_one() {
        for (arm, calibration) in [
            (ArmType::So101, VirtualSo101::calibration()),
            (ArmType::So100, VirtualArm::So100.calibration()),
        ] {
            let twin = Sim::load(&Scene::builtin(arm, true), DEFAULT_SUBSTEPS_PER_TICK)
                .unwrap()
                .joint_ranges();
            let unit = unit_table(arm).bind(&calibration, &twin).unwrap();
            // The elbow servo is mounted the other way round about a zero 0.1 rad past the
            // middle of the elbow's travel (the model's zero on the SO-101).
            let zero = JointMapping::for_arm(arm).get(Joint::ElbowFlex).offset_rad + 0.1;
            let samples: Vec<([f64; 6], [i32; 6])> = align_poses(arm)
                .iter()
                .map(|pose| {
                    let steps = Joint::ALL.map(|joint| {
                        let mut angle = pose.twin_rad[joint.index()];
                        if joint == Joint::ElbowFlex {
                            angle = -(angle - zero);
                        }
                        unit.twin_to_servo(joint, Angle::new::<radian>(angle)).unwrap()
                    });
                    (pose.twin_rad, steps)
                })
                .collect();
            let table = fit(arm, &unit, &samples);
            assert_eq!(table.arm(), Some(arm));
            let elbow = table.get(Joint::ElbowFlex);
            assert_eq!(elbow.sign, -1, "{arm}");
            assert!((elbow.offset_rad - zero).abs() < 2e-3, "{arm}: {}", elbow.offset_rad);
            assert_eq!(table.get(Joint::WristFlex).sign, 1, "{arm}");
        }
        assert_eq!(sign_of(&[(0.0, 0.0), (0.1, -0.1)]), 1.0, "too close to tell");
    }

    #[test]
    fn the_so100_poses_are_the_middle_of_its_travel_and_its_home() {
        assert_eq!(align_poses(ArmType::So101)[0].twin_rad, [0.0; 6]);
        let [middle, rest, closed] = align_poses(ArmType::So100);
        let table = JointMapping::so100();
        assert_eq!(middle.twin_rad[1], table.get(Joint::ShoulderLift).offset_rad);
        assert!((middle.twin_rad[1] + 1.573).abs() < 1e-9 && (middle.twin_rad[2] - 1.483).abs() < 1e-9);
        assert_eq!(rest.twin_rad, ArmType::So100.spec().home);
        assert_eq!(closed.twin_rad[5], -0.174);
    }
}
