//! Tick with camera frames: colour PNGs and depth codes of the requested size, rendered after
//! the tick.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::{TestServer, named};
use fakesim_episode::session::CAMERAS;
use fakesim_proto::v1::camera_frame::Depth;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::*;
use tonic::transport::Channel;

/// Decodes a PNG: (width, height, colour type, bit depth, pixel bytes).
fn decode(bytes: &[u8]) -> (u32, u32, png::ColorType, png::BitDepth, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    pixels.truncate(info.buffer_size());
    (info.width, info.height, info.color_type, info.bit_depth, pixels)
}

/// The servo targets in force: an action that keeps the arm where it is.
async fn targets_in_force(robot: &mut RobotServiceClient<Channel>) -> Vec<f64> {
    robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner()
        .ctrl_targets
}

#[tokio::test(flavor = "multi_thread")]
async fn default_tick_images_are_colour_pngs_of_the_cameras_named_at_their_sizes() {
    let server = TestServer::start_with(|s| s.image_size = 64).await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let info = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    let action = targets_in_force(&mut robot).await;
    let tick = robot
        .tick(TickRequest {
            action,
            want_images: true,
            cameras: info.cameras.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let cameras: Vec<&str> = tick.frames.iter().map(|f| f.camera.as_str()).collect();
    assert_eq!(cameras, info.cameras);
    // A profile camera (the standard front and wrist among them) comes at its own size, the
    // scene's cameras at the daemon's default.
    let size_of = |camera: &str| {
        info.camera_sizes
            .iter()
            .find(|size| size.camera == camera)
            .map_or((64, 64), |size| (size.width, size.height))
    };
    assert!(info.cameras.iter().any(|camera| size_of(camera) == (64, 64)));
    for frame in &tick.frames {
        let size = size_of(&frame.camera);
        assert_eq!((frame.width, frame.height), size);
        assert!(frame.depth.is_none());
        let (w, h, color, bits, pixels) = decode(&frame.color_png);
        assert_eq!(
            (w, h, color, bits),
            (size.0, size.1, png::ColorType::Rgb, png::BitDepth::Eight)
        );
        assert!(
            pixels.iter().any(|&p| p != pixels[0]),
            "{} is a blank image",
            frame.camera
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn requested_cameras_sizes_and_depth_encodings() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let action = targets_in_force(&mut robot).await;
    let request = |encoding: DepthEncoding| TickRequest {
        action: action.clone(),
        want_images: true,
        cameras: vec!["agentview".into()],
        width: 80,
        height: 48,
        want_depth: true,
        depth_encoding: encoding.into(),
        ..Default::default()
    };

    let tick = robot.tick(request(DepthEncoding::Raw)).await.unwrap().into_inner();
    assert_eq!(tick.frames.len(), 1);
    let frame = &tick.frames[0];
    assert_eq!(
        (frame.camera.as_str(), frame.width, frame.height),
        ("agentview", 80, 48)
    );
    let (w, h, _, _, _) = decode(&frame.color_png);
    assert_eq!((w, h), (80, 48));
    let Some(Depth::DepthRaw(raw)) = &frame.depth else {
        panic!("expected raw depth, got {:?}", frame.depth)
    };
    assert_eq!(raw.len(), 80 * 48 * 2);
    let raw_mm: Vec<u16> = raw.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
    let mut sorted = raw_mm.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    assert!(
        (300..2000).contains(&median),
        "agentview looks down at the table from about a metre: median {median} mm"
    );

    let tick = robot.tick(request(DepthEncoding::Png)).await.unwrap().into_inner();
    let Some(Depth::DepthPng(depth_png)) = &tick.frames[0].depth else {
        panic!("expected PNG depth")
    };
    let (w, h, color, bits, pixels) = decode(depth_png);
    assert_eq!(
        (w, h, color, bits),
        (80, 48, png::ColorType::Grayscale, png::BitDepth::Sixteen)
    );
    let png_mm: Vec<u16> = pixels
        .chunks_exact(2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(png_mm.len(), raw_mm.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn frames_show_the_state_after_the_tick() {
    let server = TestServer::start_with(|s| s.image_size = 64).await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let action = targets_in_force(&mut robot).await;
    let wrist_view = |action: Vec<f64>| TickRequest {
        action,
        want_images: true,
        cameras: vec!["robot0_eye_in_hand".into()],
        ..Default::default()
    };
    let still = robot.tick(wrist_view(action.clone())).await.unwrap().into_inner();

    robot
        .set_joint_positions(SetJointPositionsRequest {
            positions: Some(named(&[("shoulder_pan", 1.0)])),
            hold: true,
        })
        .await
        .unwrap();
    let mut turned = action;
    turned[0] = 1.0;
    let moved = robot.tick(wrist_view(turned)).await.unwrap().into_inner();
    assert_ne!(
        still.frames[0].color_png, moved.frames[0].color_png,
        "the wrist camera turned with the arm"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn raw_colour_is_the_pngs_pixels_without_the_encoding() {
    let server = TestServer::start_with(|s| s.image_size = 64).await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let action = targets_in_force(&mut robot).await;
    let tick = |encoding: ColorEncoding| TickRequest {
        action: action.clone(),
        want_images: true,
        cameras: CAMERAS.map(str::to_owned).to_vec(),
        color_encoding: encoding.into(),
        ..Default::default()
    };
    let saved = SaveStateRequest { name: "before".into() };
    robot.save_state(saved).await.unwrap();
    let png = robot.tick(tick(ColorEncoding::Png)).await.unwrap().into_inner();
    let load = LoadStateRequest { name: "before".into() };
    robot.load_state(load).await.unwrap();
    let raw = robot.tick(tick(ColorEncoding::Raw)).await.unwrap().into_inner();
    assert_eq!(png.observation, raw.observation, "the same tick from the same state");
    assert_eq!(png.frames.len(), 2);
    for (png, raw) in png.frames.iter().zip(&raw.frames) {
        assert_eq!(png.camera, raw.camera);
        assert!(
            png.color_raw.is_empty() && raw.color_png.is_empty(),
            "one encoding each"
        );
        assert_eq!(raw.color_raw.len(), 64 * 64 * 3);
        let (_, _, _, _, pixels) = decode(&png.color_png);
        assert!(
            pixels == raw.color_raw,
            "{}: raw RGB differs from the PNG's pixels",
            raw.camera
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tick_with_frames_says_how_long_drawing_and_encoding_took() {
    let server = TestServer::start_with(|s| s.image_size = 64).await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let action = targets_in_force(&mut robot).await;
    let tick = |want_images: bool, encoding: ColorEncoding| TickRequest {
        action: action.clone(),
        want_images,
        cameras: CAMERAS.map(str::to_owned).to_vec(),
        color_encoding: encoding.into(),
        ..Default::default()
    };
    let plain = robot.tick(tick(false, ColorEncoding::Png)).await.unwrap().into_inner();
    assert_eq!(plain.image_timing, None, "no frames, no timing");
    let png = robot.tick(tick(true, ColorEncoding::Png)).await.unwrap().into_inner();
    let timing = png.image_timing.unwrap();
    assert!(timing.render_s > 0.0 && timing.encode_s > 0.0, "{timing:?}");
    let raw = robot.tick(tick(true, ColorEncoding::Raw)).await.unwrap().into_inner();
    let timing = raw.image_timing.unwrap();
    assert!(timing.render_s > 0.0 && timing.encode_s >= 0.0, "{timing:?}");
}
