"""A JUnit XML report (--junit FILE), the format GitLab's and GitHub's test-report views,
Jenkins and most CI systems read: one <testcase> per stage of a check and per case, each
that did not pass with a <failure> carrying the problem, the feedback and the fix. It
keeps to the Jenkins JUnit schema (junit-10.xsd): no attribute beyond it."""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from skynet_client.exits import USAGE, Stop
from skynet_client.words import _


@dataclass
class Case:
    classname: str
    name: str
    seconds: float = 0.0
    # "failure": the metric broke the contract or a case failed; "skipped": not run.
    outcome: str = "passed"
    message: str = ""
    kind: str = ""
    text: str = ""
    file: str = ""
    line: int | None = None


@dataclass
class Suite:
    name: str
    cases: list[Case] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)

    def count(self, outcome: str) -> int:
        return sum(case.outcome == outcome for case in self.cases)


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"


def element(suite: Suite) -> ET.Element:
    failures, skipped = suite.count("failure"), suite.count("skipped")
    total = sum(case.seconds for case in suite.cases)
    stamp = datetime.datetime.now(datetime.UTC).replace(microsecond=0, tzinfo=None).isoformat()
    # The totals both elements carry; only the suite says what was skipped, and when.
    totals = {
        "name": suite.name,
        "tests": str(len(suite.cases)),
        "failures": str(failures),
        "errors": "0",
        "time": _seconds(total),
    }
    root = ET.Element("testsuites", totals)
    node = ET.SubElement(root, "testsuite", totals, skipped=str(skipped), timestamp=stamp)
    if suite.properties:
        properties = ET.SubElement(node, "properties")
        for key, value in suite.properties.items():
            ET.SubElement(properties, "property", name=key, value=value)
    for case in suite.cases:
        item = ET.SubElement(
            node, "testcase", classname=case.classname, name=case.name, time=_seconds(case.seconds)
        )
        if case.outcome == "failure":
            failure = ET.SubElement(item, "failure", message=case.message, type=case.kind)
            # Where in metric.py, as the text's first line: the schema's testcase has no
            # file or line attribute.
            where = f"{case.file}:{case.line}\n" if case.file and case.line else ""
            failure.text = where + (case.text or case.message)
        elif case.outcome == "skipped":
            ET.SubElement(item, "skipped", message=case.message)
    return root


def _allowed(ch: str) -> bool:
    code = ord(ch)
    return ch in "\t\n\r" or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code > 0xFFFF


def _printable(text: str) -> str:
    """XML 1.0 holds no control characters but tab and line breaks: a metric's feedback
    may print any, so they are shown as \\xNN rather than break the file."""
    return "".join(ch if _allowed(ch) else f"\\x{ord(ch):02x}" for ch in text)


def _clean(root: ET.Element) -> None:
    for node in root.iter():
        node.attrib = {key: _printable(value) for key, value in node.attrib.items()}
        if node.text:
            node.text = _printable(node.text)


def write(suite: Suite, target: str) -> None:
    root = element(suite)
    _clean(root)
    ET.indent(root)
    try:
        Path(target).write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n")
    except OSError as error:
        said = _("Cannot write the JUnit report {file}: {error}")
        raise Stop(USAGE, said.format(file=target, error=error)) from None
