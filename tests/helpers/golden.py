"""Two JSON documents compared key by key (the golden summary's test, and the report
benchmark's check of its summary against the golden copy)."""

from __future__ import annotations

from typing import Any


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Every key path where ``got`` and ``want`` differ (both JSON values)."""
    if isinstance(got, dict) and isinstance(want, dict):
        out = [f"{path}/{k}: missing" for k in want if k not in got]
        out += [f"{path}/{k}: unexpected" for k in got if k not in want]
        for k in want.keys() & got.keys():
            out += differences(got[k], want[k], f"{path}/{k}")
        return out
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want, strict=True))
                for d in differences(g, w, f"{path}[{i}]")]
    return [] if got == want and type(got) is type(want) else [f"{path}: {got!r} != {want!r}"]
