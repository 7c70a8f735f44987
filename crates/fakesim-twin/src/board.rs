//! Boards: flat printed cards the cameras draw in the scene (a calibration board clamped in the
//! gripper, a poster on the table), each an image stretched over a thin box that collides with
//! nothing and weighs nothing, in the world or riding on a body.
//!
//! A board is a TOML table: `image` (PNG or JPEG), `size` (width and height, metres), `pos` (m)
//! and `quat` (w, x, y, z) of the centre of its printed face in the world or in `mount`'s frame,
//! and optionally `mount` (a body). The image faces the board's +z, its top edge along +y and
//! its left edge along -x; the box lies behind the face.

use crate::error::TwinError;
use crate::scene::mount_body;
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::MjSpec;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Most pixels a board's image may have on a side.
pub const MAX_BOARD_PIXELS: u32 = 4096;
/// Largest side of a board, metres.
pub const MAX_BOARD_SIDE_M: f64 = 10.0;
/// A board's thickness, metres.
const THICKNESS_M: f64 = 0.002;

/// A flat printed board in the scene, as its TOML table describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Board {
    /// The picture printed on it (PNG or JPEG), stretched over its face.
    pub image: PathBuf,
    /// Width and height of its face, metres.
    pub size: [f64; 2],
    /// Position of its printed face's centre, metres: in the world, or in `mount`'s frame.
    pub pos: [f64; 3],
    /// Orientation (w, x, y, z), in the world or in `mount`'s frame.
    pub quat: [f64; 4],
    /// The body it rides on; none: fixed in the world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<String>,
}

impl Board {
    /// Reads and checks one board from a TOML document; `origin` names it in errors, and a
    /// relative `image` is taken from `base` (the directory of the file, when it is one).
    pub fn from_toml(text: &str, origin: &str, base: Option<&Path>) -> Result<Self, TwinError> {
        let refused = |problem: String| TwinError::Scene(format!("board {origin}: {problem}"));
        let mut board: Board = toml::from_str(text).map_err(|e| refused(e.to_string().trim_end().to_owned()))?;
        if let Some(base) = base.filter(|_| board.image.is_relative()) {
            board.image = base.join(&board.image);
        }
        if !board
            .size
            .iter()
            .all(|side| side.is_finite() && *side > 0.0 && *side <= MAX_BOARD_SIDE_M)
        {
            return Err(refused(format!(
                "`size` must be a width and a height above 0 and at most {MAX_BOARD_SIDE_M} m, got {:?}",
                board.size
            )));
        }
        if !board.pos.iter().all(|v| v.is_finite()) {
            return Err(refused(format!(
                "`pos` must be three finite metres, got {:?}",
                board.pos
            )));
        }
        let norm = board.quat.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(norm.is_finite() && norm > 1e-9) {
            return Err(refused(format!(
                "`quat` must be a finite, non-zero quaternion w, x, y, z, got {:?}",
                board.quat
            )));
        }
        board.quat = board.quat.map(|v| v / norm);
        Ok(board)
    }

    /// The image's pixels (RGB, rows from the top) and its width and height.
    fn pixels(&self) -> Result<(Vec<u8>, u32, u32), TwinError> {
        let image = crate::image::read_rgb(&self.image, MAX_BOARD_PIXELS, "image")
            .map_err(|why| TwinError::Scene(format!("board image {}: {why}", self.image.display())))?;
        let (width, height) = image.dimensions();
        Ok((image.into_raw(), width, height))
    }
}

