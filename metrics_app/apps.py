from __future__ import annotations

from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.utils.translation import gettext_lazy as _

from skynet_web.private_files import private_sqlite_files


def _keep_sqlite_files_private(sender, connection, **kwargs) -> None:
    # SQLite makes a new database file 0644; every connection (migrate, the test database,
    # each request) tightens it before it writes, so its journal is made 0600 too.
    if connection.vendor != "sqlite":
        return
    name = connection.settings_dict["NAME"]
    if not connection.creation.is_in_memory_db(name):
        private_sqlite_files(name)


class MetricsAppConfig(AppConfig):
    name = "metrics_app"
    verbose_name = _("Metric workbench")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        connection_created.connect(_keep_sqlite_files_private, dispatch_uid="private-sqlite")
