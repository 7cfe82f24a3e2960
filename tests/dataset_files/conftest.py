"""Fixtures for the datasets package tests, which run without Django."""

from __future__ import annotations

import pytest

from dataset_files import DatasetError


@pytest.fixture(autouse=True)
def _plain_static_storage():
    """Overrides tests/conftest.py's autouse fixture of this name, which needs
    pytest-django's `settings`: these tests run without Django (-p no:django)."""
    yield


@pytest.fixture
def raises_code():
    """raises_code(code, fn, *args, **kw) -> the DatasetError, asserting its code."""

    def check(code: str, fn, *args, **kw) -> DatasetError:
        with pytest.raises(DatasetError) as info:
            fn(*args, **kw)
        assert info.value.code == code, info.value.as_dict()
        return info.value

    return check
