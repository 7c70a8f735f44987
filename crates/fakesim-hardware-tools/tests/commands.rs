#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The hardware commands against the virtual SO-101 bus over a pseudo-terminal at 1 Mbaud,
//! like a real adapter. Prompts are answered through a scripted console: the test reads
//! what the command prints and types lines when the command asks, so the prompts (and the
//! live sweep display) sequence the test, never sleeps.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fakesim_hardware_tools::Console;
use fakesim_hardware_tools::calibrate::{self, CalibrateArgs};
use fakesim_hardware_tools::emulate::{self, EmulateArgs};
use fakesim_hardware_tools::scan::{self, ScanArgs};
use fakesim_hardware_tools::setup_ids::{self, SetupIdsArgs};
use fakesim_hardware_tools::teleop::{self, TeleopArgs};
use feetech::bus::{Bus, BusConfig};
use feetech::calibration::{ArmKind, Calibration, SO101_MOTORS, calibration_path};
use feetech::control_table::{
    BAUD_RATE, DEFAULT_BAUD_RATE, GOAL_POSITION, HOMING_OFFSET, ID, PRESENT_POSITION, TORQUE_ENABLE,
};
use feetech_emu::{EmuConfig, ServoConfig, VirtualArm, VirtualSo101, serve_pty};
use tokio::sync::{mpsc, oneshot};

/// Longest wait for an expected line before the test fails (a safety net, not a sync).
const PATIENCE: Duration = Duration::from_secs(60);

/// Reply timeout given to the commands: generous, as a loaded machine may be slow to
/// schedule the emulator (a broadcast ping always waits it out, so not too generous).
const TIMEOUT_MS: &str = "150";

/// Parses the arguments of one command as clap would.
#[derive(Debug, clap::Parser)]
struct Command<A: clap::Args> {
    #[command(flatten)]
    args: A,
}

fn parse<A: clap::Args>(argv: &[&str]) -> A {
    use clap::Parser;
    Command::<A>::try_parse_from(std::iter::once("tool").chain(argv.iter().copied()))
        .unwrap()
        .args
}

/// A writer that sends every complete line to the test.
struct LineSender {
    lines: mpsc::UnboundedSender<String>,
    partial: Vec<u8>,
}

impl Write for LineSender {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..end]).into_owned();
            // The test may have stopped listening; that is not the command's problem.
            let _ = self.lines.send(text);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The test's side of a scripted console: lines to type, lines printed (stdout and stderr).
struct User {
    typing: mpsc::UnboundedSender<String>,
    printed: mpsc::UnboundedReceiver<String>,
    transcript: Vec<String>,
}

fn console() -> (Console, User) {
    let (typing, input) = mpsc::unbounded_channel();
    let (printer, printed) = mpsc::unbounded_channel();
    let writer = |lines: &mpsc::UnboundedSender<String>| {
        Box::new(LineSender {
            lines: lines.clone(),
            partial: Vec::new(),
        })
    };
    let console = Console::new(input, writer(&printer), writer(&printer), false);
    let user = User {
        typing,
        printed,
        transcript: Vec::new(),
    };
    (console, user)
}

