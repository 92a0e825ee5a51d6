"""The ground floor: helpers every layer may use, importing nothing else of terrainview.

Safe output files (``atomic_files``), the one rule for numbers typed on the command line (``parsing``),
where the shaders and assets live (``resources``) and the process's memory (``heap``: freed pages handed back,
numpy's huge pages, start-up's objects out of the collector's way). May import: the standard library, numpy.
"""
