"""The datasets page: a user's uploaded datasets, the storage they take of the quota, and
deleting one that no evaluation or run keeps."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import F
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from submissions import dataset_selectors, services, storage
from wording import words
from wording.datasets import megabytes


def _usage(user) -> dict:
    usage = storage.usage(user)
    return {**usage, "used_mb": megabytes(usage["used"]), "quota_mb": megabytes(usage["quota"])}


@login_required
@require_GET
def dataset_list(request: HttpRequest) -> HttpResponse:
    # A version's parent by name only (a dataset's row holds its whole file).
    datasets = dataset_selectors.datasets_with_uses(request.user).annotate(
        parent_name=F("parent__filename")
    )
    context = {"datasets": datasets, "usage": _usage(request.user)}
    return render(request, "submissions/datasets.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def dataset_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: what deleting the dataset deletes, and what uses it; POST: delete it."""
    dataset = dataset_selectors.get_dataset_for_user(request.user, pk)
    in_use = {"evaluations": dataset.evaluation_count, "runs": dataset.run_count}
    status = 200
    if request.method == "POST":
        try:
            services.dataset_delete(dataset)
        except services.DatasetInUse as refused:
            in_use, status = refused.uses, 409
        else:
            messages.success(request, _("Dataset deleted."))
            return redirect("submissions:datasets")
    refusal = words("dataset_in_use", in_use, family="dataset") if any(in_use.values()) else ""
    context = {
        "dataset": dataset,
        "uses": dataset_selectors.uses_of(dataset),
        "refusal": refusal,
    }
    return render(request, "submissions/dataset_delete.html", context, status=status)
