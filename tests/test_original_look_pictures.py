"""The original look against stored pictures: it draws what it drew before the natural look came (issue 18's promise).

The pictures in tests/data/original_look are small renders of every mode with the full mesh (``--lod off``), made
by this code and checked against the code before the natural look (00e7896): rendered, clouds, teximage, bands,
and slope shading with the blend texture and water were the same pixel for pixel; lines differed by one level at
105 of 19,200 pixels and the 1D profile at 2, from the later rework of how lines are drawn (one triangle a
segment). They are llvmpipe's pictures: another rasterizer draws edges a little otherwise, so elsewhere the test is
skipped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest_plugins = ["gl_fixtures"]

STORED = Path(__file__).parent / "data" / "original_look"
SIZE = "160x120"
PICTURES = {
    "rendered": ("--mode", "rendered", "--iterations", "7", "--lod", "off", "--seed", "3"),
    "rendered_slope_blend_water": ("--mode", "rendered", "--iterations", "7", "--tile", "3", "--lod", "off", "--seed",
                                   "5", "--shading", "slope", "--texture", "blend", "--water-level", "0", "--camera",
                                   "fly", "--eye-y", "0.7", "--pitch", "15"),
    "rendered_bands": ("--mode", "rendered", "--iterations", "6", "--lod", "off", "--texture", "bands", "--h", "0.5"),
    "lines": ("--mode", "lines", "--iterations", "6", "--lod", "off", "--seed", "2"),
    "clouds": ("--mode", "clouds", "--iterations", "6", "--seed", "4"),
    "teximage": ("--mode", "teximage", "--iterations", "6", "--teximage-iterations", "7"),
    "one_d": ("--mode", "1d", "--iterations", "8", "--seed", "6"),
}


@pytest.mark.gl
@pytest.mark.parametrize("name", PICTURES)
def test_the_original_look_draws_its_stored_pictures(name, gl_ctx, call_main, tmp_path):
    if "llvmpipe" not in gl_ctx.info["GL_RENDERER"]:
        pytest.skip(f"the stored pictures are llvmpipe's, not {gl_ctx.info['GL_RENDERER']}'s")
    drawn = tmp_path / f"{name}.png"
    status, _, err = call_main("render", "-o", drawn, "--size", SIZE, *PICTURES[name])
    assert status == 0, err
    with Image.open(drawn) as picture, Image.open(STORED / f"{name}.png") as stored:
        np.testing.assert_array_equal(np.asarray(picture.convert("RGB")), np.asarray(stored.convert("RGB")))
