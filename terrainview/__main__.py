"""``python -m terrainview``: the same as the ``terrainview`` command."""

from terrainview.cli import main

raise SystemExit(main())
