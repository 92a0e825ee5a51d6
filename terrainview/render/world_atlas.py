"""The endless world's small maps in layers of shared texture arrays, for the natural look to draw in one call.

Most regions in view are far ones, held coarse (35 or 67 points a side, apron and all) and drawn as one patch.
Drawn one by one, each cost the frame's CPU part about 45 us, half of it llvmpipe's own work a draw: 122 such
regions in a 1280 x 720 frame at iterations 10 or 12. Here each region lit by its light maps takes a layer of the
atlas of its map's size: its heights, its slope map (worked out whole when it takes the layer: a few thousand
points) and its light maps' surface layer for the sun. natural_terrain.glsl with ATLAS reads the layer each
instance names.
"""

from __future__ import annotations

import moderngl
import numpy as np

from terrainview.kernels import lighting
from terrainview.kernels.slopes import slope_rows

ATLAS_MAX_SIDE = 67  # maps of this many points a side or fewer (detail 6 and coarser) take a layer
# Layers of an atlas: the 24 units around the eye hold some 250 regions of one size (245 of 67 points a side in
# the bench's view). A region past them is drawn alone.
ATLAS_LAYERS = 512


class RegionAtlas:
    """The layers of the maps of one size: heights, slope maps and the light maps' surface layer, a region each."""

    def __init__(self, ctx: moderngl.Context, side: int, light_side: int, layers: int) -> None:
        self.side, self.light_side = side, light_side
        self.heights = ctx.texture_array((side, side, layers), 1, dtype="f4")
        self.heights.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.slopes = ctx.texture_array((side, side, layers), 2, dtype="f2")
        self.light = ctx.texture_array((light_side, light_side, layers), lighting.CHANNELS)
        for texture in (self.slopes, self.light):
            texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
            texture.repeat_x = texture.repeat_y = False  # a region's own: its neighbours have theirs
        self._free = list(range(layers - 1, -1, -1))  # the lowest layer taken first
        self._light_maps: dict[int, np.ndarray] = {}  # each layer's light maps, for the sun
        self._sun: tuple[int, int] | None = None  # where the sun the surface layers hold lies (lighting.sun_between)
        self._directions = lighting.HORIZON_DIRECTIONS  # that the light maps trace

    def take(self, heights: np.ndarray, light_maps: np.ndarray, apron: int) -> int | None:
        """A layer holding this map (``side`` points a side) and its light maps; None when every layer is taken."""
        if not self._free:
            return None
        layer = self._free.pop()
        self.heights.write(np.ascontiguousarray(heights, dtype=np.float32), viewport=(0, 0, layer, self.side,
                                                                                     self.side, 1))
        slopes = slope_rows(heights, 0, self.side, self.side, apron)
        self.slopes.write(slopes, viewport=(0, 0, layer, self.side, self.side, 1))
        self._light_maps[layer] = light_maps
        self._directions = lighting.traced_directions(light_maps)  # the same for all: region_light's
        if self._sun is not None:
            self._write_sun(layer, self._sun)
        return layer

    def give_back(self, layer: int) -> None:
        """The layer is free for another region."""
        del self._light_maps[layer]
        self._free.append(layer)

    def for_sun(self, azimuth: float) -> None:
        """Every layer's surface layer with the horizon toward a sun at compass bearing ``azimuth``.

        Rewritten only where the sun has moved among the traced directions (as ``LightMapsTexture.for_sun``).
        """
        sun = lighting.sun_between(azimuth, self._directions)
        if sun != self._sun:
            self._sun = sun
            for layer in self._light_maps:
                self._write_sun(layer, sun)

    def _write_sun(self, layer: int, sun: tuple[int, int]) -> None:
        surface = lighting.sun_surface_layer(self._light_maps[layer], sun)
        self.light.write(surface, viewport=(0, 0, layer, self.light_side, self.light_side, 1))

    @property
    def taken(self) -> int:
        """Layers holding a region."""
        return len(self._light_maps)

    def release(self) -> None:
        """Release the textures."""
        for texture in (self.heights, self.slopes, self.light):
            texture.release()
