//! The model as the logger sees it: a private copy of the MuJoCo data posed from snapshots or
//! from joint readings, the arm's and the scene's bodies, and their geometry for Rerun.

use fakesim_twin::ArmSpec;
use fakesim_twin::RenderSnapshot;
use fakesim_twin::sim::TCP_SITE;
use mujoco_rs::prelude::*;
use rerun::{
    Boxes3D, Capsules3D, Color, Cylinders3D, Ellipsoids3D, FillMode, Mesh3D, Quaternion, RecordingStream,
    RecordingStreamResult, Transform3D,
};
use std::sync::Arc;

/// Geom group of collision-only geoms (the arm draws its visual geoms, group 2).
const COLLISION_GROUP: i32 = 3;

/// A body logged under its name.
#[derive(Debug, Clone)]
pub(crate) struct Body {
    id: usize,
    /// Its entity under the arm's or the scene's root.
    pub name: String,
}

/// One arm of the model: where its joints are and which bodies it moves.
pub(crate) struct ArmBodies {
    /// qpos address of each joint, action-key order.
    qpos: [usize; 6],
    /// The arm's bodies (the tree holding its first joint).
    pub bodies: Vec<Body>,
    tcp_site: usize,
}

impl ArmBodies {
    /// Finds `arm`'s joints and TCP in `model`; its bodies are gathered by [`Scene::new`].
    fn find(model: &MjModel, arm: &ArmSpec) -> Result<(Self, i32), String> {
        let mut qpos = [0; 6];
        let mut root = None;
        for (slot, joint) in qpos.iter_mut().zip(fakesim_twin::joints::Joint::ALL) {
            let name = arm.model_name(joint);
            let id = model
                .name_to_id(MjtObjBase::mjOBJ_JOINT, &name)
                .ok_or_else(|| format!("the model has no joint {name:?}"))?;
            *slot = model.jnt_qposadr()[id] as usize;
            root.get_or_insert(model.body_rootid()[model.jnt_bodyid()[id] as usize]);
        }
        let tcp = arm.part_name(TCP_SITE);
        let tcp_site = model
            .name_to_id(MjtObjBase::mjOBJ_SITE, &tcp)
            .ok_or_else(|| format!("the model has no site {tcp:?}"))?;
        let root = root.ok_or("an arm without joints")?;
        Ok((
            ArmBodies {
                qpos,
                bodies: Vec::new(),
                tcp_site,
            },
            root,
        ))
    }
}

/// The model posed on the logger's thread.
pub(crate) struct Scene {
    data: MjData<Arc<MjModel>>,
    /// Each arm, in the twin's order.
    pub arms: Vec<ArmBodies>,
    /// Bodies that move besides the arms: free objects and mocap bodies.
    pub moving: Vec<Body>,
    /// Bodies that never move (the table): logged once.
    pub fixed: Vec<Body>,
}

impl Scene {
    /// The scene of the twin's model holding `arms`.
    pub fn new(model: Arc<MjModel>, arms: &[&ArmSpec]) -> Result<Self, String> {
        let (mut found, roots): (Vec<ArmBodies>, Vec<i32>) = (arms.iter())
            .map(|arm| ArmBodies::find(&model, arm))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .unzip();
        let (mut moving, mut fixed) = (Vec::new(), Vec::new());
        for id in 0..model.ffi().nbody as usize {
            let name = model
                .id_to_name(MjtObjBase::mjOBJ_BODY, id)
                .map_or_else(|| format!("body{id}"), str::to_owned);
            let body = Body { id, name };
            if let Some(arm) = roots.iter().position(|root| *root == model.body_rootid()[id]) {
                found[arm].bodies.push(body);
            } else if model.body_dofnum()[id] > 0 || model.body_mocapid()[id] >= 0 {
                moving.push(body);
            } else {
                fixed.push(body);
            }
        }
        Ok(Scene {
            data: MjData::new(model),
            arms: found,
            moving,
            fixed,
        })
    }

    /// Poses every body from a snapshot of the twin.
    pub fn pose(&mut self, snapshot: &RenderSnapshot) -> Result<(), String> {
        snapshot.pose(&mut self.data)
    }

    /// Poses arm `arm` at these joints (rad, action-key order), the rest as last posed.
    pub fn pose_arm(&mut self, arm: usize, joints: &[f64; 6]) {
        let Some(ArmBodies { qpos: adrs, .. }) = self.arms.get(arm) else {
            return;
        };
        let qpos = self.data.qpos_mut();
        for (adr, q) in adrs.iter().zip(joints) {
            qpos[*adr] = *q;
        }
        self.data.kinematics();
    }

    /// A body's world pose as posed.
    pub fn transform(&self, body: &Body) -> Transform3D {
        let [x, y, z] = self.data.xpos()[body.id];
        let [qw, qx, qy, qz] = self.data.xquat()[body.id];
        Transform3D::from_translation_rotation(
            [x as f32, y as f32, z as f32],
            Quaternion::from_wxyz([qw as f32, qx as f32, qy as f32, qz as f32]),
        )
    }

    /// Arm `arm`'s TCP world position as posed.
    pub fn tcp(&self, arm: &ArmBodies) -> [f32; 3] {
        self.data.site_xpos()[arm.tcp_site].map(|v| v as f32)
    }

