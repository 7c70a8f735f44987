//! The logger thread: takes updates off the feed, poses the model on its own data, and logs
//! them to the recording stream.

mod columns;
mod open;
mod scene;

pub(crate) use open::Opened;

use crate::ToLeRobot;
use crate::feed::{Stamped, Update};
use crate::paths::{self, Arm, ArmPaths, Series};
use columns::{At, Clock, Columns};
use fakesim_bridge::hil::{Mode, Sample};
use fakesim_safety::SafetyEvent;
use fakesim_twin::arms::Side;
use fakesim_twin::{ArmSpec, TickSnapshot};
use rerun::{
    Color, EncodedImage, LineStrips3D, Points3D, RecordingStream, RecordingStreamResult, TextLog, TextLogLevel,
    ViewCoordinates,
};
use scene::Scene;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant, SystemTime};

/// Shortest wall time between two logged 3D scenes of the twin: faster ticks (a client ticking
/// the lock-step twin as fast as it runs) log their joints every tick and the scene at this
/// rate; the last tick's scene is drawn when this gap has passed, ticks or not.
const POSE_GAP: Duration = Duration::from_millis(20);
/// TCP positions kept for the drawn path.
const TCP_PATH_POINTS: usize = 400;
/// How often the logger looks at a busy feed.
const POLL: Duration = Duration::from_millis(5);
/// Empty looks at the feed after which the logger waits on it instead.
const IDLE_LOOKS: u32 = 20;
/// Colour of the measured real arm (RGBA).
const REAL_TINT: [u8; 4] = [255, 140, 0, 200];
/// Colour of the shadow's prediction (RGBA).
const PREDICTED_TINT: [u8; 4] = [70, 150, 255, 120];

fn tint([r, g, b, a]: [u8; 4]) -> Option<Color> {
    Some(Color::from_unmultiplied_rgba(r, g, b, a))
}

/// One of the twin's arms as the logger is given it.
pub(crate) struct ArmSetup {
    /// The arm.
    pub spec: &'static ArmSpec,
    /// Whether a real arm is paired with it: its real and predicted poses get geometry.
    pub has_arm: bool,
    /// Its conversion into LeRobot's units.
    pub to_lerobot: ToLeRobot,
}

/// What the logger keeps of one arm.
struct ArmView {
    paths: ArmPaths,
    has_arm: bool,
    to_lerobot: ToLeRobot,
    tcp_path: VecDeque<[f32; 3]>,
    /// When the arm was last drawn at a reading of its real arm.
    posed_at_reading: Option<Instant>,
}

/// What the logger thread owns.
pub(crate) struct Logger {
    opened: Opened,
    scene: Scene,
    /// Each of the twin's arms, in the scene's order.
    arms: Vec<ArmView>,
    /// The joint scalars waiting to be sent.
    columns: Columns,
    /// The last tick seen: frames and text entries are placed there too.
    tick: Option<u64>,
    mode: Mode,
    /// When the twin's 3D scene was last logged, and the tick skipped since, if any.
    posed_at: Option<Instant>,
    pending: Option<(SystemTime, Box<TickSnapshot>)>,
    /// Rerun errors met (logged once, then counted).
    errors: u64,
}

impl Logger {
    /// A logger over `opened`, drawing the twin's model (holding `arms`) posed at `start`; an
    /// arm with a real one attached gets the real and predicted poses' geometry too. Logs the
    /// static parts.
    pub fn new(
        opened: Opened,
        model: std::sync::Arc<mujoco_rs::prelude::MjModel>,
        arms: Vec<ArmSetup>,
        start: &TickSnapshot,
        mode: Mode,
    ) -> Result<Self, String> {
        let specs: Vec<&ArmSpec> = arms.iter().map(|arm| arm.spec).collect();
        let mut scene = Scene::new(model, &specs)?;
        scene.pose(&start.positions)?;
        let arms = (arms.into_iter())
            .map(|arm| ArmView {
                paths: ArmPaths::new(arm.spec),
                has_arm: arm.has_arm,
                to_lerobot: arm.to_lerobot,
                tcp_path: VecDeque::with_capacity(TCP_PATH_POINTS),
                posed_at_reading: None,
            })
            .collect();
        let mut logger = Logger {
            opened,
            scene,
            arms,
            columns: Columns::new(),
            tick: None,
            mode,
            posed_at: None,
            pending: None,
            errors: 0,
        };
        let logged = logger
            .log_static()
            .and_then(|()| logger.tick(SystemTime::now(), Box::new(start.clone())));
        logger.check(logged);
        Ok(logger)
    }

