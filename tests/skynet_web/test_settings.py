from __future__ import annotations

import os
import subprocess
import sys

import pytest

from skynet_web.env import (
    ConfigError,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_token,
    env_url,
    local_secret_key,
    redis_py_url,
)
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("raw", "expected"), [("1", True), ("true", True), ("ON", True), ("no", False), ("0", False)]
)
def test_bool_accepts_the_usual_spellings(raw, expected):
    assert env_bool("X", not expected, {"X": raw}) is expected


def test_bool_rejects_a_typo_and_names_the_variable():
    with pytest.raises(ConfigError, match="DJANGO_DEBUG='ture'"):
        env_bool("DJANGO_DEBUG", False, {"DJANGO_DEBUG": "ture"})


def test_unset_or_blank_values_take_the_default():
    assert env_bool("X", True, {}) is True
    assert env_int("X", 7, {"X": "  "}) == 7
    assert env_list("X", ["a"], {}) == ["a"]


def test_int_checks_type_and_range():
    assert env_int("N", 1, {"N": "42"}, minimum=1, maximum=600) == 42
    with pytest.raises(ConfigError, match="not a whole number"):
        env_int("N", 1, {"N": "4.5"})
    with pytest.raises(ConfigError, match="above the maximum of 600"):
        env_int("N", 1, {"N": "601"}, maximum=600)
    with pytest.raises(ConfigError, match="below the minimum of 1"):
        env_int("N", 1, {"N": "0"}, minimum=1)


def test_float_checks_type_finiteness_and_range():
    assert env_float("F", 1.0, {"F": "0.25"}, minimum=0.0) == 0.25
    with pytest.raises(ConfigError, match="not a number"):
        env_float("F", 1.0, {"F": "cheap"})
    with pytest.raises(ConfigError, match="not a finite number"):
        env_float("F", 1.0, {"F": "nan"})
    with pytest.raises(ConfigError, match="below the minimum"):
        env_float("F", 1.0, {"F": "-1"}, minimum=0.0)


def test_list_splits_on_commas_and_rejects_empty_items():
    assert env_list("H", [], {"H": "a.example, b.example"}) == ["a.example", "b.example"]
    with pytest.raises(ConfigError, match="empty item"):
        env_list("H", [], {"H": "a.example,,b"})


def test_choice_names_the_allowed_values():
    assert env_choice("L", "en", ("en", "es"), {"L": "es"}) == "es"
    with pytest.raises(ConfigError, match="one of: en, es"):
        env_choice("L", "en", ("en", "es"), {"L": "fr"})


def test_url_checks_scheme_and_host():
    url = "postgres://postgres@127.0.0.1:5432/test"
    assert env_url("DATABASE_URL", None, ("postgres",), {"DATABASE_URL": url}) == url
    with pytest.raises(ConfigError, match="must start with one of redis://"):
        env_url("REDIS_URL", None, ("redis",), {"REDIS_URL": "http://localhost"})
    with pytest.raises(ConfigError, match="no host name"):
        env_url("REDIS_URL", None, ("redis",), {"REDIS_URL": "redis://"})


def test_token_is_empty_when_unset_and_must_be_long_and_header_safe():
    assert env_token("T", {}) == ""
    assert env_token("T", {"T": "a" * 24}) == "a" * 24
    with pytest.raises(ConfigError, match="T is 6 characters long; use at least 24") as short:
        env_token("T", {"T": "s3cret"})
    assert "s3cret" not in str(short.value)  # a secret is never echoed
    with pytest.raises(ConfigError, match="printable ASCII characters without spaces"):
        env_token("T", {"T": "two words " + "a" * 24})


def test_redis_url_is_spelt_for_redis_py():
    assert redis_py_url("redis+socket:///srv/var/redis.sock") == "unix:///srv/var/redis.sock"
    assert redis_py_url("redis://cache.example:6379/0") == "redis://cache.example:6379/0"
    assert redis_py_url("rediss://cache.example:6380/1") == "rediss://cache.example:6380/1"


def test_local_secret_key_is_random_private_and_stable(tmp_path):
    path = tmp_path / "secret_key"
    first = local_secret_key(path)
    assert len(first) >= 50
    assert local_secret_key(path) == first
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert local_secret_key(tmp_path / "other") != first


def _start_django(extra_env: dict[str, str]) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))
    }
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_bad_value_stops_start_up_with_a_clear_message():
    result = _start_django({"DJANGO_DEBUG": "ture"})
    assert result.returncode != 0
    assert "Configuration error: DJANGO_DEBUG='ture' is not a boolean" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_sign_up_rate_or_health_token_stops_start_up():
    result = _start_django({"SKYNET_SIGNUP_RATE_PER_HOUR": "five"})
    assert result.returncode != 0
    assert "SKYNET_SIGNUP_RATE_PER_HOUR='five' is not a whole number" in result.stderr
    result = _start_django({"SKYNET_HEALTH_TOKEN": "short"})
    assert result.returncode != 0
    assert "SKYNET_HEALTH_TOKEN is 5 characters long" in result.stderr


def test_a_sandbox_uid_of_root_stops_start_up():
    result = _start_django({"SKYNET_SANDBOX_UID": "0"})
    assert result.returncode != 0
    assert "SKYNET_SANDBOX_UID=0 is below the minimum of 1" in result.stderr


def test_a_bad_database_url_stops_start_up():
    result = _start_django({"DATABASE_URL": "mysql://db.example/x"})
    assert result.returncode != 0
    assert "DATABASE_URL must start with one of sqlite://" in result.stderr


def test_deploy_check_is_clean_with_production_settings():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
            "DJANGO_DEBUG": "0",
            "DJANGO_SECURE": "1",
            "DJANGO_SECRET_KEY": "x" * 20 + "production-only-random-looking-value-9f8e7d6c5b4a",
            "DJANGO_ALLOWED_HOSTS": "workbench.example.com",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
