"""The ground floor: helpers every layer may use, importing nothing else of terrainview.

Safe output files (``atomic_files``), the one rule for numbers typed on the command line (``parsing``),
where the shaders and assets live (``resources``) and handing freed memory back to the system (``heap``). May
import: the standard library, numpy.
"""