    /// Logs updates until told to stop (or every sender is gone), then flushes.
    pub fn run(mut self, feed: Receiver<Stamped>) {
        loop {
            let stamped = match feed.try_recv() {
                Ok(stamped) => stamped,
                Err(TryRecvError::Empty) => match self.wait(&feed) {
                    Some(stamped) => stamped,
                    None => break,
                },
                Err(TryRecvError::Disconnected) => break,
            };
            let Some(update) = stamped.update else { break };
            let logged = self
                .log(stamped.wall, update)
                .and_then(|()| self.columns.send_if_due(&self.opened.rec));
            self.check(logged);
        }
        let logged = self.log_pending().and_then(|()| self.columns.send(&self.opened.rec));
        self.check(logged);
        if let Err(e) = self.opened.rec.flush_blocking() {
            tracing::warn!(error = %e, "live view: the last updates may be lost");
        }
        if self.errors > 0 {
            tracing::warn!(errors = self.errors, "live view: Rerun refused some updates");
        }
    }

    /// The next update, once the feed is caught up with. While updates keep coming the logger
    /// looks at the feed every [`POLL`] instead of waiting on it, so a tick hands its snapshot
    /// over without waking this thread; after [`IDLE_LOOKS`] empty looks it waits on the feed.
    /// Meanwhile the gathered joints are sent and the last tick's skipped scene drawn as each
    /// falls due.
    fn wait(&mut self, feed: &Receiver<Stamped>) -> Option<Stamped> {
        let mut idle_looks = 0;
        loop {
            let logged = self.log_due();
            self.check(logged);
            match feed.try_recv() {
                Ok(stamped) => return Some(stamped),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => {}
            }
            if idle_looks < IDLE_LOOKS {
                idle_looks += 1;
                std::thread::sleep(POLL);
                continue;
            }
            let Some(left) = [self.columns.due_in(), self.scene_due_in()].into_iter().flatten().min() else {
                return feed.recv().ok();
            };
            match feed.recv_timeout(left) {
                Ok(stamped) => return Some(stamped),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// How long the skipped scene may still wait to be drawn; `None` when none waits.
    fn scene_due_in(&self) -> Option<Duration> {
        self.pending.as_ref()?;
        let since = self.posed_at.map_or(POSE_GAP, |at| at.elapsed());
        Some(POSE_GAP.saturating_sub(since))
    }

    /// Sends the gathered joints and draws the skipped scene, each if its time has come.
    fn log_due(&mut self) -> RecordingStreamResult<()> {
        self.columns.send_if_due(&self.opened.rec)?;
        if self.scene_due_in().is_some_and(|left| left.is_zero()) {
            self.log_pending()?;
        }
        Ok(())
    }

    fn check(&mut self, logged: RecordingStreamResult<()>) {
        if let Err(e) = logged {
            if self.errors == 0 {
                tracing::warn!(error = %e, "live view: Rerun refused an update (later ones are counted)");
            }
            self.errors += 1;
        }
    }

    fn log_static(&self) -> RecordingStreamResult<()> {
        let rec = &self.opened.rec;
        rec.log_static(paths::WORLD, &ViewCoordinates::RIGHT_HAND_Z_UP())?;
        self.scene.log_geometry(rec, paths::SCENE, &self.scene.fixed, None)?;
        self.scene.log_geometry(rec, paths::SCENE, &self.scene.moving, None)?;
        for (view, arm) in self.arms.iter().zip(&self.scene.arms) {
            self.scene.log_geometry(rec, Arm::Twin.root(), &arm.bodies, None)?;
            if view.has_arm {
                self.scene
                    .log_geometry(rec, Arm::Real.root(), &arm.bodies, tint(REAL_TINT))?;
                self.scene
                    .log_geometry(rec, Arm::Predicted.root(), &arm.bodies, tint(PREDICTED_TINT))?;
            }
        }
        for body in &self.scene.fixed {
            rec.log_static(format!("{}/{}", paths::SCENE, body.name), &self.scene.transform(body))?;
        }
        Ok(())
    }

    fn log(&mut self, wall: SystemTime, update: Update) -> RecordingStreamResult<()> {
        match update {
            Update::Tick(snapshot) => self.tick(wall, snapshot),
            Update::Sample { arm, sample, goals } => self.sample(wall, arm, &sample, goals),
            Update::Mode(mode) => {
                let from = std::mem::replace(&mut self.mode, mode);
                stamp(&self.opened.rec, wall, self.tick, None);
                let text = format!("mode: {} -> {}", from.name(), mode.name());
                self.text(paths::EVENTS_MODE, text, TextLogLevel::INFO)
            }
            Update::Safety { arm, event } => {
                stamp(&self.opened.rec, wall, self.tick, None);
                self.text(paths::EVENTS_SAFETY, safety_text(arm, &event), TextLogLevel::WARN)
            }
            Update::Journal(line) => {
                stamp(&self.opened.rec, wall, self.tick, None);
                self.text(paths::EVENTS_EPISODE, journal_text(&line), TextLogLevel::INFO)
            }
            Update::Frame { camera, png } => {
                stamp(&self.opened.rec, wall, self.tick, None);
                self.opened
                    .rec
                    .log(paths::camera(&camera), &EncodedImage::from_file_contents(png.to_vec()))
            }
            Update::MoveTarget(target) => {
                stamp(&self.opened.rec, wall, self.tick, None);
                let point = target.map(|v| v as f32);
                self.opened.rec.log(
                    paths::MOVE_TARGET,
                    &Points3D::new([point])
                        .with_radii([0.008])
                        .with_colors([Color::from_rgb(230, 40, 200)]),
                )
            }
        }
    }

    fn text(&self, path: &str, text: String, level: &str) -> RecordingStreamResult<()> {
        self.opened.rec.log(path, &TextLog::new(text).with_level(level))
    }

    /// The twin after a physics advance: its arms' joints, and in `sim` LeRobot's observation
    /// and action (the setpoints), every tick; its arms, the moving objects and the TCP paths
    /// in 3D at most every [`POSE_GAP`] (the last tick's once the gap has passed).
    fn tick(&mut self, wall: SystemTime, snapshot: Box<TickSnapshot>) -> RecordingStreamResult<()> {
        self.tick = Some(snapshot.tick);
        let at = (Clock::Tick, snapshot.tick, wall);
        for (arm, twin) in self.arms.iter().zip(&snapshot.arms) {
            for (i, q) in twin.joints.iter().enumerate() {
                self.columns.push(arm.paths.series(i, Series::Twin), at, *q);
            }
            if self.mode == Mode::Sim {
                lerobot(&mut self.columns, arm, at, &twin.joints, Some(&twin.ctrl));
            }
        }
        self.pending = Some((wall, snapshot));
        if self.scene_due_in().is_some_and(|left| left.is_zero()) {
            self.log_pending()?;
        }
        Ok(())
    }

    /// Draws the last tick whose 3D scene was not drawn yet, at its own tick and time: the
    /// twin's arm, the moving objects and the TCP's path (one point per drawn scene).
    fn log_pending(&mut self) -> RecordingStreamResult<()> {
        let Some((wall, snapshot)) = self.pending.take() else {
            return Ok(());
        };
        if let Err(e) = self.scene.pose(&snapshot.positions) {
            tracing::warn!(error = %e, "live view: cannot pose the twin");
            return Ok(());
        }
        self.posed_at = Some(Instant::now());
        stamp(&self.opened.rec, wall, Some(snapshot.tick), None);
        let rec = &self.opened.rec;
        for (index, (view, arm)) in self.arms.iter_mut().zip(&self.scene.arms).enumerate() {
            if view.tcp_path.len() == TCP_PATH_POINTS {
                view.tcp_path.pop_front();
            }
            view.tcp_path.push_back(self.scene.tcp(arm));
            log_arm(rec, &self.scene, index, Arm::Twin)?;
            rec.log(
                view.paths.tcp_path.as_str(),
                &LineStrips3D::new([view.tcp_path.iter().copied()]).with_radii([0.002]),
            )?;
        }
        for body in &self.scene.moving {
            rec.log(format!("{}/{}", paths::SCENE, body.name), &self.scene.transform(body))?;
        }
        Ok(())
    }

    /// A reading of real arm `arm`: every joint series (twin, real, predicted, residual) and,
    /// in `mirror` and `hil`, LeRobot's observation (the reading) and action (the goals in
    /// force); the twin, real and predicted arms in 3D at most every [`POSE_GAP`].
    fn sample(
        &mut self,
        wall: SystemTime,
        arm: usize,
        sample: &Sample,
        goals: Option<[f64; 6]>,
    ) -> RecordingStreamResult<()> {
        let (Some(real), Some(view)) = (sample.real_rad, self.arms.get_mut(arm)) else {
            return Ok(());
        };
        let at = (Clock::Reading, sample.seq, wall);
        for (i, (twin, real)) in sample.twin_rad.iter().zip(&real).enumerate() {
            self.columns.push(view.paths.series(i, Series::Twin), at, *twin);
            self.columns.push(view.paths.series(i, Series::Real), at, *real);
        }
        if let Some(shadow) = &sample.shadow {
            for (i, joint) in shadow.iter().enumerate() {
                self.columns
                    .push(view.paths.series(i, Series::Predicted), at, joint.predicted_rad);
                self.columns
                    .push(view.paths.series(i, Series::Residual), at, joint.residual_rad);
            }
        }
        // In `sim` the twin moves, not the arm: LeRobot's observation is the twin's then.
        if self.mode != Mode::Sim {
            lerobot(&mut self.columns, view, at, &real, goals.as_ref());
        }
        // The arms in 3D at most every POSE_GAP: readings come about a thousand a second.
        if view.posed_at_reading.is_some_and(|at| at.elapsed() < POSE_GAP) {
            return Ok(());
        }
        view.posed_at_reading = Some(Instant::now());
        let rec = &self.opened.rec;
        stamp(rec, wall, None, Some(sample.seq));
        self.scene.pose_arm(arm, &sample.twin_rad);
        log_arm(rec, &self.scene, arm, Arm::Twin)?;
        self.scene.pose_arm(arm, &real);
        log_arm(rec, &self.scene, arm, Arm::Real)?;
        if let Some(shadow) = &sample.shadow {
            self.scene.pose_arm(arm, &shadow.map(|s| s.predicted_rad));
            log_arm(rec, &self.scene, arm, Arm::Predicted)?;
        }
        Ok(())
    }
}

/// Sets the timelines of `rec`'s next rows: the tick when there is one, the reading when there
/// is one, and the wall time.
fn stamp(rec: &RecordingStream, wall: SystemTime, tick: Option<u64>, reading: Option<u64>) {
    rec.reset_time();
    if let Some(tick) = tick {
        rec.set_time_sequence(paths::TICK, i64::try_from(tick).unwrap_or(i64::MAX));
    }
    if let Some(reading) = reading {
        rec.set_time_sequence(paths::READING, i64::try_from(reading).unwrap_or(i64::MAX));
    }
    rec.set_time(paths::WALL_TIME, wall);
}

/// `observation.<joint>.pos` and, when given, `action.<joint>.pos` of `arm`, in LeRobot's
/// units.
fn lerobot(columns: &mut Columns, arm: &ArmView, at: At, observed: &[f64; 6], action: Option<&[f64; 6]>) {
    for (path, value) in arm.paths.observation.iter().zip((arm.to_lerobot)(observed)) {
        columns.push(path, at, value);
    }
    if let Some(action) = action {
        for (path, value) in arm.paths.action.iter().zip((arm.to_lerobot)(action)) {
            columns.push(path, at, value);
        }
    }
}

/// The bodies of the scene's arm `arm` as posed, under the root of `pose`.
fn log_arm(rec: &RecordingStream, scene: &Scene, arm: usize, pose: Arm) -> RecordingStreamResult<()> {
    for body in scene.arms.get(arm).map_or(&[][..], |arm| &arm.bodies) {
        rec.log(format!("{}/{}", pose.root(), body.name), &scene.transform(body))?;
    }
    Ok(())
}

/// A safety event as one line: its kind, then its fields as JSON; on a pair the arm first.
fn safety_text(arm: Option<Side>, event: &SafetyEvent) -> String {
    let text = match serde_json::to_value(event) {
        Ok(Value::Object(mut fields)) => {
            let kind = fields
                .remove("event")
                .and_then(|k| k.as_str().map(str::to_owned))
                .unwrap_or_else(|| "safety".to_owned());
            format!("{kind} {}", Value::Object(fields))
        }
        _ => format!("{event:?}"),
    };
    match arm {
        Some(side) => format!("{side}: {text}"),
        None => text,
    }
}

/// A journal line as one line: its kind, the stop reason when it has one, then the rest.
fn journal_text(line: &Value) -> String {
    let kind = line.get("kind").and_then(Value::as_str).unwrap_or("event");
    let mut fields = line.as_object().cloned().unwrap_or_default();
    for dropped in ["t", "kind", "state", "step_distances_m", "openings_m"] {
        fields.remove(dropped);
    }
    match fields.remove("stop_reason") {
        Some(Value::String(reason)) => format!("{kind}: {reason} {}", Value::Object(fields)),
        _ => format!("{kind} {}", Value::Object(fields)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fakesim_arm::Joint;

    #[test]
    fn safety_and_journal_lines_read_as_their_kind_first() {
        let drift = SafetyEvent::calibration_drift(Joint::WristRoll, 0.2);
        let text = safety_text(None, &drift);
        assert!(text.starts_with("calibration_drift {"), "{text}");
        assert!(text.contains("wrist_roll") && text.contains("0.2"), "{text}");
        assert_eq!(safety_text(Some(Side::Right), &drift), format!("right: {text}"));
        let line = serde_json::json!({
            "t": 1.0, "kind": "move", "stop_reason": "reached", "executed_steps": 7, "state": {"q": 1}
        });
        assert_eq!(journal_text(&line), r#"move: reached {"executed_steps":7}"#);
        let line = serde_json::json!({"t": 1.0, "kind": "reset_task", "run": "r1"});
        assert_eq!(journal_text(&line), r#"reset_task {"run":"r1"}"#);
    }
}
