"""The twin's arms carry the published masses, centres of mass and inertia tensors.

The references are MuJoCo Menagerie's own files, vendored unchanged beside the meshes they come
with: `assets/so101/meshes/menagerie-so101.xml` (robotstudio_so101) and
`assets/so100/meshes/menagerie-so_arm100.xml` (trs_so_arm100). MuJoCo's Python bindings compile
each, with its base put where ours stands, and compile our model file; at a set of joint poses every
arm body's mass, centre of mass (world frame) and inertia tensor about that centre (world frame)
must agree. Comparing in the world frame at several poses checks the inertials whatever frame each
file writes them in, and that our body frames are the published ones.

Two published bodies are not ours one to one:
- Menagerie's SO-101 welds a `camera_mount` body (12 g, spread over the wrist camera mount's mesh)
  to the gripper. Our gripper body carries both: the reference combines the two here. MuJoCo
  computes the mount's inertia from its mesh: the reference reads the full-size published mesh
  (`meshes/full-size/`), not the daemon's reduced copy, as our gripper's numbers were computed
  (the reduced copy would move the gripper's centre of mass by 0.13 mm and its tensor by 2 %).
- Menagerie's SO-100 `Base` has no inertial of its own (MuJoCo gives it the volume of its collision
  mesh at water's density); it is fixed to the world and so carries no dynamics: left out.

Measured with the functions below (the worst over bodies and poses): the SO-101's former
estimates are off by 0.012 kg (the gripper, without the mount), 39 mm (a centre of mass) and
8e-5 kg m^2 (an inertia entry), and fail; the published ones written in our file agree within
1e-16 kg, 4e-8 m and 4e-11 kg m^2. The SO-100 already carried Menagerie's inertials (exactly equal).
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The greatest differences of mass (kg), centre of mass (m) and inertia entry (kg m^2) that count
#: as equal.
MASS_TOLERANCE = 1e-7
COM_TOLERANCE = 1e-6
INERTIA_TOLERANCE = 1e-9
#: Joint poses (rad, the six joints in tree order) at which the two models are compared; inside
#: both arms' joint ranges.
POSES = (
    (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    (0.5, -0.3, 0.2, 0.8, 1.0, 1.2),
    (-0.6, -1.2, 1.0, 0.3, -1.2, 0.1),
    (1.2, -1.5, 1.5, -1.0, 2.0, 1.5),
)
#: Per arm: our model file, the published one, the base body (named alike in both), and for each
#: of our arm bodies the published bodies it stands for.
ARMS = {
    "so101": (
        ROOT / "assets" / "so101" / "so101.xml",
        ROOT / "assets" / "so101" / "meshes" / "menagerie-so101.xml",
        "base",
        {
            "base": ("base",),
            "shoulder": ("shoulder",),
            "upper_arm": ("upper_arm",),
            "lower_arm": ("lower_arm",),
            "wrist": ("wrist",),
            "gripper": ("gripper", "camera_mount"),
            "moving_jaw": ("moving_jaw_so101_v1",),
        },
    ),
    "so100": (
        ROOT / "assets" / "so100" / "so100.xml",
        ROOT / "assets" / "so100" / "meshes" / "menagerie-so_arm100.xml",
        "Base",
        {
            name: (name,)
            for name in ("Rotation_Pitch", "Upper_Arm", "Lower_Arm", "Wrist_Pitch_Roll", "Fixed_Jaw", "Moving_Jaw")
        },
    ),
}


def published_model(path: Path, base: str, ours: mujoco.MjModel) -> mujoco.MjModel:
    """The published file compiled with its base standing where ours does. Its meshes are read
    from our directory (the full-size published copy where `full-size/` holds one); those we do not ship (collision meshes of bodies whose inertial is given
    explicitly, so they add no mass) are left out."""
    spec = mujoco.MjSpec.from_file(str(path))
    spec.meshdir = str(path.parent)
    for mesh in spec.meshes:
        if (path.parent / "full-size" / mesh.file).is_file():
            mesh.file = f"full-size/{mesh.file}"
    missing = {mesh.name for mesh in spec.meshes if not (path.parent / mesh.file).is_file()}
    for geom in list(spec.geoms):
        if geom.type == mujoco.mjtGeom.mjGEOM_MESH and geom.meshname in missing:
            spec.delete(geom)
    for mesh in list(spec.meshes):
        if mesh.name in missing:
            spec.delete(mesh)
    spec.body(base).pos = ours.body(base).pos
    spec.body(base).quat = ours.body(base).quat
    return spec.compile()


def combined(model: mujoco.MjModel, data: mujoco.MjData, names: tuple[str, ...]) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, centre of mass and inertia tensor about it (world frame) of the bodies `names`
    taken as one rigid body."""
    bodies = [model.body(name).id for name in names]
    mass = sum(float(model.body_mass[b]) for b in bodies)
    centre = sum(model.body_mass[b] * data.xipos[b] for b in bodies) / mass
    inertia = np.zeros((3, 3))
    for b in bodies:
        turn = data.ximat[b].reshape(3, 3)
        offset = data.xipos[b] - centre
        inertia += turn @ np.diag(model.body_inertia[b]) @ turn.T
        inertia += model.body_mass[b] * (offset @ offset * np.eye(3) - np.outer(offset, offset))
    return mass, centre, inertia


def posed(model: mujoco.MjModel, pose: tuple[float, ...]) -> mujoco.MjData:
    """The model's kinematics at `pose` (the arm's six joints come first)."""
    data = mujoco.MjData(model)
    data.qpos[: len(pose)] = pose
    mujoco.mj_kinematics(model, data)
    return data


@pytest.mark.parametrize("arm", sorted(ARMS))
def test_every_arm_body_carries_the_published_inertial(arm: str) -> None:
    ours_path, published_path, base, bodies = ARMS[arm]
    ours = mujoco.MjModel.from_xml_path(str(ours_path))
    published = published_model(published_path, base, ours)
    for pose in POSES:
        ours_data, published_data = posed(ours, pose), posed(published, pose)
        for body, published_bodies in bodies.items():
            mass, centre, inertia = combined(ours, ours_data, (body,))
            want_mass, want_centre, want_inertia = combined(published, published_data, published_bodies)
            where = f"{arm} {body} at {pose}"
            assert abs(mass - want_mass) <= MASS_TOLERANCE, f"{where}: mass {mass} kg, published {want_mass} kg"
            assert np.abs(centre - want_centre).max() <= COM_TOLERANCE, (
                f"{where}: centre of mass {centre} m, published {want_centre} m"
            )
            assert np.abs(inertia - want_inertia).max() <= INERTIA_TOLERANCE, (
                f"{where}: inertia {inertia.round(9).tolist()} kg m^2, published {want_inertia.round(9).tolist()}"
            )
