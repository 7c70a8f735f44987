//! What a preview found: contacts, joint peaks and limit hits, the table clearance, a gripper
//! stall, and the violations a gate refuses a command for.

use std::fmt;

/// What an arm link touched in a contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContactClass {
    /// The table or anything else fixed to the world (the floor).
    Table,
    /// The arm's own base.
    Base,
    /// A movable object (a cube, the bowl).
    Object,
    /// Another link of the arm.
    SelfContact,
    /// A link or the base of the other arm of a pair.
    OtherArm,
}

impl ContactClass {
    /// The class as reports and clients name it: `table`, `base`, `object`, `self`,
    /// `other_arm`.
    pub fn name(self) -> &'static str {
        match self {
            ContactClass::Table => "table",
            ContactClass::Base => "base",
            ContactClass::Object => "object",
            ContactClass::SelfContact => "self",
            ContactClass::OtherArm => "other_arm",
        }
    }
}

/// One geom pair that touched during the preview (an arm link and what it touched).
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewContact {
    /// The arm link (body) in the contact.
    pub link: String,
    /// The arm geom in the contact.
    pub geom: String,
    /// The body touched (another link for a self contact).
    pub other_body: String,
    /// The geom touched.
    pub other_geom: String,
    /// What was touched.
    pub class: ContactClass,
    /// Deepest penetration over the preview (m, positive).
    pub max_depth_m: f64,
    /// First tick (0-based) the pair touched.
    pub first_tick: u32,
    /// Penetration at the start, when the pair already touched then (m).
    pub start_depth_m: Option<f64>,
    /// True when the contact counts as a violation (see [`super::PreviewLimits`]).
    pub violation: bool,
}

/// One arm joint over the preview.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JointPreview {
    /// Largest absolute speed (rad/s).
    pub peak_speed_rad_s: f64,
    /// Largest absolute acceleration between physics steps (rad/s²).
    pub peak_accel_rad_s2: f64,
    /// First tick the joint came within half a degree of an end of its range.
    pub limit_first_tick: Option<u32>,
    /// Furthest the joint went past an end of its range (rad, 0 when it stayed inside).
    pub past_limit_rad: f64,
    /// Position at the end of the preview (rad).
    pub final_qpos: f64,
}

/// The lowest point any arm collision geom reached relative to the table top.
#[derive(Debug, Clone, PartialEq)]
pub struct Clearance {
    /// The link (body) that came lowest.
    pub link: String,
    /// Its geom.
    pub geom: String,
    /// Height of its lowest point above the table top (m; negative is below the surface).
    pub clearance_m: f64,
    /// Tick at which it was lowest.
    pub tick: u32,
}

/// The gripper commanded closed but held open by something between or under the jaws.
#[derive(Debug, Clone, PartialEq)]
pub struct GripperStall {
    /// First tick the gripper stood still short of its target.
    pub first_tick: u32,
    /// How far the gripper stayed open of its target at the end of the preview (rad).
    pub gap_rad: f64,
    /// What the jaws touched when stalled (bodies); empty when nothing was touched.
    pub blocked_by: Vec<String>,
}

/// Kinds of violation a gate refuses a command for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViolationKind {
    /// An arm link in contact with the table (or the floor).
    TableContact,
    /// An arm link in contact with the arm's base.
    BaseContact,
    /// Two arm links in contact.
    SelfContact,
    /// A link other than the gripper's in contact with an object.
    ObjectContact,
    /// A link in contact with the other arm of a pair.
    ArmContact,
    /// A joint driven past an end of its range.
    JointLimit,
    /// A joint faster than the limit asked for.
    JointSpeed,
}

impl ViolationKind {
    /// The kind as refusals name it: `table_contact`, `base_contact`, ...
    pub fn name(self) -> &'static str {
        match self {
            ViolationKind::TableContact => "table_contact",
            ViolationKind::BaseContact => "base_contact",
            ViolationKind::SelfContact => "self_contact",
            ViolationKind::ObjectContact => "object_contact",
            ViolationKind::ArmContact => "arm_contact",
            ViolationKind::JointLimit => "joint_limit",
            ViolationKind::JointSpeed => "joint_speed",
        }
    }
}

/// One reason to refuse the previewed command.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// What kind of violation.
    pub kind: ViolationKind,
    /// The links (bodies) or joints involved, arm link first.
    pub links: Vec<String>,
    /// First tick it happened.
    pub first_tick: u32,
    /// The measure: penetration depth (m), past-limit angle (rad) or speed (rad/s).
    pub value: f64,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let links = self.links.join(" / ");
        let tick = self.first_tick;
        match self.kind {
            ViolationKind::JointLimit => write!(
                f,
                "joint_limit: {links} {:.3} rad past its range from tick {tick}",
                self.value
            ),
            ViolationKind::JointSpeed => write!(f, "joint_speed: {links} at {:.2} rad/s at tick {tick}", self.value),
            kind => write!(
                f,
                "{}: {links} ({:.1} mm deep) from tick {tick}",
                kind.name(),
                self.value * 1000.0
            ),
        }
    }
}

/// Everything a preview found.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewReport {
    /// Ticks run: the actions, then the horizon holding the last targets.
    pub ticks: u32,
    /// Physics steps per tick.
    pub substeps_per_tick: u32,
    /// Every arm contact, in order of first touch.
    pub contacts: Vec<PreviewContact>,
    /// The arm joints, action-key order.
    pub joints: [JointPreview; 6],
    /// Lowest clearance of the arm to the table top; `None` when the scene has no `table_top`.
    pub table_clearance: Option<Clearance>,
    /// A predicted gripper stall.
    pub gripper_stall: Option<GripperStall>,
    /// Violations, in order of first tick; empty when the command is safe to run.
    pub violations: Vec<Violation>,
}

impl PreviewReport {
    /// True when the preview found no violation.
    pub fn is_safe(&self) -> bool {
        self.violations.is_empty()
    }

    /// The violations as one line, for a refusal message; empty when safe.
    pub fn summary(&self) -> String {
        self.violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}
