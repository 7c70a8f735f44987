//! `Calls` against HTTP/2 servers on 127.0.0.1:0 (and Unix sockets) that misbehave on purpose,
//! written with the `h2` crate: answers whose trailers span CONTINUATION frames, tiny flow-control
//! windows with an early answer, GOAWAY and RST_STREAM in the middle of a call, a slow answer
//! after a timed call, a process with 2 000 open files, and every target form.

#![allow(clippy::expect_used, clippy::unwrap_used)] // the test servers' helpers panic as tests do

use bytes::Bytes;
use fakesim_client::{Calls, Code, Status};
use h2::server::{Builder, SendResponse};
use h2::{Reason, RecvStream};
use http::{HeaderMap, Request, Response};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener};
use tonic_types::{ErrorDetails, StatusExt};

/// What a test server does with one call: its connection's index (from 0), the request and the
/// means to answer.
type Handler = Arc<dyn Fn(usize, Request<RecvStream>, SendResponse<Bytes>) -> Task + Send + Sync>;
type Task = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// A test server: its runtime (its threads end with it), the request headers it saw, and how
/// many connections it accepted.
struct Server {
    runtime: tokio::runtime::Runtime,
    seen: Arc<Mutex<Vec<HeaderMap>>>,
    connections: Arc<Mutex<usize>>,
}

impl Server {
    fn new() -> Server {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        Server {
            runtime,
            seen: Arc::default(),
            connections: Arc::default(),
        }
    }

    /// Serves on 127.0.0.1:0 and answers its `host:port`.
    fn tcp(&self, builder: Builder, handler: Handler) -> String {
        let listener = self.runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("a port");
        let address = listener.local_addr().expect("its address").to_string();
        let (seen, connections) = (self.seen.clone(), self.connections.clone());
        self.runtime.spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                serve(
                    socket,
                    builder.clone(),
                    handler.clone(),
                    seen.clone(),
                    connections.clone(),
                );
            }
        });
        address
    }

    /// Serves on a Unix listener.
    fn unix(&self, listener: std::os::unix::net::UnixListener, builder: Builder, handler: Handler) {
        listener.set_nonblocking(true).expect("non-blocking");
        let (seen, connections) = (self.seen.clone(), self.connections.clone());
        self.runtime.spawn(async move {
            let listener = UnixListener::from_std(listener).expect("a listener");
            while let Ok((socket, _)) = listener.accept().await {
                serve(
                    socket,
                    builder.clone(),
                    handler.clone(),
                    seen.clone(),
                    connections.clone(),
                );
            }
        });
    }

    fn connections(&self) -> usize {
        *self.connections.lock().expect("count")
    }
}

/// Runs one connection: each call to `handler`, its headers kept in `seen`.
fn serve<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    socket: S,
    builder: Builder,
    handler: Handler,
    seen: Arc<Mutex<Vec<HeaderMap>>>,
    connections: Arc<Mutex<usize>>,
) {
    let index = {
        let mut count = connections.lock().expect("count");
        *count += 1;
        *count - 1
    };
    tokio::spawn(async move {
        let Ok(mut connection) = builder.handshake::<_, Bytes>(socket).await else {
            return;
        };
        while let Some(Ok((request, respond))) = connection.accept().await {
            seen.lock().expect("headers").push(request.headers().clone());
            tokio::spawn(handler(index, request, respond));
        }
    });
}

/// The request's body, read whole (each chunk's window given back).
async fn body(request: Request<RecvStream>) -> Bytes {
    let mut stream = request.into_body();
    let mut all = Vec::new();
    while let Some(Ok(chunk)) = stream.data().await {
        let _ = stream.flow_control().release_capacity(chunk.len());
        all.extend_from_slice(&chunk);
    }
    Bytes::from(all)
}

/// The headers of a gRPC answer.
fn ok_headers() -> Response<()> {
    Response::builder()
        .header("content-type", "application/grpc")
        .body(())
        .expect("headers")
}