/// Adds each board to `spec`: a texture of its image, a material, and a box on its mount.
pub(crate) fn add_boards(spec: &mut MjSpec, boards: &[Board]) -> Result<(), TwinError> {
    for (number, board) in boards.iter().enumerate() {
        let name = format!("fakesim_board_{number}");
        let (pixels, width, height) = board.pixels()?;
        let texture = spec.add_texture();
        texture
            .set_name(&name)
            .map_err(|e| TwinError::Scene(format!("board {number}: {e}")))?;
        texture.set_type(MjtTexture::mjTEXTURE_2D);
        texture.set_width(i32::try_from(width).unwrap_or(i32::MAX));
        texture.set_height(i32::try_from(height).unwrap_or(i32::MAX));
        texture.set_nchannel(3);
        texture.set_data(&pixels);
        let material = spec.add_material();
        material
            .set_name(&name)
            .map_err(|e| TwinError::Scene(format!("board {number}: {e}")))?;
        material.set_texture(MjtTextureRoleBase::mjTEXROLE_RGB, &name);
        let body = mount_body(spec, board.mount.as_deref())
            .map_err(|problem| TwinError::Scene(format!("board {}: {problem}", board.image.display())))?;
        let geom = body.add_geom();
        geom.set_type(MjtGeomBase::mjGEOM_BOX);
        *geom.size_mut() = [board.size[0] / 2.0, board.size[1] / 2.0, THICKNESS_M / 2.0];
        let [w, x, y, z] = board.quat;
        let normal = [
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ];
        *geom.pos_mut() = std::array::from_fn(|i| board.pos[i] - normal[i] * THICKNESS_M / 2.0);
        *geom.quat_mut() = board.quat;
        geom.set_contype(0);
        geom.set_conaffinity(0);
        geom.set_density(0.0);
        geom.set_group(2);
        geom.set_material(&name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::scene::Scene;
    use image::{Rgb, RgbImage};

    /// A board on the gripper, its image `board.png` in `dir` (written: 8 x 4 pixels, the
    /// top-left one red).
    fn board_in(dir: &Path) -> Board {
        let mut picture = RgbImage::from_pixel(8, 4, Rgb([255, 255, 255]));
        picture.put_pixel(0, 0, Rgb([255, 0, 0]));
        picture.save(dir.join("board.png")).unwrap();
        let text = "image = \"board.png\"\nsize = [0.2, 0.1]\npos = [0.0, 0.0, -0.15]\nquat = [2.0, 0.0, 0.0, 0.0]\nmount = \"gripper\"\n";
        Board::from_toml(text, "board.toml", Some(dir)).unwrap()
    }

    #[test]
    fn a_board_rides_on_its_body_with_its_picture_and_changes_no_mass() {
        let dir = tempfile::tempdir().unwrap();
        let board = board_in(dir.path());
        assert_eq!(
            board.image,
            dir.path().join("board.png"),
            "relative to the file's directory"
        );
        assert_eq!(board.quat, [1.0, 0.0, 0.0, 0.0], "normalised");
        let plain = Scene::EmptyTable.compile().unwrap();
        let model = Scene::EmptyTable.compile_with(&[], &[board]).unwrap();
        assert_eq!(model.ffi().ngeom, plain.ffi().ngeom + 1);
        assert_eq!(model.body_mass(), plain.body_mass(), "it weighs nothing");
        let material = model.name_to_id(MjtObjBase::mjOBJ_MATERIAL, "fakesim_board_0").unwrap();
        let geom = model
            .geom_matid()
            .iter()
            .position(|&id| id as usize == material)
            .unwrap();
        let gripper = model.name_to_id(MjtObjBase::mjOBJ_BODY, "gripper").unwrap();
        assert_eq!(model.geom_bodyid()[geom] as usize, gripper);
        assert_eq!((model.geom_contype()[geom], model.geom_conaffinity()[geom]), (0, 0));
        assert_eq!(model.geom_size()[geom], [0.1, 0.05, THICKNESS_M / 2.0]);
        assert_eq!(
            model.geom_pos()[geom],
            [0.0, 0.0, -0.15 - THICKNESS_M / 2.0],
            "the face at pos, the box behind"
        );
        let texture = model.name_to_id(MjtObjBase::mjOBJ_TEXTURE, "fakesim_board_0").unwrap();
        assert_eq!((model.tex_width()[texture], model.tex_height()[texture]), (8, 4));
        let start = model.tex_adr()[texture] as usize;
        assert_eq!(
            &model.tex_data()[start..start + 6],
            &[255, 0, 0, 255, 255, 255],
            "rows from the top"
        );
    }

    #[test]
    fn a_bad_board_is_refused_naming_what() {
        let dir = tempfile::tempdir().unwrap();
        let good = board_in(dir.path());
        let text = |key: &str, value: &str| {
            let mut table = toml::Table::try_from(&good).unwrap();
            table.insert(
                key.to_owned(),
                value
                    .parse::<toml::Value>()
                    .unwrap_or_else(|_| toml::Value::from(value)),
            );
            toml::to_string(&table).unwrap()
        };
        for (key, value, expected) in [
            ("size", "[0.0, 0.1]", "`size` must be"),
            ("size", "[20.0, 0.1]", "`size` must be"),
            ("quat", "[0.0, 0.0, 0.0, 0.0]", "`quat` must be"),
            ("colour", "\"red\"", "unknown field `colour`"),
        ] {
            let error = Board::from_toml(&text(key, value), "b.toml", None)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("board b.toml") && error.contains(expected),
                "{key}: {error}"
            );
        }
        let nowhere = Board {
            mount: Some("hand".to_owned()),
            ..good.clone()
        };
        let error = Scene::EmptyTable.compile_with(&[], &[nowhere]).unwrap_err().to_string();
        assert!(error.contains("`mount` \"hand\" is not a body"), "{error}");
        std::fs::write(dir.path().join("bad.png"), b"not a picture").unwrap();
        let unreadable = Board {
            image: dir.path().join("bad.png"),
            ..good
        };
        let error = Scene::EmptyTable
            .compile_with(&[], &[unreadable])
            .unwrap_err()
            .to_string();
        assert!(error.contains("board image") && error.contains("bad.png"), "{error}");
    }
}
