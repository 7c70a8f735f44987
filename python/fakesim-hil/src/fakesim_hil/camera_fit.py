"""Fits a camera's intrinsics and pose to views of a ChArUco board that the arm carries or that
stands still while the camera rides on the arm.

Frames: every pose is a 4x4 homogeneous matrix `T_a_b` mapping coordinates in frame b to frame a.
The camera sits fixed in a *mount* frame (the world for a front camera, the gripper for a wrist
camera); the board sits fixed in a *holder* frame (the gripper for a front camera, the world for
a wrist camera). Per view the arm's forward kinematics give `T_mount_holder`; the unknowns are
`T_mount_camera`, `T_holder_board` and the intrinsics. The camera frame here is OpenCV's
(x right, y down, looking along +z).

The solvers are OpenCV's: ChArUco detection, `calibrateCamera` (the starting intrinsics) and
`calibrateRobotWorldHandEye` (the closed-form start of the board and camera poses); the joint
fit of everything to every corner is scipy's `least_squares`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import scipy.optimize

#: A view with fewer detected ChArUco corners than this is left out (its pose is too loose).
MIN_CORNERS = 6
#: The most evaluations the joint fit may take.
MAX_STEPS = 100
#: The least rotation of the board relative to the camera between two of the views, degrees:
#: below it the hand-eye problem has no unique answer.
MIN_TURN_DEG = 10.0


class FitError(ValueError):
    """The frames do not determine the camera (too few views or corners, degenerate poses)."""


@dataclass(frozen=True)
class BoardSpec:
    """A ChArUco board: squares across and down, their side and the markers' side in metres."""

    squares_x: int = 6
    squares_y: int = 5
    square_m: float = 0.03
    marker_m: float = 0.022
    dictionary: str = "DICT_4X4_50"

    def board(self) -> cv2.aruco.CharucoBoard:
        """OpenCV's board object for this spec."""
        words = getattr(cv2.aruco, self.dictionary, None)
        if words is None:
            raise FitError(f"unknown ArUco dictionary {self.dictionary!r} (e.g. DICT_4X4_50)")
        dictionary = cv2.aruco.getPredefinedDictionary(words)
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_m, self.marker_m, dictionary)

    def image(self, px_per_square: int = 100) -> np.ndarray:
        """The board as a greyscale image, with a white border half a square wide."""
        size = (self.squares_x * px_per_square, self.squares_y * px_per_square)
        pattern = self.board().generateImage(size, marginSize=0)
        border = px_per_square // 2
        return cv2.copyMakeBorder(pattern, border, border, border, border, cv2.BORDER_CONSTANT, value=255)

    def printed_size_m(self) -> tuple[float, float]:
        """Width and height of `image()` at the true square size, metres."""
        return ((self.squares_x + 1) * self.square_m, (self.squares_y + 1) * self.square_m)


@dataclass
class View:
    """One frame: the detected corners (board coordinates, pixels) and where the holder was."""

    board_points: np.ndarray
    image_points: np.ndarray
    mount_from_holder: np.ndarray


@dataclass
class CameraFit:
    """The fitted camera: intrinsics, distortion, pose in the mount frame (OpenCV axes), the
    board's pose in its holder, and the reprojection error over all corners and per view."""

    camera_matrix: np.ndarray
    distortion: np.ndarray
    mount_from_camera: np.ndarray
    holder_from_board: np.ndarray
    rms_px: float
    view_rms_px: list[float]


def detect(image: np.ndarray, spec: BoardSpec) -> tuple[np.ndarray, np.ndarray] | None:
    """The board's corners seen in an image: (board points Nx3 in metres, pixels Nx2), or None
    when fewer than MIN_CORNERS are found."""
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(spec.board()).detectBoard(grey)
    if ids is None or len(ids) < MIN_CORNERS:
        return None
    board_points = spec.board().getChessboardCorners()[ids.ravel()]
    return board_points.astype(np.float64), corners.reshape(-1, 2).astype(np.float64) - detector_offset()