/// Trailers of a status (code, message, details) as tonic writes them.
fn trailers(status: &Status) -> HeaderMap {
    let mut map = HeaderMap::new();
    status.add_header(&mut map).expect("a status");
    map
}

/// Answers the request's own message back (a gRPC echo).
async fn echo(request: Request<RecvStream>, mut respond: SendResponse<Bytes>) {
    let framed = body(request).await;
    let Ok(mut send) = respond.send_response(ok_headers(), false) else {
        return;
    };
    let _ = send.send_data(framed, false);
    let _ = send.send_trailers(trailers(&Status::ok("")));
}

fn echo_handler() -> Handler {
    Arc::new(|_, request, respond| Box::pin(echo(request, respond)))
}

fn call(calls: &Calls, message: &[u8], timeout: Option<Duration>) -> Result<Bytes, Status> {
    calls.unary("/test.Echo/Echo", message, timeout, &[])
}

const PATIENT: Option<Duration> = Some(Duration::from_secs(30));

#[test]
fn trailers_split_over_continuation_frames_give_the_status_and_its_error_info() {
    let server = Server::new();
    // An ErrorInfo of some 20 KB: its trailers exceed the 16 KiB frame, so h2 sends HEADERS and
    // CONTINUATION frames.
    let long = "x".repeat(20_000);
    let details = ErrorDetails::with_error_info(
        "long_reason",
        "fakesim-hil",
        HashMap::from([("long".to_owned(), long.clone())]),
    );
    let refusal = Status::with_error_details(Code::FailedPrecondition, "refused at length", details);
    let sent = trailers(&refusal);
    let address = server.tcp(
        Builder::new(),
        Arc::new(move |_, request, mut respond| {
            let sent = sent.clone();
            Box::pin(async move {
                body(request).await;
                if let Ok(mut send) = respond.send_response(ok_headers(), false) {
                    let _ = send.send_trailers(sent);
                }
            })
        }),
    );
    let calls = Calls::new(&address, None).expect("a target");
    let status = call(&calls, b"hello", PATIENT).expect_err("refused");
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert_eq!(status.message(), "refused at length");
    let info = status.get_error_details().error_info().cloned().expect("the ErrorInfo");
    assert_eq!(
        (info.reason.as_str(), info.metadata.get("long")),
        ("long_reason", Some(&long))
    );
}

#[test]
fn a_request_beyond_a_tiny_window_is_sent_as_the_server_gives_window() {
    let server = Server::new();
    let mut builder = Builder::new();
    builder.initial_window_size(16);
    let address = server.tcp(builder, echo_handler());
    let calls = Calls::new(&address, None).expect("a target");
    let message: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(call(&calls, &message, PATIENT).expect("echoed"), message);
}

#[test]
fn an_early_answer_while_the_request_waits_for_window_is_the_answer() {
    let server = Server::new();
    let mut builder = Builder::new();
    builder.initial_window_size(16);
    let address = server.tcp(
        builder,
        Arc::new(|_, request, mut respond| {
            Box::pin(async move {
                // Refuses on the headers alone; the body is never read, so its window stays shut.
                let refusal = Status::resource_exhausted("too big to read");
                let mut answer = ok_headers();
                answer.headers_mut().extend(trailers(&refusal));
                let _ = respond.send_response(answer, true);
                // The request is held until the client is done with the stream.
                let _ = request.into_body().data().await;
            })
        }),
    );
    let calls = Calls::new(&address, None).expect("a target");
    let status = call(&calls, &vec![7u8; 200_000], PATIENT).expect_err("refused");
    assert_eq!(
        (status.code(), status.message()),
        (Code::ResourceExhausted, "too big to read")
    );
}

