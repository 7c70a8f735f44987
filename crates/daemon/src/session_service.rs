//! The session service (the episode tools). Placeholder until the episode engine is wired in:
//! every call is refused with UNIMPLEMENTED, and there is nothing to finalise at shutdown.

use fakesim_proto::errors::ErrorStatus;
use fakesim_proto::v1;
use fakesim_proto::v1::session_service_server::SessionService as SessionApi;
use tonic::{Code, Request, Response, Status};

/// Serves `fakesim.v1.SessionService`.
#[derive(Debug, Default)]
pub struct SessionService;

impl SessionService {
    /// The session service.
    pub fn new() -> Self {
        SessionService
    }

    /// Called once the server has stopped accepting calls and the calls in flight have
    /// finished: the place to finalise an open episode as `interrupted`.
    pub async fn on_shutdown(&self) {
        tracing::debug!("session service: no episode to finalise");
    }
}

/// The refusal every session call gets until the episode engine is wired in.
fn not_implemented(method: &str) -> Status {
    ErrorStatus::new(
        Code::Unimplemented,
        "not_implemented",
        format!("SessionService.{method} is not implemented in this build yet (the episode engine is not wired in)"),
    )
    .meta("method", method)
    .into()
}

#[tonic::async_trait]
impl SessionApi for SessionService {
    async fn list_tasks(&self, _: Request<v1::ListTasksRequest>) -> Result<Response<v1::ListTasksResponse>, Status> {
        Err(not_implemented("ListTasks"))
    }

    async fn reset_task(&self, _: Request<v1::ResetTaskRequest>) -> Result<Response<v1::ResetTaskResponse>, Status> {
        Err(not_implemented("ResetTask"))
    }

    async fn get_observation(
        &self,
        _: Request<v1::GetObservationRequest>,
    ) -> Result<Response<v1::GetObservationResponse>, Status> {
        Err(not_implemented("GetObservation"))
    }

    async fn r#move(&self, _: Request<v1::MoveRequest>) -> Result<Response<v1::MoveResponse>, Status> {
        Err(not_implemented("Move"))
    }

    async fn gripper(&self, _: Request<v1::GripperRequest>) -> Result<Response<v1::GripperResponse>, Status> {
        Err(not_implemented("Gripper"))
    }

    async fn stop_episode(
        &self,
        _: Request<v1::StopEpisodeRequest>,
    ) -> Result<Response<v1::StopEpisodeResponse>, Status> {
        Err(not_implemented("StopEpisode"))
    }

    async fn get_session_info(
        &self,
        _: Request<v1::GetSessionInfoRequest>,
    ) -> Result<Response<v1::GetSessionInfoResponse>, Status> {
        Err(not_implemented("GetSessionInfo"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use fakesim_proto::errors::error_reason;

    #[tokio::test]
    async fn every_call_is_refused_as_unimplemented_naming_the_method() {
        let service = SessionService::new();
        let status = service
            .list_tasks(Request::new(v1::ListTasksRequest::default()))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::Unimplemented);
        assert_eq!(error_reason(&status).as_deref(), Some("not_implemented"));
        assert!(status.message().contains("SessionService.ListTasks"));
        let status = service
            .r#move(Request::new(v1::MoveRequest::default()))
            .await
            .unwrap_err();
        assert!(status.message().contains("SessionService.Move"));
    }
}
