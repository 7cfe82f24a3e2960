"""Provider clients: one chat call over real HTTP, with timeouts, retries and clear errors.

Two wire formats: OpenAI chat completions (providers "openai" and "openai_compatible")
and Anthropic messages. Every request carries an output cap (the budget's allowance, or
the model's max_output_tokens): Anthropic's and OpenAI-compatible servers' `max_tokens`,
OpenAI's `max_completion_tokens`. `ProviderClient.complete()` returns a Completion (text
and token counts) or raises ProviderError with a stable `code` and a message:

    unauthorized    401 / 403
    not_found       404 (often: the model name is wrong for this account or server)
    bad_request     another 4xx (a request the provider refused, e.g. too long)
    rate_limited    429 on every attempt (or a spent quota)
    server_error    5xx on every attempt, or the connection broke mid-answer
    unreachable     no connection could be made on any attempt
    timeout         no complete answer within the timeout
    bad_response    an answer that is not the documented JSON
    refused         the model declined to answer (OpenAI's "refusal")

429, 5xx and connection failures are retried with exponential backoff and jitter,
honouring Retry-After (capped); other errors are final at once.

An HTTP error's message is "HTTP <status> <provider's error code>: <provider's message>".
Every message reaches the metric, so it is scrubbed of the key in every form a provider
may echo it (redact.scrub) and capped at MAX_MESSAGE_CHARS.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx

from providers.catalogue import Model
from providers.redact import scrub

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
MAX_RESPONSE_BYTES = 8 << 20
MAX_MESSAGE_CHARS = 1000
# Scrubbing looks at no more than this much of a provider's message (it is cut to
# MAX_MESSAGE_CHARS after), so a huge error body costs little.
MAX_SCRUBBED_CHARS = 16 * MAX_MESSAGE_CHARS
# Tokens one message adds around its text (role markers, separators, the reply's
# priming), counted generously: OpenAI's and Anthropic's formats add a few, local chat
# templates a dozen or so.
MESSAGE_OVERHEAD_TOKENS = 16
_PROVIDER_CODE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")

ERROR_CODES = (
    "unauthorized",
    "not_found",
    "bad_request",
    "rate_limited",
    "server_error",
    "unreachable",
    "timeout",
    "bad_response",
    "refused",
)


class ProviderError(Exception):
    """A call that did not produce an answer; `code` is one of ERROR_CODES."""

    def __init__(self, code: str, message: str = "", status: int | None = None) -> None:
        super().__init__(code, message, status)
        self.code = code
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" if self.message else self.code


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class RetryPolicy:
    """Up to max_attempts tries; the n-th wait is base * 2**(n-1), capped, times a jitter
    of 0.5-1.0, unless the provider's Retry-After (capped at max_retry_after_s) says more."""

    max_attempts: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 20.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        backoff *= random.uniform(0.5, 1.0)
        if retry_after is not None:
            return max(backoff, min(retry_after, self.max_retry_after_s))
        return backoff


def user_text(input: object) -> str:
    """The user message for llm()'s `input`: a string as it is, anything else as JSON."""
    if isinstance(input, str):
        return input
    return json.dumps(input, ensure_ascii=False)


def prompt_parts(instructions: str, input: object) -> tuple[str | None, str]:
    """(system, user) as sent: `input` None sends the instructions alone, as the user
    message; otherwise they are the system prompt and `input` the user message."""
    if input is None:
        return None, instructions
    return instructions, user_text(input)


CHAT_ROLES = ("system", "user", "assistant")


def conversation(
    instructions: str, input: object = None, messages: list[dict] | None = None
) -> tuple[str | None, list[dict]]:
    """(system, turns) as sent: the system prompt or None, and the user and assistant
    messages in order. From `messages` (a conversation: [{"role", "content"}], roles of
    CHAT_ROLES), its system messages joined into the system prompt; a conversation of
    system messages only sends them as the user message. Otherwise prompt_parts'."""
    if messages is None:
        system, user = prompt_parts(instructions, input)
        return system, [{"role": "user", "content": user}]
    systems = [m["content"] for m in messages if m["role"] == "system"]
    turns = [
        {"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"
    ]
    if not turns:
        return None, [{"role": "user", "content": "\n\n".join(systems)}]
    return ("\n\n".join(systems) if systems else None), turns


def is_conversation(messages: object) -> bool:
    """Whether `messages` is a conversation `conversation()` can send."""
    return (
        isinstance(messages, list)
        and bool(messages)
        and all(
            isinstance(m, dict)
            and m.get("role") in CHAT_ROLES
            and isinstance(m.get("content"), str)
            for m in messages
        )
    )


def prompt_token_bound(instructions: str, input: object, messages: list[dict] | None = None) -> int:
    """An upper bound of the prompt's input tokens, whatever the tokenizer.

    Every token of a byte-level tokenizer (those of OpenAI, Anthropic and the open
    models) stands for at least one byte of UTF-8 text, so the UTF-8 length of the
    texts as sent bounds their tokens from above; each message, and the priming of the
    reply, adds at most MESSAGE_OVERHEAD_TOKENS of markers.
    """
    system, turns = conversation(instructions, input, messages)
    texts = [turn["content"] for turn in turns]
    if system is not None:
        texts.append(system)
    size = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)
    return size + MESSAGE_OVERHEAD_TOKENS * (len(texts) + 1)