#[test]
fn a_goaway_mid_call_fails_the_call_and_the_next_call_connects_again() {
    let server = Server::new();
    let address = server.tcp(Builder::new(), echo_handler());
    let hostile = Server::new();
    // The first connection's first call gets a GOAWAY and the connection closes without an
    // answer; later connections echo.
    let mut first = true;
    let listener = hostile
        .runtime
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect("a port");
    let hostile_address = listener.local_addr().expect("its address").to_string();
    let forward = address.clone();
    hostile.runtime.spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            if !first {
                // Later connections are relayed to the echo server.
                let forward = forward.clone();
                tokio::spawn(async move {
                    let Ok(mut upstream) = tokio::net::TcpStream::connect(forward).await else {
                        return;
                    };
                    let mut socket = socket;
                    let _ = tokio::io::copy_bidirectional(&mut socket, &mut upstream).await;
                });
                continue;
            }
            first = false;
            tokio::spawn(async move {
                let Ok(mut connection) = Builder::new().handshake::<_, Bytes>(socket).await else {
                    return;
                };
                if let Some(Ok((_request, _respond))) = connection.accept().await {
                    connection.abrupt_shutdown(Reason::INTERNAL_ERROR);
                    while let Some(Ok(_)) = connection.accept().await {}
                }
            });
        }
    });
    let calls = Calls::new(&hostile_address, None).expect("a target");
    let status = call(&calls, b"first", PATIENT).expect_err("the connection went away");
    assert!(
        matches!(status.code(), Code::Unavailable | Code::Internal | Code::Unknown),
        "a transport failure, not a deadline: {status:?}"
    );
    assert_eq!(call(&calls, b"second", PATIENT).expect("answered"), &b"second"[..]);
    assert_eq!(server.connections(), 1, "the second call came on a new connection");
}

#[test]
fn a_reset_mid_answer_is_the_code_grpc_gives_its_reason() {
    for (reason, code) in [
        (Reason::CANCEL, Code::Cancelled),
        (Reason::REFUSED_STREAM, Code::Unavailable),
        (Reason::ENHANCE_YOUR_CALM, Code::ResourceExhausted),
        (Reason::INTERNAL_ERROR, Code::Internal),
    ] {
        let server = Server::new();
        let address = server.tcp(
            Builder::new(),
            Arc::new(move |_, request, mut respond| {
                Box::pin(async move {
                    body(request).await;
                    if let Ok(mut send) = respond.send_response(ok_headers(), false) {
                        // Half a gRPC message, then the reset.
                        let _ = send.send_data(Bytes::from_static(&[0, 0, 0, 0, 9, 1, 2]), false);
                        send.send_reset(reason);
                    }
                })
            }),
        );
        let calls = Calls::new(&address, None).expect("a target");
        let status = call(&calls, b"hello", PATIENT).expect_err("reset");
        assert_eq!(status.code(), code, "{reason:?}: {status:?}");
    }
}

#[test]
fn a_call_without_a_deadline_after_a_timed_one_waits_for_its_answer() {
    let server = Server::new();
    // A slow server: every answer comes 300 ms after its request.
    let address = slow_echo(&server, Duration::from_millis(300));
    let calls = Calls::new(&address, None).expect("a target");
    let timed = call(&calls, b"timed", Some(Duration::from_millis(50))).expect_err("too slow");
    assert_eq!(timed.code(), Code::DeadlineExceeded);
    assert_eq!(call(&calls, b"patient", None).expect("answered"), &b"patient"[..]);
    let seen = server.seen.lock().expect("headers").clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[0].get("grpc-timeout").map(|v| v.as_bytes()),
        Some(&b"50000000n"[..])
    );
    assert_eq!(
        seen[1].get("grpc-timeout"),
        None,
        "no deadline sent with the second call"
    );
}

