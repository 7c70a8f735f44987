//! Every call of the API by name, and what each needs of the control lease: the one table the
//! manual's lease table (`docs/src/access.md`) is checked against.

macro_rules! calls {
    ($($call:ident => ($need:ident, $journal:literal),)*) => {
        /// A call of the API, named as its RPC.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Call {
            $(
                #[doc = concat!("`", stringify!($call), "`.")]
                $call,
            )*
        }

        impl Call {
            /// Every call of the API.
            pub const ALL: &[Call] = &[$(Call::$call),*];

            /// The RPC's name.
            pub fn name(self) -> &'static str {
                match self { $(Call::$call => stringify!($call),)* }
            }

            /// The call's name in the run journal (`robot_call` lines) and in `summary.json`.
            pub fn journal_name(self) -> &'static str {
                match self { $(Call::$call => $journal,)* }
            }

            /// What the call needs of the control lease.
            pub fn need(self) -> Need {
                match self { $(Call::$call => Need::$need,)* }
            }
        }
    };
}

calls! {
    ListTasks => (Never, "list_tasks"),
    ResetTask => (Motion, "reset_task"),
    GetObservation => (Never, "get_observation"),
    Move => (Motion, "move"),
    Gripper => (Motion, "gripper"),
    StopEpisode => (Motion, "stop_episode"),
    GetSessionInfo => (Never, "get_session_info"),
    GetModelInfo => (Never, "get_model_info"),
    GetRobotState => (Never, "get_robot_state"),
    SendAction => (Motion, "send_action"),
    Step => (Motion, "step"),
    SetJointPositions => (Motion, "set_joint_positions"),
    SetJointVelocities => (Motion, "set_joint_velocities"),
    ForwardKinematics => (Never, "forward_kinematics"),
    GetJacobian => (Never, "get_jacobian"),
    GetContacts => (Never, "get_contacts"),
    SaveState => (Never, "save_state"),
    LoadState => (Motion, "load_state"),
    Tick => (Motion, "tick"),
    TickChunk => (Motion, "tick_chunk"),
    SetControlPeriod => (Motion, "set_control_period"),
    PreviewActions => (Never, "preview_actions"),
    SetMode => (Control, "set_mode"),
    GetHardwareStatus => (Never, "get_hardware_status"),
    StreamJointStates => (Never, "stream_joint_states"),
    EmergencyStop => (Never, "emergency_stop"),
    ResetEmergencyStop => (Control, "reset_emergency_stop"),
    AcquireLease => (Never, "acquire_lease"),
    RenewLease => (Never, "renew_lease"),
    ReleaseLease => (Never, "release_lease"),
}

/// What a call needs of the control lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Moves the robot or changes the episode: the lease in mirror and hil, and in sim with
    /// `--lease-in-sim`.
    Motion,
    /// Switches the mode or resets the emergency stop: the lease whenever a real arm is
    /// attached, and in sim with `--lease-in-sim`.
    Control,
    /// Reads, streams, saving a state, the emergency stop and the lease calls: never; anyone
    /// who can connect may stop the arm.
    Never,
}
