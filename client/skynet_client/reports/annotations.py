"""GitHub's workflow commands (`::error file=…,line=…,title=…::message`): printed on
standard output when GITHUB_ACTIONS is set, they mark the metric's lines in the pull
request. The values are escaped as GitHub's toolkit escapes them."""

from __future__ import annotations

import os


def on_github() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def command(annotation: dict) -> str:
    properties = [f"file={_property(annotation['file'])}"]
    if annotation.get("line"):
        properties.append(f"line={annotation['line']}")
    if annotation.get("title"):
        properties.append(f"title={_property(annotation['title'])}")
    return f"::error {','.join(properties)}::{_data(annotation['message'])}"
