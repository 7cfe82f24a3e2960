"""DSPy in metric.py, in a case's child: dspy's LM is the metric model.

A metric may judge with a dspy.Module of its own (a dspy.ChainOfThought over a Signature,
as DSPy's GEPA tutorials do). `watch()`, called before metric.py loads, waits for dspy to
be imported (by metric.py, or by anything it imports, at load or in score) and then sets
it up as a DSPy program's run is set up (skynet._dspy_program: caches off, nothing
reaching for the network), with a default LM, dspy.settings.lm, named MODEL: its engine
sends each request's conversation, as messages, to the parent over the child's socket
(skynet._model.chat, the channel llm() uses), and the worker answers it as it answers
llm(): from the metric model, through its gateway, metered, priced and held to the
check's (or evaluation's, or run's) budget, the key never in the sandbox. Without a
metric model a call fails as llm() does (ModelError "no_metric_model"), and the case with
it.

An LM metric.py builds itself, dspy.LM("openai/gpt-4.1-mini", api_key=...), could not
reach its provider from here (no network, no key): the call of every such LM, whichever
way it is given to dspy (dspy.configure, dspy.context, set_lm), goes to the metric model
too. Only dspy.LMs that DSPy would connect to a provider are redirected: one with an
engine of its own (a custom engine, DSPy's DummyLM) reaches none and is left alone, as
is a language model class that is not a dspy.LM. `own_lms(namespace)` names the
redirected LMs metric.py set as it loaded, for the check to say that the metric model
answers them instead.

Text only: a request with images, files, tool calls or native tools is refused
(UnsupportedRequest), as the channel carries text messages.
"""

from __future__ import annotations

import os
import sys

from skynet._model import chat
from skynet.safe import NAME_LIMIT, safe_text

MODEL = "skynet/metric"
# At most this many of metric.py's own LMs are named.
OWN_LMS_LIMIT = 5

# The LM set up as dspy's default, once dspy is here.
_installed: list = []


class UnsupportedRequest(ValueError):
    """A request the metric model's channel cannot carry (not text messages)."""


def _text(part: object) -> str:
    from dspy import lm15

    if not isinstance(part, lm15.TextPart):
        raise UnsupportedRequest(
            "the metric model takes text messages only (no images, files or tool calls)"
        )
    return part.text


def conversation(request) -> list[dict]:
    """A dspy.lm15 Request as the channel's messages: its system prompt as a "system"
    message, then each message's text under its role (a developer message is a system
    one)."""
    if request.tools:
        raise UnsupportedRequest("the metric model takes no tools")
    messages = []
    system = request.system
    if system is not None:
        text = system if isinstance(system, str) else "".join(_text(p) for p in system)
        if text:
            messages.append({"role": "system", "content": text})
    for message in request.messages:
        role = {"developer": "system"}.get(message.role, message.role)
        if role not in ("system", "user", "assistant"):
            raise UnsupportedRequest(f"the metric model takes no {message.role} messages")
        messages.append({"role": role, "content": "\n".join(_text(p) for p in message.parts)})
    return messages


class ChatEngine:
    """A dspy engine (complete(Request) -> Response) whose answers come from the metric
    model, over the channel."""

    def complete(self, request):
        from dspy import lm15

        text = chat(conversation(request))
        return lm15.Response(
            id=None,
            model=MODEL,
            message=lm15.Message.assistant([lm15.TextPart(text)]),
            finish_reason="stop",
            usage=lm15.Usage(),
        )

    def stream(self, request):
        from dspy import lm15

        return lm15.response_to_events(self.complete(request))

    def close(self) -> None:
        pass


class AsyncChatEngine:
    """ChatEngine for dspy's async calls (acall, asyncify): the same call, in a thread."""

    def __init__(self, engine: ChatEngine) -> None:
        self.engine = engine

    async def complete(self, request):
        import asyncio

        return await asyncio.to_thread(self.engine.complete, request)

    async def stream(self, request):
        from dspy import lm15

        for event in lm15.response_to_events(await self.complete(request)):
            yield event

    async def aclose(self) -> None:
        pass

    def close(self) -> None:
        pass


