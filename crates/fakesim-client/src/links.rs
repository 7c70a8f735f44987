//! The calls to one daemon: a connection per calling thread, each made on that thread's first
//! call and driven by it, and the background thread that looks after idle ones.

use crate::codec::RawCodec;
use crate::dial::dial;
use crate::target::Target;
use crate::{SetupError, Tls};
use bytes::Bytes;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::Thread;
use std::time::{Duration, Instant};
use tonic::Status;
use tonic::client::Grpc;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::metadata::{AsciiMetadataValue, MetadataKey};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// How often idle connections are given a moment to answer what the daemon sent them.
const IDLE_CHECK: Duration = Duration::from_millis(250);
/// How long an idle connection is driven at each check (the runtime's timer granularity).
const IDLE_TURN: Duration = Duration::from_millis(1);
/// The largest answer taken, as the Python client's grpcio channel (two raw 640x480 frames fit).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
/// The largest header block taken (hyper's default is 16 KiB): room for a refusal's ErrorInfo
/// with long metadata, whose trailers then span CONTINUATION frames.
const MAX_HEADER_LIST_BYTES: u32 = 64 * 1024;

/// Unary calls to one daemon, from any thread; each thread calls on a connection of its own.
pub struct Calls {
    shared: Arc<Shared>,
}

/// What the calls, their threads' connections and the idle thread share.
struct Shared {
    id: u64,
    target: Target,
    endpoint: Endpoint,
    closed: AtomicBool,
    links: Mutex<Links>,
}

/// The connections of this process (a forked child forgets its parent's).
struct Links {
    pid: u32,
    list: Vec<Arc<Link>>,
    idle_thread: Option<Thread>,
}

/// One thread's connection.
struct Link {
    pid: u32,
    /// Alive while the thread that owns the connection is.
    owner: Weak<()>,
    conn: Mutex<Option<Conn>>,
}

/// A tonic channel and the current-thread runtime that drives it.
struct Conn {
    runtime: tokio::runtime::Runtime,
    grpc: Grpc<Channel>,
}

/// The calling thread's connections, by `Shared::id`.
struct Mine {
    mark: Arc<()>,
    links: HashMap<u64, (Weak<Shared>, Arc<Link>)>,
}

thread_local! {
    static MINE: RefCell<Mine> = RefCell::new(Mine { mark: Arc::new(()), links: HashMap::new() });
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Calls {
    /// Calls to the daemon at a gRPC `target` (TLS when `tls` is given); no connection is made
    /// until a thread calls.
    pub fn new(target: &str, tls: Option<Tls>) -> Result<Calls, SetupError> {
        let parsed = Target::parse(target).ok_or_else(|| SetupError::Unsupported(target.to_owned()))?;
        let transport = |source| SetupError::Transport {
            target: target.to_owned(),
            source,
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{}", parsed.authority()))
            .map_err(transport)?
            .http2_max_header_list_size(MAX_HEADER_LIST_BYTES);
        if let Some(tls) = tls {
            let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(tls.ca_pem));
            if let Some((cert, key)) = tls.identity {
                config = config.identity(Identity::from_pem(cert, key));
            }
            endpoint = endpoint.tls_config(config).map_err(transport)?;
        }
        let links = Links {
            pid: std::process::id(),
            list: Vec::new(),
            idle_thread: None,
        };
        let shared = Shared {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            target: parsed,
            endpoint,
            closed: AtomicBool::new(false),
            links: Mutex::new(links),
        };
        Ok(Calls {
            shared: Arc::new(shared),
        })
    }

    /// Runs the unary call to `path` (`/package.Service/Method`) with a serialized request,
    /// within `timeout` when given, carrying `metadata`, and returns the serialized answer; a
    /// refusal, a deadline passed or a lost connection is the call's `Status`.
    pub fn unary(
        &self,
        path: &str,
        request: &[u8],
        timeout: Option<Duration>,
        metadata: &[(String, String)],
    ) -> Result<Bytes, Status> {
        let request = Bytes::copy_from_slice(request);
        let link = self.thread_link()?;
        let answer = {
            let mut conn = lock(&link.conn);
            match conn.as_mut() {
                Some(conn) => conn.unary(path, request, timeout, metadata),
                None => Err(closed()),
            }
        };
        if self.shared.closed.load(Ordering::Acquire) {
            // Closed while this call ran: the connection goes now that no call uses it.
            lock(&link.conn).take();
        }
        answer
    }

    /// Closes every idle connection and stops the idle thread; a connection in a call is closed
    /// by its thread when the call ends. Later calls are refused (CANCELLED).
    pub fn close(&self) {
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let (list, idle_thread) = {
            let mut links = self.shared.process_links();
            (std::mem::take(&mut links.list), links.idle_thread.take())
        };
        for link in list {
            if let Ok(mut conn) = link.conn.try_lock() {
                conn.take();
            }
        }
        if let Some(thread) = idle_thread {
            thread.unpark();
        }
    }

    /// The calling thread's connection, made on its first call.
    fn thread_link(&self) -> Result<Arc<Link>, Status> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        let pid = std::process::id();
        MINE.with_borrow_mut(|mine| {
            if let Some((_, link)) = mine.links.get(&self.shared.id)
                && link.pid == pid
            {
                return Ok(link.clone());
            }
            // This process's first call on the thread (or the first since a fork: the parent's
            // connections are left as they are, never written to or closed from here).
            mine.links
                .retain(|_, (shared, link)| shared.strong_count() > 0 && link.pid == pid);
            if let Some(entry) = mine.links.remove(&self.shared.id) {
                std::mem::forget(entry);
            }
            let link = Arc::new(Link {
                pid,
                owner: Arc::downgrade(&mine.mark),
                conn: Mutex::new(Some(Conn::new(&self.shared)?)),
            });
            self.shared.adopt(link.clone());
            mine.links
                .insert(self.shared.id, (Arc::downgrade(&self.shared), link.clone()));
            Ok(link)
        })
    }
}

