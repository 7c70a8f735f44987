//! The daemon's MCP endpoint behind the gRPC access rules, on the real binary: over HTTPS with a
//! certificate from a CA generated here and a bearer token, the right token is served (the tools
//! listed, a short episode run), no token, a wrong token and plaintext HTTP are refused with their
//! reasons and logged, and an endpoint off loopback without TLS is refused at start.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{after_marker, daemon, refused_at_start};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose};
use serde_json::{Value, json};
use std::io::{BufReader, Read};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

const TOKEN: &str = "mcp-https-token-5b0c9e1d7a";

/// A CA and a server certificate it signed for `localhost` and `127.0.0.1`, written with the
/// token into a temporary directory.
struct Files {
    dir: tempfile::TempDir,
    ca_pem: String,
}

impl Files {
    fn generate() -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
        params.distinguished_name.push(DnType::CommonName, "mcp test CA");
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let server = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("server.pem", server.pem()),
            ("server.key", key.serialize_pem()),
            ("token", format!("{TOKEN}\n")),
        ] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        Files { dir, ca_pem: ca.pem() }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    fn tls_connector(&self) -> TlsConnector {
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(self.ca_pem.as_bytes()).unwrap())
            .unwrap();
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let mut config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        TlsConnector::from(Arc::new(config))
    }
}

/// An HTTP/1.1 connection to the endpoint.
struct Http {
    sender: SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    session: Option<String>,
}

impl Http {
    async fn over<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(io: S, addr: SocketAddr) -> Self {
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await.unwrap();
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                eprintln!("the HTTP connection failed: {e}");
            }
        });
        Http {
            sender,
            addr,
            session: None,
        }
    }

    async fn tls(files: &Files, addr: SocketAddr) -> Self {
        let tcp = TcpStream::connect(addr).await.unwrap();
        let name = ServerName::try_from("localhost").unwrap();
        Self::over(files.tls_connector().connect(name, tcp).await.unwrap(), addr).await
    }

    async fn plain(addr: SocketAddr) -> Self {
        Self::over(TcpStream::connect(addr).await.unwrap(), addr).await
    }

    /// Posts one JSON-RPC message with `authorization` (if any); answers the response and its
    /// body.
    async fn post(&mut self, authorization: Option<&str>, message: &Value) -> (Response<()>, String) {
        let mut request = Request::post("/mcp")
            .header("host", format!("localhost:{}", self.addr.port()))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let request = request.body(Full::new(Bytes::from(message.to_string()))).unwrap();
        self.sender.ready().await.unwrap();
        let response = self.sender.send_request(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        (
            Response::from_parts(parts, ()),
            String::from_utf8(body.to_vec()).unwrap(),
        )
    }

    /// Calls `method` with the token and answers the JSON-RPC result (the response to `id` in
    /// the event stream).
    async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let bearer = format!("Bearer {TOKEN}");
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (response, body) = self.post(Some(&bearer), &message).await;
        assert_eq!(response.status(), StatusCode::OK, "{body}");
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().unwrap().to_owned());
        }
        let answer = body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|event| event["id"] == id)
            .unwrap_or_else(|| panic!("no response to {method} in {body}"));
        answer["result"].clone()
    }
}

/// The JSON-RPC error a refused request's body carries: its reason and message.
fn refusal(response: &Response<()>, body: &str) -> (String, String) {
    assert_eq!(response.headers()["content-type"], "application/json", "{body}");
    assert_eq!(response.headers()["connection"], "close");
    let error: Value = serde_json::from_str(body).unwrap();
    let error = &error["error"];
    (
        error["data"]["reason"].as_str().unwrap().to_owned(),
        error["message"].as_str().unwrap().to_owned(),
    )
}

