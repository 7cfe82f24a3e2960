"""The user's artifact: what a check runs on each case's input before the metric.

Three kinds:

- "python": `source` is a program defining `run(artifact, input)`; the child
  loads it as module "program" from "program.py" and calls
  run(content, input). `content` is the artifact's text (the prompt or
  configuration the program uses), passed as the first argument.
- "prompt": `content` is a prompt template; the built-in run fills its
  `{field}` placeholders with the input fields (plain names only, see
  skynet.template) and returns the task model's answer to it.

The run happens in a child of its own (skynet._artifact); what run returns
crosses to the metric's child as data (skynet.values), so it need not be JSON:
built-in values arrive as they were, other objects as stand-ins with the same
class name, attributes and repr. Everything here is checked in the parent
before any child starts; problems raise ArtifactError (a ValueError) with a code
from ARTIFACT_ERRORS.
"""

from __future__ import annotations

from dataclasses import dataclass

from contract.source import check_source
from skynet import template
from skynet._artifact import KINDS, RUN_PROBLEMS

MAX_CONTENT_BYTES = 256 * 1024
OUTPUT_REPR_LIMIT = 2048

ARTIFACT_ERRORS = (
    "artifact_kind_unknown",
    "artifact_not_string",
    "artifact_too_large",
    "program_missing",
    "program_not_utf8",
    "program_too_large",
    "program_syntax_error",
    "template_syntax_error",
    "template_field_not_plain",
)
RUN_STATUSES = ("ok", "error", "timeout")

__all__ = ["ARTIFACT_ERRORS", "KINDS", "RUN_PROBLEMS", "Artifact", "ArtifactError"]


class ArtifactError(ValueError):
    """An artifact the check cannot run: `code` (ARTIFACT_ERRORS) and `params`."""

    def __init__(self, code: str, params: dict | None = None) -> None:
        super().__init__(code, params or {})
        self.code = code
        self.params = params or {}


@dataclass(frozen=True)
class Artifact:
    """kind "python" (source: the program, content: its artifact text) or "prompt"
    (content: the template; source unused)."""

    kind: str
    source: str | bytes | None = None
    content: str = ""
    instructions: tuple[tuple[str, str], ...] = ()
    output_fields: tuple[str, ...] = ()
    describe: bool = False

    @classmethod
    def python(cls, source: str | bytes, content: str = "") -> Artifact:
        return cls("python", source, content)

    @classmethod
    def dspy(
        cls,
        source: str | bytes,
        *,
        instructions: dict[str, str] | None = None,
        output_fields: tuple[str, ...] | list[str] = (),
        describe: bool = False,
    ) -> Artifact:
        return cls(
            "dspy",
            source,
            "",
            tuple(sorted((instructions or {}).items())),
            tuple(output_fields),
            describe,
        )

    @classmethod
    def prompt(cls, template_text: str) -> Artifact:
        return cls("prompt", None, template_text)

    def to_dict(self) -> dict:
        """The artifact as stored (on a check, in a fingerprint): kind, content and the
        program's source ("" for a prompt). from_dict() reads it back."""
        source = (
            self.source.decode("utf-8", "surrogateescape")
            if isinstance(self.source, bytes)
            else self.source
        )
        stored = {"kind": self.kind, "content": self.content, "source": source or ""}
        if self.kind == "dspy":
            stored["output_fields"] = list(self.output_fields)
        return stored

    @classmethod
    def from_dict(cls, data: dict) -> Artifact:
        """The artifact to_dict() stored. An unknown kind stays itself, for to_job() to
        refuse."""
        kind, content = data.get("kind"), data.get("content", "")
        if kind == "python":
            return cls.python(data.get("source") or "", content)
        if kind == "dspy":
            return cls.dspy(data.get("source") or "", output_fields=data.get("output_fields") or ())
        return cls(kind, None, content)

    def to_job(self) -> dict:
        """The job's "artifact" entry; raises ArtifactError when it cannot run."""
        if self.kind not in KINDS:
            raise ArtifactError("artifact_kind_unknown", {"kind": str(self.kind)[:200]})
        if not isinstance(self.content, str):
            raise ArtifactError("artifact_not_string", {"field": "content"})
        size = len(self.content.encode("utf-8", "surrogatepass"))
        if size > MAX_CONTENT_BYTES:
            raise ArtifactError("artifact_too_large", {"size": size, "limit": MAX_CONTENT_BYTES})
        if self.kind == "prompt":
            try:
                template.parse(self.content)
            except template.TemplateError as exc:
                raise ArtifactError(exc.code, exc.params) from None
            return {"kind": "prompt", "content": self.content}
        if self.source is None:
            raise ArtifactError("program_missing")
        if not isinstance(self.source, str | bytes):
            raise ArtifactError("artifact_not_string", {"field": "source"})
        checked = check_source(self.source)
        if checked.problem is not None:
            code = {"not_utf8": "program_not_utf8", "file_too_large": "program_too_large"}.get(
                checked.problem, "program_syntax_error"
            )
            raise ArtifactError(code, checked.params)
        if self.kind == "dspy":
            return {
                "kind": "dspy",
                "source": checked.text,
                "instructions": dict(self.instructions),
                "output_fields": list(self.output_fields),
                "describe": self.describe,
            }
        return {"kind": "python", "content": self.content, "source": checked.text}
