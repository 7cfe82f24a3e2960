"""The `skynet` command line, a client of the workbench's JSON API."""

__version__ = "1.1.0"
