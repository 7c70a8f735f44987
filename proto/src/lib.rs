//! The gRPC API of fakesim-hil: the `fakesim.v1` protobuf messages, tonic
//! servers and clients for the session, robot, hardware and preview services, the
//! encoded descriptor set for reflection, and the error helpers every service
//! uses.
//!
//! Generated paths, for example:
//! `v1::session_service_server::{SessionService, SessionServiceServer}` and
//! `v1::session_service_client::SessionServiceClient` (likewise `robot_service_*`,
//! `hardware_service_*` and `preview_service_*`).

pub mod errors;

/// Messages, enums, servers and clients generated from `proto/fakesim/v1/*.proto`.
pub mod v1 {
    // Every proto element carries a comment today; these keep a future
    // undocumented field or a new clippy lint on prost output from breaking CI.
    #![allow(missing_docs)]
    #![allow(clippy::all)]
    tonic::include_proto!("fakesim.v1");
}

/// Encoded `FileDescriptorSet` of every `fakesim.v1` file, with source info,
/// for `tonic_reflection::server::Builder::register_encoded_file_descriptor_set`.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("fakesim_descriptor");

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::FILE_DESCRIPTOR_SET;
    use prost::Message;
    use prost_types::FileDescriptorSet;

    /// Method names of the named service in the descriptor set, in declaration order.
    fn methods(set: &FileDescriptorSet, service: &str) -> Vec<String> {
        set.file
            .iter()
            .filter(|file| file.package() == "fakesim.v1")
            .flat_map(|file| file.service.iter())
            .filter(|svc| svc.name() == service)
            .flat_map(|svc| svc.method.iter().map(|m| m.name().to_owned()))
            .collect()
    }

    #[test]
    fn descriptor_set_declares_the_four_services_and_their_rpcs() {
        let set = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).unwrap();
        assert_eq!(
            methods(&set, "SessionService"),
            [
                "ListTasks",
                "ResetTask",
                "GetObservation",
                "Move",
                "Gripper",
                "StopEpisode",
                "GetSessionInfo"
            ]
        );
        assert_eq!(
            methods(&set, "RobotService"),
            [
                "GetModelInfo",
                "GetRobotState",
                "SendAction",
                "Step",
                "SetJointPositions",
                "SetJointVelocities",
                "ForwardKinematics",
                "GetJacobian",
                "GetContacts",
                "SaveState",
                "LoadState",
                "Tick",
                "TickChunk",
                "SetControlPeriod"
            ]
        );
        assert_eq!(
            methods(&set, "HardwareService"),
            [
                "SetMode",
                "GetHardwareStatus",
                "StreamJointStates",
                "EmergencyStop",
                "ResetEmergencyStop",
                "AcquireLease",
                "RenewLease",
                "ReleaseLease"
            ]
        );
        assert_eq!(methods(&set, "PreviewService"), ["PreviewActions"]);
    }

    #[test]
    fn stream_joint_states_is_server_streaming_only() {
        let set = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).unwrap();
        let method = set
            .file
            .iter()
            .flat_map(|file| file.service.iter())
            .flat_map(|svc| svc.method.iter())
            .find(|m| m.name() == "StreamJointStates")
            .unwrap();
        assert!(method.server_streaming());
        assert!(!method.client_streaming());
    }

    #[test]
    fn descriptor_set_keeps_proto_comments() {
        let set = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).unwrap();
        let session = set
            .file
            .iter()
            .find(|file| file.name() == "fakesim/v1/session.proto")
            .unwrap();
        let comments: Vec<&str> = session
            .source_code_info
            .as_ref()
            .unwrap()
            .location
            .iter()
            .filter_map(|loc| loc.leading_comments.as_deref())
            .collect();
        assert!(
            comments
                .iter()
                .any(|c| c.contains("Within 8 mm of the target position"))
        );
    }

    #[test]
    fn reflection_service_accepts_descriptor_set() {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
            .build_v1()
            .unwrap();
    }
}
