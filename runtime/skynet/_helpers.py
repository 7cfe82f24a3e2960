"""A metric's helper modules, importable in its case process as in its repository.

The job of a metric that carries helper files (`{"src/evaluation.py": text, ...}`) hands
them to `install()` before metric.py runs. An import finder then serves them from that
mapping: `from src.evaluation import eval_score`, `import src.evaluation as ev`, a
package's relative imports (`from .utils import f` inside src/), and a folder without
`__init__.py` as a namespace package, as Python does on disk. Nothing is written: the
files exist only in this process's memory, so the metric can read its helpers (their
source, for a traceback) but cannot change what another case imports.

The finder sits before the path finder, as the folder of a script does on sys.path: a
helper shadows a library of the same name that is not imported yet, not one that is.
Stdlib only (importlib's machinery is imported with this module, before confinement).
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec, PathFinder

# The __path__ of a helper package: a place no disk has, so the path finder finds
# nothing in it and only this finder answers for its modules.
ROOT = "<helpers>"


class _Source:
    """The loader of one helper file: compiles and runs its text as its module."""

    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.source = source

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the default module

    def exec_module(self, module) -> None:
        # dont_inherit: the runtime's own `from __future__` imports must not leak in.
        code = compile(self.source, self.path, "exec", dont_inherit=True)
        exec(code, module.__dict__)

    def get_source(self, name: str) -> str:
        # linecache asks here, so a traceback printed by the metric shows helper lines.
        return self.source


class _Folder:
    """The loader of a folder with no __init__.py: an empty package, as a namespace
    package is."""

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module) -> None:
        return None


class HelperFinder:
    """Finds the modules and folders of a metric's helper files (see the module)."""

    def __init__(self, files: dict) -> None:
        self.sources: dict[str, tuple[str, str, bool]] = {}
        self.folders: set[str] = set()
        for path, text in files.items():
            if not (isinstance(path, str) and isinstance(text, str) and path.endswith(".py")):
                continue
            parts = path[:-3].split("/")
            is_package = parts[-1] == "__init__" and len(parts) > 1
            name = ".".join(parts[:-1] if is_package else parts)
            self.sources[name] = (path, text, is_package)
            for end in range(1, len(parts)):
                self.folders.add(".".join(parts[:end]))

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        found = self.sources.get(fullname)
        if found is not None:
            file_path, text, is_package = found
            spec = ModuleSpec(
                fullname, _Source(file_path, text), origin=file_path, is_package=is_package
            )
            spec.has_location = True  # __file__ is its path in the repository
            if is_package:
                spec.submodule_search_locations = [f"{ROOT}/{fullname.replace('.', '/')}"]
            return spec
        if fullname in self.folders:
            spec = ModuleSpec(fullname, _Folder(), is_package=True)
            spec.submodule_search_locations = [f"{ROOT}/{fullname.replace('.', '/')}"]
            return spec
        return None

    def invalidate_caches(self) -> None:
        return None


def install(files: object) -> HelperFinder | None:
    """Serve `files` ({path: text}) to imports from now on; None when there are none."""
    if not isinstance(files, dict) or not files:
        return None
    finder = HelperFinder(files)
    index = next(
        (i for i, found in enumerate(sys.meta_path) if found is PathFinder), len(sys.meta_path)
    )
    sys.meta_path.insert(index, finder)
    return finder
