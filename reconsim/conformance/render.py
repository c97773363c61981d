"""A comparison with the real controller as the table ``reconsim conformance`` prints."""

from __future__ import annotations

from reconsim.conformance.compare import DEPLOYMENT_MODEL, Conformance


def render(result: Conformance) -> str:
    """Scenarios matched per metric, on all of them and second by second, then the
    remaining differences by cause, each with an example and its first differing second."""
    n = len(result.outcomes)
    compared = result.metrics_compared
    every = "all ten metrics" if len(compared) == 10 else f"all {len(compared)} metrics"
    width = max(len(m) for m in (*compared, every, "second by second"))
    runner = ("reconsim's Deployment reference model" if result.controller == DEPLOYMENT_MODEL
              else f"reconsim controller {result.controller}")
    lines = [f"{n} scenarios of the {result.kind.title}, {runner}", "",
             f"{'metric':<{width}}  matched"]
    rows = [(m, result.matched(m)) for m in compared]
    rows += [(every, result.all_metrics), ("second by second", result.per_second),
             ("both", result.matching)]
    lines += [f"{name:<{width}}  {count:>{len(str(n))}}/{n}" for name, count in rows]
    groups = result.by_cause()
    if not groups:
        lines += ["", "no differences"]
        return "\n".join(lines) + "\n"
    cause_width = max(len("cause"), *(len(c) for c in groups))
    lines += ["", f"{'cause':<{cause_width}}  scenarios  example  first differing second"]
    for cause, found in groups.items():
        first = found[0]
        second = "none (a metric only)" if first.first_second is None else (
            f"{first.first_second} ({', '.join(first.series)})")
        lines.append(f"{cause:<{cause_width}}  {len(found):>9}  {first.id:<7}  {second}")
    return "\n".join(lines) + "\n"
