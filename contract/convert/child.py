"""The child of bounded.py: limits itself, reads one request from stdin, converts, and
writes the conversion or its error to stdout as JSON."""

from __future__ import annotations

import json
import resource
import sys


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    seconds = int(request["seconds"])
    memory = int(request["megabytes"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    from contract.convert import ConvertError, convert

    try:
        answer: dict = {"conversion": convert(request["source"], request.get("metric")).to_dict()}
    except ConvertError as exc:
        answer = {"error": {"code": exc.code, "line": exc.line, "params": exc.params}}
    except MemoryError:
        answer = {"error": {"code": "too_costly", "line": None, "params": {}}}
    except RecursionError:
        params = {"reason": "too_complex"}
        answer = {"error": {"code": "syntax_error", "line": None, "params": params}}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
