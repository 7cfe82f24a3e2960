"""numpy where a process's address space cannot hold it: refused with a reason, not a crash.

numpy maps about 100 MB of address space when it loads (OpenBLAS's 32 MB buffer and its
code), and OpenBLAS ends the whole process with exit(1) when it cannot map that buffer: a
case would die with nothing said. Without a cgroup each sandboxed process gets 1/8 of the
check's memory (64 MB of the default 512), so there, and only where the room left is too
small, importing numpy raises NeedsMemory instead, which the case reports as data
("library_needs_memory"); every library that needs numpy (scipy, pandas, scikit-learn…)
imports it first and so fails the same way.
"""

from __future__ import annotations

import resource

# Address space numpy's import adds to a case process, with some room to use it.
NUMPY_MB = 96


class NeedsMemory(ImportError):
    """`name` needs `needed_mb` MiB more address space than the process has left."""

    def __init__(self, name: str, needed_mb: int, limit_mb: int) -> None:
        super().__init__(
            f"{name} needs about {needed_mb} MB more address space than the {limit_mb} MB "
            "each process of this sandbox may use",
            name=name,
        )
        self.needed_mb = needed_mb
        self.limit_mb = limit_mb


def _mapped_bytes() -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class Guard:
    """A meta path finder that finds nothing: it refuses numpy where it cannot load."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname != "numpy":
            return None
        limit, _hard = resource.getrlimit(resource.RLIMIT_AS)
        mapped = _mapped_bytes()
        if limit == resource.RLIM_INFINITY or mapped is None:
            return None
        if limit - mapped < NUMPY_MB << 20:
            raise NeedsMemory(fullname, NUMPY_MB, limit >> 20)
        return None


def find(exc: BaseException) -> NeedsMemory | None:
    """The NeedsMemory that `exc` is or was raised from (a library that imports numpy
    may wrap it in an ImportError of its own), or None."""
    try:
        for _ in range(20):
            if exc is None:
                break
            if type(exc) is NeedsMemory:
                return exc
            exc = exc.__cause__ or exc.__context__
    except BaseException:  # noqa: B036 - a metric's exception class may make these raise
        pass
    return None


def install(limit_below: int) -> None:
    """Put the guard first on sys.meta_path when the address-space limit is below
    `limit_below` bytes (elsewhere numpy has room and nothing is looked at)."""
    import sys

    limit, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if limit != resource.RLIM_INFINITY and limit < limit_below and Guard not in sys.meta_path:
        sys.meta_path.insert(0, Guard)
