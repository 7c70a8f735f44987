//! Backdrops and seeded variations, drawn by the twin's own render threads: a backdrop fills
//! exactly the pixels where no arm and no object is, and a seed draws the same frames twice.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::{Backdrop, Frame, JointValues, RenderQuality, TwinConfig, TwinHandle, Variations};
use std::path::Path;

const SIZE: u32 = 96;
const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// A photo of noise (every pixel its own colour), and its negative.
fn photos(dir: &Path) -> [std::path::PathBuf; 2] {
    let noise =
        |x: u32, y: u32, c: u32| ((x * 7919 + y * 104_729 + c * 1_299_709).wrapping_mul(2_654_435_761) >> 24) as u8;
    let paths = [dir.join("noise.png"), dir.join("negative.png")];
    for (k, path) in paths.iter().enumerate() {
        image::RgbImage::from_fn(SIZE, SIZE, |x, y| {
            let pixel = [0, 1, 2].map(|c| noise(x, y, c));
            image::Rgb(if k == 0 { pixel } else { pixel.map(|v| 255 - v) })
        })
        .save(path)
        .unwrap();
    }
    paths
}

fn twin(backdrop: Option<&Path>, variations: Variations) -> TwinHandle {
    let backdrops = backdrop
        .map(|path| {
            CAMERAS
                .iter()
                .map(|camera| Backdrop::open(camera, path).unwrap())
                .collect()
        })
        .unwrap_or_default();
    TwinHandle::spawn(TwinConfig {
        render_quality: RenderQuality::Fast,
        backdrops,
        variations,
        ..TwinConfig::default()
    })
    .unwrap()
}

/// The twin's frames of both cameras with the arm at `pose` (radians, the six joints).
async fn frames(twin: &TwinHandle, pose: [f64; 6]) -> Vec<Frame> {
    twin.try_with_sim(move |sim| {
        sim.set_joint_positions(&JointValues::Ordered(pose.to_vec()), true)
            .map(drop)
    })
    .await
    .unwrap();
    twin.render_cameras(&CAMERAS, SIZE, SIZE, false).await.unwrap()
}

fn pixels(frame: &Frame) -> Vec<&[u8]> {
    frame.rgb.chunks_exact(3).collect()
}

const POSES: [[f64; 6]; 2] = [[0.0; 6], [0.6, -0.4, 0.5, 0.3, 0.8, 0.4]];

#[tokio::test]
async fn the_backdrop_fills_exactly_what_is_not_arm_or_object() {
    let dir = tempfile::tempdir().unwrap();
    let [noise, negative] = photos(dir.path());
    let photo = image::open(&noise).unwrap().into_rgb8().into_raw();
    let plain = twin(None, Variations::default());
    let (with_noise, with_negative) = (
        twin(Some(&noise), Variations::default()),
        twin(Some(&negative), Variations::default()),
    );
    let mut foreground_at = Vec::new();
    for pose in POSES {
        let (a, b1, b2) = (
            frames(&plain, pose).await,
            frames(&with_noise, pose).await,
            frames(&with_negative, pose).await,
        );
        let mut masks = Vec::new();
        for (camera, ((a, b1), b2)) in CAMERAS.iter().zip(a.iter().zip(&b1).zip(&b2)) {
            let photo: Vec<&[u8]> = photo.chunks_exact(3).collect();
            let (a, b1, b2) = (pixels(a), pixels(b1), pixels(b2));
            // A pixel the two photos left alike is the render's; any other is the photo's.
            let mask: Vec<bool> = b1.iter().zip(&b2).map(|(p, q)| p == q).collect();
            for i in 0..mask.len() {
                if mask[i] {
                    assert_eq!(b1[i], a[i], "{camera} pixel {i}: under the mask, the render's");
                } else {
                    assert_eq!(b1[i], photo[i], "{camera} pixel {i}: elsewhere, the photo's");
                    assert_eq!(
                        b2[i],
                        photo[i].iter().map(|v| 255 - v).collect::<Vec<_>>(),
                        "{camera} pixel {i}"
                    );
                }
            }
            let share = mask.iter().filter(|&&m| m).count() as f64 / mask.len() as f64;
            println!("{camera}: {:.1} % of the frame is arm or object", share * 100.0);
            assert!(share > 0.005 && share < 0.9, "{camera}: foreground share {share}");
            masks.push((mask, a.iter().map(|p| p.to_vec()).collect::<Vec<_>>()));
        }
        foreground_at.push(masks);
    }
    // Without shadows or reflections (fast), a pixel of the plain render that changes when the
    // arm moves shows the arm in one pose or the other: it is foreground in one of them. The
    // room's own pixels do not change, and the mask of the fixed camera leaves most of them out.
    let (before, after) = (&foreground_at[0][0], &foreground_at[1][0]);
    let changed: Vec<usize> = (0..before.1.len()).filter(|&i| before.1[i] != after.1[i]).collect();
    assert!(changed.len() > 20, "the arm moved in the agentview frame");
    for i in changed {
        assert!(
            before.0[i] || after.0[i],
            "agentview pixel {i} changed with the arm but is background in both poses"
        );
    }
}

