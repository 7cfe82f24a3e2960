"""The API's version, said on every answer under /api/ as the header Skynet-Api-Version.

MAJOR changes only when a client written for the old one would misread an answer; MINOR
when operations or fields are added. `skynet` exits 2 on another MAJOR and warns on
another MINOR (skynet_client.http)."""

from __future__ import annotations

API_VERSION = "1.1"
HEADER = "Skynet-Api-Version"
