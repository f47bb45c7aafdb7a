"""The axis benchmark's ceilings (benchmarks/_axis_peers.py times them), read from a report
row: the bytes each moves, its rate, and reducetune's ratio to the faster of the target's two
(issue 26: memcpy and the streaming kernel, both timed in the rounds as applications call
them), with the streaming kernel in the tuner's protocol beside them as a reference. A file
written before the rounds timed the streaming kernel falls back to its protocol time, and the
report says so (fallback_note).
"""

from __future__ import annotations

from typing import Any

from reducetune import _core

CEILINGS = ("memcpy", "streaming")  # the target's: both timed in the rounds, as reducetune
PROTOCOL = "streaming_protocol"  # the streaming kernel in the tuner's protocol: a reference
MIXED = "mixed"  # the streaming read that writes as many bytes as the output: a reference
CEILING_RULE = (
    "× ceiling: the ratio of rates, reducetune's bytes read + written per second over the "
    "faster ceiling's rate, both ceilings timed in the same rounds as reducetune (memcpy: the "
    "bytes it reads + writes, as many as the reduction's; streaming: the input's bytes it "
    "reads), > 1: faster than the ceiling; '× streaming, tuner's protocol': the same rate "
    "over the streaming kernel's in the tuner's protocol (gated: no launch latency timed; "
    "cold L2), a reference beside the like-with-like ceiling the target uses; '× ceiling, "
    "time (bound)': the literal ratio of times, the shorter of the two ceilings' medians over "
    "reducetune's, and its bound input / (input + output) (2/3 at r = 2, 16/17 at r = 16): "
    "against a kernel that writes nothing, a reduction that must write its output scores at "
    "most that while it moves bytes no faster than the streaming kernel reads them; "
    "'× mixed stream': the same rate over the mixed stream's (a reference, not the target's: "
    "the streaming read that also writes the output's bytes along the input, timed in the "
    "rounds; its bytes read + written are the reduction's)")


def _problem(row: dict[str, Any]) -> _core.Problem:
    """The row's axis problem; a row without a type is float32 (the first look's rows)."""
    return _core.Problem(row.get("dtype", "float32"), "sum", tuple(row["view"]))


def bytes_moved(row: dict[str, Any]) -> int:
    """Bytes read plus written, as the core counts an axis problem's (the runner prices the
    same)."""
    return _problem(row).bytes_read_and_written


def bytes_read(row: dict[str, Any]) -> int:
    """The input's bytes: what the streaming ceiling reads (the benchmark times it over
    x.numel() * x.element_size()); inputs and outputs have the same element size."""
    p = _problem(row)
    return p.bytes_read_and_written * p.elements // (p.elements + p.outputs)


def _streaming_protocol_s(row: dict[str, Any]) -> float | None:
    """The streaming kernel's seconds in the tuner's protocol; files written before the rounds
    timed it call that time ``streaming_s``."""
    return row.get("streaming_protocol_s", row.get("streaming_s"))


def ceiling_times(row: dict[str, Any]) -> dict[str, float]:
    """Each ceiling's median seconds where the row has it: memcpy and streaming from the rounds,
    streaming_protocol from the tuner's protocol."""
    app = row["app_s"]
    times = {"memcpy": app.get("memcpy"), "streaming": app.get("streaming"),
             PROTOCOL: _streaming_protocol_s(row), MIXED: app.get(MIXED)}
    return {k: s for k, s in times.items() if s}


def target_ceilings(row: dict[str, Any]) -> tuple[str, str]:
    """The ceilings the target compares with: memcpy and streaming, both in the rounds. A file
    written before the rounds timed the streaming kernel falls back to its time in the tuner's
    protocol (the report says so: fallback_note)."""
    return CEILINGS if row["app_s"].get("streaming") else ("memcpy", PROTOCOL)


def ceiling_rates(row: dict[str, Any]) -> dict[str, float]:
    """Each ceiling's rate in bytes per second, the bytes it moves over its median: the
    streaming kernel reads the input (in the rounds and in the tuner's protocol); memcpy copies
    (input + output) / 2 bytes, so it reads plus writes as many bytes as the reduction. Rates,
    not times: the streaming kernel writes nothing, so against its time a reduction that writes
    its output can reach only input / (input + output) of it (0.67 at r = 2)."""
    moved = {"memcpy": bytes_moved(row), "streaming": bytes_read(row), PROTOCOL: bytes_read(row),
             MIXED: bytes_moved(row)}
    return {k: moved[k] / s for k, s in ceiling_times(row).items()}


def ceiling_ratio(row: dict[str, Any]) -> dict[str, Any]:
    """Reducetune against the faster of the target's ceilings (target_ceilings; > 1: faster
    than it): its rate (bytes read + written per second) over that ceiling's rate
    (ceiling_rates), the ceiling's name, the literal ratio of times (the shorter of those
    ceilings' medians over reducetune's) and that time ratio's bound, input / (input +
    output): what a reduction moving bytes as fast as the streaming kernel reads them would
    score against it. Beside them, the rate over the streaming kernel's in the tuner's
    protocol (x_streaming_protocol) and over the mixed stream's (x_mixed), references."""
    rates, times = ceiling_rates(row), ceiling_times(row)
    mine = bytes_moved(row) / row["app_s"]["reducetune"]
    names = [k for k in target_ceilings(row) if k in rates]
    best = max(names, key=rates.__getitem__) if names else None
    return {"x_ceiling": mine / rates[best] if best else None, "ceiling": best,
            "x_ceiling_time": (min(times[k] for k in names) / row["app_s"]["reducetune"]
                               if names else None),
            "time_bound": bytes_read(row) / bytes_moved(row),
            "x_streaming_protocol": mine / rates[PROTOCOL] if PROTOCOL in rates else None,
            "x_mixed": mine / rates[MIXED] if MIXED in rates else None}


def fallback_note(rows: list[dict[str, Any]]) -> list[str]:
    """What a file without the streaming kernel timed in the rounds falls back to, and for how
    many shapes."""
    old = [r for r in rows if target_ceilings(r) != CEILINGS]
    return [f"This file has no streaming time from the rounds for {len(old)} of {len(rows)} "
            "shapes (written before the rounds timed the streaming kernel): there, × ceiling "
            "is against the faster of memcpy in the rounds and the streaming kernel in the "
            "tuner's protocol (gated, cold L2), not like with like."] if old else []
