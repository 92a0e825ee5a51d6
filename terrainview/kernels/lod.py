"""Level of detail for the tiled surface: CDLOD node selection (Strugar 2009). No GL here.

Each tile of the surface (a 2-unit map of 2**n cells per side) is the root of a quadtree. A node of level k
covers ``patch * 2**k`` cells and is drawn as one fixed grid patch of ``patch`` quads per side, so its
vertices are every ``2**k``-th cell: diamond-square's coarser passes exactly, read from the full heightmap.
Level k is used up to the distance ``ranges[k]``, which doubles per level; in the last part of its range a
level's in-between vertices slide (vertically) onto the next coarser level's surface, so there are neither
cracks nor popping. A quarter of a node whose children are not needed but whose siblings are is drawn as a
half-size patch at the parent's level.

Ranges come from a screen-space error in pixels of the output image: at ``ranges[k]`` a grid step of level k
seen face-on spans ``error_pixels`` pixels. They are raised where needed so that each node is small against
its range (``MAX_NODE_EXTENT``), which keeps neighbours within one level of each other.

The distance that picks a level (here and in the vertex shader, lod.glsl) is the horizontal distance combined
with the eye's height above (or below) the slab of all heights (``LodSurface.eye_height``). It never exceeds
the true distance, and it makes a node's extent its horizontal size alone, whatever its cliffs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from terrainview.kernels.lattice import check_heightmap

PATCH_QUADS = 16  # quads per side of the drawn grid patch (a whole node); quarters draw PATCH_QUADS / 2
MORPH_START = 0.7  # morphing toward the coarser level runs over the last 30% of each range ...
MORPH_END = 0.99  # ... and is complete just before the range ends, whatever the float rounding on the GPU
# A node's bounding-box diagonal is at most this fraction of its range: then the finer side of any boundary
# between levels is fully morphed there while the coarser side has not started morphing.
MAX_NODE_EXTENT = 0.35
# The exact full mesh is drawn while it fits a frame of about 50 ms on llvmpipe, whose vertex and geometry
# stages run on one thread (about 0.16 us a triangle; a frame of line segments about 0.3 us each):
# iterations 8 on one tile, the original's largest surface, is drawn as the original drew it.
FULL_MESH_TRIANGLES = 200_000
FULL_MESH_SEGMENTS = 140_000
# What a level-of-detail frame may draw: the finest error down to one pixel that keeps within it (a frame of
# about 25 ms of vertex work on llvmpipe, the rest of 50 ms left to shading), never coarser than --lod-error
# unless even that is over it.
TRIANGLE_BUDGET = 60_000
SEGMENT_BUDGET = 60_000
BUDGET_HEIGHT = 720  # the budgets hold for a 720-pixel-high image; taller ones get more, by area
DEFAULT_ERROR_PIXELS = 8.0  # the --lod-error default: the coarsest error a frame falls back to
INSTANCE_FIELDS = 6  # tile centre x, z; first column, first row (cells); level; edge flags (lines mode)
EDGE_HIGH_X, EDGE_HIGH_Z = 1, 2  # the node's last column / row is an outer edge of the drawn tiles


def full_mesh_triangles(iterations: int, tiles: int) -> int:
    """Triangles of the full surface mesh (every cell of every tile), as ``--lod off`` draws it."""
    return 2 * (1 << iterations) ** 2 * tiles ** 2


def full_mesh_segments(iterations: int, tiles: int) -> int:
    """Line segments of the full grid (every row and column of every tile), as ``--lod off`` draws them."""
    cells = 1 << iterations
    return 2 * (cells + 1) * cells * tiles ** 2


def tile_roots(tiles: int) -> np.ndarray:
    """World centres (x, z) of the ``tiles`` x ``tiles`` copies of the 2-unit map, centred on the origin."""
    centres = 2.0 * (np.arange(tiles) - 0.5 * (tiles - 1))
    x, z = np.meshgrid(centres, centres)
    return np.column_stack([x.ravel(), z.ravel()])


@njit(cache=True, nogil=True)
def _row_bounds_kernel(heights, patch, first_row, row_low, row_high):
    """Level 0's first pass: each row's bounds per node column, into row_low / row_high from row first_row.

    ``heights`` holds the map's rows from first_row on (as many as it has): one sequential sweep of them.
    """
    for row in range(heights.shape[0]):
        for a in range(row_low.shape[1]):
            lo = hi = heights[row, a * patch]
            for column in range(a * patch + 1, (a + 1) * patch + 1):
                value = heights[row, column]
                lo = min(lo, value)
                hi = max(hi, value)
            row_low[first_row + row, a], row_high[first_row + row, a] = lo, hi


@njit(cache=True, nogil=True)
def _pyramid_kernel(row_low, row_high, patch, levels):
    """Per-node minimum and maximum heights, every level in one flat array (level 0 first), edges included.

    From every row's bounds per node column (``_row_bounds_kernel``).
    """
    cells = row_low.shape[0] - 1
    sides = np.empty(levels + 1, dtype=np.int64)
    offsets = np.empty(levels + 2, dtype=np.int64)
    offsets[0] = 0
    for level in range(levels + 1):
        sides[level] = cells // (patch << level)
        offsets[level + 1] = offsets[level] + sides[level] ** 2
    low = np.empty(offsets[levels + 1], dtype=np.float32)
    high = np.empty(offsets[levels + 1], dtype=np.float32)
    side = sides[0]
    for b in range(side):
        for a in range(side):
            lo, hi = row_low[b * patch, a], row_high[b * patch, a]
            for row in range(b * patch + 1, (b + 1) * patch + 1):
                lo = min(lo, row_low[row, a])
                hi = max(hi, row_high[row, a])
            low[b * side + a], high[b * side + a] = lo, hi
    for level in range(1, levels + 1):
        side, child_side = sides[level], sides[level - 1]
        for b in range(side):
            for a in range(side):
                lo, hi = np.inf, -np.inf
                for child in range(4):
                    index = offsets[level - 1] + (2 * b + child // 2) * child_side + 2 * a + child % 2
                    lo = min(lo, low[index])
                    hi = max(hi, high[index])
                low[offsets[level] + b * side + a], high[offsets[level] + b * side + a] = lo, hi
    return low, high, offsets


class PyramidRows:
    """A (2**n + 1)-square map's pyramid built a band of rows at a time (``add``), then whole (``surface``).

    For a map made in bands: each band's share of the work while it is fresh (the endless world's worker).
    """

    def __init__(self, cells: int) -> None:
        if cells < 1 or cells & (cells - 1):
            raise ValueError(f"a map of 2**n cells a side, not {cells}")
        self.iterations = cells.bit_length() - 1
        self.patch = min(PATCH_QUADS, cells)
        self._row_low = np.empty((cells + 1, cells // self.patch), dtype=np.float32)
        self._row_high = np.empty_like(self._row_low)
        self._rows = 0  # rows added so far

    def add(self, heights: np.ndarray) -> None:
        """The map's next rows (all its columns)."""
        rows = columns = self._row_low.shape[0]  # the map is square
        if heights.ndim != 2 or heights.shape[1] != columns or self._rows + heights.shape[0] > rows:
            raise ValueError(f"rows {self._rows}.. of {heights.shape} do not fit a {rows} x {columns} map")
        _row_bounds_kernel(np.ascontiguousarray(heights, dtype=np.float32), self.patch, self._rows, self._row_low,
                           self._row_high)
        self._rows += heights.shape[0]

    def surface(self) -> LodSurface:
        """The pyramid, once every row is added."""
        if self._rows != self._row_low.shape[0]:
            raise ValueError(f"{self._rows} of the map's {self._row_low.shape[0]} rows added")
        levels = self.iterations - (self.patch.bit_length() - 1)
        low, high, offsets = _pyramid_kernel(self._row_low, self._row_high, self.patch, levels)
        return LodSurface(self.iterations, self.patch, levels, low, high, offsets, float(low[-1]), float(high[-1]))


