//! The MCP server: the seven episode tools, each one call of the daemon's session service.

use crate::arguments::Checked;
use crate::connect::{LEASE_METADATA, SessionClient};
use crate::{describe, refusal, results};
use fakesim_proto::v1;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, Implementation, ProgressNotificationParam, RequestMetaObject, ServerCapabilities, ServerConfig,
};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status};

/// How often a call that asked for progress hears that it is still running.
const PROGRESS_PERIOD: Duration = Duration::from_millis(250);

/// The tools that move something (the arm, the gripper, or the episode's state); left out with
/// [`Access::ObserveOnly`].
pub const MOTION_TOOLS: [&str; 4] = ["reset_task", "move", "gripper", "stop_episode"];

/// Which tools are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// All seven tools.
    Full,
    /// Only the tools that move nothing: `list_tasks`, `get_observation`, `get_session_info`.
    ObserveOnly,
}

/// Arguments of `list_tasks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTasksArgs {
    /// Suite whose tasks to list; omit it to list the suites.
    #[schemars(length(max = 64))]
    pub suite: Option<String>,
}

/// Arguments of `reset_task`; omit all of them for the default scene.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetTaskArgs {
    /// Suite of the task (from list_tasks).
    #[schemars(length(max = 64))]
    pub suite: Option<String>,
    /// Index of the task inside the suite, from 0.
    pub task_index: Option<u32>,
    /// Seeded object layout, from 0 to n_init_states - 1.
    pub init_state_index: Option<u32>,
}

/// A rotation about the base axes, radians; missing components are 0.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeltaRpy {
    /// Rotation about the base X axis, radians.
    #[serde(default)]
    pub roll_x: f64,
    /// Rotation about the base Y axis, radians.
    #[serde(default)]
    pub pitch_y: f64,
    /// Rotation about the base Z axis, radians.
    #[serde(default)]
    pub yaw_z: f64,
}

/// Arguments of `move`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// TCP displacement [dx, dy, dz], metres, world frame (z up).
    pub delta_xyz: [f64; 3],
    /// Optional rotation of the TCP about the base axes, radians; omit to keep the orientation.
    pub delta_rpy: Option<DeltaRpy>,
    /// On a daemon driving two arms, the arm that moves: left or right; omit for one arm.
    pub arm: Option<String>,
}

/// A gripper target.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GripperTarget {
    /// Open the jaws.
    Open,
    /// Close the jaws.
    Close,
}

/// Arguments of `get_observation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveArgs {
    /// On a daemon driving two arms, the arm whose state and wrist camera answer: left or
    /// right; omit for one arm.
    pub arm: Option<String>,
}

/// Arguments of `gripper`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GripperArgs {
    /// open or close.
    pub command: GripperTarget,
    /// On a daemon driving two arms, the arm whose gripper acts: left or right; omit for one arm.
    pub arm: Option<String>,
}

/// Where a session's motion tools get the control lease they carry (the daemon's own MCP
/// endpoint takes one per MCP session).
pub trait MotionLease: Send + Sync {
    /// The lease id the next motion call carries, taken or renewed as needed, for the client
    /// named `client` at initialisation; `None` sends the call without one (the daemon then says
    /// why, if it needs one).
    fn for_motion(&self, client: Option<&str>) -> Option<String>;
}

/// The episode tools over one session client.
#[derive(Clone)]
pub struct EpisodeTools {
    client: SessionClient,
    router: ToolRouter<Self>,
    lease: Option<Arc<dyn MotionLease>>,
}

impl EpisodeTools {
    /// The tools allowed by `access`, calling the session service through `client`.
    pub fn new(client: SessionClient, access: Access) -> Self {
        let mut router = Self::tool_router();
        if access == Access::ObserveOnly {
            for name in MOTION_TOOLS {
                router.remove_route(name);
            }
        }
        EpisodeTools {
            client,
            router,
            lease: None,
        }
    }

    /// These tools with their motion calls carrying the lease `lease` supplies.
    pub fn with_lease(self, lease: Arc<dyn MotionLease>) -> Self {
        EpisodeTools {
            lease: Some(lease),
            ..self
        }
    }

    /// `message` as the request of a motion call, carrying the lease when there is one.
    fn motion<T>(&self, peer: &Peer<RoleServer>, message: T) -> Request<T> {
        let mut request = Request::new(message);
        let Some(lease) = &self.lease else {
            return request;
        };
        let client = peer.peer_info().map(|info| info.client_info.name.clone());
        if let Some(id) = lease.for_motion(client.as_deref())
            && let Ok(value) = MetadataValue::try_from(id.as_str())
        {
            request.metadata_mut().insert(LEASE_METADATA, value);
        }
        request
    }

    /// Runs one session call and turns its answer into a tool result, or its refusal into a
    /// tool error.
    async fn answer<T>(
        call: impl Future<Output = Result<Response<T>, Status>>,
        result: impl FnOnce(&T) -> CallToolResult,
    ) -> CallToolResult {
        match call.await {
            Ok(response) => result(response.get_ref()),
            Err(status) => refusal::tool_error(&status),
        }
    }

    /// Runs a call that may take long (a move, a gripper action, a reset on the real arm): when
    /// the client sent a progress token, a progress notification at the start and then every
    /// [`PROGRESS_PERIOD`] while it runs, its progress the seconds elapsed.
    async fn tracked(
        tool: &str,
        peer: &Peer<RoleServer>,
        meta: &RequestMetaObject,
        call: impl Future<Output = CallToolResult>,
    ) -> CallToolResult {
        let Some(token) = meta.get_progress_token() else {
            return call.await;
        };
        let started = Instant::now();
        tokio::pin!(call);
        let mut ticker = tokio::time::interval(PROGRESS_PERIOD);
        loop {
            tokio::select! {
                result = &mut call => return result,
                _ = ticker.tick() => {
                    let seconds = started.elapsed().as_secs_f64();
                    let note = ProgressNotificationParam::new(token.clone(), seconds)
                        .with_message(format!("{tool} running for {seconds:.1} s"));
                    if let Err(e) = peer.notify_progress(note).await {
                        tracing::debug!(error = %e, "progress notification not sent");
                    }
                }
            }
        }
    }
}

