"""terrainview: a live fractal-terrain viewer (Paul Martz's 1997 Fractal Example, rebuilt and extended)."""

# The one place the version is written: the build reads it from here (pyproject's [tool.hatch.version]).
# A literal rather than importlib.metadata, which would add 60 ms to every start.
__version__ = "0.1.0"
