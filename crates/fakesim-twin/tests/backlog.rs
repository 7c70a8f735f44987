//! The render backlog through the handle: reads and reservations refused when it is full, a
//! reserved drawing drawn however full, reads dropped undrawn past their deadline, identical
//! frames drawn once and shared.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::backlog::FRAMES_PER_THREAD;
use fakesim_twin::{Admission, CameraSnapshot, FrameRoom, RenderQuality, TwinConfig, TwinError, TwinHandle};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// A drawing in progress, let in already: its first poll has run.
type Drawing = Pin<Box<dyn Future<Output = Result<Vec<fakesim_twin::Frame>, TwinError>> + Send>>;

/// Starts drawing `shot` as `admission` says and polls it once, which lets it in (or refuses it)
/// before this returns.
fn let_in(twin: &TwinHandle, shot: CameraSnapshot, admission: Admission<'static>) -> Drawing {
    let twin = twin.clone();
    polled(Box::pin(async move { twin.draw_as(shot, admission).await }))
}

/// Starts drawing `shot` in `room` (reserved before) and polls it once, which lets it in.
fn let_in_reserved(twin: &TwinHandle, shot: CameraSnapshot, room: FrameRoom) -> Drawing {
    let twin = twin.clone();
    polled(Box::pin(
        async move { twin.draw_as(shot, Admission::Reserved(&room)).await },
    ))
}

/// A drawing polled once.
fn polled(mut drawing: Drawing) -> Drawing {
    if let Poll::Ready(done) = drawing.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        drawing = Box::pin(std::future::ready(done));
    }
    drawing
}

/// Snapshots of `n` distinct states: the red cube a millimetre further along the table in each.
async fn states(twin: &TwinHandle, cameras: &[&str], n: usize, size: u32) -> Vec<CameraSnapshot> {
    let mut shots = Vec::new();
    for _ in 0..n {
        twin.try_with_sim(|sim| {
            let [x, y, z] = sim.body_position("cube_red")?;
            sim.place_body("cube_red", [x + 0.001, y, z], 0.0)
        })
        .await
        .unwrap();
        shots.push(twin.snapshot_cameras(cameras, size, size, false).await.unwrap());
    }
    shots
}

#[tokio::test]
async fn a_full_backlog_refuses_reads_and_reservations_at_once_with_a_hint_and_draws_every_reserved_frame() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let read = Admission::Read { deadline: None };
    // An action's room, reserved before it runs.
    let room = twin.reserve_frames(2).unwrap();
    // Full-quality frames take tens of milliseconds each on any machine: the backlog fills
    // long before the render thread could drain it.
    let shots = states(&twin, &CAMERAS, FRAMES_PER_THREAD + 4, 256).await;
    let mut drawings = Vec::new();
    for shot in shots {
        drawings.push(let_in(&twin, shot.at(Some(RenderQuality::Full)), read));
    }
    let busy = twin.reserve_frames(2).unwrap_err();
    assert!(
        matches!(busy, TwinError::RenderBusy { retry_after_ms, .. } if retry_after_ms > 0),
        "another action is refused before it runs: {busy:?}"
    );
    let owed = states(&twin, &CAMERAS, 1, 256).await.pop().unwrap();
    let owed = let_in_reserved(&twin, owed.at(Some(RenderQuality::Full)), room);
    let mut refused = 0;
    for drawing in drawings {
        match drawing.await {
            Ok(frames) => assert_eq!(frames.len(), 2),
            Err(TwinError::RenderBusy {
                capacity,
                retry_after_ms,
                ..
            }) => {
                assert_eq!(capacity, FRAMES_PER_THREAD);
                assert!(retry_after_ms > 0);
                refused += 1;
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert!(refused >= 2, "{refused} reads refused");
    assert_eq!(
        owed.await.unwrap().len(),
        2,
        "the reserved images are drawn, full or not"
    );
    assert_eq!(twin.render_counts().refused, refused as u64 + 1);
}

#[tokio::test]
async fn a_read_past_its_deadline_is_dropped_undrawn() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let ahead = states(&twin, &CAMERAS, 2, 256).await;
    let blockers: Vec<Drawing> = ahead
        .into_iter()
        .map(|shot| {
            let shot = shot.at(Some(RenderQuality::Full));
            let_in(&twin, shot, Admission::Read { deadline: None })
        })
        .collect();
    // One camera: its frame is claimed (and counted shed) before the read is answered, so the
    // count below does not race a second frame still waiting for a render thread.
    let late = states(&twin, &CAMERAS[..1], 1, 64).await.pop().unwrap();
    let deadline = Instant::now() + Duration::from_millis(1);
    let late = let_in(
        &twin,
        late,
        Admission::Read {
            deadline: Some(deadline),
        },
    );
    assert_eq!(late.await.unwrap_err(), TwinError::DeadlinePassed);
    for blocker in blockers {
        blocker.await.unwrap();
    }
    let past = states(&twin, &CAMERAS, 1, 64).await.pop().unwrap();
    let refused = twin
        .draw_as(
            past,
            Admission::Read {
                deadline: Some(Instant::now()),
            },
        )
        .await;
    assert_eq!(refused.unwrap_err(), TwinError::DeadlinePassed);
    let counts = twin.render_counts();
    assert_eq!(counts.drawn, 4, "the blockers' frames only: {counts:?}");
    assert_eq!(
        counts.shed, 3,
        "the late read's frame and the past one's two: {counts:?}"
    );
}

#[tokio::test]
async fn identical_reads_asked_at_once_are_answered_alike_and_each_frame_is_drawn_or_shared() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let read = Admission::Read { deadline: None };
    // Two full-quality frames ahead keep the render thread busy for tens of milliseconds, while
    // the eight identical reads are let in within microseconds: they find their frames waiting.
    let ahead = states(&twin, &CAMERAS, 1, 256).await.pop().unwrap();
    let blocker = let_in(&twin, ahead.at(Some(RenderQuality::Full)), read);
    let shot = twin.snapshot_cameras(&CAMERAS, 64, 48, false).await.unwrap();
    let drawings: Vec<Drawing> = (0..8).map(|_| let_in(&twin, shot.clone(), read)).collect();
    let mut answers = Vec::new();
    for drawing in drawings {
        answers.push(drawing.await.unwrap());
    }
    blocker.await.unwrap();
    assert!(answers.windows(2).all(|pair| pair[0] == pair[1]));
    let counts = twin.render_counts();
    assert_eq!(
        counts.drawn + counts.shared,
        18,
        "the blocker's 2 and the reads' 16: {counts:?}"
    );
    // Each of the reads' two frames is drawn once and handed to all eight (4 drawn, 14 shared)
    // unless a stall of the test thread longer than the blocker's drawing let one be drawn
    // before the next read came; none shared is a backlog that shares nothing.
    assert!(
        counts.shared > 0,
        "identical frames asked while one waits are shared: {counts:?}"
    );
}