impl User {
    /// Reads printed lines until one satisfies `wanted`, and returns it.
    async fn expect(&mut self, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        loop {
            let line = tokio::time::timeout(PATIENCE, self.printed.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out waiting for {what}; printed:\n{}", self.transcript.join("\n")))
                .unwrap_or_else(|| panic!("output ended before {what}; printed:\n{}", self.transcript.join("\n")));
            self.transcript.push(line.clone());
            if wanted(&line) {
                return line;
            }
        }
    }

    /// Reads a line starting with `prefix`.
    async fn expect_prefix(&mut self, prefix: &str) -> String {
        self.expect(prefix, |line| line.starts_with(prefix)).await
    }

    /// Everything printed until the command drops its console.
    async fn rest(&mut self) -> Vec<String> {
        let mut rest = Vec::new();
        while let Some(line) = self.printed.recv().await {
            self.transcript.push(line.clone());
            rest.push(line);
        }
        rest
    }

    /// Types a line (an empty one is Enter).
    fn types(&self, line: &str) {
        self.typing.send(line.to_owned()).unwrap();
    }
}

/// `(id, model, firmware, baud, errors)` of the scan table rows.
fn scan_rows(lines: &[String]) -> Vec<(u8, String, String, u32, String)> {
    lines
        .iter()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            let [id, model, firmware, baud, errors] = cells.as_slice() else {
                return None;
            };
            Some((
                id.parse().ok()?,
                (*model).to_owned(),
                (*firmware).to_owned(),
                baud.parse().ok()?,
                (*errors).to_owned(),
            ))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_finds_the_six_servos_of_the_virtual_arm() {
    let emu = serve_pty(VirtualSo101::config()).await.unwrap();
    let port = emu.path().to_str().unwrap().to_owned();
    let (io, mut user) = console();
    let args: ScanArgs = parse(&[
        "--port",
        &port,
        "--baud",
        "1000000",
        "--baud",
        "500000",
        "--timeout",
        TIMEOUT_MS,
    ]);
    scan::run(args, io).await.unwrap();
    let printed = user.rest().await;

    let rows = scan_rows(&printed);
    let ids: Vec<u8> = rows.iter().map(|row| row.0).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6], "{printed:#?}");
    for (_, model, firmware, baud, errors) in &rows {
        assert_eq!(
            (model.as_str(), firmware.as_str(), *baud, errors.as_str()),
            ("STS3215", "3.10", 1_000_000, "-")
        );
    }
    // Progress went through both rates; servos only answer at theirs.
    let progress = format!("scanning {port} at 500000 baud (2/2): 6 found");
    assert!(printed.contains(&progress), "{printed:#?}");
    assert!(printed.contains(&"6 servo(s) found on 1 port(s)".to_owned()));
    emu.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_by_id_reports_servo_error_flags() {
    let mut config = VirtualSo101::config();
    config
        .faults
        .forced_errors
        .insert(2, feetech::protocol::status::ServoError::OVERLOAD);
    let emu = serve_pty(config).await.unwrap();
    let port = emu.path().to_str().unwrap().to_owned();
    let (io, mut user) = console();
    scan::run(
        parse(&[
            "--port",
            &port,
            "--baud",
            "1000000",
            "--ids",
            "2,4-8",
            "--timeout",
            TIMEOUT_MS,
        ]),
        io,
    )
    .await
    .unwrap();
    let rows = scan_rows(&user.rest().await);
    let found: Vec<(u8, &str)> = rows.iter().map(|row| (row.0, row.4.as_str())).collect();
    assert_eq!(found, [(2, "OVERLOAD"), (4, "-"), (5, "-"), (6, "-")]);
    emu.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_missing_port_is_named_in_the_error() {
    let (io, _user) = console();
    let error = scan::run(parse(&["--port", "/dev/fakesim-no-such-port"]), io)
        .await
        .unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.starts_with("/dev/fakesim-no-such-port does not exist"),
        "{message}"
    );

    let (io, _user) = console();
    let args: CalibrateArgs = parse(&["--port", "/dev/fakesim-no-such-port", "--role", "leader", "--id", "x"]);
    let error = calibrate::run(args, io).await.unwrap_err();
    assert!(format!("{error:#}").contains("/dev/fakesim-no-such-port does not exist"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_ids_gives_a_lone_new_servo_the_requested_id() {
    let emu = serve_pty(EmuConfig::new(vec![ServoConfig::new(1)])).await.unwrap();
    let port = emu.path().to_str().unwrap().to_owned();
    let (io, mut user) = console();
    let args: SetupIdsArgs = parse(&["--port", &port, "--motor", "wrist_flex", "--timeout", TIMEOUT_MS]);
    let command = tokio::spawn(setup_ids::run(args, io));

    user.expect_prefix("Connect only the wrist_flex servo").await;
    user.types("");
    let done = user.expect_prefix("wrist_flex:").await;
    assert_eq!(
        done,
        "wrist_flex: now id 4 at 1000000 baud (STS3215, firmware 3.10), answers a ping."
    );
    command.await.unwrap().unwrap();

    let arm = emu.servos();
    assert_eq!(arm.ids(), [4]);
    assert_eq!(arm.persisted_register(4, &ID).unwrap(), 4);
    assert_eq!(arm.persisted_register(4, &BAUD_RATE).unwrap(), 0, "1 Mbaud");
    emu.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_ids_walks_through_the_arm_gripper_first() {
    let emu = serve_pty(EmuConfig::new(vec![ServoConfig::new(1)])).await.unwrap();
    let port = emu.path().to_str().unwrap().to_owned();
    let arm = emu.servos().clone();
    let (io, mut user) = console();
    let command = tokio::spawn(setup_ids::run(parse(&["--port", &port, "--timeout", TIMEOUT_MS]), io));

    let mut previous: Option<u8> = None;
    for motor in SO101_MOTORS.iter().rev() {
        user.expect_prefix(&format!("Connect only the {} servo", motor.name))
            .await;
        if let Some(id) = previous {
            // The user swaps the last servo for the next new one; once (right after the
            // gripper) they plug the new one in before unplugging the last.
            arm.add_servo(&ServoConfig::new(1));
            if id == 6 {
                user.types("");
                user.expect_prefix("2 servos answered: disconnect all but").await;
            }
            arm.remove_servo(id).unwrap();
        }
        user.types("");
        user.expect_prefix(&format!("{}: now id {} at 1000000 baud", motor.name, motor.id))
            .await;
        assert_eq!(arm.ids(), [motor.id]);
        assert_eq!(arm.persisted_register(motor.id, &ID).unwrap(), i32::from(motor.id));
        previous = Some(motor.id);
    }
    user.expect_prefix("Done: 6 servo(s) set up at 1000000 baud").await;
    command.await.unwrap().unwrap();
    emu.shutdown().await.unwrap();
}

/// Per motor, the position shown in a live sweep line (`name min .. pos N max .. | ...`).
fn shown_positions(line: &str) -> Option<BTreeMap<String, i32>> {
    line.split(" | ")
        .map(|segment| {
            let words: Vec<&str> = segment.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "pos")?;
            Some(((*words.first()?).to_owned(), words.get(at + 1)?.parse().ok()?))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calibrate_writes_a_lerobot_file_and_verify_compares_it() {
    // A freshly assembled arm: no offsets, shafts wherever the horns ended up.
    let servos: Vec<ServoConfig> = SO101_MOTORS
        .iter()
        .zip([3000_u16, 1200, 2600, 500, 2048, 3900])
        .map(|(motor, raw)| ServoConfig {
            raw_position: raw,
            ..ServoConfig::new(motor.id)
        })
        .collect();
    let emu = serve_pty(EmuConfig::new(servos)).await.unwrap();
    let port = emu.path().to_str().unwrap().to_owned();
    let arm = emu.servos().clone();
    let dir = tempfile::tempdir().unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let (io, mut user) = console();
    let args: CalibrateArgs = parse(&[
        "--port",
        &port,
        "--role",
        "follower",
        "--id",
        "bench_arm",
        "--dir",
        dir_arg,
        "--timeout",
        TIMEOUT_MS,
    ]);
    let command = tokio::spawn(calibrate::run(args, io));

    user.expect_prefix("Torque is off. Move the follower arm to the middle")
        .await;
    user.types("");
    user.expect_prefix("Move every joint except wrist_roll").await;
    for motor in &SO101_MOTORS {
        assert_eq!(arm.present_position(motor.id).unwrap(), 2047, "{} homed", motor.name);
    }
    // Hand motion, one pose at a time; each pose is confirmed on the live display before
    // the next. Steps stay under half a turn so the sweep can follow them. The elbow's
    // "middle" was poor: its readings cross 0/4095 (-500 reads 3596).
    let poses: [[i32; 6]; 4] = [
        [3300, 3200, 2600, 3130, 3000, 3200],
        [2047, 2047, 2047, 2047, 2047, 2047],
        [1400, 1500, 700, 1500, 1000, 2500],
        [800, 900, -500, 960, 100, 1900],
    ];
    for pose in poses {
        for (motor, position) in SO101_MOTORS.iter().zip(pose) {
            arm.set_present_position(motor.id, position).unwrap();
        }
        let expected: BTreeMap<String, i32> = SO101_MOTORS
            .iter()
            .zip(pose)
            .map(|(motor, position)| (motor.name.to_owned(), position.rem_euclid(4096)))
            .collect();
        user.expect(&format!("the display to show {expected:?}"), |line| {
            shown_positions(line).as_ref() == Some(&expected)
        })
        .await;
    }
    user.types("");
    let written = user.expect_prefix("Calibration written to ").await;
    command.await.unwrap().unwrap();

    let path = dir.path().join("bench_arm.json");
    assert_eq!(
        PathBuf::from(written.trim_start_matches("Calibration written to ")),
        path
    );
    let file = Calibration::load(&path).unwrap();
    let range = |name: &str| (file.motors[name].range_min, file.motors[name].range_max);
    assert_eq!(range("shoulder_pan"), (800, 3300));
    assert_eq!(range("shoulder_lift"), (900, 3200));
    assert_eq!(range("wrist_flex"), (960, 3130));
    assert_eq!(range("wrist_roll"), (0, 4095));
    assert_eq!(range("gripper"), (1900, 3200));
    let (elbow_min, elbow_max) = range("elbow_flex");
    assert_eq!(elbow_max - elbow_min, 3100, "elbow swept -500..2600");
    for motor in &SO101_MOTORS {
        let calibrated = &file.motors[motor.name];
        assert_eq!((calibrated.id, calibrated.drive_mode), (motor.id, 0));
        assert_eq!(
            arm.persisted_register(motor.id, &HOMING_OFFSET).unwrap(),
            calibrated.homing_offset
        );
        if !motor.is_full_turn() {
            // Every swept joint rests at its low end, which now reads range_min.
            assert_eq!(
                arm.present_position(motor.id).unwrap(),
                calibrated.range_min,
                "{}",
                motor.name
            );
        }
    }

    let file_arg = path.to_str().unwrap();
    let (io, mut user) = console();
    calibrate::run(
        parse(&["--port", &port, "--verify", file_arg, "--timeout", TIMEOUT_MS]),
        io,
    )
    .await
    .unwrap();
    assert_eq!(user.rest().await, [format!("The servos on {port} match {file_arg}.")]);

    // Someone changes the shoulder_lift offset behind the file's back.
    let lift = file.motors["shoulder_lift"].homing_offset;
    let mut bus = Bus::open(&port, DEFAULT_BAUD_RATE, BusConfig::default()).unwrap();
    bus.write_eeprom(2, &HOMING_OFFSET, lift + 10).await.unwrap();
    drop(bus);
    let (io, mut user) = console();
    let error = calibrate::run(
        parse(&["--port", &port, "--verify", file_arg, "--timeout", TIMEOUT_MS]),
        io,
    )
    .await
    .unwrap_err();
    assert_eq!(
        user.rest().await,
        [format!(
            "joint shoulder_lift (id 2): Homing_Offset is {} in the servo, {lift} in the file",
            lift + 10
        )]
    );
    assert_eq!(
        error.to_string(),
        format!("1 difference(s) between the servos on {port} and {file_arg}")
    );
    emu.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulate_prints_the_port_and_serves_until_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let calibration_file = dir.path().join("virtual.json");
    let file_arg = calibration_file.to_str().unwrap();
    let (io, mut user) = console();
    let (stop, stopped) = oneshot::channel::<()>();
    let args: EmulateArgs = parse(&["--overload", "3", "--write-calibration", file_arg]);
    // The file describes the calibrated arm, not a factory-new servo.
    let new_servo = ["tool", "--new-servo", "--write-calibration", file_arg];
    assert!(<Command<EmulateArgs> as clap::Parser>::try_parse_from(new_servo).is_err());
    let emulator = tokio::spawn(emulate::serve_until(args, io, async move {
        stopped.await.map_err(std::io::Error::other)
    }));
    let banner = user.expect_prefix("Virtual servo bus on ").await;
    assert!(
        banner.ends_with("servo id(s) 1, 2, 3, 4, 5, 6 at 1000000 baud."),
        "{banner}"
    );
    let hint = user.expect_prefix("Try: fakesim-hil scan --port ").await;
    let port = hint.trim_start_matches("Try: fakesim-hil scan --port ").to_owned();
    assert!(Path::new(&port).exists(), "{port}");
    let daemon_hint = user.expect_prefix("     fakesim-hil --port ").await;
    assert_eq!(
        daemon_hint,
        format!("     fakesim-hil --port {port} --calibration {file_arg}")
    );
    assert_eq!(
        Calibration::load(&calibration_file).unwrap(),
        VirtualSo101::calibration()
    );

    let (scan_io, mut scan_user) = console();
    scan::run(
        parse(&["--port", &port, "--baud", "1000000", "--timeout", TIMEOUT_MS]),
        scan_io,
    )
    .await
    .unwrap();
    let rows = scan_rows(&scan_user.rest().await);
    let found: Vec<(u8, &str)> = rows.iter().map(|row| (row.0, row.4.as_str())).collect();
    assert_eq!(
        found,
        [(1, "-"), (2, "-"), (3, "OVERLOAD"), (4, "-"), (5, "-"), (6, "-")]
    );

    stop.send(()).unwrap();
    emulator.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teleop_drives_the_follower_to_the_leader_pose_over_two_pseudo_terminals() {
    let leader = serve_pty(VirtualSo101::config()).await.unwrap();
    let follower = serve_pty(VirtualSo101::config()).await.unwrap();
    let leader_port = leader.path().to_str().unwrap().to_owned();
    let follower_port = follower.path().to_str().unwrap().to_owned();
    // The leader's calibration given as a file, the follower's found by name in LeRobot's layout.
    let dir = tempfile::tempdir().unwrap();
    let leader_file = dir.path().join("my_leader.json");
    VirtualSo101::calibration().save(&leader_file).unwrap();
    let follower_file = calibration_path(dir.path(), ArmKind::So101Follower, "my_follower");
    VirtualSo101::calibration().save(&follower_file).unwrap();
    // Hand motion: the leader is somewhere else than the follower's rest pose (2047 everywhere).
    let pose = [2300, 1800, 2250, 1900, 2500, 2400];
    for (motor, steps) in SO101_MOTORS.iter().zip(pose) {
        leader.servos().set_present_position(motor.id, steps).unwrap();
    }

    let (io, mut user) = console();
    let args: TeleopArgs = parse(&[
        "--leader",
        &leader_port,
        "--port",
        &follower_port,
        "--leader-calibration",
        leader_file.to_str().unwrap(),
        "--follower-id",
        "my_follower",
        "--calibration-dir",
        dir.path().to_str().unwrap(),
        "--rate",
        "100",
        // The farthest joint is 0.7 rad away and the goals ramp at 0.5 rad/s: 1.4 s to arrive.
        "--cycles",
        "250",
        "--timeout",
        TIMEOUT_MS,
    ]);
    teleop::run_until(args, io, std::future::pending::<std::io::Result<()>>())
        .await
        .unwrap();
    let printed = user.rest().await;

    let banner = format!(
        "Teleop at 100 Hz: the leader on {leader_port} ({}) drives the follower on {follower_port} ({}) and the twin.",
        leader_file.display(),
        follower_file.display()
    );
    assert_eq!(printed.first(), Some(&banner), "{printed:#?}");
    let stopped = printed.iter().find(|line| line.starts_with("Stopped: ")).unwrap();
    assert!(stopped.ends_with("0 skipped, 0 refused, 0 errors."), "{stopped}");
    // The follower started up to 0.7 rad away: its goals started at its own pose and ramped to
    // the leader's, so the delta cap never had to fire.
    let capped = printed
        .iter()
        .filter(|line| line.starts_with(r#"safety event: {"event":"delta_capped""#))
        .count();
    assert_eq!(capped, 0, "{printed:#?}");
    for (motor, steps) in SO101_MOTORS.iter().zip(pose) {
        let servo = follower.servos();
        assert_eq!(
            servo.register(motor.id, &GOAL_POSITION).unwrap(),
            steps,
            "{}",
            motor.name
        );
        let present = servo.present_position(motor.id).unwrap();
        assert!((present - steps).abs() <= 1, "{}: {present} vs {steps}", motor.name);
        assert_eq!(
            servo.register(motor.id, &TORQUE_ENABLE).unwrap(),
            0,
            "follower torque off on stop"
        );
        assert_eq!(leader.servos().register(motor.id, &TORQUE_ENABLE).unwrap(), 0);
    }
    leader.shutdown().await.unwrap();
    follower.shutdown().await.unwrap();
}

#[tokio::test]
async fn teleop_names_the_missing_calibration_and_the_joint_that_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let leader_file = dir.path().join("leader.json");
    VirtualSo101::calibration().save(&leader_file).unwrap();
    let run = |argv: Vec<&str>| {
        let (io, _user) = console();
        teleop::run_until(parse(&argv), io, std::future::pending::<std::io::Result<()>>())
    };

    let error = run(vec![
        "--leader",
        "/dev/fakesim-no-such-port",
        "--leader-id",
        "ghost",
        "--calibration-dir",
        dir_arg,
    ])
    .await
    .unwrap_err();
    let expected = calibration_path(dir.path(), ArmKind::SoLeader, "ghost");
    assert!(
        format!("{error:#}").contains(&format!(
            "no calibration for the leader \"ghost\": expected {}",
            expected.display()
        )),
        "{error:#}"
    );

    // A follower whose shoulder pan was calibrated over a whole turn, beyond the twin's ±110°,
    // is accepted (commands stay inside the twin's range): only the port is missing.
    let mut wide = VirtualSo101::calibration();
    let pan = wide.motors.get_mut("shoulder_pan").unwrap();
    (pan.range_min, pan.range_max) = (0, 4095);
    let follower_file = dir.path().join("follower.json");
    wide.save(&follower_file).unwrap();
    let args = |file: &Path| {
        vec![
            "--leader".to_owned(),
            "/dev/fakesim-no-such-port".to_owned(),
            "--port".to_owned(),
            "/dev/fakesim-no-such-port".to_owned(),
            "--leader-calibration".to_owned(),
            leader_file.to_str().unwrap().to_owned(),
            "--follower-calibration".to_owned(),
            file.to_str().unwrap().to_owned(),
            "--no-twin".to_owned(),
        ]
    };
    let error = run(args(&follower_file).iter().map(String::as_str).collect())
        .await
        .unwrap_err();
    assert!(
        format!("{error:#}").contains("/dev/fakesim-no-such-port does not exist"),
        "{error:#}"
    );
    // A follower file without the elbow cannot work, and says which joint.
    let mut missing = VirtualSo101::calibration();
    missing.motors.remove("elbow_flex");
    missing.save(&follower_file).unwrap();
    let error = run(args(&follower_file).iter().map(String::as_str).collect())
        .await
        .unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.starts_with(&format!(
            "the follower calibration {} does not fit the twin: joint elbow_flex",
            follower_file.display()
        )),
        "{message}"
    );
}

/// Starts `emulate` on a scripted console until the sender is used; returns the task, the sender,
/// the user (past the line naming the port) and the port.
async fn start_emulate(
    args: EmulateArgs,
) -> (
    tokio::task::JoinHandle<anyhow::Result<()>>,
    oneshot::Sender<()>,
    User,
    String,
) {
    let (io, mut user) = console();
    let (stop, stopped) = oneshot::channel::<()>();
    let emulator = tokio::spawn(emulate::serve_until(args, io, async move {
        stopped.await.map_err(std::io::Error::other)
    }));
    let hint = user.expect_prefix("Try: fakesim-hil scan --port ").await;
    let port = hint.trim_start_matches("Try: fakesim-hil scan --port ").to_owned();
    (emulator, stop, user, port)
}

/// Opens the virtual bus on `port` and checks that its servos hold `calibration`.
async fn bus_holding(port: &str, calibration: &Calibration) -> Bus<tokio_serial::SerialStream> {
    let config = BusConfig {
        timeout: Duration::from_millis(300),
        ..BusConfig::default()
    };
    let mut bus = Bus::open(Path::new(port), DEFAULT_BAUD_RATE, config).unwrap();
    feetech::calibration::check_servos(&mut bus, calibration).await.unwrap();
    bus
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulate_holds_a_given_calibration_with_a_joint_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (_, calibration) = feetech_emu::field::field_calibrations().remove(0);
    let source = dir.path().join("field.json");
    calibration.save(&source).unwrap();
    let copy = dir.path().join("copy.json");
    let args: EmulateArgs = parse(&[
        "--calibration",
        source.to_str().unwrap(),
        "--joint-offset",
        "elbow_flex=9",
        "--write-calibration",
        copy.to_str().unwrap(),
    ]);
    let (emulator, stop, _user, port) = start_emulate(args).await;
    assert_eq!(
        Calibration::load(&copy).unwrap(),
        calibration,
        "the file given is written back"
    );
    let mut bus = bus_holding(&port, &calibration).await;
    for (name, motor) in calibration.by_id() {
        let present = bus.read_register(motor.id, &PRESENT_POSITION).await.unwrap().value;
        let middle = (motor.range_min + motor.range_max) / 2;
        // 9 degrees are 102 steps.
        let expected = if name == "elbow_flex" { middle + 102 } else { middle };
        assert_eq!(present, expected, "{name}");
    }
    stop.send(()).unwrap();
    emulator.await.unwrap().unwrap();
    let unknown: EmulateArgs = parse(&["--joint-offset", "elbow=3"]);
    assert!(format!("{:#}", unknown.config().unwrap_err()).contains("elbow"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulate_presents_an_so100_bus_holding_the_so100_calibration_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("robots").join("so_follower").join("virtual.json");
    let args: EmulateArgs = parse(&["--arm", "so100", "--write-calibration", file.to_str().unwrap()]);
    let (emulator, stop, _user, port) = start_emulate(args).await;
    let calibration = VirtualArm::So100.calibration();
    assert_eq!(Calibration::load(&file).unwrap(), calibration);
    assert_ne!(calibration, VirtualSo101::calibration());
    let mut bus = bus_holding(&port, &calibration).await;
    for (name, motor) in calibration.by_id() {
        let present = bus.read_register(motor.id, &PRESENT_POSITION).await.unwrap().value;
        assert_eq!(present, (motor.range_min + motor.range_max) / 2, "{name}");
    }
    stop.send(()).unwrap();
    emulator.await.unwrap().unwrap();
    let factory: EmulateArgs = parse(&["--arm", "so100", "--new-servo"]);
    assert!(factory.config().is_err(), "a factory servo is no arm");
}

#[test]
fn emulate_puts_an_obstacle_and_slipping_gearing_on_the_arm() {
    let args: EmulateArgs = parse(&["--obstacle", "wrist_flex=-20", "--lose-steps", "shoulder_lift=400"]);
    let servos = args.config().unwrap().servos;
    let wrist = feetech_emu::so101::JOINTS[3];
    let middle = (i32::from(wrist.range.0) + i32::from(wrist.range.1)) / 2;
    // -20 degrees are -228 steps.
    assert_eq!(servos[3].obstacle.map(i32::from), Some(middle - 228));
    assert_eq!(servos[1].slip_steps_per_s, 400.0);
    let factory: EmulateArgs = parse(&["--new-servo", "--obstacle", "gripper=10"]);
    assert!(format!("{:#}", factory.config().unwrap_err()).contains("factory servo"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn align_recovers_injected_joint_offsets_within_one_step() {
    use fakesim_arm::Joint;
    use fakesim_feetech_arm::mapping::JointMapping;
    use fakesim_hardware_tools::align::{self, AlignArgs, align_poses};
    use feetech_emu::so101::JointOffset;
    use uom::si::angle::radian;
    use uom::si::f64::Angle;

    let (_, calibration) = feetech_emu::field::field_calibrations().remove(0);
    let offsets = [("shoulder_pan", 3.0), ("elbow_flex", -7.5), ("wrist_roll", 20.0)];
    let offsets: Vec<JointOffset> = offsets
        .iter()
        .map(|(label, degrees)| JointOffset {
            label: (*label).to_owned(),
            degrees: *degrees,
        })
        .collect();
    let servos = VirtualSo101::holding(&calibration, &offsets).unwrap();
    let emu = serve_pty(EmuConfig::new(servos)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("follower.json");
    calibration.save(&file).unwrap();
    let out = dir.path().join("mapping.json");
    let twin = fakesim_twin::Sim::load(&fakesim_twin::Scene::Tabletop, 10)
        .unwrap()
        .joint_ranges();
    let nominal = JointMapping::so101().bind(&calibration, &twin).unwrap();
    let shift = |joint: Joint| -> i32 {
        offsets
            .iter()
            .filter(|o| o.label == joint.label())
            .map(JointOffset::steps)
            .sum()
    };
    let args: AlignArgs = parse(&[
        "--port",
        emu.path().to_str().unwrap(),
        "--calibration",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--timeout",
        TIMEOUT_MS,
    ]);
    let (io, mut user) = console();
    let task = tokio::spawn(align::run(args, io));
    for pose in align_poses(fakesim_arm::ArmType::So101) {
        user.expect_prefix("Torque is off. Put the arm in the").await;
        // The hand puts the arm in the pose: each servo reads the pose plus its joint's offset.
        for joint in Joint::ALL {
            let angle = Angle::new::<radian>(pose.twin_rad[joint.index()]);
            let steps = nominal.twin_to_servo(joint, angle).unwrap() + shift(joint);
            emu.servos()
                .set_present_position(nominal.servo_id(joint), steps)
                .unwrap();
        }
        user.types("");
    }
    task.await.unwrap().unwrap();
    let table = JointMapping::load(&out).unwrap();
    let step_rad = std::f64::consts::TAU / 4096.0;
    for joint in Joint::ALL {
        let row = table.get(joint);
        assert_eq!(row.sign, 1, "{joint:?}");
        // A reading `shift` steps high is undone by an offset of as many steps the other way.
        let expected = -f64::from(shift(joint)) * std::f64::consts::TAU / 4095.0;
        assert!(
            (row.offset_rad - expected).abs() <= step_rad,
            "{joint:?}: offset {} rad, expected {expected}",
            row.offset_rad
        );
    }
    // With the written mapping, the arm's readings give back the twin's pose.
    let aligned = table.bind(&calibration, &twin).unwrap();
    for joint in Joint::ALL {
        let present = emu.servos().present_position(nominal.servo_id(joint)).unwrap();
        let angle = aligned.servo_to_twin(joint, present).get::<radian>();
        let pose = align_poses(fakesim_arm::ArmType::So101)[2].twin_rad[joint.index()];
        assert!((angle - pose).abs() <= step_rad, "{joint:?}: {angle} rad, pose {pose}");
    }
    emu.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulate_sweeps_the_arm_by_hand_while_torque_is_off_and_goals_win_with_it_on() {
    use feetech::control_table::PRESENT_LOAD;

    let args: EmulateArgs = parse(&["--script", "sweep", "--sweep-share", "0.4", "--sweep-speed", "90"]);
    let (emulator, stop, mut user, port) = start_emulate(args).await;
    let hand = user
        .expect_prefix("A hand sweeps every joint through 40 % of its range at up to 90 deg/s")
        .await;
    assert!(hand.contains("repeating"), "{hand}");
    let config = BusConfig {
        timeout: Duration::from_millis(300),
        ..BusConfig::default()
    };
    let mut bus = Bus::open(Path::new(&port), DEFAULT_BAUD_RATE, config).unwrap();
    let elbow = VirtualSo101::calibration().motors["elbow_flex"];
    let middle = (elbow.range_min + elbow.range_max) / 2;
    let reach = (elbow.range_max - elbow.range_min) / 5;
    // The hand moves the passive elbow about the middle of its range, within 40 % of it.
    let first = bus.read_register(3, &PRESENT_POSITION).await.unwrap().value;
    let mut moved = 0;
    for _ in 0..10_000 {
        let present = bus.read_register(3, &PRESENT_POSITION).await.unwrap().value;
        assert!((present - middle).abs() <= reach + 1, "{present} beyond the sweep");
        assert_eq!(bus.read_register(3, &PRESENT_LOAD).await.unwrap().value, 0);
        moved = moved.max((present - first).abs());
        if moved > reach / 2 {
            break;
        }
    }
    assert!(moved > reach / 2, "the elbow moved {moved} steps");
    // Torque on: a goal written is where the elbow goes and stays, the hand straining it.
    bus.write_register(3, &TORQUE_ENABLE, 1).await.unwrap();
    bus.write_register(3, &GOAL_POSITION, middle).await.unwrap();
    let mut arrived = false;
    for _ in 0..10_000 {
        if bus.read_register(3, &PRESENT_POSITION).await.unwrap().value == middle {
            arrived = true;
            break;
        }
    }
    assert!(arrived, "the elbow reached its goal");
    let mut strained = false;
    for _ in 0..500 {
        assert_eq!(bus.read_register(3, &PRESENT_POSITION).await.unwrap().value, middle);
        strained |= bus.read_register(3, &PRESENT_LOAD).await.unwrap().value.abs() > 100;
    }
    assert!(strained, "the hand shows as load on the servo holding its goal");
    stop.send(()).unwrap();
    emulator.await.unwrap().unwrap();
}