#[tool_router]
impl EpisodeTools {
    #[tool(description = describe::LIST_TASKS, annotations(read_only_hint = true))]
    async fn list_tasks(
        &self,
        Parameters(Checked(args)): Parameters<Checked<ListTasksArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = match args {
            Ok(args) => args,
            Err(detail) => return Ok(refusal::invalid_arguments(&detail)),
        };
        let mut client = self.client.clone();
        let request = v1::ListTasksRequest { suite: args.suite };
        Ok(Self::answer(client.list_tasks(request), results::list_tasks).await)
    }

    #[tool(description = describe::RESET_TASK)]
    async fn reset_task(
        &self,
        Parameters(Checked(args)): Parameters<Checked<ResetTaskArgs>>,
        peer: Peer<RoleServer>,
        meta: RequestMetaObject,
    ) -> Result<CallToolResult, ErrorData> {
        let args = match args {
            Ok(args) => args,
            Err(detail) => return Ok(refusal::invalid_arguments(&detail)),
        };
        let mut client = self.client.clone();
        let request = v1::ResetTaskRequest {
            suite: args.suite,
            task_index: args.task_index,
            init_state_index: args.init_state_index,
            // The agent tools' contract: the daemon's --max-steps budget, and both images.
            max_steps: None,
            cameras: results::CAMERAS.map(str::to_owned).to_vec(),
            render_quality: None,
            // A fresh seed: the episode's look, when the daemon has variations, is recorded in summary.json.
            seed: None,
        };
        let call = Self::answer(client.reset_task(self.motion(&peer, request)), results::reset_task);
        Ok(Self::tracked("reset_task", &peer, &meta, call).await)
    }

    #[tool(description = describe::GET_OBSERVATION, annotations(read_only_hint = true))]
    async fn get_observation(
        &self,
        Parameters(Checked(args)): Parameters<Checked<ObserveArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = match args {
            Ok(args) => args,
            Err(detail) => return Ok(refusal::invalid_arguments(&detail)),
        };
        let mut client = self.client.clone();
        let call = client.get_observation(v1::GetObservationRequest {
            arm: args.arm.unwrap_or_default(),
            ..Default::default()
        });
        Ok(Self::answer(call, results::get_observation).await)
    }

    #[tool(name = "move", description = describe::MOVE)]
    async fn move_tcp(
        &self,
        Parameters(Checked(args)): Parameters<Checked<MoveArgs>>,
        peer: Peer<RoleServer>,
        meta: RequestMetaObject,
    ) -> Result<CallToolResult, ErrorData> {
        let args = match args {
            Ok(args) => args,
            Err(detail) => return Ok(refusal::invalid_arguments(&detail)),
        };
        let mut client = self.client.clone();
        let [x, y, z] = args.delta_xyz;
        let request = v1::MoveRequest {
            delta_xyz: Some(v1::Vec3 { x, y, z }),
            delta_rpy: args.delta_rpy.map(|r| v1::Rpy {
                roll_x: r.roll_x,
                pitch_y: r.pitch_y,
                yaw_z: r.yaw_z,
            }),
            arm: args.arm.unwrap_or_default(),
        };
        let call = Self::answer(client.r#move(self.motion(&peer, request)), results::moved);
        Ok(Self::tracked("move", &peer, &meta, call).await)
    }

    #[tool(description = describe::GRIPPER)]
    async fn gripper(
        &self,
        Parameters(Checked(args)): Parameters<Checked<GripperArgs>>,
        peer: Peer<RoleServer>,
        meta: RequestMetaObject,
    ) -> Result<CallToolResult, ErrorData> {
        let args = match args {
            Ok(args) => args,
            Err(detail) => return Ok(refusal::invalid_arguments(&detail)),
        };
        let mut client = self.client.clone();
        let command = match args.command {
            GripperTarget::Open => v1::GripperCommand::Open,
            GripperTarget::Close => v1::GripperCommand::Close,
        };
        let request = v1::GripperRequest {
            command: command.into(),
            arm: args.arm.unwrap_or_default(),
        };
        let call = Self::answer(client.gripper(self.motion(&peer, request)), results::gripper);
        Ok(Self::tracked("gripper", &peer, &meta, call).await)
    }

    #[tool(description = describe::STOP_EPISODE)]
    async fn stop_episode(&self, peer: Peer<RoleServer>) -> Result<CallToolResult, ErrorData> {
        let mut client = self.client.clone();
        let call = client.stop_episode(self.motion(&peer, v1::StopEpisodeRequest {}));
        Ok(Self::answer(call, results::stop_episode).await)
    }

    #[tool(description = describe::GET_SESSION_INFO, annotations(read_only_hint = true))]
    async fn get_session_info(&self) -> Result<CallToolResult, ErrorData> {
        let mut client = self.client.clone();
        let call = client.get_session_info(v1::GetSessionInfoRequest {});
        Ok(Self::answer(call, results::get_session_info).await)
    }
}

#[tool_handler(router = self.router)]
impl ServerHandler for EpisodeTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("fakesim-hil", env!("CARGO_PKG_VERSION")))
            .with_instructions(describe::INSTRUCTIONS)
    }
}
