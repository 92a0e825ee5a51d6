"""GL object lifetime: regenerating the terrain any number of times does not grow the number of live GL objects,
releasing the renderer frees everything it made, and the teximage texture has the documented size.

Live objects are counted in the driver itself with glIsBuffer / glIsTexture / ... over every name handed out so
far, so a leak shows however moderngl or terrainview keep their books. (The cheaper probe, "a new buffer gets
the same name as before", only works on drivers that reuse freed names; Mesa 22 hands out increasing names, so
that probe runs only where the driver is seen to reuse them.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

import numpy as np
import pytest

from terrainview.render.offscreen import render_pixels
from terrainview.render.renderer import Renderer
from terrainview.scene.derived_arrays import MIN_TEXIMAGE_SIZE, teximage_size
from terrainview.scene.settings import SceneSettings

pytest_plugins = ["gl_fixtures"]
pytestmark = pytest.mark.gl

KINDS = ("Buffer", "Texture", "Framebuffer", "Renderbuffer", "VertexArray", "Program", "Shader")


class GlNames:
    """glIs<Kind> through EGL, for the context current on this thread."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        name = ctypes.util.find_library("EGL") or "libEGL.so.1"
        try:
            egl = ctypes.CDLL(name)
        except OSError:
            pytest.skip("libEGL is needed to count live GL objects")
        egl.eglGetProcAddress.restype = ctypes.c_void_p
        egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]
        prototype = ctypes.CFUNCTYPE(ctypes.c_ubyte, ctypes.c_uint)
        self.is_ = {}
        for kind in KINDS:
            address = egl.eglGetProcAddress(f"glIs{kind}".encode())
            assert address, f"glIs{kind} not found"
            self.is_[kind] = prototype(address)

    def highest_name(self) -> int:
        """A bound on every name handed out so far: the next free name in each namespace counted plus headroom,
        for drivers that hand out the lowest free name while higher ones are alive. Each namespace needs its own
        probe: on Mesa, which hands out increasing names, programs and shaders (one namespace) run ahead of the
        buffers and textures by some 75 names a renderer, and a bound from those alone cuts through them."""
        program = self.ctx.program(vertex_shader="#version 330\nvoid main() { gl_Position = vec4(0.0); }",
                                   fragment_shader="#version 330\nout vec4 colour;\nvoid main() { colour = vec4(1); }")
        vertex_array = self.ctx.vertex_array(program, [])
        renderbuffer = self.ctx.renderbuffer((1, 1))
        framebuffer = self.ctx.framebuffer([renderbuffer])
        probes = [program.glo, vertex_array.glo, renderbuffer.glo, framebuffer.glo, self.probe_buffer(),
                  self.probe_texture()]
        for gl_object in (framebuffer, renderbuffer, vertex_array, program):
            gl_object.release()
        return max(probes) + 4096

    def live(self) -> dict[str, int]:
        top = self.highest_name()
        return {kind: sum(1 for name in range(1, top) if is_(name)) for kind, is_ in self.is_.items()}

    def probe_buffer(self) -> int:
        buffer = self.ctx.buffer(b"1234")
        name = buffer.glo
        buffer.release()
        return name

    def probe_texture(self) -> int:
        texture = self.ctx.texture((1, 1), 1)
        name = texture.glo
        texture.release()
        return name

    def reuses_names(self) -> bool:
        return self.probe_buffer() == self.probe_buffer() and self.probe_texture() == self.probe_texture()


@pytest.fixture
def gl_names(renderer):
    return GlNames(renderer.ctx)


