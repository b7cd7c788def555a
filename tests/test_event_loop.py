"""The event loop choice: uvloop where installed (auto), the standard loop on request, a bad name refused."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from assistant.event_loop import loop_factory, run


async def _which() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_asyncio_runs_the_standard_loop() -> None:
    assert loop_factory("asyncio") == ("asyncio", None)
    assert run(_which(), "asyncio").startswith("asyncio")


@pytest.mark.skipif(importlib.util.find_spec("uvloop") is None, reason="uvloop is not installed here")
def test_auto_takes_uvloop_when_installed() -> None:
    assert loop_factory("auto")[0] == "uvloop"
    assert run(_which(), "auto").startswith("uvloop")


def test_an_unknown_loop_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="auto, uvloop, asyncio"):
        loop_factory("trio")