def _redirected(lm: object) -> bool:
    """Whether DSPy would connect `lm` to a provider: a dspy.LM whose engine is DSPy's
    choice ("auto", "lm15", "litellm"), not an object of its own."""
    dspy = sys.modules.get("dspy")
    return (
        dspy is not None
        and isinstance(lm, dspy.LM)
        and isinstance(getattr(lm, "_engine_spec", None), str)
    )


def _redirect(engine: ChatEngine, async_engine: AsyncChatEngine) -> None:
    """Every call of an LM that DSPy would connect to a provider goes to `engine`."""
    from dspy.clients import execution

    choose = execution._engine

    def _engine(lm, call, asynchronous):
        if not (call.managed and _redirected(lm)):
            return choose(lm, call, asynchronous)
        with execution.error_boundary(lm.model):
            # The request as DSPy's own engines get it, without the LM's connection
            # (its key, address and timeout are DSPy's client settings, dropped here).
            return (async_engine if asynchronous else engine), execution._canonical(call), None

    execution._engine = _engine


def set_up(dspy) -> None:
    """dspy as a metric uses it here: caches off, the metric model its default LM and
    the model of every LM that would go to a provider."""
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    engine = ChatEngine()
    async_engine = AsyncChatEngine(engine)
    lm = dspy.LM(MODEL, engine=engine, async_engine=async_engine, cache=False, num_retries=0)
    # Not dspy.configure: that makes this thread the only one that may configure dspy,
    # and the metric may configure it from another.
    sys.modules["dspy.dsp.utils.settings"].main_thread_config["lm"] = lm
    _redirect(engine, async_engine)
    _installed[:] = [lm]


def _set_up_quietly(dspy) -> None:
    try:
        set_up(dspy)
    except Exception:  # a dspy that cannot be set up says so at its first call
        pass


class _SetsUp:
    """dspy's own loader, which sets dspy up once dspy's __init__ has run."""

    def __init__(self, loader) -> None:
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        # dspy sees its own loader, as if nothing stood between.
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Watch)]
        _quiet_environment()
        self.loader.exec_module(module)
        _set_up_quietly(module)

    def __getattr__(self, name: str):
        return getattr(self.loader, name)


class _Watch:
    """A finder on sys.meta_path that finds nothing itself: dspy it finds with the
    finders after it, with a loader that has it set up once loaded (and takes this
    finder away: a mere importlib.util.find_spec("dspy") leaves it watching)."""

    def find_spec(self, name, path=None, target=None):
        if name != "dspy":
            return None
        for finder in list(sys.meta_path):
            if isinstance(finder, _Watch):
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _SetsUp(spec.loader)
        return spec

    def invalidate_caches(self) -> None:
        pass


def _quiet_environment() -> None:
    """What dspy and litellm read as they load: a cache in the sandbox's /tmp, and the
    model price list they carry rather than one fetched from the network. Set only when
    the metric imports dspy: a metric that does not keeps the sandbox's bare environment."""
    os.environ.setdefault("DSPY_CACHEDIR", "/tmp/.dspy_cache")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def watch() -> None:
    """Set dspy up for the metric as soon as it is imported (now, if it already is)."""
    dspy = sys.modules.get("dspy")
    if dspy is not None:
        _quiet_environment()
        _set_up_quietly(dspy)
    else:
        sys.meta_path.insert(0, _Watch())


def own_lms(namespace: dict) -> list[str]:
    """The models of the LMs metric.py set as it loaded that the metric model answers
    instead: dspy's default LM if it is no longer ours, an LM given to a predictor of a
    module-level dspy.Module (set_lm), and a module-level dspy.LM. Each named once."""
    dspy = sys.modules.get("dspy")
    if dspy is None or not _installed:
        return []
    found: list[str] = []

    def add(lm: object) -> None:
        if lm is None or lm is _installed[0] or not _redirected(lm):
            return
        name = safe_text(getattr(lm, "model", ""), NAME_LIMIT)
        if name not in found and len(found) < OWN_LMS_LIMIT:
            found.append(name)

    try:
        add(dspy.settings.lm)
        for value in list(namespace.values()):
            if isinstance(value, dspy.Module):
                for _name, predictor in value.named_predictors():
                    add(getattr(predictor, "lm", None))
            else:
                add(value)
    except BaseException:  # noqa: B036 - a hostile module's attributes: name what was found
        pass
    return found