fn every_range() -> Variations {
    Variations {
        light_tilt_deg: Some(25.0),
        light_intensity: Some([0.6, 1.4]),
        part_color: Some(40),
        object_color: Some(40),
        camera_shift_mm: Some(5.0),
        camera_turn_deg: Some(2.0),
        backdrop_brightness: Some([0.7, 1.3]),
    }
}

#[tokio::test]
async fn a_seed_draws_the_same_frames_twice_and_another_seed_others() {
    // No backdrop: the frames differ by what the seed does to the model the cameras draw.
    let (one, two) = (twin(None, every_range()), twin(None, every_range()));
    let plain = twin(None, Variations::default());
    assert_eq!(plain.vary(5), None, "nothing varies without ranges");
    let unvaried = frames(&plain, POSES[1]).await;
    let look = one.vary(5).unwrap();
    assert_eq!(two.vary(5).unwrap(), look);
    let (first, second) = (frames(&one, POSES[1]).await, frames(&two, POSES[1]).await);
    assert_eq!(first, second, "seed 5 drew different frames on two twins");
    assert_ne!(first[0].rgb, unvaried[0].rgb, "seed 5 changed nothing");
    let other = one.vary(6).unwrap();
    assert_ne!(other, look);
    let third = frames(&one, POSES[1]).await;
    for (a, b) in first.iter().zip(&third) {
        assert_ne!(a.rgb, b.rgb, "seeds 5 and 6 drew the same frame");
    }
    // Back to seed 5 on the first twin: its frames again, bit for bit.
    one.vary(5).unwrap();
    assert_eq!(frames(&one, POSES[1]).await, first);
}

#[tokio::test]
async fn each_varied_aspect_changes_the_frames() {
    let none = Variations::default();
    let aspects = [
        (
            "light tilt",
            Variations {
                light_tilt_deg: Some(25.0),
                ..none.clone()
            },
        ),
        (
            "light intensity",
            Variations {
                light_intensity: Some([0.3, 0.6]),
                ..none.clone()
            },
        ),
        (
            "part colours",
            Variations {
                part_color: Some(60),
                ..none.clone()
            },
        ),
        (
            "object colours",
            Variations {
                object_color: Some(60),
                ..none.clone()
            },
        ),
        (
            "camera shift",
            Variations {
                camera_shift_mm: Some(8.0),
                ..none.clone()
            },
        ),
        (
            "camera turn",
            Variations {
                camera_turn_deg: Some(3.0),
                ..none.clone()
            },
        ),
    ];
    let unvaried = frames(&twin(None, none.clone()), POSES[1]).await;
    for (aspect, variations) in aspects {
        let varied = twin(None, variations);
        varied.vary(9).unwrap();
        let drawn = frames(&varied, POSES[1]).await;
        assert_ne!(drawn[0].rgb, unvaried[0].rgb, "{aspect}: agentview unchanged");
    }
    let dir = tempfile::tempdir().unwrap();
    let [noise, _] = photos(dir.path());
    let brightness = Variations {
        backdrop_brightness: Some([0.5, 0.7]),
        ..none.clone()
    };
    let (plain, dimmed) = (twin(Some(&noise), none), twin(Some(&noise), brightness));
    dimmed.vary(9).unwrap();
    let (before, after) = (frames(&plain, POSES[1]).await, frames(&dimmed, POSES[1]).await);
    let darker = before[0].rgb.iter().zip(&after[0].rgb).filter(|(b, a)| a < b).count();
    assert!(
        darker > before[0].rgb.len() / 2,
        "the backdrop is dimmed: {darker} values darker"
    );
}
