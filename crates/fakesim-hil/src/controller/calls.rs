//! Every call of the API by name, and what each needs of the control lease: the one table the
//! README's lease table is checked against.

macro_rules! calls {
    ($($call:ident => $need:ident,)*) => {
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

            /// What the call needs of the control lease.
            pub fn need(self) -> Need {
                match self { $(Call::$call => Need::$need,)* }
            }
        }
    };
}

calls! {
    ListTasks => Never,
    ResetTask => Motion,
    GetObservation => Never,
    Move => Motion,
    Gripper => Motion,
    StopEpisode => Motion,
    GetSessionInfo => Never,
    GetModelInfo => Never,
    GetRobotState => Never,
    SendAction => Motion,
    Step => Motion,
    SetJointPositions => Motion,
    SetJointVelocities => Motion,
    ForwardKinematics => Never,
    GetJacobian => Never,
    GetContacts => Never,
    SaveState => Never,
    LoadState => Motion,
    Tick => Motion,
    PreviewActions => Never,
    SetMode => Control,
    GetHardwareStatus => Never,
    StreamJointStates => Never,
    EmergencyStop => Never,
    ResetEmergencyStop => Control,
    AcquireLease => Never,
    RenewLease => Never,
    ReleaseLease => Never,
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
