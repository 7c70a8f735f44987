//! Offscreen rendering through the handle: right size, not blank, depth in metres.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::image::{encode_depth_png, encode_rgb_png};
use fakesim_twin::values::ValueError;
use fakesim_twin::{RenderQuality, TwinConfig, TwinError, TwinHandle};

#[tokio::test]
async fn both_cameras_render_at_the_requested_size_and_are_not_blank() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    for camera in ["agentview", "robot0_eye_in_hand"] {
        let frame = twin.render(camera, 96, 64, true).await.unwrap();
        assert_eq!((frame.width, frame.height), (96, 64));
        assert_eq!(frame.rgb.len(), 96 * 64 * 3);
        let first = &frame.rgb[..3];
        let distinct = frame.rgb.chunks(3).filter(|px| *px != first).count();
        assert!(
            distinct > 96 * 64 / 10,
            "{camera} is nearly uniform ({distinct} pixels differ)"
        );
        let depth = frame.depth.as_ref().unwrap();
        assert!(depth.iter().all(|d| d.is_finite() && *d >= 0.0));
        assert!(
            depth.iter().any(|d| *d > 0.01 && *d < 3.0),
            "{camera} sees something within 3 m"
        );
        let png = encode_rgb_png(&frame).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(encode_depth_png(&frame).unwrap().is_some());
    }
}

#[tokio::test]
async fn bad_camera_and_size_are_refused() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let err = twin.render("topview", 64, 64, false).await.unwrap_err();
    assert!(
        matches!(err, TwinError::Value(ValueError::UnknownName { kind: "camera", .. })),
        "{err}"
    );
    assert!(err.to_string().contains("agentview"));
    let err = twin.render("agentview", 0, 64, false).await.unwrap_err();
    assert!(matches!(err, TwinError::ImageSize { .. }), "{err}");
    let err = twin.render("agentview", 5000, 64, false).await.unwrap_err();
    assert!(matches!(err, TwinError::ImageSize { .. }), "{err}");
}

#[tokio::test]
async fn the_handle_serialises_calls_on_one_thread() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let twin = twin.clone();
        tasks.push(tokio::spawn(async move {
            twin.try_with_sim(|sim| sim.step(10).map(|()| sim.time())).await
        }));
    }
    let mut times = Vec::new();
    for t in tasks {
        times.push(t.await.unwrap().unwrap());
    }
    times.sort_by(f64::total_cmp);
    let dt = twin.with_sim(|sim| sim.model_info().timestep).await.unwrap();
    for (i, t) in times.iter().enumerate() {
        assert!(
            (t - dt * 10.0 * (i as f64 + 1.0)).abs() < 1e-9,
            "calls interleaved: {times:?}"
        );
    }
}

#[tokio::test]
async fn cameras_shared_out_to_render_threads_come_back_in_request_order_and_as_drawn_on_one() {
    let cameras = ["robot0_eye_in_hand", "agentview", "agentview"];
    let mut drawn = Vec::new();
    for render_threads in [1, 2, 3] {
        let twin = TwinHandle::spawn(TwinConfig {
            render_threads,
            ..TwinConfig::default()
        })
        .unwrap();
        for quality in RenderQuality::ALL {
            let shot = twin.snapshot_cameras(&cameras, 48, 32, false).await.unwrap();
            drawn.push((
                render_threads,
                quality,
                twin.draw(shot.at(Some(quality))).await.unwrap(),
            ));
        }
    }
    for (threads, quality, frames) in &drawn {
        let on_one = &drawn.iter().find(|(t, q, _)| *t == 1 && q == quality).unwrap().2;
        assert_eq!(frames, on_one, "{threads} threads at {quality}");
        assert_eq!(frames[1], frames[2], "the same camera twice");
        assert_ne!(frames[0], frames[1], "the wrist camera first, as asked");
    }
    let fast = &drawn
        .iter()
        .find(|(t, q, _)| *t == 2 && *q == RenderQuality::Fast)
        .unwrap()
        .2;
    let full = &drawn
        .iter()
        .find(|(t, q, _)| *t == 2 && *q == RenderQuality::Full)
        .unwrap()
        .2;
    assert_ne!(fast, full, "each drawing at its own quality");
}