async fn serve_and_refuse(files: &Files, addr: SocketAddr) {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "rust-e2e", "version": "0"}}});
    let mut agent = Http::tls(files, addr).await;
    let info = agent.call(1, "initialize", initialize["params"].clone()).await;
    assert_eq!(info["serverInfo"]["name"], "fakesim-hil");
    let bearer = format!("Bearer {TOKEN}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (response, _) = agent.post(Some(&bearer), &initialized).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let tools = agent.call(2, "tools/list", json!({})).await;
    assert_eq!(tools["tools"].as_array().unwrap().len(), 7, "{tools}");
    let started = agent
        .call(3, "tools/call", json!({"name": "reset_task", "arguments": {}}))
        .await;
    assert_eq!(started["isError"], false, "{started}");
    let moved = agent
        .call(
            4,
            "tools/call",
            json!({"name": "move", "arguments": {"delta_xyz": [0.0, 0.03, 0.0]}}),
        )
        .await;
    assert_eq!(
        moved["structuredContent"]["action"]["stop_reason"], "reached",
        "{moved}"
    );
    let stopped = agent
        .call(5, "tools/call", json!({"name": "stop_episode", "arguments": {}}))
        .await;
    assert_eq!(stopped["structuredContent"]["status"], "stopped", "{stopped}");

    // A refusal closes its connection: each attempt below opens a new one.
    let (response, body) = Http::tls(files, addr).await.post(None, &initialize).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(response.headers()["www-authenticate"], r#"Bearer realm="fakesim-hil""#);
    let (reason, message) = refusal(&response, &body);
    assert_eq!(reason, "token_required");
    assert!(message.contains("authorization: Bearer <token>"), "{message}");
    let wrong = Some("Bearer mcp-https-token-5b0c9e1d7b");
    let (response, body) = Http::tls(files, addr).await.post(wrong, &initialize).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(refusal(&response, &body).0, "token_invalid");

    // The right token in plaintext to the HTTPS port: refused with the reason, not served.
    let (response, body) = Http::plain(addr).await.post(Some(&bearer), &initialize).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
    let (reason, message) = refusal(&response, &body);
    assert_eq!(reason, "tls_required");
    assert!(message.contains("--tls-ca"), "{message}");
}

/// The daemon under test, killed if the test fails before stopping it.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn over_https_the_right_token_is_served_and_anything_else_refused_and_logged() {
    let files = Files::generate();
    let runs = files.path("runs");
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--mcp-listen",
        "127.0.0.1:0",
        "--tls-cert",
        &files.path("server.pem"),
        "--tls-key",
        &files.path("server.key"),
        "--token-file",
        &files.path("token"),
        "--runs-dir",
        &runs,
        "--image-size",
        "16",
    ];
    let mut running = Running(daemon(&args).stdout(Stdio::null()).spawn().unwrap());
    let child = &mut running.0;
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let url = after_marker(&mut stderr, child, "MCP endpoint at ");
    let addr: SocketAddr = url
        .strip_prefix("https://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("not an https URL: {url}"))
        .parse()
        .unwrap();
    after_marker(&mut stderr, child, "listening on ");

    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(serve_and_refuse(&files, addr));

    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), Signal::SIGTERM).unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0), "{rest}");
    let failures: Vec<&str> = rest
        .lines()
        .filter(|line| line.contains("authentication failed"))
        .collect();
    for reason in ["token_required", "token_invalid", "tls_required"] {
        assert!(
            failures
                .iter()
                .any(|line| line.contains(reason) && line.contains("127.0.0.1:")),
            "{reason} not logged with the peer:\n{rest}"
        );
    }
    assert!(!rest.contains(TOKEN), "the token never reaches the log");
}

#[test]
fn an_mcp_endpoint_off_loopback_without_tls_is_refused_at_start() {
    let stderr = refused_at_start(&["--listen", "127.0.0.1:0", "--mcp-listen", "0.0.0.0:0"]);
    assert!(
        stderr.contains("the MCP endpoint (--mcp-listen): refusing to listen on 0.0.0.0:0 without TLS"),
        "{stderr}"
    );
    assert!(stderr.contains("--tls-cert FILE --tls-key FILE"), "{stderr}");
    assert!(!stderr.contains("MCP endpoint at"), "{stderr}");
}
