"""The camera: orbit (the original's, the world turns about its origin) and fly (an eye that moves freely).

Pure math, no GL. Both modes share the angles (``yrot``, ``pitch``) and so the view's rotation
R = rotateX(pitch) * rotateY(yrot); they differ in where the eye is:

- orbit: view = translate(xtrans, ytrans, ztrans) * R, so the eye is at -R^T (xtrans, ytrans, ztrans);
- fly: view = R * translate(-eye), the eye at (eye_x, eye_y, eye_z).

The two describe the same views, so ``switch_mode`` converts one into the other and the picture stays.
Also here: the ground under the eye (from the CPU heightmap) and the tile layout of ``--tile endless``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from pyglm import glm

from terrainview.scene.settings import CAMERAS, CameraMode, SceneSettings, within_range

CAMERA_FIELDS = tuple(spec.name for spec in dataclasses.fields(SceneSettings) if spec.metadata["group"] == "camera")
# The eye keeps this far above the ground under it: more than the near plane's reach (0.1 deep, about 0.15
# to its corners), so the ground is never cut open in front of the eye.
CLEARANCE = 0.2
# The ground is sampled this far around the eye too, so a steep slope beside it is not cut open either.
CLEARANCE_RADIUS = 0.15
# A flying eye climbs at most this far above the ground under it: from higher up the land lies beyond the fog's
# end (7 units away), and only the sky and the fog colour would show.
CEILING = 2.5
BOUND_ROUNDING = 1e-9  # world units: how far past a bound a kept eye may land by rounding
TILE_SIZE = 2.0  # one copy of the surface spans -1..1

Vec3 = tuple[float, float, float]
TileLayout = tuple[int, tuple[float, float]]  # tiles per side, the world (x, z) of the middle tile's centre
Ground = Callable[[float, float], float]


def _rotate_x(v: Vec3, degrees: float) -> Vec3:
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return v[0], v[1] * c - v[2] * s, v[1] * s + v[2] * c


def _rotate_y(v: Vec3, degrees: float) -> Vec3:
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return v[0] * c + v[2] * s, v[1], -v[0] * s + v[2] * c


def _rotate(settings: SceneSettings, v: Vec3) -> Vec3:
    """R v: world direction to eye space."""
    return _rotate_x(_rotate_y(v, settings.yrot), settings.pitch)


def _unrotate(settings: SceneSettings, v: Vec3) -> Vec3:
    """R^T v: eye-space direction to world."""
    return _rotate_y(_rotate_x(v, -settings.pitch), -settings.yrot)


def rotation_matrix(settings: SceneSettings) -> glm.mat4:
    """R = rotateX(pitch) * rotateY(yrot), the view's rotation in both modes (the sky uses only this)."""
    pitch = glm.rotate(glm.radians(settings.pitch), glm.vec3(1.0, 0.0, 0.0))
    yaw = glm.rotate(glm.radians(settings.yrot), glm.vec3(0.0, 1.0, 0.0))
    return compose(pitch, yaw)


def compose(first: glm.mat4, *others: glm.mat4) -> glm.mat4:
    """The product first * others[0] * ... of 4 x 4 matrices."""
    product = first
    for matrix in others:
        product = product * matrix  # type: ignore[assignment]  # pyglm's stubs type mat4 * mat4 as mat4x2
    return product


def view_matrix(settings: SceneSettings) -> glm.mat4:
    """World to eye space for the settings' camera mode."""
    if settings.camera is CameraMode.FLY:
        eye = glm.translate(-glm.vec3(*eye_position(settings)))
        return compose(rotation_matrix(settings), eye)
    translation = glm.translate(glm.vec3(settings.xtrans, settings.ytrans, settings.ztrans))
    return compose(translation, rotation_matrix(settings))


def eye_position(settings: SceneSettings) -> Vec3:
    """The eye in world coordinates, whatever the mode."""
    if settings.camera is CameraMode.FLY:
        return settings.eye_x, settings.eye_y, settings.eye_z
    x, y, z = _unrotate(settings, (settings.xtrans, settings.ytrans, settings.ztrans))
    return -x, -y, -z


def with_eye(settings: SceneSettings, eye: Vec3) -> SceneSettings:
    """The same angles and mode with the eye moved to ``eye`` (world coordinates).

    Each field is kept within its range (``within_range``): a switch of camera mode and the ground raising the eye
    move it through here (keys and drags clamp with ``within_range`` themselves).
    """
    if settings.camera is CameraMode.FLY:
        fields = {"eye_x": eye[0], "eye_y": eye[1], "eye_z": eye[2]}
    else:
        x, y, z = _rotate(settings, eye)
        fields = {"xtrans": -x, "ytrans": -y, "ztrans": -z}
    return settings.replace(**{name: within_range(name, value) for name, value in fields.items()})


def switch_mode(settings: SceneSettings, mode: CameraMode) -> SceneSettings:
    """Another camera mode showing the same view (the other mode's fields are derived from this one's)."""
    if mode not in CAMERAS:
        raise ValueError(f"camera: {mode!r} is not one of {', '.join(CAMERAS)}")
    if mode == settings.camera:
        return settings
    return with_eye(settings.replace(camera=mode), eye_position(settings))


