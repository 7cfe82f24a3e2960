"""Writes on metrics: create, save (a changed text becomes a new version), restore, and
starting a check of a saved version on the metric's own cases."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max

from checks import services as check_services
from checks.models import Check
from contract.cases import DEFAULT_CASES
from metrics.models import Metric, MetricVersion, VersionLabel
from metrics.starters import STARTERS


@transaction.atomic
def metric_create(
    *, owner: AbstractBaseUser, name: str, starter: str, source: str | None = None
) -> Metric:
    """A new metric from a starter, or from `source` (a docs example) with fitting cases."""
    template = STARTERS[starter]
    if source is not None:
        # A docs example that is one of the starters gets that starter's cases.
        template = next((s for s in STARTERS.values() if s.source == source), template)
    metric = Metric.objects.create(
        owner=owner,
        name=name,
        cases=[dict(case) for case in template.cases],
        timeout_s=settings.CHECK_TIMEOUT_DEFAULT,
    )
    MetricVersion.objects.create(metric=metric, number=1, source=source or template.source)
    return metric


@transaction.atomic
def metric_save(
    metric: Metric,
    *,
    source: str,
    cases: list[dict] | None = None,
    timeout_s: int | None = None,
    reflection_model: str | None = None,
    metric_model: str | None = None,
    files: dict[str, str] | None = None,
) -> tuple[MetricVersion, bool]:
    """Save the editor's state. A changed source, or a changed set of helper files
    (`files`, {path: text}, already held to contract.files' limits; None keeps the latest
    version's), becomes a new immutable version.

    Returns (latest version, whether it was created now).
    """
    # Lock the metric row so two saves cannot take the same version number.
    locked = Metric.objects.select_for_update().get(pk=metric.pk)
    if cases is not None:
        locked.cases = cases
    if timeout_s is not None:
        locked.timeout_s = timeout_s
    if reflection_model is not None:
        locked.reflection_model = reflection_model
    if metric_model is not None:
        locked.metric_model = metric_model
    locked.save()
    latest = locked.versions.order_by("-number").first()
    if files is None:
        files = latest.helper_files if latest is not None else {}
    files = dict(sorted(files.items()))
    if latest is not None and latest.source == source and latest.helper_files == files:
        return latest, False
    number = (locked.versions.aggregate(top=Max("number"))["top"] or 0) + 1
    version = MetricVersion.objects.create(
        metric=locked, number=number, source=source, files=files or None
    )
    return version, True


SAMPLE_CASES = 3


@transaction.atomic
def metric_case_put(metric: Metric, slot: int, case: dict) -> Metric:
    """Put `case` ({"input", "output", "expected"}) into sample-case slot `slot` (0, 1 or
    2) of the metric, as the cases panel would save it; the other slots keep theirs. A
    metric with fewer cases gets the check's default ones in the slots before, which are
    what its check ran until now."""
    if not 0 <= slot < SAMPLE_CASES:
        raise ValueError(f"no sample-case slot {slot}")
    locked = Metric.objects.select_for_update().get(pk=metric.pk)
    cases = list(locked.cases or [])
    while len(cases) <= slot:
        cases.append(DEFAULT_CASES[len(cases)].to_job())
    cases[slot] = {
        "input": case.get("input"),
        "output": case.get("output"),
        "expected": case.get("expected"),
        "observation": None,
    }
    locked.cases = cases
    locked.save(update_fields=["cases", "updated_at"])
    return locked


def metric_restore(metric: Metric, version: MetricVersion) -> MetricVersion:
    """Restoring never rewrites history: the old text becomes the newest version."""
    restored, _created = metric_save(metric, source=version.source, files=version.helper_files)
    return restored


@transaction.atomic
def check_start_for_metric(metric: Metric, version: MetricVersion) -> Check:
    """Check a saved version on the metric's own cases, within the user's limits."""
    metric.refresh_from_db()  # the cases and time limit as last saved
    check_services.check_admit(metric.owner)
    return check_services.check_create(
        owner=metric.owner,
        source=version.source,
        files=version.helper_files,
        cases=metric.cases or None,
        timeout_s=metric.timeout_s,
        metric_version=version,
        reflection_model=metric.reflection_model,
        metric_model=metric.metric_model,
    )


@transaction.atomic
def metric_convert(metric: Metric, version: MetricVersion, converted: str) -> MetricVersion:
    """Save a version's conversion to the contract (contract.convert) as the newest version.

    The caller converted `version` and the user accepted that diff; saving the same text
    again makes no new version."""
    saved, _created = metric_save(metric, source=converted, files=version.helper_files)
    return saved


@transaction.atomic
def metric_import(*, owner: AbstractBaseUser, name: str, source: str, converted: str) -> Metric:
    """A new metric from a metric written for DSPy or gepa: version 1 is the source as
    pasted, version 2 its conversion (when it changed anything), so the history shows
    what the conversion did. The sample cases are the default ones until the user sets
    them to the data's columns."""
    metric = Metric.objects.create(
        owner=owner,
        name=name,
        cases=[case.to_job() for case in DEFAULT_CASES],
        timeout_s=settings.CHECK_TIMEOUT_DEFAULT,
    )
    MetricVersion.objects.create(metric=metric, number=1, source=source)
    if converted != source:
        MetricVersion.objects.create(metric=metric, number=2, source=converted)
    return metric


# A label: what a branch, a tag or a commit is called (letters, digits, . _ / - and +).
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,99}")
MAX_LABELS = 10


class LabelRefused(ValueError):
    def __init__(self, code: str, params: dict) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


def version_label(version: MetricVersion, names: list[str]) -> list[str]:
    """Point each of `names` at `version` (moving it from another version of the metric);
    the version's labels after. LabelRefused names one that cannot be a label."""
    if len(names) > MAX_LABELS:
        raise LabelRefused("too_many_labels", {"max": MAX_LABELS})
    for name in names:
        if not LABEL.fullmatch(name):
            raise LabelRefused("bad_label", {"label": name[:100]})
    for name in dict.fromkeys(names):
        VersionLabel.objects.update_or_create(
            metric_id=version.metric_id, name=name, defaults={"version": version}
        )
    return list(version.labels.values_list("name", flat=True))
