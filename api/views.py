"""The account's API tokens page: make one (shown once), list them, revoke one."""

from __future__ import annotations

from django import forms
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from api import client_wheel, tokens
from api.models import ApiToken

EXPIRIES = [
    ("30", gettext_lazy("In 30 days")),
    ("90", gettext_lazy("In 90 days")),
    ("365", gettext_lazy("In a year")),
    ("never", gettext_lazy("Never")),
]
# Tokens a user may hold at once, revoked and expired ones not counted.
MAX_ACTIVE = 20


class TokenForm(forms.Form):
    name = forms.CharField(
        label=gettext_lazy("Name"),
        max_length=80,
        help_text=gettext_lazy("Where you use it, such as “CI of my-project”."),
    )
    # skynet check, evaluate and run submit write (a check, a version, an evaluation, a
    # run): a token made for them is what most users come here for.
    scope = forms.ChoiceField(
        label=gettext_lazy("May"),
        choices=ApiToken.Scope.choices,
        initial=ApiToken.Scope.WRITE,
        widget=forms.RadioSelect,
        help_text=gettext_lazy(
            "skynet check, evaluate and run submit need a token that may read and write; "
            "reading is enough to follow and download what they started."
        ),
    )
    expires = forms.ChoiceField(label=gettext_lazy("Expires"), choices=EXPIRIES, initial="90")


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    """The list, and on a valid POST a new token shown once on this very answer (never
    stored, never in a redirect's URL or the session)."""
    shown = None
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        active = [t for t in tokens.tokens_for_user(request.user) if t.is_active]
        if len(active) >= MAX_ACTIVE:
            form.add_error(
                None,
                _("You have %(count)s active tokens, the most you may hold. Revoke one first.")
                % {"count": MAX_ACTIVE},
            )
        else:
            expires = form.cleaned_data["expires"]
            row, shown = tokens.token_create(
                owner=request.user,
                name=form.cleaned_data["name"],
                scope=form.cleaned_data["scope"],
                days=None if expires == "never" else int(expires),
            )
            form = TokenForm()
    context = {
        "form": form,
        "shown": shown,
        "tokens": tokens.tokens_for_user(request.user),
        "install_line": client_install_line(request),
    }
    status = 422 if request.method == "POST" and shown is None else 200
    return render(request, "api/tokens.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: what revoking it ends, and a button to do it; POST: revoke it. A revoked
    token cannot be brought back, and every script using it is refused from then on."""
    row = get_object_or_404(ApiToken, pk=pk, owner=request.user)
    if request.method == "GET":
        if row.revoked_at is not None:
            return redirect("api:tokens")
        return render(request, "api/token_revoke.html", {"token": row})
    tokens.token_revoke(row)
    flash.success(request, _("Token “%(name)s” revoked.") % {"name": row.name})
    return redirect("api:tokens")


@require_http_methods(["GET", "HEAD"])
def client_download(request: HttpRequest, filename: str) -> FileResponse:
    """The command line's wheel, for `pip install <this address>`: anyone may fetch it
    (it is the same client as the source's), only under its current name."""
    wheel = client_wheel.current()
    if filename != wheel.name:
        raise Http404
    response = FileResponse(wheel.path.open("rb"), content_type="application/octet-stream")
    response["Content-Disposition"] = f'attachment; filename="{wheel.name}"'
    return response


def client_install_line(request: HttpRequest) -> str:
    """The line that installs this workbench's own client."""
    wheel = client_wheel.current()
    return f"pip install {request.build_absolute_uri(f'/client/{wheel.name}')}"