impl Drop for Calls {
    fn drop(&mut self) {
        self.close();
    }
}

impl Shared {
    /// This process's connections (in a forked child, emptied of the parent's first).
    fn process_links(&self) -> MutexGuard<'_, Links> {
        let mut links = lock(&self.links);
        let pid = std::process::id();
        if links.pid != pid {
            std::mem::forget(std::mem::take(&mut links.list));
            links.pid = pid;
            links.idle_thread = None;
        }
        links
    }

    /// Lists a new connection, starting the idle thread with the first.
    fn adopt(self: &Arc<Self>, link: Arc<Link>) {
        let mut links = self.process_links();
        links.list.push(link);
        if links.idle_thread.is_none() {
            let shared = Arc::downgrade(self);
            let started = std::thread::Builder::new()
                .name("fakesim-idle".into())
                .spawn(move || watch_idle(shared));
            // Without the thread, idle connections answer the daemon at their next call.
            links.idle_thread = started.ok().map(|handle| handle.thread().clone());
        }
    }

    /// Gives each idle connection a moment, and closes those whose thread has ended.
    fn answer_idle(&self) {
        let list = self.process_links().list.clone();
        for link in list {
            let Ok(mut conn) = link.conn.try_lock() else {
                continue;
            };
            if link.owner.strong_count() == 0 {
                conn.take();
                self.process_links().list.retain(|other| !Arc::ptr_eq(other, &link));
            } else if let Some(conn) = conn.as_mut() {
                conn.runtime.block_on(async { tokio::time::sleep(IDLE_TURN).await });
            }
        }
    }
}

/// The idle thread: every `IDLE_CHECK`, `Shared::answer_idle`, until the calls are closed or gone.
fn watch_idle(shared: Weak<Shared>) {
    loop {
        std::thread::park_timeout(IDLE_CHECK);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        shared.answer_idle();
    }
}

impl Conn {
    /// A channel to the target, connecting at the first call.
    fn new(shared: &Shared) -> Result<Conn, Status> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| Status::unavailable(format!("cannot start the client's runtime: {error}")))?;
        let target = shared.target.clone();
        let connector = tower::service_fn(move |_| dial(target.clone()));
        let channel = {
            let _inside = runtime.enter();
            shared.endpoint.connect_with_connector_lazy(connector)
        };
        let grpc = Grpc::new(channel).max_decoding_message_size(MAX_ANSWER_BYTES);
        Ok(Conn { runtime, grpc })
    }

    /// One unary call, driven on this thread until it ends or its deadline passes.
    fn unary(
        &mut self,
        path: &str,
        body: Bytes,
        timeout: Option<Duration>,
        metadata: &[(String, String)],
    ) -> Result<Bytes, Status> {
        let path = PathAndQuery::try_from(path).map_err(|_| Status::internal(format!("bad method path {path:?}")))?;
        let mut request = tonic::Request::new(body);
        for (key, value) in metadata {
            let key = MetadataKey::from_bytes(key.as_bytes())
                .map_err(|_| Status::internal(format!("bad metadata key {key:?}")))?;
            let value = AsciiMetadataValue::try_from(value.as_str())
                .map_err(|_| Status::internal(format!("bad metadata value for {key}")))?;
            request.metadata_mut().insert(key, value);
        }
        if let Some(timeout) = timeout {
            request.set_timeout(timeout);
        }
        let grpc = &mut self.grpc;
        let call = async move {
            grpc.ready()
                .await
                .map_err(|error| Status::unavailable(format!("connection not ready: {error}")))?;
            Ok(grpc.unary(request, path, RawCodec).await?.into_inner())
        };
        let Some(timeout) = timeout else {
            return self.runtime.block_on(call);
        };
        let start = Instant::now();
        let answer = self
            .runtime
            .block_on(async move { tokio::time::timeout(timeout, call).await });
        match answer {
            Ok(Ok(answer)) => Ok(answer),
            // tonic's channel ends a call at its grpc-timeout too, as CANCELLED: past the
            // deadline, whichever ended it, the call is DEADLINE_EXCEEDED as grpcio says.
            Err(_) => Err(deadline_exceeded()),
            Ok(Err(_)) if start.elapsed() >= timeout => Err(deadline_exceeded()),
            Ok(Err(status)) => Err(status),
        }
    }
}

/// The failure of a call whose deadline passed.
fn deadline_exceeded() -> Status {
    Status::deadline_exceeded("Deadline Exceeded")
}

/// The refusal of a call on closed calls.
fn closed() -> Status {
    Status::cancelled("the client is closed")
}

/// Locks a mutex; one poisoned by a panic is taken as it is (its data stays consistent: each
/// holder only takes or drives a connection).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