#[test]
fn with_2000_files_open_calls_stay_on_one_connection() {
    let files: Vec<std::fs::File> = (0..2000)
        .map(|_| std::fs::File::open("/dev/null").expect("a file"))
        .collect();
    let server = Server::new();
    let address = server.tcp(Builder::new(), echo_handler());
    let calls = Calls::new(&address, None).expect("a target");
    for i in 0..50u32 {
        let message = i.to_le_bytes();
        assert_eq!(call(&calls, &message, PATIENT).expect("echoed"), &message[..]);
        if i % 10 == 9 {
            // An idle spell past the idle thread's look at the connection.
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    assert_eq!(server.connections(), 1);
    drop(files);
}

#[test]
fn threads_call_on_connections_of_their_own() {
    let server = Server::new();
    let address = server.tcp(Builder::new(), echo_handler());
    let calls = Calls::new(&address, None).expect("a target");
    std::thread::scope(|scope| {
        for t in 0..3u8 {
            let calls = &calls;
            scope.spawn(move || {
                for i in 0..20u8 {
                    assert_eq!(call(calls, &[t, i], PATIENT).expect("echoed"), &[t, i][..]);
                }
            });
        }
    });
    assert_eq!(server.connections(), 3);
}

#[test]
fn every_target_form_reaches_its_server() {
    let server = Server::new();
    let tcp = server.tcp(Builder::new(), echo_handler());
    let port = tcp.rsplit_once(':').expect("a port").1.to_owned();
    let directory = tempfile::tempdir().expect("a directory");
    let path = directory.path().join("echo.sock");
    server.unix(
        std::os::unix::net::UnixListener::bind(&path).expect("a socket"),
        Builder::new(),
        echo_handler(),
    );
    let name = format!("fakesim-client-test-{}", std::process::id());
    let address = {
        use std::os::linux::net::SocketAddrExt;
        std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).expect("a name")
    };
    server.unix(
        std::os::unix::net::UnixListener::bind_addr(&address).expect("an abstract socket"),
        Builder::new(),
        echo_handler(),
    );
    // A port nobody listens on: the ipv4 list's first address refuses.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("its address");
    let mut targets = vec![
        tcp.clone(),
        format!("localhost:{port}"),
        format!("dns:127.0.0.1:{port}"),
        format!("dns:///localhost:{port}"),
        format!("ipv4:127.0.0.1:{port}"),
        format!("ipv4:{closed},127.0.0.1:{port}"),
        format!("unix:{}", path.display()),
        format!("unix://{}", path.display()),
        format!("unix-abstract:{name}"),
    ];
    // IPv6 loopback, where this machine has it.
    if let Ok(listener) = server.runtime.block_on(TcpListener::bind("[::1]:0")) {
        let address = listener.local_addr().expect("its address");
        let handler = echo_handler();
        let (seen, connections) = (server.seen.clone(), server.connections.clone());
        server.runtime.spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                serve(
                    socket,
                    Builder::new(),
                    handler.clone(),
                    seen.clone(),
                    connections.clone(),
                );
            }
        });
        targets.push(format!("ipv6:{address}"));
        targets.push(address.to_string());
    }
    for target in &targets {
        let calls = Calls::new(target, None).unwrap_or_else(|error| panic!("{target}: {error}"));
        assert_eq!(
            call(&calls, target.as_bytes(), PATIENT).expect(target),
            target.as_bytes(),
            "{target}"
        );
    }
    assert_eq!(server.seen.lock().expect("headers").len(), targets.len());
}

#[test]
fn a_closed_client_refuses_calls_and_a_thread_in_a_call_finishes_it() {
    let server = Server::new();
    let address = slow_echo(&server, Duration::from_millis(200));
    let calls = Calls::new(&address, None).expect("a target");
    std::thread::scope(|scope| {
        let in_call = scope.spawn(|| call(&calls, b"long", PATIENT));
        // Closing does not pull the connection from under the call.
        while server.seen.lock().expect("headers").is_empty() && !in_call.is_finished() {
            std::thread::yield_now();
        }
        calls.close();
        assert_eq!(in_call.join().expect("the thread").expect("answered"), &b"long"[..]);
    });
    assert_eq!(
        call(&calls, b"after", PATIENT).expect_err("closed").code(),
        Code::Cancelled
    );
}

/// A server on `server` that echoes every request `delay` after it came; its address.
fn slow_echo(server: &Server, delay: Duration) -> String {
    server.tcp(
        Builder::new(),
        Arc::new(move |_, request, respond| {
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                echo(request, respond).await;
            })
        }),
    )
}
