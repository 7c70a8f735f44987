#![allow(clippy::unwrap_used)]

use super::distortion::{distort, undistort};
use super::*;
use crate::scene::Scene;
use fakesim_arm::ArmType;
use mujoco_rs::prelude::*;

const FRONT: &str = r#"
name = "front"
width = 640
height = 480
fx = 600.0
fy = 610.0
cx = 320.0
cy = 240.0
pos = [0.6, 0.0, 1.1]
quat = [2.0, 0.0, 0.0, 0.0]
"#;

/// The error of FRONT with `key = value` in place of its own line (or added).
fn error_with(key: &str, value: &str) -> String {
    let mut text: String = FRONT
        .lines()
        .filter(|line| !line.starts_with(&format!("{key} =")))
        .map(|line| format!("{line}\n"))
        .collect();
    if !value.is_empty() {
        text.push_str(&format!("{key} = {value}\n"));
    }
    CameraProfile::from_toml(&text, "front.toml").unwrap_err().to_string()
}

#[test]
fn a_profile_reads_with_its_quaternion_normalised() {
    let profile = CameraProfile::from_toml(FRONT, "front.toml").unwrap();
    assert_eq!(profile.quat, [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(
        profile.lens(),
        Lens::Pixels {
            fx: 600.0,
            fy: 610.0,
            cx: 320.0,
            cy: 240.0
        }
    );
    let again = CameraProfile::from_toml(&profile.to_toml(), "again").unwrap();
    assert_eq!(again, profile, "written and read back");
}

#[test]
fn each_bad_value_is_refused_naming_its_key() {
    let cases = [
        ("width", "0", "`width` must be from 1 to 4096"),
        ("height", "5000", "`height` must be from 1 to 4096"),
        ("width", "\"wide\"", "width = \"wide\""),
        ("fovy-deg", "40.0", "not both (`fovy-deg` and `fx`"),
        ("fx", "", "`fx` missing"),
        ("fy", "-3.0", "`fy` must be a positive"),
        ("cx", "700.0", "`cx` must lie in the image"),
        ("cy", "nan", "`cy` must lie in the image"),
        ("quat", "[0.0, 0.0, 0.0, 0.0]", "`quat` must be a finite, non-zero"),
        ("pos", "[0.0, 1.0]", "pos = [0.0, 1.0]"),
        ("pos", "[0.0, inf, 1.0]", "`pos` must be three finite"),
        (
            "distortion",
            "[0.1, 0.0, 0.0, 0.0, nan]",
            "`distortion` must be five finite",
        ),
        ("name", "\"\"", "`name` must be 1 to 64"),
        ("name", "\"a b\"", "`name` must be 1 to 64"),
        ("mount", "\"grip\\u0000per\"", "`mount` must be 1 to 64"),
        ("fov", "40.0", "unknown field `fov`"),
        ("name", "", "missing field `name`"),
    ];
    for (key, value, expected) in cases {
        let error = error_with(key, value);
        assert!(error.contains(expected), "{key} = {value}: {error}");
        assert!(
            error.starts_with("camera profile ") && error.contains("front.toml"),
            "{key} = {value}: names the profile: {error}"
        );
    }
    let long = "x".repeat(10_000);
    let error = error_with("name", &format!("\"{long}\""));
    assert!(
        error.len() < 400,
        "a long name is quoted bounded: {} bytes",
        error.len()
    );
    let lensless = FRONT
        .lines()
        .filter(|l| !l.starts_with(['f', 'c']))
        .collect::<Vec<_>>()
        .join("\n");
    let error = CameraProfile::from_toml(&lensless, "x").unwrap_err().to_string();
    assert!(error.contains("a lens is needed"), "{error}");
}

#[test]
fn a_table_from_a_config_file_is_read_as_a_file_is() {
    let table: toml::Table = toml::from_str(FRONT).unwrap();
    let profile = CameraProfile::from_table(&table, "[[camera]] 1").unwrap();
    assert_eq!(profile, CameraProfile::from_toml(FRONT, "front.toml").unwrap());
    let mut table = table;
    table.insert("width".into(), toml::Value::String("wide".into()));
    let error = CameraProfile::from_table(&table, "[[camera]] 1")
        .unwrap_err()
        .to_string();
    assert!(error.contains("width = \"wide\""), "{error}");
}

#[test]
fn later_profiles_replace_earlier_ones_of_the_same_name() {
    let front = CameraProfile::from_toml(FRONT, "f").unwrap();
    let wide = CameraProfile {
        width: 800,
        ..front.clone()
    };
    let side = CameraProfile {
        name: "side".into(),
        ..front.clone()
    };
    let names_and_widths: Vec<_> = merged([front, side, wide])
        .into_iter()
        .map(|p| (p.name, p.width))
        .collect();
    assert_eq!(names_and_widths, [("front".into(), 800), ("side".into(), 640)]);
}

#[test]
fn profiles_become_cameras_of_both_arms_models_at_their_resolution() {
    for arm in [ArmType::So101, ArmType::So100] {
        for scene in [Scene::builtin(arm, true), Scene::Pair { arm, objects: false }] {
            let profiles = standard_profiles(&scene);
            let model = scene.compile_with(&profiles, &[]).unwrap();
            let plain = scene.compile().unwrap();
            assert_eq!(
                model.ffi().ncam,
                plain.ffi().ncam + profiles.len() as i64,
                "{arm:?}: every profile is a camera"
            );
            let sizes = frame_sizes(&model);
            for profile in &profiles {
                let id = model.name_to_id(MjtObjBase::mjOBJ_CAMERA, &profile.name).unwrap();
                assert_eq!(sizes[id], Some((640, 480)), "{}", profile.name);
            }
            let own = plain.name_to_id(MjtObjBase::mjOBJ_CAMERA, "agentview").unwrap();
            assert_eq!(sizes[own], None, "the scene's own cameras keep the request's size");
            assert_eq!(model.ffi().nbody, plain.ffi().nbody, "no body added");
        }
    }
    assert_eq!(standard_profiles(&Scene::builtin(ArmType::So101, false)).len(), 2);
    let pair: Vec<_> = standard_profiles(&Scene::Pair {
        arm: ArmType::So100,
        objects: true,
    })
    .into_iter()
    .map(|p| (p.name, p.mount))
    .collect();
    assert_eq!(
        pair,
        [
            ("front".into(), None),
            ("left/wrist".into(), Some("left/Fixed_Jaw".into())),
            ("right/wrist".into(), Some("right/Fixed_Jaw".into()))
        ]
    );
}

#[test]
fn a_profile_clashing_with_the_scene_or_mounted_nowhere_is_refused() {
    let front = CameraProfile::from_toml(FRONT, "f").unwrap();
    let clash = CameraProfile {
        name: "agentview".into(),
        ..front.clone()
    };
    let error = Scene::Tabletop.compile_with(&[clash], &[]).unwrap_err().to_string();
    assert!(error.contains("has a camera of that name already"), "{error}");
    let nowhere = CameraProfile {
        mount: Some("hand".into()),
        ..front
    };
    let error = Scene::Tabletop.compile_with(&[nowhere], &[]).unwrap_err().to_string();
    assert!(error.contains("`mount` \"hand\" is not a body"), "{error}");
}

#[test]
fn undistortion_inverts_the_lens_model() {
    let k = [-0.3, 0.12, 0.001, -0.002, -0.02];
    for point in [(0.0, 0.0), (0.3, -0.2), (-0.45, 0.35), (0.5, 0.37)] {
        let (x, y) = undistort(distort(point, k), k);
        assert!(
            (x - point.0).abs() < 1e-6 && (y - point.1).abs() < 1e-6,
            "{point:?}: {x}, {y}"
        );
    }
}
