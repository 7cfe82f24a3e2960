from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.forms import PasswordInput
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from skynet_web.signup_limits import Refusal, signup_refusal


@require_http_methods(["GET", "HEAD", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("metrics:home")
    if request.method == "POST":
        # Counted before the form is read, so a flood of posts cannot outrun the count.
        refusal = signup_refusal(request)
        if refusal is not None:
            return _refused(request, refusal)
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, _("Welcome! Your account is ready."))
        return redirect("metrics:home")
    return render(request, "registration/signup.html", {"form": form})


def _refused(request: HttpRequest, refusal: Refusal) -> HttpResponse:
    response = render(
        request,
        "registration/signup.html",
        {"form": _refilled(request), "refusal": refusal.message},
        status=refusal.status,
    )
    if refusal.retry_after_s:
        response["Retry-After"] = str(refusal.retry_after_s)
    return response


def _refilled(request: HttpRequest) -> UserCreationForm:
    """An unbound form holding what was typed but no password: a refused sign-up was not
    validated, so it shows no field errors either."""
    fields = UserCreationForm.base_fields
    return UserCreationForm(
        initial={
            name: value
            for name, value in request.POST.items()
            if name in fields and not isinstance(fields[name].widget, PasswordInput)
        }
    )
