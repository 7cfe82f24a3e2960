"""/api/v1/me: who the token is, what it may do, and until when; and the storage its
user's datasets take of their quota."""

from __future__ import annotations

import datetime

from ninja import Field, Router, Schema

from submissions import storage

router = Router()


class MeOut(Schema):
    username: str
    token_name: str
    scope: str
    expires_at: datetime.datetime | None
    dataset_bytes_used: int = Field(
        description="Bytes your datasets take in storage: the files and their parsed rows."
    )
    dataset_bytes_quota: int = Field(
        description="Bytes your datasets may take; a new upload past it is refused."
    )


@router.get("", response=MeOut, summary="The token's user and scope, and its storage")
def me(request):
    token = request.auth
    usage = storage.usage(request.user)
    return {
        "dataset_bytes_used": usage["used"],
        "dataset_bytes_quota": usage["quota"],
        "username": request.user.get_username(),
        "token_name": token.name,
        "scope": token.scope,
        "expires_at": token.expires_at,
    }