def heading(settings: SceneSettings) -> tuple[float, float]:
    """The horizontal world direction (x, z) the eye looks along, whatever its pitch."""
    x, _, z = _rotate_y((0.0, 0.0, -1.0), -settings.yrot)
    return x, z


# --- tiles ----------------------------------------------------------------------------------------------------

def map_corner_from_centre(tiles: int) -> float:
    """How far west (and north) of the tile layout's centre a copy of the map starts, modulo its 2-unit period.

    The copies are centred on the layout's centre: an odd count of tiles has one centred there (its first point
    1 unit away), an even count a tile's corner (0). World x lies at x - centre + this (mod 2) units from a map's
    first point: the one rule for the ground under the eye, the natural look's places and its sea.
    """
    return float(tiles % 2)


def tile_layout(settings: SceneSettings, reach: float) -> TileLayout:
    """Tiles per side and the world (x, z) of the middle tile's centre.

    A fixed count centred on the origin, or for ``--tile endless`` an odd ring snapped to the tile grid
    around the eye, wide enough that nothing within ``reach`` of the eye is past its edge.
    """
    if isinstance(settings.tile, int):
        return settings.tile, (0.0, 0.0)
    x, _, z = eye_position(settings)
    # The eye is at most one unit from its tile's centre; the ring's edge is count units from that centre.
    count = 2 * math.ceil(reach / TILE_SIZE) + 1
    return count, (TILE_SIZE * round(x / TILE_SIZE), TILE_SIZE * round(z / TILE_SIZE))


# --- the ground ------------------------------------------------------------------------------------------------

def ground_height(heights: np.ndarray | None, tile: int | str) -> Ground | None:
    """The surface height at world (x, z): bilinear in the heightmap, which repeats every tile.

    Outside a finite tile grid the surface is continued as if tiled on, so the eye stays above its level
    there too (from below, the surface at the edge would show its culled underside). No 2D heightmap (none
    yet, or a 1D profile): no ground.
    """
    if heights is None or np.ndim(heights) != 2:
        return None
    heights = np.asarray(heights)  # no copy: the ground samples a few points per step
    cells = heights.shape[0] - 1
    # Centred on the origin; repeat and endless continue the single tile (region 0).
    corner = map_corner_from_centre(tile if isinstance(tile, int) else 1)

    def height(x: float, z: float) -> float:
        column, row = (((x + corner) % TILE_SIZE) / TILE_SIZE * cells, ((z + corner) % TILE_SIZE) / TILE_SIZE * cells)
        c, r = min(int(column), cells - 1), min(int(row), cells - 1)
        fc, fr = column - c, row - r
        corners = heights[r:r + 2, c:c + 2].astype(np.float64)
        top = corners[0, 0] + (corners[0, 1] - corners[0, 0]) * fc
        bottom = corners[1, 0] + (corners[1, 1] - corners[1, 0]) * fc
        return float(top + (bottom - top) * fr)

    return height


def floor_under(ground: Ground, x: float, z: float) -> float:
    """The lowest the eye may be at (x, z): the clearance above the highest ground close around it."""
    samples = [ground(x, z)]
    for index in range(8):
        angle = index * math.pi / 4.0
        samples.append(ground(x + CLEARANCE_RADIUS * math.cos(angle), z + CLEARANCE_RADIUS * math.sin(angle)))
    return max(samples) + CLEARANCE


def keep_above_ground(settings: SceneSettings, ground: Ground | None) -> SceneSettings:
    """The settings with the eye kept over the ground (unchanged without a ground).

    The eye is raised to the floor under it if it was below; a flying eye is also kept within ``CEILING`` of
    the ground.
    """
    if ground is None:
        return settings
    x, y, z = eye_position(settings)
    floor = floor_under(ground, x, z)
    top = floor + CEILING if settings.camera is CameraMode.FLY else math.inf
    # An eye kept here and put back in an orbit camera's own terms lands within a rounding of the bound: it is in.
    if floor - BOUND_ROUNDING <= y <= top + BOUND_ROUNDING:
        return settings
    return with_eye(settings, (x, min(max(y, floor), top), z))


def given_fly_eye_in_bounds(settings: SceneSettings, ground: Ground | None) -> tuple[SceneSettings, str | None]:
    """A camera kept where keys and mouse could take it; and what moved.

    For a camera given on the command line, in a scene or a flight, and each frame in the window.

    A fly eye goes between the clearance and ``CEILING`` above the ground: below, the surface's missing underside
    would show; above, the haze hides the land. An orbit camera is the original's, drawn as given, unless it
    looks up (a negative pitch, which the original has not): then it too is kept above the ground, where
    dragging keeps it, so the underside never shows.
    """
    if settings.camera is not CameraMode.FLY and settings.pitch >= 0.0:
        return settings, None
    bounded = keep_above_ground(settings, ground)
    if bounded is settings:
        return settings, None
    if eye_position(bounded)[1] < eye_position(settings)[1]:
        return bounded, "the fly camera was lowered: from higher up the haze hides the land"
    which = "fly camera" if settings.camera is CameraMode.FLY else "camera, looking up,"
    return bounded, f"the {which} was raised to stay above the ground"
