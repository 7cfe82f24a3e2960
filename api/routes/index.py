"""/api/v1/: what this API is, which version, and where its schema and docs are; the one
operation that needs no token, so a client can tell it is talking to the workbench."""

from __future__ import annotations

from django.urls import reverse
from ninja import Field, Router, Schema

from api import client_wheel
from api.version import API_VERSION

router = Router()


class ClientOut(Schema):
    version: str = Field(description="The version of the skynet command line served here.")
    wheel: str = Field(description="Its wheel: `pip install` this address.")


class IndexOut(Schema):
    name: str
    version: str = Field(description="MAJOR.MINOR, as every answer's Skynet-Api-Version.")
    schema_url: str = Field(alias="schema", description="The OpenAPI 3.1 schema.")
    docs: str = Field(description="The browsable docs.")
    client: ClientOut


@router.get(
    "/",
    auth=None,
    response=IndexOut,
    by_alias=True,
    summary="What this API is and where its schema is",
)
def api_index(request):
    wheel = client_wheel.current()
    return {
        "name": "Skynet metric workbench API",
        "version": API_VERSION,
        "schema": request.build_absolute_uri(reverse("api-v1:openapi-json")),
        "docs": request.build_absolute_uri(reverse("api-v1:openapi-view")),
        "client": {
            "version": wheel.version,
            "wheel": request.build_absolute_uri(reverse("client_download", args=[wheel.name])),
        },
    }
