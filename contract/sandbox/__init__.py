"""How a child process that runs untrusted code is confined.

The runner asks this module for the exact command line and environment of a child, starts it
itself, and asks it again to make sure nothing is left when the check is over::

    cfg = SandboxConfig()                      # or SandboxConfig.for_slot(n)
    launch = prepare(runtime_dir, "skynet_child.py", [str(fd)], timeout_s=T, config=cfg)
    proc = subprocess.Popen(launch.argv, env=launch.env, pass_fds=(fd,),
                            start_new_session=True, stdin=DEVNULL, stdout=PIPE, stderr=PIPE)
    send job frame {"limits": limits_for(T, cfg), ...} on the socket
    ... on timeout, or always once done:  kill(proc, launch)

and the child's first statement is `skynet._confine.apply(job["limits"])`.

Layers (stable codes, see `LAYERS`), from the outside in:

* ``namespaces``: bubblewrap, started *as the sandbox uid* so it works through unprivileged
  user namespaces. New pid, network, ipc, uts, mount, cgroup and user namespaces; the child
  sees only /usr (the interpreter), the runtime folder at /opt/skynet (read-only, with
  pyseccomp.py bound next to it), an empty size-capped /tmp, a private /proc and a minimal
  /dev. No /work, /root, /etc/shadow or database. --die-with-parent.
* ``unprivileged_uid``: the sandbox runs as uid 65534 (or one uid per slot), switched with
  util-linux `setpriv` in front of the command, so `Popen` keeps its fast vfork path (no
  preexec_fn, no user=). Without setpriv a two-line Python trampoline does the same.
* ``clean_env``: the environment is built from scratch (`sandbox_env()`), never inherited.
* ``rlimits``, ``seccomp``, ``pdeathsig``: set inside the child by `_confine.apply()`.

Where bubblewrap or user namespaces do not work, the launch falls back to the other layers,
logs a loud warning on the "contract.sandbox" logger once per process, and says so in
`Launch.layers`; `self_test()` probes what actually holds.

Process limits and uids: RLIMIT_NPROC is counted per uid *and per user namespace*. Under
bubblewrap each sandbox has its own user namespace, so the shared uid 65534 is fine: a fork
bomb in one check hits its own limit and never starves the next (measured on this kernel).
Without bubblewrap the count is shared by every process of the uid, so concurrent slots
should each use their own uid: `SandboxConfig.for_slot(n)` gives uid 60000+n and lets
`kill()` sweep every process of that uid.

The package, one job per module: `config` (SandboxConfig, Launch, interpreter choice,
sandbox_env), `bwrap` (the bubblewrap command line), `detect` (bwrap/setpriv/pyseccomp
detection, the cached plan, active_layers), `launch` (limits_for, prepare, precompile,
runtime binds), `processes` (/proc snapshots, kill, reap_leftovers, adopt_orphans) and
`selftest` (self_test). Everything the runner and the tests use is re-exported here.
"""

from __future__ import annotations

from contract.sandbox.config import (
    CHILD_LAYERS,
    DEFAULT_RUNTIME_DIR,
    LAYERS,
    NOBODY,
    RUNTIME_MOUNT,
    SLOT_UID_BASE,
    Launch,
    SandboxConfig,
    sandbox_env,
)
from contract.sandbox.detect import _DROP_PRIVILEGES_SRC as _DROP_PRIVILEGES_SRC
from contract.sandbox.detect import active_layers
from contract.sandbox.launch import limits_for, prepare
from contract.sandbox.processes import adopt_orphans, kill, reap_leftovers
from contract.sandbox.selftest import self_test

__all__ = [
    "CHILD_LAYERS",
    "DEFAULT_RUNTIME_DIR",
    "LAYERS",
    "NOBODY",
    "RUNTIME_MOUNT",
    "SLOT_UID_BASE",
    "Launch",
    "SandboxConfig",
    "active_layers",
    "adopt_orphans",
    "kill",
    "limits_for",
    "prepare",
    "reap_leftovers",
    "sandbox_env",
    "self_test",
]