    /// Logs, as static data, the geometry of `bodies` under `root/<body>/<geom>`, each geom
    /// placed in its body's frame: in the model's colours, or all in `tint`.
    pub fn log_geometry(
        &self,
        rec: &RecordingStream,
        root: &str,
        bodies: &[Body],
        tint: Option<Color>,
    ) -> RecordingStreamResult<()> {
        let model = self.data.model();
        for body in bodies {
            for geom in 0..model.ffi().ngeom as usize {
                if model.geom_bodyid()[geom] as usize != body.id || model.geom_group()[geom] >= COLLISION_GROUP {
                    continue;
                }
                let colour = tint.unwrap_or_else(|| geom_colour(model, geom));
                let Some(shape) = Shape::of(model, geom, colour) else {
                    continue;
                };
                let name = model
                    .id_to_name(MjtObjBase::mjOBJ_GEOM, geom)
                    .map_or_else(|| format!("geom{geom}"), str::to_owned);
                let path = format!("{root}/{}/{name}", body.name);
                let [x, y, z] = model.geom_pos()[geom];
                let [qw, qx, qy, qz] = model.geom_quat()[geom];
                rec.log_static(
                    path.as_str(),
                    &Transform3D::from_translation_rotation(
                        [x as f32, y as f32, z as f32],
                        Quaternion::from_wxyz([qw as f32, qx as f32, qy as f32, qz as f32]),
                    ),
                )?;
                shape.log(rec, &path)?;
            }
        }
        Ok(())
    }
}

/// A geom's colour: its material's, else its own.
fn geom_colour(model: &MjModel, geom: usize) -> Color {
    let rgba = match usize::try_from(model.geom_matid()[geom]) {
        Ok(material) => model.mat_rgba()[material],
        Err(_) => model.geom_rgba()[geom],
    };
    let [r, g, b, a] = rgba.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8);
    Color::from_unmultiplied_rgba(r, g, b, a)
}

/// A geom as one of Rerun's primitives, in the geom's own frame.
enum Shape {
    Box(Boxes3D),
    Capsule(Capsules3D),
    Cylinder(Cylinders3D),
    Ellipsoid(Ellipsoids3D),
    Mesh(Mesh3D),
}

impl Shape {
    /// The primitive or mesh of a geom; planes and height fields are not drawn.
    fn of(model: &MjModel, geom: usize, colour: Color) -> Option<Self> {
        let [a, b, c] = model.geom_size()[geom].map(|v| v as f32);
        Some(match model.geom_type()[geom] {
            MjtGeomBase::mjGEOM_BOX => Shape::Box(
                Boxes3D::from_half_sizes([[a, b, c]])
                    .with_colors([colour])
                    .with_fill_mode(FillMode::Solid),
            ),
            // MuJoCo's capsule and cylinder are centred on the origin along z, with half-length b;
            // Rerun's capsule starts at the origin.
            MjtGeomBase::mjGEOM_CAPSULE => Shape::Capsule(
                Capsules3D::from_lengths_and_radii([2.0 * b], [a])
                    .with_translations([[0.0, 0.0, -b]])
                    .with_colors([colour])
                    .with_fill_mode(FillMode::Solid),
            ),
            MjtGeomBase::mjGEOM_CYLINDER => Shape::Cylinder(
                Cylinders3D::from_lengths_and_radii([2.0 * b], [a])
                    .with_colors([colour])
                    .with_fill_mode(FillMode::Solid),
            ),
            MjtGeomBase::mjGEOM_SPHERE => Shape::Ellipsoid(
                Ellipsoids3D::from_radii([a])
                    .with_colors([colour])
                    .with_fill_mode(FillMode::Solid),
            ),
            MjtGeomBase::mjGEOM_ELLIPSOID => Shape::Ellipsoid(
                Ellipsoids3D::from_half_sizes([[a, b, c]])
                    .with_colors([colour])
                    .with_fill_mode(FillMode::Solid),
            ),
            MjtGeomBase::mjGEOM_MESH => Shape::Mesh(mesh_of(model, geom)?.with_albedo_factor(colour.0)),
            _ => return None,
        })
    }

    fn log(&self, rec: &RecordingStream, path: &str) -> RecordingStreamResult<()> {
        match self {
            Shape::Box(shape) => rec.log_static(path, shape),
            Shape::Capsule(shape) => rec.log_static(path, shape),
            Shape::Cylinder(shape) => rec.log_static(path, shape),
            Shape::Ellipsoid(shape) => rec.log_static(path, shape),
            Shape::Mesh(shape) => rec.log_static(path, shape),
        }
    }
}

/// A mesh geom's triangles in the geom's frame (where MuJoCo keeps a mesh's vertices); `None`
/// for a geom without a mesh.
fn mesh_of(model: &MjModel, geom: usize) -> Option<Mesh3D> {
    let mesh = usize::try_from(model.geom_dataid()[geom]).ok()?;
    let span = |start: i32, count: i32| {
        let start = usize::try_from(start).ok()?;
        Some(start..start + usize::try_from(count).ok()?)
    };
    let vertices = model
        .mesh_vert()
        .get(span(model.mesh_vertadr()[mesh], model.mesh_vertnum()[mesh])?)?;
    let faces = model
        .mesh_face()
        .get(span(model.mesh_faceadr()[mesh], model.mesh_facenum()[mesh])?)?;
    let triangles = faces
        .iter()
        .map(|face| face.map(|vertex| u32::try_from(vertex).unwrap_or(0)));
    Some(Mesh3D::new(vertices.iter().copied()).with_triangle_indices(triangles))
}