@dataclass(frozen=True)
class LodSurface:
    """What selection needs of one heightmap: its size, the patch and levels, and per-node height bounds."""

    iterations: int
    patch: int
    levels: int  # the top level, a whole tile
    low: np.ndarray
    high: np.ndarray
    offsets: np.ndarray  # start of each level's nodes in low / high (none below ``finest``: never read there)
    bottom: float  # the lowest and highest heights of the map
    top: float
    finest: int = 0  # the finest level the map holds (above 0 for a region of the endless world held coarser)

    @classmethod
    def of(cls, heights: np.ndarray) -> LodSurface | None:
        """The pyramid of a 2D heightmap; None for a 1D profile, which is drawn without level of detail."""
        return cls.from_heights(heights) if heights.ndim == 2 else None

    @classmethod
    def from_heights(cls, heights: np.ndarray) -> LodSurface:
        """Build the min/max pyramid of a (2**n + 1) x (2**n + 1) heightmap."""
        heights = check_heightmap(heights, grid=True, finite=False)  # bounds only
        rows = PyramidRows(heights.shape[0] - 1)
        rows.add(heights)
        return rows.surface()

    @classmethod
    def of_region(cls, coarse: LodSurface, iterations: int, bottom: float, top: float) -> LodSurface:
        """The pyramid of one region of the endless world held at a coarser detail than ``iterations``.

        ``coarse`` is the pyramid of the region's (2**m + 1)**2 map, m <= iterations, which is every
        2**(iterations - m)-th point of the full map: its nodes are the full pyramid's levels from
        ``iterations - m`` up, and selection stops there (``finest``). ``bottom`` and ``top`` are the whole
        world's slab, so that every region measures level distances alike and neighbours morph alike along
        their borders.
        """
        shift = iterations - coarse.iterations
        patch = PATCH_QUADS
        levels = iterations - (patch.bit_length() - 1)
        # The coarse map's level j is the full pyramid's j + shift, laid out alike (a level's nodes per row: the
        # full map's cells over the node's, the same count): its arrays serve as they are. The levels below
        # ``finest`` are never read, and hold nothing (a region held at detail 5 at iterations 12 had kept 700 KB
        # of them, 0.2 ms to fill, as each of several hundred regions came).
        offsets = np.concatenate([np.zeros(shift, dtype=np.int64), coarse.offsets])
        return cls(iterations, patch, levels, coarse.low, coarse.high, offsets, bottom, top, finest=shift)

    @property
    def cell(self) -> float:
        """The world size of one heightmap cell (the map spans 2 units)."""
        return 2.0 / (1 << self.iterations)

    def eye_height(self, eye_y: float) -> float:
        """The eye's vertical distance to the slab of all the map's heights (0 inside it)."""
        return max(0.0, eye_y - self.top, self.bottom - eye_y)


