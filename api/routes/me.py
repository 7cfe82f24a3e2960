"""/api/v1/me: who the token is, what it may do, and until when."""

from __future__ import annotations

import datetime

from ninja import Router, Schema

router = Router()


class MeOut(Schema):
    username: str
    token_name: str
    scope: str
    expires_at: datetime.datetime | None


@router.get("", response=MeOut, summary="The token's user and scope")
def me(request):
    token = request.auth
    return {
        "username": request.user.get_username(),
        "token_name": token.name,
        "scope": token.scope,
        "expires_at": token.expires_at,
    }
