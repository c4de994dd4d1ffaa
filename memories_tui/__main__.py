"""`python -m memories_tui` is the `memories` CLI."""

from .cli import main

raise SystemExit(main())
