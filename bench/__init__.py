"""terrainview's benchmarks: ``make bench`` runs ``python -m bench``."""
