"""skynet.llm(): ask the parent's metric model, over the child's socket."""

from __future__ import annotations

from skynet import _state, wire


class ModelError(Exception):
    """The metric model could not answer; `code` says why (e.g. "no_metric_model")."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" if self.message else self.code


def llm(instructions: str, input: object = None) -> str:
    """Send instructions (and optional JSON input) to the metric model; return its text.

    Raises ModelError with the parent's error code, or "no_channel" outside a
    check (unless skynet.dspy_adapter gave it a model of the user's), "request_too_large",
    "channel_closed" or "protocol".
    """
    if not isinstance(instructions, str):
        raise TypeError("llm_instructions_not_string")
    request = {"type": "llm", "instructions": instructions, "input": input}
    try:
        frame = wire.encode(request, limit=wire.MAX_REQUEST_FRAME)
    except wire.ProtocolError:
        raise ModelError("request_too_large") from None
    except (TypeError, ValueError):
        raise TypeError("llm_input_not_json") from None
    return _ask(frame, lambda local: local(instructions, input))


def chat(messages: list[dict]) -> str:
    """Send a conversation to the metric model as messages; return its reply's text.

    `messages` is [{"role": "system" | "user" | "assistant", "content": str}, ...]
    (skynet.wire.chat_messages): what DSPy's LM in a metric sends (skynet._dspy_metric).
    It goes over the channel llm() uses and the parent answers it the same way; it
    raises what llm() raises. Outside a check, the user's model gets the conversation
    as one text (skynet.wire.chat_text).
    """
    checked = wire.chat_messages(messages)
    if checked is None:
        raise TypeError("chat_messages_not_a_conversation")
    try:
        frame = wire.encode({"type": "llm", "messages": checked}, limit=wire.MAX_REQUEST_FRAME)
    except wire.ProtocolError:
        raise ModelError("request_too_large") from None
    return _ask(frame, lambda local: local(wire.chat_text(checked), None))


def _ask(frame: bytes, locally) -> str:
    """Send one encoded "llm" frame and wait for its reply: the text, or ModelError.
    Without a channel, `locally(model)` asks the user's model, if there is one."""
    sock = _state.channel()
    if sock is None:
        local = _state.local_model()
        if local is not None:  # the bundle's DSPy adapter: a model the user configured
            return locally(local)
        raise ModelError("no_channel")
    with _state.lock:
        try:
            sock.sendall(frame)  # type: ignore[attr-defined]
            reply = _state.receive("llm_reply")
        except wire.ProtocolError:
            raise ModelError("protocol") from None
        except OSError:
            raise ModelError("channel_closed") from None
    if reply is None:
        raise ModelError("channel_closed")
    if reply.get("type") != "llm_reply":
        raise ModelError("protocol")
    text = reply.get("text")
    if isinstance(text, str):
        return text
    code = reply.get("error")
    message = reply.get("message")
    raise ModelError(
        code if isinstance(code, str) else "protocol",
        message if isinstance(message, str) else "",
    )