def lod_ranges(surface: LodSurface, image_height: int, field_of_view_y: float, error_pixels: float) -> np.ndarray:
    """Distance up to which each level is drawn: doubling per level, the top level unbounded."""
    return grid_ranges(surface.iterations, image_height, field_of_view_y, error_pixels)


def grid_ranges(iterations: int, image_height: int, field_of_view_y: float, error_pixels: float,
                coarser_top: bool = False) -> np.ndarray:
    """lod_ranges of any 2-unit map of ``iterations`` (its levels depend on its size alone).

    With ``coarser_top`` the top level's range is finite too, and one more level, unbounded, follows it: a root
    beyond its range is drawn as a half-size patch of every other point (the endless world's far regions, which
    would otherwise cost a whole patch each however small they are on screen).
    """
    cell = 2.0 / (1 << iterations)
    patch = min(PATCH_QUADS, 1 << iterations)
    levels = iterations - (patch.bit_length() - 1)
    pixels_per_unit_at_1 = image_height / (2.0 * math.tan(math.radians(field_of_view_y) / 2.0))
    base = cell * pixels_per_unit_at_1 / error_pixels
    # A node's horizontal diagonal: sqrt(2) * patch grid steps of its level.
    base = max(base, math.sqrt(2.0) * patch * cell / MAX_NODE_EXTENT)
    ranges = base * 2.0 ** np.arange(levels + (2 if coarser_top else 1))
    ranges[-1] = np.inf
    return ranges


def frustum_planes(view_projection: np.ndarray, far_view_depth: float | None = None,
                   view: np.ndarray | None = None) -> np.ndarray:
    """Planes (a, b, c, d) of a column-vector view-projection matrix, inside where a x + b y + c z + d >= 0.

    With ``far_view_depth`` (and the view matrix) one more plane keeps eye depths up to it.
    """
    m = np.asarray(view_projection, dtype=np.float64)
    planes = [m[3] + m[0], m[3] - m[0], m[3] + m[1], m[3] - m[1], m[3] + m[2], m[3] - m[2]]
    if far_view_depth is not None:
        # Eye depth is -(view row 2 . p); depth <= far  <=>  row2 . p + far >= 0.
        planes.append(np.asarray(view, dtype=np.float64)[2] + np.array([0.0, 0.0, 0.0, far_view_depth]))
    return np.array(planes)


