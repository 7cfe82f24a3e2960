"""Strict parsers for environment variables.

Every setting read from the environment goes through one of these, so a typo such as
DJANGO_DEBUG=ture stops start-up with a message naming the variable, instead of being
silently read as False.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from skynet_web.private_files import private_dir


class ConfigError(Exception):
    """A variable in the environment has a value the site cannot use."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def env_bool(name: str, default: bool, env: Mapping[str, str] = os.environ) -> bool:
    value = _raw(env, name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(
        f"{name}={value!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off."
    )


def env_int(
    name: str,
    default: int,
    env: Mapping[str, str] = os.environ,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    value = _raw(env, name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a whole number.") from None
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name}={number} is below the minimum of {minimum}.")
    if maximum is not None and number > maximum:
        raise ConfigError(f"{name}={number} is above the maximum of {maximum}.")
    return number


def env_float(
    name: str,
    default: float,
    env: Mapping[str, str] = os.environ,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    value = _raw(env, name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a number.") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ConfigError(f"{name}={value!r} is not a finite number.")
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name}={number} is below the minimum of {minimum}.")
    if maximum is not None and number > maximum:
        raise ConfigError(f"{name}={number} is above the maximum of {maximum}.")
    return number


def env_str(name: str, default: str, env: Mapping[str, str] = os.environ) -> str:
    value = _raw(env, name)
    return default if value is None else value


def env_list(name: str, default: list[str], env: Mapping[str, str] = os.environ) -> list[str]:
    value = _raw(env, name)
    if value is None:
        return list(default)
    items = [item.strip() for item in value.split(",")]
    if any(not item for item in items):
        raise ConfigError(
            f"{name}={value!r} has an empty item; separate values with single commas."
        )
    return items


def env_choice(
    name: str, default: str, choices: tuple[str, ...], env: Mapping[str, str] = os.environ
) -> str:
    value = _raw(env, name)
    if value is None:
        return default
    if value not in choices:
        raise ConfigError(f"{name}={value!r} must be one of: {', '.join(choices)}.")
    return value


def env_url(
    name: str, default: str | None, schemes: tuple[str, ...], env: Mapping[str, str] = os.environ
) -> str | None:
    value = _raw(env, name)
    if value is None:
        return default
    parts = urlsplit(value)
    if parts.scheme not in schemes:
        raise ConfigError(
            f"{name} must start with one of {', '.join(s + '://' for s in schemes)}; "
            f"got {parts.scheme or 'no scheme'!r}."
        )
    if parts.scheme not in ("sqlite", "redis+socket", "unix") and not parts.hostname:
        raise ConfigError(f"{name} has no host name.")
    return value


def env_token(name: str, env: Mapping[str, str] = os.environ, *, min_length: int = 24) -> str:
    """A shared secret that callers present in a header; empty when unset.

    Too short a token can be guessed, and one with spaces or other characters a header
    cannot carry would never match, so both stop start-up instead.
    """
    value = _raw(env, name)
    if value is None:
        return ""
    if not all(33 <= ord(char) <= 126 for char in value):
        raise ConfigError(f"{name} may hold only printable ASCII characters without spaces.")
    if len(value) < min_length:
        raise ConfigError(
            f"{name} is {len(value)} characters long; use at least {min_length}, "
            "e.g. from: python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return value


def redis_py_url(url: str) -> str:
    """A REDIS_URL as redis-py spells it: kombu's redis+socket:///path is unix:///path."""
    parts = urlsplit(url)
    if parts.scheme != "redis+socket":
        return url
    # Spelt out: urlunsplit drops the // of an unknown scheme with no host.
    return f"unix://{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def local_secret_key(path: os.PathLike[str] | str) -> str:
    """A random key kept in a private file, for a single machine that set none.

    Every process on the machine (web, worker, commands) reads the same file, so sessions
    signed by one are valid in the others; nobody ships a known default key.
    """
    path = Path(path)
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    private_dir(path.parent)
    key = secrets.token_urlsafe(50)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race; use its key
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key
