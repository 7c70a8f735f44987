//! How much the gRPC server takes on at once, and the refusals of what it will not take, in
//! the error table's terms like any other refusal.
//!
//! - Per connection: HTTP/2's `SETTINGS_MAX_CONCURRENT_STREAMS` (`--max-calls-per-connection`),
//!   announced to the client and enforced by the HTTP/2 library: a client queues its further
//!   calls itself, and a stream past the limit is reset `REFUSED_STREAM` unanswered.
//! - In all: at most `--max-calls` calls are worked on at once over every connection; one more
//!   is refused at once with RESOURCE_EXHAUSTED `server_busy` and a retry hint, not queued (a
//!   call's work ends when its answer starts: a stream being sent holds no place).
//! - A request message over the decoding limit (tonic's 4 MiB), which tonic refuses before any
//!   service sees it, is answered RESOURCE_EXHAUSTED `message_too_large` with its `ErrorInfo`.

use crate::wire::status::{Reason, refusal};
use std::time::Duration;
use tonic::body::Body;
use tonic::codegen::http;
use tonic::{Code, Status};
use tower::BoxError;
use tower::ServiceBuilder;
use tower::layer::util::{Identity, Stack};
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::load_shed::error::Overloaded;
use tower::util::{MapErrLayer, MapResponseLayer};

/// When a client refused `server_busy` is told to try again: the order of one call's work.
const BUSY_RETRY: Duration = Duration::from_millis(100);

/// The layers that bound the calls worked on in all and explain framework refusals.
pub type Limits = Stack<
    GlobalConcurrencyLimitLayer,
    Stack<LoadShedLayer, Stack<MapErrLayer<fn(BoxError) -> BoxError>, Stack<MapResponseLayer<Explain>, Identity>>>,
>;

/// How a response is given the `ErrorInfo` tonic's own refusals lack.
type Explain = fn(http::Response<Body>) -> http::Response<Body>;

/// The server's bounds on the calls it works on in all: refused at once past `max_calls`, and
/// framework refusals (an oversize message) given their `ErrorInfo`.
pub fn layer(max_calls: u32) -> Limits {
    ServiceBuilder::new()
        .layer(MapResponseLayer::new(explain_oversize as Explain))
        .layer(MapErrLayer::new(busy as fn(BoxError) -> BoxError))
        .layer(LoadShedLayer::new())
        .layer(GlobalConcurrencyLimitLayer::new(max_calls as usize))
        .into_inner()
}

/// The load shedder's refusal as the error table's `server_busy`; any other error as it is.
fn busy(error: BoxError) -> BoxError {
    if !error.is::<Overloaded>() {
        return error;
    }
    let status: Status = refusal(
        Reason::ServerBusy,
        "the daemon is working on as many calls as --max-calls lets it; retry after the RetryInfo delay",
    )
    .retry_after(BUSY_RETRY)
    .into();
    Box::new(status)
}

/// A response that is tonic's own refusal of an oversize request (OUT_OF_RANGE, no details),
/// answered instead as the error table's `message_too_large`; any other as it is.
fn explain_oversize(mut response: http::Response<Body>) -> http::Response<Body> {
    let Some(status) = Status::from_header_map(response.headers()) else {
        return response;
    };
    if status.code() != Code::OutOfRange || !status.details().is_empty() {
        return response;
    }
    let ours: Status = refusal(
        Reason::MessageTooLarge,
        "the request message is larger than the daemon decodes; send less in one call (split a \
         chunk, name fewer values)",
    )
    .meta("detail", status.message())
    .into();
    if let Err(error) = ours.add_header(response.headers_mut()) {
        tracing::warn!(%error, "cannot explain an oversize request's refusal");
    }
    response
}
