"""The project as an app: what belongs to no feature (the `serve` command, and keeping
the SQLite files private)."""

from __future__ import annotations

from django.apps import AppConfig
from django.db.backends.signals import connection_created

from skynet_web.private_files import private_sqlite_files


def _keep_sqlite_files_private(sender, connection, **kwargs) -> None:
    # SQLite makes a new database file 0644; every connection (migrate, the test database,
    # each request) tightens it before it writes, so its journal is made 0600 too.
    if connection.vendor != "sqlite":
        return
    name = connection.settings_dict["NAME"]
    if not connection.creation.is_in_memory_db(name):
        private_sqlite_files(name)


class SkynetWebConfig(AppConfig):
    name = "skynet_web"

    def ready(self) -> None:
        connection_created.connect(_keep_sqlite_files_private, dispatch_uid="private-sqlite")
