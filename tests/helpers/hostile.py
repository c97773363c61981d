"""Sweep specs as TOML text, and made hostile on the way to text (deep nesting, huge
lists, huge numbers, cut off): the fuzzer's (``tests/test_fuzz.py``), and the refusals
``bench/bench_refusal.py`` times."""

from __future__ import annotations

import json
import math
from typing import Any


def toml_value(value: Any) -> str:
    """A Python value as TOML text (inline tables for dicts)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def toml_key(key: str) -> str:
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else json.dumps(key, ensure_ascii=False)


def toml_document(doc: dict[str, Any]) -> str:
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in doc.items()
             if k not in ("grid", "schedule", "lag", "faults")]
    if "grid" in doc:
        lines.append("[grid]")
        lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in doc["grid"].items()]
    for section in ("schedule", "lag", "faults"):
        for name, table in doc.get(section, {}).items():
            lines.append(f"[{section}.{toml_key(name)}]")
            lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def hostile_text(doc: dict[str, Any], how: str, size: int) -> str:
    """A document made hostile on the way to text: deep nesting, huge lists, cut off."""
    text = toml_document(doc)
    events = ", ".join(f"[{i % 900}, 1]" for i in range(size)) if how == "huge-events" else ""
    made = {
        "nested": lambda: text + "deep = " + "[" * size + "]" * size + "\n",
        "inline": lambda: text + "deep = " + "{a = " * size + "1" + "}" * size + "\n",
        "huge-list": lambda: text.replace(
            "[grid]\n", "[grid]\nG = [" + ", ".join(map(str, range(size))) + "]\n", 1),
        "huge-events": lambda: text + f"[schedule.huge]\nevents = [{events}]\n",
        "digits": lambda: text.replace("[grid]\n", f"[grid]\nB = {'9' * size}\n", 1),
        "cut": lambda: text[: size % (len(text) + 1)],
    }
    return made[how]() if how in made else text