def base_url(model: Model, env: Mapping[str, str]) -> str:
    """Where the model's API lives: the catalogue's base_url, or the SDKs' env variables."""
    if model.provider == "openai":
        url = env.get("OPENAI_BASE_URL", "").strip() or OPENAI_DEFAULT_BASE
    elif model.provider == "anthropic":
        url = env.get("ANTHROPIC_BASE_URL", "").strip() or ANTHROPIC_DEFAULT_BASE
    else:
        url = model.base_url
    return url.rstrip("/")


class ProviderClient:
    """Calls one model. `sleep` is injectable only so a caller can account for waits."""

    def __init__(
        self,
        model: Model,
        *,
        api_key: str,
        env: Mapping[str, str],
        timeout_s: float,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.base = base_url(model, env)
        # trust_env keeps the process's proxy and CA settings, as the official SDKs do.
        self._http = httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ProviderClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one call ---------------------------------------------------------------------

    def complete(
        self,
        instructions: str,
        input: object = None,
        *,
        messages: list[dict] | None = None,
        max_output_tokens: int | None = None,
    ) -> Completion:
        """Ask the model; `input` None sends the instructions alone, as the user message.
        With `messages` (a conversation, see conversation()) those are sent instead, as
        messages, and the instructions and input are not.

        `max_output_tokens` caps the reply (a budget's Reservation.output_tokens); None
        means the model's max_output_tokens.
        """
        cap = self.model.max_output_tokens if max_output_tokens is None else max_output_tokens
        system, turns = conversation(instructions, input, messages)
        if self.model.provider == "anthropic":
            url, headers, body = self._anthropic_request(system, turns, cap)
            parse = _parse_anthropic
        else:
            url, headers, body = self._openai_request(system, turns, cap)
            parse = _parse_openai
        try:
            data = self._post_with_retries(url, headers, body)
            return parse(data)
        except ProviderError as exc:
            # HTTP errors were scrubbed before their cuts; this is for the rest (a
            # connection error, a refusal), and is cut after scrubbing.
            message = self._clean(exc.message)[:MAX_MESSAGE_CHARS]
            raise ProviderError(exc.code, message, exc.status) from None

    def _openai_request(
        self, system: str | None, turns: list[dict], cap: int
    ) -> tuple[str, dict, dict]:
        messages = list(turns)
        if system is not None:
            messages.insert(0, {"role": "system", "content": system})
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        # OpenAI replaced max_tokens by max_completion_tokens (the reasoning models refuse
        # the old name); compatible servers (Ollama, vLLM, llama.cpp) know max_tokens.
        cap_name = "max_completion_tokens" if self.model.provider == "openai" else "max_tokens"
        body = {"model": self.model.api_model, "messages": messages, cap_name: cap}
        return f"{self.base}/chat/completions", headers, body

    def _anthropic_request(
        self, system: str | None, turns: list[dict], cap: int
    ) -> tuple[str, dict, dict]:
        body: dict = {"model": self.model.api_model, "max_tokens": cap}
        if system is not None:
            body["system"] = system
        body["messages"] = list(turns)
        headers = {
            "content-type": "application/json",
            "x-api-key": self.api_key,
            "anthropic-version": ANTHROPIC_VERSION,
        }
        return f"{self.base}/v1/messages", headers, body

    # -- HTTP, retries ----------------------------------------------------------------

    def _post_with_retries(self, url: str, headers: dict, body: dict) -> object:
        attempts = max(1, self.retry.max_attempts)
        for attempt in range(1, attempts + 1):
            try:
                return self._post(url, headers, body)
            except _Retryable as exc:
                if attempt == attempts:
                    raise exc.error from None
                self.sleep(self.retry.delay(attempt, exc.retry_after))
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(self, url: str, headers: dict, body: dict) -> object:
        deadline = time.monotonic() + self.timeout_s
        try:
            with self._http.stream("POST", url, headers=headers, json=body) as response:
                raw = _read_limited(response, deadline, self.timeout_s)
        except httpx.ConnectTimeout:
            raise _Retryable(ProviderError("unreachable", f"could not connect to {url}")) from None
        except httpx.TimeoutException:
            raise ProviderError(
                "timeout", f"no answer from {url} within {self.timeout_s:g} s"
            ) from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ProviderError("unreachable", f"cannot call {url}: {exc}") from None
        except httpx.ConnectError as exc:
            message = f"could not connect to {url}: {exc}"
            raise _Retryable(ProviderError("unreachable", message)) from None
        except httpx.TransportError as exc:
            message = f"the connection to {url} broke: {str(exc) or type(exc).__name__}"
            raise _Retryable(ProviderError("server_error", message)) from None
        status = response.status_code
        if 200 <= status < 300:
            try:
                return json.loads(raw)
            except ValueError:
                snippet = _snippet(self._clean(_text(raw)))
                message = f"the reply is not JSON: {snippet}"
                raise ProviderError("bad_response", message, status) from None
        text, error_code = _error_message(raw, self._clean)
        message = _http_error_message(status, error_code, text, self._clean)
        if status == 429:
            error = ProviderError("rate_limited", message, status)
            if error_code == "insufficient_quota":  # no wait will help
                raise error
            raise _Retryable(error, _retry_after(response.headers))
        if status >= 500:
            raise _Retryable(
                ProviderError("server_error", message, status), _retry_after(response.headers)
            )
        if status in (401, 403):
            raise ProviderError("unauthorized", message, status)
        if status == 404:
            raise ProviderError("not_found", message, status)
        if 400 <= status < 500:
            raise ProviderError("bad_request", message, status)
        raise ProviderError("bad_response", f"unexpected HTTP status {status}", status)

    def _clean(self, text: str) -> str:
        """`text` without the key in any form: the message reaches the metric."""
        if len(text) > MAX_SCRUBBED_CHARS:
            # Cut at a space, so that no half of an echoed key is left at the end.
            head = text[:MAX_SCRUBBED_CHARS].rsplit(None, 1)
            text = head[0] if head else ""
        return scrub(text, self.api_key)


class _Retryable(Exception):
    def __init__(self, error: ProviderError, retry_after: float | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.retry_after = retry_after


def _read_limited(response: httpx.Response, deadline: float, timeout_s: float) -> bytes:
    """The decoded body, at most MAX_RESPONSE_BYTES, read within the call's deadline."""
    chunks, size = [], 0
    try:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise ProviderError(
                    "bad_response", f"the reply is larger than {MAX_RESPONSE_BYTES} bytes"
                )
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout(f"no complete answer within {timeout_s:g} s")
    except httpx.DecodingError:
        raise ProviderError("bad_response", "the reply's content encoding is broken") from None
    return b"".join(chunks)


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the provider asked us to wait (retry-after-ms, Retry-After seconds or date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").strip()


def _snippet(text: str, limit: int = 200) -> str:
    return text[:limit] + ("…" if len(text) > limit else "") if text else "(empty)"


def _http_error_message(
    status: int, code: str | None, message: str, clean: Callable[[str], str]
) -> str:
    """The message of an HTTP error, "HTTP 401 invalid_api_key: <message>": the status,
    the provider's error code when it is a plain identifier (and no part of the key),
    and the provider's message, already clean."""
    prefix = f"HTTP {status}"
    if code and _PROVIDER_CODE.fullmatch(code) and clean(code) == code:
        prefix += f" {code}"
    return f"{prefix}: {message}" if message else prefix


def _error_message(raw: bytes, clean: Callable[[str], str]) -> tuple[str, str | None]:
    """The provider's own message from an error body, passed through `clean` (the key's
    scrubber) before any cut, and its error code if it gave one.

    OpenAI and Anthropic: {"error": {"message": ..., "type"/"code": ...}}; Ollama and
    others: {"error": "..."} or {"message": "..."}; anything else is quoted.
    """
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            code = error.get("code") if isinstance(error.get("code"), str) else None
            return clean(error["message"]), code or (
                error.get("type") if isinstance(error.get("type"), str) else None
            )
        if isinstance(error, str) and error:
            return clean(error), None
        if isinstance(data.get("message"), str) and data["message"]:
            return clean(data["message"]), None
    text = _text(raw)
    return (_snippet(clean(text)) if text else ""), None


def _count(usage: object, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _parse_openai(data: object) -> Completion:
    try:
        message = data["choices"][0]["message"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        raise ProviderError("bad_response", "the reply has no choices[0].message") from None
    if not isinstance(message, dict):
        raise ProviderError("bad_response", "choices[0].message is not an object")
    content = message.get("content")
    if not isinstance(content, str):
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            raise ProviderError("refused", refusal)
        raise ProviderError("bad_response", "choices[0].message.content is not text")
    usage = data.get("usage")  # type: ignore[union-attr]
    return Completion(content, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))


def _parse_anthropic(data: object) -> Completion:
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(content, list):
        raise ProviderError("bad_response", "the reply has no content list")
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    if content and not texts:
        raise ProviderError("bad_response", "the reply's content has no text block")
    usage = data.get("usage")  # type: ignore[union-attr]
    return Completion("".join(texts), _count(usage, "input_tokens"), _count(usage, "output_tokens"))
