"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions and Anthropic
messages wire formats, with scripted replies, injected latency and errors.

Routes: POST /v1/chat/completions (OpenAI: base URL <url>/v1) and POST /v1/messages
(Anthropic: base URL <url>). Like the real services it checks the key (Authorization:
Bearer, or x-api-key plus anthropic-version) and answers 401 with the provider's error
body when it is wrong; Anthropic also needs max_tokens. Every request is recorded, with
the output cap it carried (`Request.output_cap`). Replies come from `script` (one Reply
per request, in order; a Reply with `when` set is kept for the first request whose user
message contains that text, so cases that run at once each get their own) and, when that
is empty, from `respond(request)` when it is set, else the judge: "PASS ..." when the user
message contains "Answer: Paris", else "FAIL ...". The judge's usage never reports more output tokens than the cap, as a
real provider's; with `worst_case` set it reports the most a provider could: output
tokens equal to the cap, and input tokens equal to the client's bound
(Request.most_input_tokens).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from providers.clients import MESSAGE_OVERHEAD_TOKENS

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


@dataclass
class Reply:
    status: int = 200
    body: object = None  # dict/list -> JSON; bytes as they are; None -> the judge's answer
    headers: dict = field(default_factory=dict)
    delay_s: float = 0.0
    when: str | None = None  # only for a request whose user message contains this
    # For a None body: the usage the judge's answer reports (output at most the cap).
    input_tokens: int = 12
    output_tokens: int = 7


@dataclass
class Request:
    path: str
    headers: dict
    body: dict
    at: float

    @property
    def system(self) -> str | None:
        if self.path == ANTHROPIC_PATH:
            return self.body.get("system")
        first = self.body["messages"][0]
        return first["content"] if first["role"] == "system" else None

    @property
    def user(self) -> str:
        return self.body["messages"][-1]["content"]

    @property
    def output_cap(self) -> int | None:
        """The reply limit the request carried, under its wire format's name."""
        for name in ("max_tokens", "max_completion_tokens"):
            if name in self.body:
                return self.body[name]
        return None

    @property
    def most_input_tokens(self) -> int:
        """The most input tokens a tokenizer could count for this prompt: one a byte, and
        the client's allowance for each message's markers (and the reply's priming)."""
        texts = [m["content"] for m in self.body["messages"]]
        if self.path == ANTHROPIC_PATH and "system" in self.body:
            texts.append(self.body["system"])
        size = sum(len(text.encode()) for text in texts)
        return size + MESSAGE_OVERHEAD_TOKENS * (len(texts) + 1)


def openai_reply(text: str, prompt_tokens: int, completion_tokens: int, model: str = "m") -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def anthropic_reply(text: str, input_tokens: int, output_tokens: int, model: str = "m") -> dict:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def openai_error(message: str, type_: str = "invalid_request_error", code: str | None = None):
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def anthropic_error(message: str, type_: str = "invalid_request_error") -> dict:
    return {"type": "error", "error": {"type": type_, "message": message}}


def judge(user: str) -> str:
    if "Answer: Paris" in user:
        return "PASS The answer names Paris, the capital of France."
    return "FAIL The capital of France is Paris; a correct answer names it."


class FakeProvider:
    def __init__(self, *, openai_key: str = "", anthropic_key: str = "") -> None:
        self.openai_key = openai_key
        self.anthropic_key = anthropic_key
        self.requests: list[Request] = []
        self.script: deque[Reply] = deque()
        self.worst_case = False
        # When set, answers what the script does not: respond(request) -> the reply's text.
        self.respond = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def queue(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def _reply_for(self, path: str, headers: dict, body: dict) -> tuple[int, bytes, dict, float]:
        request = Request(path, headers, body, time.monotonic())
        with self._lock:
            self.requests.append(request)
            scripted = self._take(request)
        anthropic = path == ANTHROPIC_PATH
        key_error = self._key_error(anthropic, headers)
        if key_error is not None:
            return 401, json.dumps(key_error).encode(), {}, 0.0
        if anthropic and not isinstance(body.get("max_tokens"), int):
            return 400, json.dumps(anthropic_error("max_tokens: Field required")).encode(), {}, 0.0
        reply = scripted or Reply()
        body_out = reply.body
        if body_out is None:
            text = self.respond(request) if self.respond is not None else judge(request.user)
            used_in, used_out = self._usage(request, reply)
            make = anthropic_reply if anthropic else openai_reply
            body_out = make(text, used_in, used_out, body.get("model", ""))
        raw = body_out if isinstance(body_out, bytes) else json.dumps(body_out).encode()
        return reply.status, raw, reply.headers, reply.delay_s

    def _take(self, request: Request) -> Reply | None:
        """The first scripted reply meant for this request, taken off the script."""
        for reply in self.script:
            if reply.when is None or reply.when in request.user:
                self.script.remove(reply)
                return reply
        return None

    def _usage(self, request: Request, reply: Reply) -> tuple[int, int]:
        """(input, output) tokens the judge's answer reports."""
        cap = request.output_cap
        if cap is None:
            return reply.input_tokens, reply.output_tokens
        if self.worst_case:
            return request.most_input_tokens, cap
        return reply.input_tokens, min(reply.output_tokens, cap)

    def _key_error(self, anthropic: bool, headers: dict) -> dict | None:
        if anthropic:
            if headers.get("anthropic-version") != "2023-06-01":
                return anthropic_error("anthropic-version: header is required")
            if headers.get("x-api-key") != self.anthropic_key:
                return anthropic_error("invalid x-api-key", "authentication_error")
            return None
        if self.openai_key and headers.get("authorization") != f"Bearer {self.openai_key}":
            given = headers.get("authorization", "").removeprefix("Bearer ")
            return openai_error(
                f"Incorrect API key provided: {given}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                code="invalid_api_key",
            )
        return None

    def _handler_class(self):
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body leave in two writes: without this, Nagle holds the body
            # until the client's delayed ACK of the headers, some 40 ms a reply.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                if self.path not in (OPENAI_PATH, ANTHROPIC_PATH):
                    self._send(404, b'{"error": {"message": "no such route"}}', {})
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, body, extra, delay = provider._reply_for(
                    self.path, headers, json.loads(raw)
                )
                if delay:
                    time.sleep(delay)
                with contextlib.suppress(OSError):
                    self._send(status, body, extra)

            def _send(self, status: int, body: bytes, extra: dict) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler
