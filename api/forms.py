"""The pages' own forms, used by the API to validate what a request sends: the same
limits, the same refusals, the same words. A form that does not validate becomes an
ApiError naming its first field in error (or the form as a whole)."""

from __future__ import annotations

from collections.abc import Mapping

from django import forms

from api.errors import ApiError
from wording import words


def cleaned(
    form: forms.BaseForm, *, prefix: str = "", names: Mapping[str, str] | None = None
) -> dict:
    """`form`'s cleaned data, or ApiError(422) with the first error's code, words and field.

    `names`: the API's name of a form field whose own name is not (a page's "role_3" is
    the API's "columns.question")."""
    if form.is_valid():
        return form.cleaned_data
    names = names or {}
    for name, errors in form.errors.as_data().items():
        error = errors[0]
        message = " ".join(error.messages)
        field = None if name == forms.forms.NON_FIELD_ERRORS else f"{prefix}{names.get(name, name)}"
        if field:
            message = words("invalid", {"field": field, "problem": message}, family="api")
        raise ApiError(422, error.code or "invalid", field=field, message=message)
    raise ApiError(422, "invalid", params={"field": "", "problem": ""})
