//! What the daemon benches share: the `fakesim-hil` binary started in a process of its own on a
//! loopback port or a Unix domain socket and connected to, its threads' CPU time, and the timing
//! helpers. Each bench uses a part of it.
#![allow(dead_code)]

use anyhow::Context;
use hyper_util::rt::TokioIo;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint};

/// The unit of the times in `/proc/PID/task/TID/stat` (Linux's `USER_HZ`, 100 on x86 and ARM).
const USER_HZ: f64 = 100.0;

/// A daemon process, killed when dropped.
pub struct Daemon {
    child: Child,
    /// The address it printed: `HOST:PORT` or `unix:PATH`.
    pub addr: String,
    /// The connection to it.
    pub channel: Channel,
}

impl Daemon {
    /// Starts the daemon binary on `listen` with `extra` arguments and connects to the address
    /// it prints.
    pub async fn start(listen: &str, extra: &[&str]) -> anyhow::Result<Self> {
        let runs = std::env::temp_dir().join(format!("fakesim-bench-runs-{}", std::process::id()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_fakesim-hil"))
            .args(["--listen", listen, "--runs-dir"])
            .arg(runs)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the daemon")?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
        let addr = line.trim().to_owned();
        let channel = connect(&addr).await?;
        Ok(Daemon { child, addr, channel })
    }

    /// CPU time the daemon has used so far: (its physics thread, every other thread).
    pub fn physics_and_rest(&self) -> anyhow::Result<(Duration, Duration)> {
        let ([physics], rest) = self.cpu(["twin-physics"])?;
        Ok((physics, rest))
    }

    /// CPU time the daemon has used so far: that of each thread named, then of every other.
    pub fn cpu<const N: usize>(&self, threads: [&str; N]) -> anyhow::Result<([Duration; N], Duration)> {
        let tasks = PathBuf::from(format!("/proc/{}/task", self.child.id()));
        let (mut named, mut rest) = ([Duration::ZERO; N], Duration::ZERO);
        for task in std::fs::read_dir(tasks)? {
            let (name, used) = thread_cpu(&task?.path().join("stat"))?;
            match threads.iter().position(|t| *t == name) {
                Some(i) => named[i] += used,
                None => rest += used,
            }
        }
        Ok((named, rest))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A thread's name and its user plus system time, from its `/proc/PID/task/TID/stat`.
fn thread_cpu(stat: &Path) -> anyhow::Result<(String, Duration)> {
    let text = std::fs::read_to_string(stat)?;
    let (open, close) = (text.find('(').context("no name")?, text.rfind(')').context("no name")?);
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // After the name: state is field 3 of the file, utime 14 and stime 15, in clock ticks.
    let ticks: u64 =
        fields.get(11).context("no utime")?.parse::<u64>()? + fields.get(12).context("no stime")?.parse::<u64>()?;
    Ok((
        text[open + 1..close].to_owned(),
        Duration::from_secs_f64(ticks as f64 / USER_HZ),
    ))
}

/// A channel to a daemon's address: `HOST:PORT` or `unix:PATH`.
pub async fn connect(addr: &str) -> anyhow::Result<Channel> {
    Ok(match addr.strip_prefix("unix:") {
        Some(path) => unix_channel(PathBuf::from(path)).await?,
        None => Endpoint::from_shared(format!("http://{addr}"))?.connect().await?,
    })
}

/// A channel over a Unix domain socket.
async fn unix_channel(path: PathBuf) -> anyhow::Result<Channel> {
    let connector = tower::service_fn(move |_| {
        let path = path.clone();
        async move { UnixStream::connect(path).await.map(TokioIo::new) }
    });
    // The URI is required by the API and unused by the connector.
    Ok(Endpoint::try_from("http://[::1]:50051")?
        .connect_with_connector(connector)
        .await?)
}

/// Times one call.
pub async fn timed<T>(samples: &mut Vec<Duration>, call: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    let start = Instant::now();
    let out = call.await?;
    samples.push(start.elapsed());
    Ok(out)
}

/// The median, in microseconds.
pub fn median_us(mut samples: Vec<Duration>) -> f64 {
    samples.sort_unstable();
    samples[samples.len() / 2].as_secs_f64() * 1e6
}
