from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from metrics_app import selectors


def home(request: HttpRequest) -> HttpResponse:
    metrics = selectors.metrics_for_user(request.user) if request.user.is_authenticated else None
    return render(request, "metrics_app/home.html", {"metrics": metrics})