def churn_settings(step: int) -> SceneSettings:
    """Step ``step`` of the loop: iterations cycle 1..8, the mode switches lines/1d every 25 steps, the seed
    every 20 (clouds and teximage regenerate) and teximage iterations 8/9 every 40 (its texture and framebuffer
    change size)."""
    return SceneSettings(mode="1d" if (step // 25) % 2 else "lines", iterations=step % 8 + 1, seed=step // 20,
                         cloud_iterations=4, teximage_iterations=8 + (step // 40) % 2)


def test_a_software_rasterizer_is_told_from_a_gpu(renderer):
    """The window paces the endless world's worker only where the CPU draws the pixels (tests run on llvmpipe)."""
    from types import SimpleNamespace

    from terrainview.render.gpu import software_rasterizer

    assert software_rasterizer(renderer.ctx) == ("llvmpipe" in renderer.ctx.info["GL_RENDERER"])
    assert software_rasterizer(SimpleNamespace(info={"GL_RENDERER": "llvmpipe (LLVM 15.0.6, 256 bits)"}))
    assert not software_rasterizer(SimpleNamespace(info={"GL_RENDERER": "NVIDIA H100 80GB HBM3/PCIe/SSE2"}))
    assert not software_rasterizer(SimpleNamespace(info={}))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux's thread affinity")
def test_a_paced_world_feed_keeps_each_of_llvmpipes_threads_to_a_core_of_its_own(gl_ctx):
    """Left to Linux, both of llvmpipe's threads sometimes woke on one core while the world's worker ran on the
    other (the flights' slow frames: gpu.py): beside a paced worker, thread N is kept to the Nth core the process
    may run on, round again past the last, whichever thread asks. A renderer alone, or beside an unpaced worker
    (a GPU draws the pixels), leaves them to Linux."""
    import glob
    import threading

    from terrainview.render.gpu import rasterizer_threads, spread_rasterizer_threads
    from terrainview.window.world_feed import WorldFeed

    if "llvmpipe" not in gl_ctx.info["GL_RENDERER"]:
        pytest.skip("not llvmpipe")
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) == 1 or os.environ.get("LP_NUM_THREADS") == "0":
        pytest.skip("llvmpipe draws on the calling thread alone")
    threads = rasterizer_threads()
    named = [path for path in glob.glob("/proc/self/task/*/comm")
             if Path(path).read_text(errors="replace").startswith("llvmpipe-")]
    assert threads and len(threads) == len(named), "every one of llvmpipe's threads is found by its name"

    def unplaced() -> None:  # as Linux leaves them
        for thread, _ in threads:
            os.sched_setaffinity(thread, cores)

    try:
        unplaced()  # (as an earlier test's paced feed may have left them)
        with gl_ctx:
            Renderer(gl_ctx).release()
        WorldFeed(paced=False).stop()
        for thread, _ in threads:
            assert os.sched_getaffinity(thread) == set(cores), "no paced worker: placed by Linux"
        for only in ([cores[-1]], cores):  # a process kept to one core (all threads on it), then to them all
            os.sched_setaffinity(0, only)
            unplaced()
            WorldFeed(paced=True).stop()
            os.sched_setaffinity(0, cores)
            for thread, number in threads:
                assert os.sched_getaffinity(thread) == {only[number % len(only)]}
        unplaced()  # asked from a thread kept to one core: still the process's cores
        asker = threading.Thread(target=lambda: os.sched_setaffinity(0, [cores[0]]) or spread_rasterizer_threads())
        asker.start()
        asker.join()
        for thread, number in threads:
            assert os.sched_getaffinity(thread) == {cores[number % len(cores)]}
    finally:
        os.sched_setaffinity(0, cores)
        unplaced()  # as Linux places them, whatever failed above


def test_the_gl_object_count_detects_a_leak(renderer, gl_names):
    """The counter itself: objects made and not released show up, and go away when released."""
    before = gl_names.live()
    leaked = [renderer.ctx.buffer(b"abcd") for _ in range(3)] + [renderer.ctx.texture((2, 2), 3)]
    during = gl_names.live()
    for gl_object in leaked:
        gl_object.release()
    assert during["Buffer"] == before["Buffer"] + 3 and during["Texture"] == before["Texture"] + 1
    assert gl_names.live() == before


def test_drafts_at_changing_window_sizes_do_not_grow_gl_objects(renderer, gl_names):
    """The window's draft image is made again when the window's size changes, the old one released."""
    from terrainview.render.draft import DraftTarget
    from terrainview.render.renderer import Frame

    settings = SceneSettings(mode="rendered", look="natural", iterations=4)
    renderer.update(settings)
    framebuffer = renderer.ctx.simple_framebuffer((64, 48))
    draft = DraftTarget(renderer.ctx)
    try:
        draft.draw(renderer, settings, framebuffer, Frame((64, 48)))
        live = gl_names.live()
        for step in range(30):
            size = (64, 48) if step % 2 else (40 + step, 30)
            draft.draw(renderer, settings, framebuffer, Frame(size))
            assert draft.size == (size[0] // 2, size[1] // 2)
        draft.draw(renderer, settings, framebuffer, Frame((64, 48)))
        assert gl_names.live() == live
    finally:
        draft.release()
        framebuffer.release()
    assert draft.size is None


def test_the_natural_looks_places_only_grow_releasing_what_they_replace(renderer, gl_names):
    """The texture the tiles' natural look copies its first pass into serves any smaller part of an image (drafts,
    frames and a shot's tiles take turns), and grows to the largest, the old one released."""
    gpu = renderer.gpu
    texture, framebuffer = gpu.surface_places((8, 8))
    live = gl_names.live()
    smaller = gpu.surface_places((4, 4))
    assert smaller[0] is texture and smaller[1] is framebuffer
    grown, grown_framebuffer = gpu.surface_places((4, 12))
    assert grown.size == (8, 12) and grown_framebuffer.size == (8, 12) and grown is not texture
    assert gl_names.live() == live


def test_the_tiles_sea_floor_is_made_only_when_the_sea_asks_and_again_for_each_map(renderer, gl_names):
    """A new map drops the last one's sea floor (the original look never pays for it); the natural look's sea
    makes it from that map once, and it is released when the next map comes."""
    gpu = renderer.gpu
    first = np.linspace(0.0, 1.0, 17 * 17, dtype=np.float32).reshape(17, 17)
    gpu.upload_surface(first)
    live = gl_names.live()
    assert not gpu.has("texture:tile_sea_floor")
    floor = gpu.tile_sea_floor()
    assert gpu.tile_sea_floor() is floor and floor.size == (16, 16)
    np.testing.assert_array_equal(np.frombuffer(floor.read(), "f4").reshape(16, 16), first[:-1, :-1])
    gpu.upload_surface(first[::2, ::2].copy())
    assert not gpu.has("texture:tile_sea_floor") and gl_names.live() == live
    assert gpu.tile_sea_floor().size == (8, 8)


def test_regenerating_200_times_does_not_grow_gl_objects(renderer, gl_names):
    ctx = renderer.ctx
    first = churn_settings(0)
    renderer.update(first)
    render_pixels(renderer, first, (64, 36))
    live_start = gl_names.live()
    owned_start = renderer.gpu.live_objects
    reuse = gl_names.reuses_names()
    probes_start = (gl_names.probe_buffer(), gl_names.probe_texture())

    owned_by_mode: dict[str, set[int]] = {"lines": set(), "1d": set()}
    for step in range(1, 201):
        settings = churn_settings(step)
        renderer.update(settings)
        owned_by_mode[settings.mode].add(renderer.gpu.live_objects)
        if step % 20 == 0:
            render_pixels(renderer, settings, (64, 36))
    assert ctx.error == "GL_NO_ERROR"

    # The renderer's own table: the same objects for the same mode, whatever was regenerated.
    assert all(len(counts) == 1 for counts in owned_by_mode.values()), owned_by_mode
    assert max(max(counts) for counts in owned_by_mode.values()) <= owned_start + 2

    # The driver's view: back in the starting state, exactly the starting objects are alive.
    renderer.update(churn_settings(200).replace(**{name: getattr(first, name) for name in (
        "mode", "iterations", "seed", "cloud_iterations", "teximage_iterations")}))
    render_pixels(renderer, first, (64, 36))
    assert renderer.gpu.live_objects == owned_start
    assert gl_names.live() == live_start
    if reuse:  # drivers that reuse freed names hand the probes their old names back
        assert (gl_names.probe_buffer(), gl_names.probe_texture()) == probes_start


def settle(renderer: Renderer) -> None:
    """Draw with ``renderer``'s programs so the driver lets go of programs deleted while still in use.

    glDeleteProgram on the current program (and Mesa's last vertex program with attributes) only flags it;
    it stays alive until something else is used. Drawing the same sequence before and after makes the counts
    comparable."""
    for mode in ("lines", "1d", "rendered", "teximage"):
        settings = SceneSettings(mode=mode, iterations=2, cloud_iterations=2, teximage_iterations=4)
        renderer.update(settings)
        render_pixels(renderer, settings, (16, 9))


def test_release_frees_everything_the_renderer_made(renderer, gl_names):
    ctx = renderer.ctx
    settle(renderer)
    before = gl_names.live()
    other = Renderer(ctx)
    try:
        for mode in ("lines", "1d", "rendered"):
            settings = SceneSettings(mode=mode, iterations=3, cloud_iterations=3, teximage_iterations=4)
            other.update(settings)
            render_pixels(other, settings, (32, 18))
        assert other.gpu.live_objects > 0
        assert gl_names.live() != before
    finally:
        other.release()
    assert other.gpu.live_objects == 0
    settle(renderer)
    assert gl_names.live() == before
    assert ctx.error == "GL_NO_ERROR"


@pytest.mark.parametrize("iterations, side", [(4, 256), (8, 256), (9, 512), (10, 1024)])
def test_teximage_texture_is_two_to_the_iterations_at_least_256(renderer, iterations, side):
    settings = SceneSettings(mode="teximage", iterations=2, cloud_iterations=2, teximage_iterations=iterations)
    renderer.update(settings)
    assert renderer.gpu.get("texture:teximage").size == (side, side)
    # Drawing at any image size leaves the texture as it is.
    for size in ((160, 90), (37, 300), (320, 180)):
        render_pixels(renderer, settings, size)
        assert renderer.gpu.get("texture:teximage").size == (side, side)
        assert renderer.gpu.surface_texture().size == (side, side)


def test_teximage_texture_stops_at_the_gl_limit(renderer):
    gl_limit = renderer.ctx.info["GL_MAX_TEXTURE_SIZE"]
    assert renderer.gpu.max_texture_size == gl_limit
    assert teximage_size(30, gl_limit) == gl_limit
    assert teximage_size(1, gl_limit) == MIN_TEXIMAGE_SIZE
    assert teximage_size(11, 1024) == 1024
    # The GPU path honours the limit it read from the context: pretend a driver limited to 512.
    renderer.gpu.max_texture_size = 512
    renderer.update(SceneSettings(mode="teximage", iterations=2, cloud_iterations=2, teximage_iterations=10))
    assert renderer.gpu.get("texture:teximage").size == (512, 512)
    pixels = render_pixels(renderer, SceneSettings(mode="teximage", iterations=2, cloud_iterations=2,
                                                   teximage_iterations=10), (160, 90))
    assert np.any(pixels[13:77, 48:112] > 0)


def test_the_level_of_detail_programs_are_sized_by_pythons_max_lod_levels(gl_ctx, monkeypatch):
    """MAX_LOD_LEVELS is written once, in gpu.py: the programs' morph_zones array (lod.glsl) follows it."""
    from terrainview.render import gpu, lod_draw

    assert lod_draw.MAX_LOD_LEVELS == gpu.MAX_LOD_LEVELS
    for levels in (gpu.MAX_LOD_LEVELS, 11):
        monkeypatch.setattr(gpu, "MAX_LOD_LEVELS", levels)
        with gl_ctx:
            resources = gpu.GpuResources(gl_ctx)
            try:
                for name in ("terrain_lod", "grid_lines_lod"):
                    assert gpu.uniform(resources.programs[name], "morph_zones").array_length == levels
            finally:
                resources.release()


def test_leaving_the_endless_world_frees_its_maps_and_textures(renderer, gl_names, monkeypatch):
    """Regions, their textures and the spare height arrays are let go once the view shows tiles again (at
    iterations 12 they hold several hundred MiB), their pages handed back to the system, and coming back streams
    them again."""
    from gl_fixtures import render_frame

    from terrainview.render import world_draw

    given_back = []
    monkeypatch.setattr(world_draw, "give_back_freed_memory", lambda: given_back.append(True))
    tiles = SceneSettings(mode="rendered", iterations=6, tile=3)
    endless = tiles.replace(tile="endless", camera="fly", eye_y=3.0, pitch=80.0)
    render_frame(renderer, tiles, (64, 36))
    before = gl_names.live()
    render_frame(renderer, endless, (64, 36))
    render_frame(renderer, endless.replace(eye_z=-60.0), (64, 36))  # some regions left behind: arrays pooled
    assert gl_names.live()["Texture"] > before["Texture"] + 9 and renderer.world.cache.bytes > 0
    render_frame(renderer, tiles, (64, 36))
    # (its few small instance and index buffers stay, for the next visit)
    assert gl_names.live()["Texture"] == before["Texture"] and renderer.world.cache.bytes == 0
    render_frame(renderer, tiles, (64, 36))
    assert given_back == [True], "once, on leaving (not on every frame of tiles)"
    back = render_frame(renderer, endless, (64, 36))
    assert renderer.world.missing == 0 and back.std() > 5, "the world comes back"


def test_height_arrays_given_back_are_taken_again_within_the_pools_limit(renderer, gl_names):
    """A region's height arrays go back to the pool when it is left behind and come out again for a map of the
    same size (llvmpipe spends about 23 ms allocating a 34 MB array); the pool never keeps more than its limit."""
    from terrainview.render.gpu import HeightArrayPool, HeightBands

    ctx = renderer.ctx
    before = gl_names.live()
    heights = np.arange(70 * 40, dtype=np.float32).reshape(70, 40)  # rows x columns: one band, one array
    pool = HeightArrayPool(ctx, limit_bytes=4 * 40 * 70)  # room for one such array
    first = HeightBands(ctx, 40, 70, pool)
    first.write(heights)
    arrays = list(first.arrays)
    first.release()
    assert pool.bytes == 4 * 40 * 70 and gl_names.live()["Texture"] == before["Texture"] + 1
    second, third = HeightBands(ctx, 40, 70, pool), HeightBands(ctx, 40, 70, pool)
    second.write(heights[::-1].copy())
    third.write(heights)
    assert second.arrays == arrays and third.arrays != arrays, "the one kept is reused, then a new one made"
    np.testing.assert_array_equal(second.read(), heights[::-1])
    assert pool.bytes == 0
    second.release()
    third.release()  # over the limit: the older of the two goes
    assert pool.bytes == 4 * 40 * 70 and gl_names.live()["Texture"] == before["Texture"] + 1
    pool.release()
    assert gl_names.live() == before


def test_a_map_written_a_share_of_rows_at_a_time_is_the_map(renderer):
    """A staged upload writes a map's rows in shares, across a band's border: the bands hold the map, and keep it
    for its slope map."""
    from terrainview.render.gpu import HEIGHT_BAND_ROWS, HeightBands

    rows = HEIGHT_BAND_ROWS + 40  # two bands
    heights = np.arange(rows * 5, dtype=np.float32).reshape(rows, 5)
    bands = HeightBands(renderer.ctx, 5, rows)
    try:
        for first, count in ((0, 7), (7, HEIGHT_BAND_ROWS), (7 + HEIGHT_BAND_ROWS, None)):
            bands.write(heights, first, count)
        np.testing.assert_array_equal(bands.read(), heights)
        assert bands.values is heights
    finally:
        bands.release()
    assert bands.values is None


def test_a_map_reserved_in_the_pool_is_written_without_allocating_an_array(renderer, gl_names):
    """reserve() allocates the arrays HeightBands will take for a map of that size, bands of two sizes included:
    writing the map then makes no texture (the window reserves the largest maps as it enters the world)."""
    from terrainview.render.gpu import HEIGHT_BAND_ROWS, HeightArrayPool, HeightBands

    ctx = renderer.ctx
    before = gl_names.live()
    rows = 3 * HEIGHT_BAND_ROWS + 3  # three bands, the last longer: two arrays of different sizes
    pool = HeightArrayPool(ctx, limit_bytes=1 << 20)
    pool.reserve(5, rows)
    pool.reserve(5, rows)  # the arrays kept count: none more
    assert gl_names.live()["Texture"] == before["Texture"] + 2 and pool.bytes == 4 * 5 * (2 * 1024 + 1027)
    bands = HeightBands(ctx, 5, rows, pool)
    heights = np.arange(rows * 5, dtype=np.float32).reshape(rows, 5)
    bands.write(heights)
    assert gl_names.live()["Texture"] == before["Texture"] + 2 and pool.bytes == 0
    np.testing.assert_array_equal(bands.read(), heights)
    bands.release()
    pool.release()
    assert gl_names.live() == before


@pytest.mark.gl
def test_entering_the_world_at_iterations_11_allocates_two_maps_of_detail_11_at_once(renderer, gl_names,
                                                                                      monkeypatch):
    """The first frame of a world reserves the height arrays of two maps at each detail too dear to allocate in a
    frame: at iterations 11 the one array of each of two detail-11 maps; none at iterations 10. Leaving the world
    frees them."""
    from terrainview.render import world_draw
    from terrainview.render.gpu import height_array_sizes
    from terrainview.scene.world_regions import map_side

    monkeypatch.setattr(world_draw, "STAND_IN_SECONDS", 0.0)  # no map made: only those reserved allocated
    side = map_side(world_draw.RESERVED_DETAIL)
    arrays = world_draw.RESERVED_MAPS * len(height_array_sizes(side, side))
    renderer.world.leave()
    renderer.world.streaming = True  # the window's way: maps come from a worker (none here), so none is made
    try:
        for iterations, made in ((world_draw.RESERVED_DETAIL - 1, 0), (world_draw.RESERVED_DETAIL, arrays)):
            settings = SceneSettings(mode="rendered", tile="endless", camera="fly", iterations=iterations, eye_y=3.0)
            renderer.update(settings)
            before = gl_names.live()["Texture"]
            render_pixels(renderer, settings, (16, 9))
            assert renderer.world.missing > 0 and gl_names.live()["Texture"] - before == made
        renderer.world.leave()
        assert gl_names.live()["Texture"] == before
    finally:
        renderer.world.streaming = False
        renderer.world.leave()


@pytest.mark.gl
def test_entering_the_world_in_the_natural_look_reserves_slope_maps_too(renderer):
    """A region's slope map costs llvmpipe 40-170 ms to allocate at detail 12: the natural look's first frame of a
    world reserves them with the height arrays, two a detail, in a pool twice the size (they take as many bytes).
    Back in the original look the pool lets them go, and keeps its own size again."""
    from terrainview.render import world_draw
    from terrainview.render.gpu import height_array_sizes
    from terrainview.scene.world_regions import map_side

    side = map_side(world_draw.RESERVED_DETAIL)
    arrays = world_draw.RESERVED_MAPS * len(height_array_sizes(side, side))
    renderer.world.leave()
    renderer.world.streaming = True
    try:
        original, natural = world_draw.POOL_BYTES, world_draw.NATURAL_POOL_BYTES
        for look, slope_maps, limit in (("original", 0, original), ("natural", world_draw.RESERVED_MAPS, natural),
                                        ("original", 0, original)):
            settings = SceneSettings(mode="rendered", look=look, tile="endless", camera="fly",
                                     iterations=world_draw.RESERVED_DETAIL, eye_y=3.0)
            renderer.update(settings)
            render_pixels(renderer, settings, (16, 9))
            pool = renderer.world._arrays
            assert sum(texture.size == (side, side) for texture in pool._free) == slope_maps
            reserved = [texture for texture in pool._free if texture.size in height_array_sizes(side, side)]
            assert len(reserved) == arrays, "no height array twice"  # (besides those of stand-ins drawn and let go)
            assert pool.limit_bytes == limit
    finally:
        renderer.world.streaming = False
        renderer.world.leave()


def test_the_maps_reserved_at_iterations_12_fit_in_the_worlds_pool():
    """Else the pool would release the first reserved as the last came in: the height arrays in its bytes, and in the
    natural look's twice as many their slope maps too (four bytes a point, as the heights)."""
    from terrainview.render import world_draw
    from terrainview.render.gpu import height_array_sizes
    from terrainview.scene.world_regions import map_side

    reserved = sum(4 * columns * rows * layers
                   for detail in range(world_draw.RESERVED_DETAIL, 13)
                   for columns, rows, layers in height_array_sizes(map_side(detail), map_side(detail)))
    assert world_draw.RESERVED_MAPS * reserved <= world_draw.POOL_BYTES
    slopes = sum(4 * map_side(detail) ** 2 for detail in range(world_draw.RESERVED_DETAIL, 13))
    assert world_draw.RESERVED_MAPS * (reserved + slopes) <= world_draw.NATURAL_POOL_BYTES


@pytest.mark.parametrize("keep", [True, False])
def test_slope_maps_go_back_to_the_pool_with_their_heights(renderer, gl_names, keep):
    """A region's slope map (a new iterations-12 one costs llvmpipe 40-170 ms) is kept with its height arrays when
    the region is left behind, and taken again for the next map of the same size. Back in the original look over
    the same world (``keep_slopes`` False) it is released at once: kept, it would push out the height arrays
    reserved for the regions ahead."""
    from terrainview.render.gpu import HeightArrayPool, HeightBands

    ctx = renderer.ctx
    before = gl_names.live()
    pool = HeightArrayPool(ctx, limit_bytes=1 << 20)
    first = HeightBands(ctx, 19, 19, pool)
    first.write(np.zeros((19, 19), dtype=np.float32))
    first.advance_slopes(1, 1 << 20)
    slopes = first.slopes
    pool.keep_slopes(keep, 1 << 20)
    first.release()
    assert first.slopes is None and pool.bytes == 4 * 19 * 19 * (2 if keep else 1), "its heights (and slopes) kept"
    assert gl_names.live()["Texture"] == before["Texture"] + (2 if keep else 1)
    second = HeightBands(ctx, 19, 19, pool)
    second.write(np.ones((19, 19), dtype=np.float32))
    assert second.slope_rows == 0
    second.advance_slopes(1, 1 << 20)
    assert (second.slopes is slopes) is keep and second.slopes_ready
    second.release()
    pool.release()
    assert gl_names.live()["Texture"] == before["Texture"]


def test_the_sky_table_follows_the_sun_there_and_back(renderer, gl_ctx):
    """Drawn again only when the sun moves: suns A, B, A give what a fresh table gives for each, constants and
    table alike (a table kept from the first sun, or constants read once, fail)."""
    from terrainview.render.gpu import GpuResources

    def table(gpu: GpuResources, sun: tuple[float, float, float]) -> tuple[dict, np.ndarray]:
        constants = gpu.sky_table(sun)
        return constants, np.frombuffer(gpu.get("texture:sky_table").read(), dtype=np.float16)

    noon, dusk = (0.0, 1.0, 0.0), (0.0, 0.05, -0.998749)
    seen = [table(renderer.gpu, sun) for sun in (noon, dusk, noon)]
    assert seen[0][0]["sun_light"] != seen[1][0]["sun_light"], "a low sun is dimmer and redder"
    for sun, (constants, values) in zip((noon, dusk, noon), seen, strict=True):
        fresh = GpuResources(gl_ctx)
        try:
            expected_constants, expected_values = table(fresh, sun)
        finally:
            fresh.release()
        assert constants == expected_constants
        np.testing.assert_array_equal(values, expected_values)


def test_the_programs_sample_a_copy_of_the_sky_table_not_the_texture_drawn_into(renderer):
    """On llvmpipe the endless world's vertex shaders, sampling a texture the GPU had drawn into again (the sun
    moved), made each region's draw wait for the frame's pixels so far. They sample a copy written from the CPU:
    the texels drawn, for every sun."""
    import moderngl

    gpu = renderer.gpu
    drawn = gpu.get("framebuffer:sky_table").color_attachments[0]
    sampled = gpu.get("texture:sky_table")
    attached = [attachment.glo for framebuffer in gpu._objects.values() if isinstance(framebuffer, moderngl.Framebuffer)
                for attachment in framebuffer.color_attachments]
    assert drawn.glo in attached and sampled.glo not in attached, "no framebuffer draws into the table sampled"
    tables = []
    for sun in ((0.0, 1.0, 0.0), (0.0, 0.05, -0.998749), (0.6, 0.8, 0.0)):
        gpu.sky_table(sun)
        tables.append(sampled.read())
        assert tables[-1] == drawn.read()
    assert len(set(tables)) == 3, "each sun's own table"


@pytest.mark.parametrize("region", [False, True])
def test_a_grid_points_neighbours_wrap_on_tiles_and_reach_into_a_regions_apron(renderer, region):
    """grid.glsl's neighbour_heights, which the slope-shaded and the world's normals come from, read back by
    transform feedback for every point: a tile's map wraps across its seamless edges (its last point is its first);
    a region's reaches one point past its edge into its apron. Either way round, the edges' normals are wrong."""
    from moderngl_window.meta import ProgramDescription
    from moderngl_window.opengl.program import ProgramShaders

    from terrainview.render import gpu

    ctx, side = renderer.ctx, 9  # a map of 8 cells a side, 9 points
    apron = 1 if region else 0
    values = np.random.default_rng(3).standard_normal((side + 2 * apron,) * 2).astype(np.float32)
    if not region:
        values[-1, :], values[:, -1] = values[0, :], values[:, 0]  # seamless
    source = f"""#version 330
#if defined VERTEX_SHADER
#include "grid.glsl"
out vec4 around;
void main() {{
    float step_size;
    neighbour_heights(gl_VertexID % {side}, gl_VertexID / {side}, {"true" if region else "false"}, around, step_size);
}}
#endif
"""
    defines = {"HEIGHT_BAND_ROWS": str(gpu.HEIGHT_BAND_ROWS), "BANDS_PER_ARRAY": str(gpu.BANDS_PER_ARRAY),
               "HEIGHT_ARRAYS": str(gpu.HEIGHT_ARRAYS)}
    shaders = ProgramShaders.from_single(ProgramDescription(path="neighbours.glsl", defines=defines), source)
    shaders.handle_includes(gpu._shader_source)
    program = ctx.program(vertex_shader=shaders.vertex_source.source, varyings=["around"])
    heights = gpu.HeightBands(ctx, side + 2 * apron, side + 2 * apron)
    heights.write(values)
    heights.bind(program)
    for name, value in (("grid_size", side), ("cell_shift", 0), ("apron", apron)):
        if name in program:  # (a region's neighbours need no grid size: the compiler drops it)
            program[name].value = value
    out = ctx.buffer(reserve=side * side * 16)
    vertex_array = ctx.vertex_array(program, [])
    target = ctx.simple_framebuffer((1, 1))  # a context without a window has no framebuffer of its own
    with ctx.scope(target):
        vertex_array.transform(out, gpu.moderngl.POINTS, vertices=side * side)
    around = np.frombuffer(out.read(), dtype=np.float32).reshape(side, side, 4)
    for release in (target, vertex_array, out, program):
        release.release()
    heights.release()
    if region:  # the map's own points, and the apron around them
        padded = values
        left, right = padded[1:-1, :-2], padded[1:-1, 2:]
        back, front = padded[:-2, 1:-1], padded[2:, 1:-1]
    else:  # one period of the map, wrapping
        period = values[:-1, :-1]
        left, right = np.roll(period, 1, axis=1), np.roll(period, -1, axis=1)
        back, front = np.roll(period, 1, axis=0), np.roll(period, -1, axis=0)
        left, right, back, front = (np.pad(a, ((0, 1), (0, 1)), mode="wrap") for a in (left, right, back, front))
    np.testing.assert_array_equal(around, np.stack([left, right, back, front], axis=-1))
