"""terrainview: a live fractal-terrain viewer (Paul Martz's 1997 Fractal Example, rebuilt and extended)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("terrainview")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