@functools.cache
def detector_offset() -> np.ndarray:
    """What OpenCV's ChArUco detector adds to the corners it finds (x, y pixels), measured once
    on a board image magnified by a known amount: OpenCV 4.13's sub-pixel step returns every
    corner half a pixel right of and below the corner (opencv/opencv#25539, fixed upstream by
    #28380), which would move the fitted principal point by as much."""
    spec, px, scale = BoardSpec(), 100, 1.3
    image = spec.image(px)
    warp = np.array([[scale, 0.0, 10.25], [0.0, scale, 7.75]])
    size = (int(image.shape[1] * scale) + 20, int(image.shape[0] * scale) + 20)
    magnified = cv2.warpAffine(image, warp, size, flags=cv2.INTER_LINEAR, borderValue=255)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(spec.board()).detectBoard(magnified)
    if ids is None:
        return np.zeros(2)
    # Pixel centres at whole numbers: a square's edge in the board image lies between two pixels.
    truth = px // 2 + spec.board().getChessboardCorners()[ids.ravel(), :2] / spec.square_m * px - 0.5
    return np.mean(corners.reshape(-1, 2) - (truth * scale + warp[:, 2]), axis=0)


def fit(views: Sequence[View], image_size: tuple[int, int], fit_distortion: bool = True) -> CameraFit:
    """Fits intrinsics, camera pose and board pose to the views (image_size is width, height)."""
    if len(views) < 3:
        raise FitError(f"{len(views)} frames show the board; at least 3, at different arm poses, are needed")
    if _largest_turn_deg(views) < MIN_TURN_DEG:
        raise FitError(f"the board turns less than {MIN_TURN_DEG:g} degrees between the frames: turn the wrist between them")
    flags = _distortion_flags(fit_distortion)
    try:
        matrix, distortion, board_in_camera = _calibrate_views(views, image_size, flags)
    except cv2.error as error:
        raise FitError(f"OpenCV cannot calibrate from these frames: {error.msg}") from None
    mount_from_camera, holder_from_board = _hand_eye(views, board_in_camera)
    matrix, distortion, mount_from_camera, holder_from_board = _refine(views, matrix, distortion, mount_from_camera, holder_from_board, fit_distortion)
    errors = [np.linalg.norm(_offsets(view, matrix, distortion, mount_from_camera, holder_from_board), axis=1) for view in views]
    every = np.concatenate(errors)
    return CameraFit(
        camera_matrix=matrix,
        distortion=distortion,
        mount_from_camera=mount_from_camera,
        holder_from_board=holder_from_board,
        rms_px=float(np.sqrt(np.mean(every**2))),
        view_rms_px=[float(np.sqrt(np.mean(e**2))) for e in errors],
    )


def _largest_turn_deg(views: Sequence[View]) -> float:
    """The largest rotation between the holder's orientations in the mount frame, degrees."""
    rotations = [v.mount_from_holder[:3, :3] for v in views]
    cosines = [(np.trace(a.T @ b) - 1) / 2 for i, a in enumerate(rotations) for b in rotations[i + 1 :]]
    return float(np.degrees(np.arccos(np.clip(min(cosines), -1.0, 1.0))))


def _distortion_flags(fit_distortion: bool) -> int:
    """calibrateCamera flags: radial k1, k2 fitted (or none), tangential and k3 held at zero."""
    flags = cv2.CALIB_ZERO_TANGENT_DIST | cv2.CALIB_FIX_K3
    if not fit_distortion:
        flags |= cv2.CALIB_FIX_K1 | cv2.CALIB_FIX_K2
    return flags


