"""What a user's datasets cost in storage, and the quota that holds it (DATASET_QUOTA_MB).

A dataset costs its file's bytes plus the JSON its parsed rows, preview and row numbers are
stored as: parsing a file about doubles what it takes, so counting the file alone would let
a user store twice their quota."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Sum

from dataset_files import DatasetError
from submissions.models import Dataset

MEGABYTE = 1024 * 1024


class QuotaExceeded(DatasetError):
    """An upload that would take the user past their quota. A DatasetError, so every upload
    path that words a file it cannot use words this one too; params are in bytes."""

    def __init__(self, *, size: int, used: int, limit: int) -> None:
        super().__init__("storage_quota", params={"size": size, "used": used, "limit": limit})


def json_bytes(value: object) -> int:
    """The length of `value` as stored JSON, in UTF-8 bytes."""
    return len(json.dumps(value, ensure_ascii=False).encode())


def cost(*, raw: bytes, rows: list, preview: list, row_numbers: list) -> int:
    """What one dataset takes: its file and the JSON of what parsing it found. The data
    migration that filled stored_bytes for older rows counts the same way."""
    return len(raw) + json_bytes(rows) + json_bytes(preview) + json_bytes(row_numbers)


def quota() -> int:
    """The quota in bytes."""
    return settings.DATASET_QUOTA_MB * MEGABYTE


def used(owner: AbstractBaseUser) -> int:
    """The bytes `owner`'s datasets take now, and the copies of their cases that their
    labellings keep (labelling.Labelling, read through the owner's reverse relation: the
    wizard is below the labelling app)."""
    total = Dataset.objects.filter(owner=owner).aggregate(total=Sum("stored_bytes"))["total"]
    copies = owner.labellings.aggregate(total=Sum("stored_bytes"))["total"]
    return (total or 0) + (copies or 0)


def admit(owner: AbstractBaseUser, size: int) -> None:
    """QuotaExceeded when `size` more bytes would take `owner` past the quota."""
    now, limit = used(owner), quota()
    if now + size > limit:
        raise QuotaExceeded(size=size, used=now, limit=limit)


def usage(owner: AbstractBaseUser) -> dict:
    """Storage used and the quota, in bytes, as the datasets page and the API show them."""
    return {"used": used(owner), "quota": quota()}
