"""A run file (TOML, see skynet_client.commands.run) read into the body of
POST /api/v1/runs/drafts, its files read relative to the run file. What the keys hold is
the server's to judge (it refuses with the field and its words); this only finds the
files and says which key is missing or of the wrong kind."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from skynet_client.commands.common import read_bytes, read_text
from skynet_client.exits import USAGE, Stop
from skynet_client.keys import unknown_keys
from skynet_client.words import _

KINDS = ("prompt", "python", "dspy")

# Every key a run file may hold, by table ("" is the top level). A key not here is an
# error naming the nearest known one: a typo must not pass for a default.
KEYS = {
    "": (
        "name",
        "engine",
        "minibatch",
        "artifact",
        "dataset",
        "splits",
        "metric",
        "models",
        "budget",
    ),
    "artifact": ("kind", "file", "text_file", "text"),
    "dataset": ("file", "id", "roles", "types"),
    "splits": ("train_percent", "validation_percent", "test_percent", "seed", "column"),
    "metric": ("file", "id", "version"),
    "models": ("task", "reflection", "metric"),
    "budget": ("metric_calls", "usd"),
}


@dataclass
class RunFile:
    body: dict  # the draft's body, without its dataset_id when the dataset is a file
    dataset_id: int | None
    dataset_path: Path | None

    def dataset_bytes(self) -> bytes:
        assert self.dataset_path is not None
        return read_bytes(str(self.dataset_path), _("The dataset file"))


def _table(data: dict, key: str, *, required: bool = True) -> dict:
    value = data.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise Stop(USAGE, _("The run file needs a [{key}] table.").format(key=key))
    return value


def _path(base: Path, value: object, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise Stop(USAGE, _("In the run file, {key} must be a file name.").format(key=key))
    return base / value


def _text(base: Path, value: object, key: str, what: str) -> str:
    return read_text(str(_path(base, value, key)), what)


def _artifact(base: Path, table: dict) -> dict:
    kind = table.get("kind", "prompt")
    if kind not in KINDS:
        raise Stop(
            USAGE,
            _("In the run file, artifact.kind must be one of: {kinds}.").format(
                kinds=", ".join(KINDS)
            ),
        )
    if "file" not in table:
        raise Stop(USAGE, _("In the run file, artifact.file must name the prompt or program.py."))
    text = _text(base, table["file"], "artifact.file", _("The artifact file"))
    if kind == "prompt":
        return {"kind": kind, "content": text}
    content = ""
    if "text_file" in table:
        content = _text(base, table["text_file"], "artifact.text_file", _("The artifact text file"))
    elif "text" in table:
        content = str(table["text"])
    return {"kind": kind, "content": content, "program": text}


def _metric(base: Path, table: dict) -> dict:
    if "file" in table:
        return {"source": _text(base, table["file"], "metric.file", "metric.py")}
    if "id" in table:
        return {"metric_id": table["id"], "version": table.get("version")}
    raise Stop(USAGE, _("In the run file, [metric] needs file (a metric.py) or id (a saved one)."))


def read(path: str) -> RunFile:
    source = Path(path)
    text = read_text(path, _("The run file"))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise Stop(
            USAGE,
            _("The run file {path} is not valid TOML: {error}").format(path=path, error=error),
        ) from None
    unknown_keys(data, KEYS, _("The run file {path}").format(path=path))
    base = source.parent
    dataset = _table(data, "dataset")
    if ("file" in dataset) == ("id" in dataset):
        raise Stop(USAGE, _("In the run file, [dataset] needs file (to upload) or id, not both."))
    body = {
        "name": str(data.get("name", "")),
        "artifact": _artifact(base, _table(data, "artifact")),
        "splits": _table(data, "splits", required=False),
        "metric": _metric(base, _table(data, "metric")),
        "models": _table(data, "models"),
        "engine": data.get("engine", "auto"),
        "budget": _table(data, "budget", required=False),
    }
    if "minibatch" in data:
        body["minibatch"] = data["minibatch"]
    for key in ("roles", "types"):
        if key in dataset:
            body[key] = dataset[key]
    if "id" in dataset:
        return RunFile(body, dataset_id=dataset["id"], dataset_path=None)
    return RunFile(body, dataset_id=None, dataset_path=_path(base, dataset["file"], "dataset.file"))