def _calibrate_views(views: Sequence[View], image_size: tuple[int, int], flags: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Intrinsics from the board views alone, and the board's pose in the camera per view."""
    objects = [v.board_points.astype(np.float32) for v in views]
    pixels = [v.image_points.astype(np.float32) for v in views]
    _, matrix, distortion, rvecs, tvecs = cv2.calibrateCamera(objects, pixels, image_size, None, None, flags=flags)
    return matrix, distortion, [_pose(r, t) for r, t in zip(rvecs, tvecs, strict=True)]


def _hand_eye(views: Sequence[View], board_in_camera: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form start: OpenCV's robot-world/hand-eye solver on camera_from_board and
    mount_from_holder per view (its 'world' is our board, its 'base' our holder and its
    'gripper' our mount), giving camera_from_mount and board_from_holder."""
    try:
        board_from_holder_r, board_from_holder_t, camera_from_mount_r, camera_from_mount_t = cv2.calibrateRobotWorldHandEye(
            [p[:3, :3] for p in board_in_camera],
            [p[:3, 3] for p in board_in_camera],
            [v.mount_from_holder[:3, :3] for v in views],
            [v.mount_from_holder[:3, 3] for v in views],
        )
    except cv2.error as error:
        raise FitError(f"the arm poses do not determine the camera (vary the wrist's rotation between frames): {error.msg}") from None
    camera_from_mount = _matrix(camera_from_mount_r, camera_from_mount_t)
    board_from_holder = _matrix(board_from_holder_r, board_from_holder_t)
    return np.linalg.inv(camera_from_mount), np.linalg.inv(board_from_holder)


def _refine(
    views: Sequence[View],
    matrix: np.ndarray,
    distortion: np.ndarray,
    mount_from_camera: np.ndarray,
    holder_from_board: np.ndarray,
    fit_distortion: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every unknown fitted at once to every corner of every view (scipy's least_squares):
    camera and board poses (rotation vector, translation), fx, fy, cx, cy and, if asked, k1, k2.
    No OpenCV call fits a pose that sits between the kinematics and the board, hence scipy."""
    start = np.concatenate([_vector(mount_from_camera), _vector(holder_from_board), matrix[[0, 1, 0, 1], [0, 1, 2, 2]]])
    if fit_distortion:
        start = np.concatenate([start, distortion.ravel()[:2]])

    def unpack(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        fx, fy, cx, cy = x[12:16]
        k = np.zeros(5)
        k[: len(x) - 16] = x[16:]
        return np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]]), k, _pose(x[0:3], x[3:6]), _pose(x[6:9], x[9:12])

    def residuals(x: np.ndarray) -> np.ndarray:
        model = unpack(x)
        return np.concatenate([_offsets(view, *model).ravel() for view in views])

    # Consistent frames settle in a handful of steps (4 for the test's 16); frames that do not fit
    # together stop at the cap and show as a large reprojection error instead of a long wait.
    solution = scipy.optimize.least_squares(residuals, start, x_scale="jac", loss="huber", f_scale=2.0, max_nfev=MAX_STEPS)
    return unpack(solution.x)


def _offsets(view: View, matrix: np.ndarray, distortion: np.ndarray, mount_from_camera: np.ndarray, holder_from_board: np.ndarray) -> np.ndarray:
    """Pixel offsets (Nx2) of the model's projections from the detected corners."""
    camera_from_board = np.linalg.inv(mount_from_camera) @ view.mount_from_holder @ holder_from_board
    rvec, _ = cv2.Rodrigues(camera_from_board[:3, :3])
    projected, _ = cv2.projectPoints(view.board_points, rvec, camera_from_board[:3, 3], matrix, distortion)
    return projected.reshape(-1, 2) - view.image_points


def _vector(pose: np.ndarray) -> np.ndarray:
    """A 4x4 pose as six numbers: OpenCV's rotation vector, then the translation."""
    rvec, _ = cv2.Rodrigues(pose[:3, :3])
    return np.concatenate([rvec.ravel(), pose[:3, 3]])


def _pose(rvec: np.ndarray, tvec: np.ndarray) -> np.ndarray:
    """A 4x4 pose from OpenCV's rotation vector and translation."""
    rotation, _ = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64))
    return _matrix(rotation, tvec)


def _matrix(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """A 4x4 pose from a rotation matrix and a translation."""
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = np.asarray(translation, dtype=np.float64).ravel()
    return pose


def _transform(pose: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points (Nx3) mapped through a 4x4 pose."""
    return points @ pose[:3, :3].T + pose[:3, 3]
