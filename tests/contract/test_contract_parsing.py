"""contract.parsing: threads parsing at once, with no lock between them, each get their
tree, and the warnings the parser has about a metric's text reach nobody."""

from __future__ import annotations

import gc
import threading
import time

from contract import parsing

SOURCE = "x = [" + ", ".join(["(1, [2, {3: 4}])"] * 2000) + "]\n"


class _Finalised:
    """Garbage whose collection runs Python code: what can hand the GIL to another
    thread in the middle of a parse."""

    def __del__(self) -> None:
        for _ in range(50):
            pass


def test_threads_parsing_at_once_each_get_their_tree_while_garbage_is_collected():
    littering = threading.Event()
    failures: list[BaseException] = []

    def litter() -> None:
        while not littering.is_set():
            for _ in range(100):
                item = _Finalised()
                item.cycle = item
            time.sleep(0)

    def parse_many() -> None:
        for _ in range(15):
            try:
                assert len(parsing.parse(SOURCE).body[0].value.elts) == 2000
            except BaseException as exc:  # SystemError: AST constructor recursion depth ...
                failures.append(exc)

    litterer = threading.Thread(target=litter)
    litterer.start()
    parsers = [threading.Thread(target=parse_many) for _ in range(4)]
    for thread in parsers:
        thread.start()
    for thread in parsers:
        thread.join()
    littering.set()
    litterer.join()
    assert failures == []
    assert gc.isenabled()  # collection is back once the last parse ended