@njit(cache=True, nogil=True)
def _square(roots, root, cell, patch, level, a, b):
    """Node (a, b) of ``level`` about root ``root``: its x0, z0, x1, z1 in world units."""
    side = patch << level
    x0 = roots[root, 0] - 1.0 + a * side * cell
    z0 = roots[root, 1] - 1.0 + b * side * cell
    return x0, z0, x0 + side * cell, z0 + side * cell


@njit(cache=True, nogil=True)
def _box(roots, root, surface_cells, cell, low, high, offsets, patch, level, a, b):
    x0, z0, x1, z1 = _square(roots, root, cell, patch, level, a, b)
    index = offsets[level] + b * (surface_cells // (patch << level)) + a
    return x0, low[index], z0, x1, high[index], z1


@njit(cache=True, nogil=True)
def _outside(planes, x0, y0, z0, x1, y1, z1):
    for p in range(planes.shape[0]):
        a, b, c, d = planes[p, 0], planes[p, 1], planes[p, 2], planes[p, 3]
        # The box corner farthest along the plane's normal: if even it is outside, the whole box is.
        if a * (x1 if a > 0 else x0) + b * (y1 if b > 0 else y0) + c * (z1 if c > 0 else z0) + d < 0.0:
            return True
    return False


@njit(cache=True, nogil=True)
def _distance2(eye, x0, z0, x1, z1):
    """Squared lod distance to a node: eye is (x, slab height, z)."""
    dx = max(x0 - eye[0], 0.0, eye[0] - x1)
    dz = max(z0 - eye[2], 0.0, eye[2] - z1)
    return dx * dx + eye[1] * eye[1] + dz * dz


@njit(cache=True, nogil=True)
def _emit(out, count, distances, roots, root, root_edges, surface_cells, level, region_side, a, b, d2):
    if count < out.shape[0]:
        out[count, 0], out[count, 1] = roots[root, 0], roots[root, 1]
        out[count, 2], out[count, 3] = a * region_side, b * region_side
        out[count, 4] = level
        edges = 0
        if (a + 1) * region_side == surface_cells:
            edges |= root_edges[root] & 1
        if (b + 1) * region_side == surface_cells:
            edges |= root_edges[root] & 2
        out[count, 5] = edges
        distances[count] = d2
    return count + 1


@njit(cache=True, nogil=True)
def _select_kernel(roots, root_edges, low, high, offsets, surface_cells, patch, levels, finest, planes, eye,
                   ranges2, whole, quarters):
    cell = 2.0 / surface_cells
    whole_distances = np.empty(whole.shape[0])
    quarter_distances = np.empty(quarters.shape[0])
    stack = np.empty((roots.shape[0] * (3 * levels + 1) + 1, 4), dtype=np.int64)
    top = 0
    for root in range(roots.shape[0]):
        x0, y0, z0, x1, y1, z1 = _box(roots, root, surface_cells, cell, low, high, offsets, patch, levels, 0, 0)
        if not _outside(planes, x0, y0, z0, x1, y1, z1):
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = root, levels, 0, 0
            top += 1
    whole_count = quarter_count = 0
    while top > 0:
        top -= 1
        root, level, a, b = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        x0, y0, z0, x1, y1, z1 = _box(roots, root, surface_cells, cell, low, high, offsets, patch, level, a, b)
        d2 = _distance2(eye, x0, z0, x1, z1)
        if level == levels and ranges2.shape[0] > levels + 1 and d2 > ranges2[levels]:
            # Beyond even the top level's range (``grid_ranges``'s coarser_top): the root as a half-size patch of
            # the level above it, every other point of the top level's.
            quarter_count = _emit(quarters, quarter_count, quarter_distances, roots, root, root_edges, surface_cells,
                                  levels + 1, patch << levels, a, b, d2)
            continue
        if level == finest or d2 > ranges2[level - 1]:
            whole_count = _emit(whole, whole_count, whole_distances, roots, root, root_edges, surface_cells,
                                level, patch << level, a, b, d2)
            continue
        for child in range(4):
            ca, cb = 2 * a + child % 2, 2 * b + child // 2
            x0, y0, z0, x1, y1, z1 = _box(roots, root, surface_cells, cell, low, high, offsets, patch, level - 1,
                                          ca, cb)
            if _outside(planes, x0, y0, z0, x1, y1, z1):
                continue
            d2 = _distance2(eye, x0, z0, x1, z1)
            if d2 > ranges2[level - 1]:
                # Not needed finer: this quarter is drawn at the parent's level (a half-size patch).
                quarter_count = _emit(quarters, quarter_count, quarter_distances, roots, root, root_edges,
                                      surface_cells, level, patch << (level - 1), ca, cb, d2)
            else:
                stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = root, level - 1, ca, cb
                top += 1
    return whole_count, quarter_count, whole_distances, quarter_distances


@njit(cache=True, nogil=True)
def _root_choices_kernel(roots, low, high, finest, surface_cells, patch, levels, planes, eye, ranges2):
    """Per root of its own one-root surface, given its top node's bounds (``low``, ``high``): what it selects.

    0 when wholly outside the frustum, 3 when drawn coarser than its top level (beyond the top level's range, where
    the ranges have a level after it), 1 when drawn whole as its top node (beyond the range of the level below, or
    held no finer), 2 when it needs selecting: the same tests, in the same order, as ``_select_kernel``'s first
    steps.
    """
    cell = 2.0 / surface_cells
    choices = np.empty(roots.shape[0], dtype=np.int64)
    for root in range(roots.shape[0]):
        x0, z0, x1, z1 = _square(roots, root, cell, patch, levels, 0, 0)
        if _outside(planes, x0, low[root], z0, x1, high[root], z1):
            choices[root] = 0
            continue
        d2 = _distance2(eye, x0, z0, x1, z1)
        if ranges2.shape[0] > levels + 1 and d2 > ranges2[levels]:
            choices[root] = 3
        elif levels == finest[root] or d2 > ranges2[levels - 1]:
            choices[root] = 1
        else:
            choices[root] = 2
    return choices


@njit(cache=True, nogil=True)
def _root_edges_kernel(roots):
    """Per root: bit 1 when no root lies next to it in +x, bit 2 when none lies next to it in +z."""
    edges = np.full(roots.shape[0], 3, dtype=np.int64)
    for i in range(roots.shape[0]):
        for j in range(roots.shape[0]):
            dx, dz = roots[j, 0] - roots[i, 0], roots[j, 1] - roots[i, 1]
            if abs(dz) < 1e-6 and abs(dx - 2.0) < 1e-6:
                edges[i] &= 2
            if abs(dx) < 1e-6 and abs(dz - 2.0) < 1e-6:
                edges[i] &= 1
    return edges


@dataclass(frozen=True)
class Selection:
    """Nodes to draw, nearest first: ``whole`` as full patches, ``quarters`` as half-size patches.

    Each row is (tile centre x, tile centre z, first column, first row, level, edge flags) as float32 for the
    GPU.
    """

    whole: np.ndarray
    quarters: np.ndarray
    patch: int
    ranges: np.ndarray  # per level, as lod_ranges gave them
    eye: np.ndarray  # eye x, height above the slab of heights, eye z: what the level distance is measured from

    def morph_zones(self) -> np.ndarray:
        """Per level, the lod distances where morphing toward the next coarser level starts and ends.

        The top level never morphs.
        """
        ranges = np.where(np.isfinite(self.ranges), self.ranges, 1e30)
        return np.column_stack([MORPH_START * ranges, MORPH_END * ranges])

    def triangles(self) -> int:
        """Triangles drawn: two per quad of every whole patch and quarter patch."""
        half = self.patch // 2
        return 2 * self.patch ** 2 * len(self.whole) + 2 * half ** 2 * len(self.quarters)

    def segments(self) -> int:
        """Line segments drawn.

        Each node draws its interior and first row and column, and its last row and column only where they are
        an outer edge of the tiles (elsewhere the neighbour draws them).
        """
        total = 0
        for rows, quads in ((self.whole, self.patch), (self.quarters, self.patch // 2)):
            edges = rows[:, 5].astype(np.int64)
            total += 2 * quads * quads * len(rows) + quads * int(np.count_nonzero(edges & EDGE_HIGH_X)
                                                                 + np.count_nonzero(edges & EDGE_HIGH_Z))
        return total


def select_regions(surfaces: list[LodSurface], roots: np.ndarray, planes: np.ndarray, eye: np.ndarray,
                   ranges: np.ndarray, bottom: float, top: float) -> list[Selection]:
    """``select_nodes`` of each surface about its own root (``roots``, (R, 2)), within the slab ``bottom``..``top``.

    The endless world's regions: surfaces of one size, each a root drawn on its own, with no edge flags (a
    neighbour draws the shared edge: select_nodes's ``outer_edges=0``), not found from the other roots. Most
    lie far off, outside the view or drawn as one whole patch: those are decided for every region in one call,
    the same as select_nodes would; only the rest are selected node by node.
    """
    if not surfaces:
        return []
    first = surfaces[0]
    if any(surface.iterations != first.iterations for surface in surfaces):
        raise ValueError("select_regions takes surfaces of one size")
    roots = np.ascontiguousarray(roots, dtype=np.float64).reshape(-1, 2)
    planes = np.ascontiguousarray(planes, dtype=np.float64)
    slab = dataclasses.replace(first, bottom=bottom, top=top)
    slab_eye = np.array([eye[0], slab.eye_height(float(eye[1])), eye[2]], dtype=np.float64)
    ranges = np.asarray(ranges, dtype=np.float64)
    choices = _root_choices_kernel(  # each surface's top node is the last of its pyramid
        roots, np.array([s.low[-1] for s in surfaces], dtype=np.float32),
        np.array([s.high[-1] for s in surfaces], dtype=np.float32), np.array([s.finest for s in surfaces]),
        1 << first.iterations, first.patch, first.levels, planes, slab_eye, ranges ** 2)
    none = np.empty((0, INSTANCE_FIELDS), dtype=np.float32)
    selections = []
    for surface, root, choice in zip(surfaces, roots, choices, strict=True):
        if choice == 2:
            held = dataclasses.replace(surface, bottom=bottom, top=top)
            selections.append(select_nodes(held, root, planes, eye, ranges, outer_edges=0))
            continue
        # Drawn whole (1), or as the level above the top's in a half-size patch (3): one row, as _emit writes it.
        row = np.array([[root[0], root[1], 0.0, 0.0, surface.levels + (choice == 3), 0]], dtype=np.float32)
        selections.append(Selection(row if choice == 1 else none, row if choice == 3 else none, surface.patch,
                                    ranges, slab_eye))
    return selections


def select_nodes(surface: LodSurface, roots: np.ndarray, planes: np.ndarray, eye: np.ndarray,
                 ranges: np.ndarray, outer_edges: int | None = None) -> Selection:
    """The CDLOD selection over the root tiles ``roots`` (world centres, (R, 2)) for an eye and frustum.

    ``outer_edges`` (lines mode's edge flags, EDGE_HIGH_X | EDGE_HIGH_Z) overrides those found from the roots,
    for a root drawn on its own among neighbours (a region of the endless world).
    """
    roots = np.ascontiguousarray(roots, dtype=np.float64).reshape(-1, 2)
    planes = np.ascontiguousarray(planes, dtype=np.float64)
    eye = np.array([eye[0], surface.eye_height(float(eye[1])), eye[2]], dtype=np.float64)
    ranges2 = np.asarray(ranges, dtype=np.float64) ** 2
    edges = _root_edges_kernel(roots) if outer_edges is None else np.full(len(roots), outer_edges, dtype=np.int64)
    capacity = 1024
    while True:
        whole = np.empty((capacity, INSTANCE_FIELDS), dtype=np.float32)
        quarters = np.empty((capacity, INSTANCE_FIELDS), dtype=np.float32)
        whole_count, quarter_count, whole_distance, quarter_distance = _select_kernel(
            roots, edges, surface.low, surface.high, surface.offsets, 1 << surface.iterations, surface.patch,
            surface.levels, surface.finest, planes, eye, ranges2, whole, quarters)
        if max(whole_count, quarter_count) <= capacity:
            break
        capacity = 2 * max(whole_count, quarter_count)
    # Nearest first: the depth test then rejects hidden fragments before they are shaded.
    whole = whole[np.argsort(whole_distance[:whole_count], kind="stable")]
    quarters = quarters[np.argsort(quarter_distance[:quarter_count], kind="stable")]
    return Selection(whole, quarters, surface.patch, np.asarray(ranges, dtype=np.float64), eye)
