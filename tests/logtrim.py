"""Trim a real log for a golden fixture: whole lines only, never an edit."""

from __future__ import annotations

import re

CPP_FRAME = re.compile(r"^(?:frame #\d+: |<omitting python frames>)")
SANITIZER_FRAME = re.compile(r"^=========\s+Host Frame:")
KEEP_CPP_FRAMES = 4
KEEP_FIRST_PY_FRAMES, KEEP_LAST_PY_FRAMES = 2, 3
# A run of near-identical lines (equal once digits are masked) longer than this keeps its first 3 and last one.
REPEAT_RUN = 5


def _trim_frames(lines: list[str], is_frame: re.Pattern[str]) -> list[str]:
    out, run = [], 0
    for line in lines:
        run = run + 1 if is_frame.match(line) else 0
        if run <= KEEP_CPP_FRAMES:
            out.append(line)
    return out


def _trim_tracebacks(lines: list[str]) -> list[str]:
    """Keep the first 2 and the last 3 frames of every Python traceback."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i].rstrip() != "Traceback (most recent call last):":
            i += 1
            continue
        i += 1
        frames: list[list[str]] = []
        while i < len(lines) and lines[i].startswith("  "):
            if lines[i].startswith('  File "') or not frames:
                frames.append([])
            frames[-1].append(lines[i])
            i += 1
        if len(frames) > KEEP_FIRST_PY_FRAMES + KEEP_LAST_PY_FRAMES:
            frames = frames[:KEEP_FIRST_PY_FRAMES] + frames[-KEEP_LAST_PY_FRAMES:]
        out.extend(line for frame in frames for line in frame)
    return out


def _trim_repeats(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        key = re.sub(r"\d+", "0", lines[i])
        j = i
        while j < len(lines) and re.sub(r"\d+", "0", lines[j]) == key:
            j += 1
        run = lines[i:j]
        out.extend(run if len(run) <= REPEAT_RUN or not key.strip() else run[:3] + run[-1:])
        i = j
    return out


def trim(text: str, drop: tuple[str, ...] = ()) -> tuple[str, int]:
    """The log with whole lines dropped (noise lines matching `drop`, long frame lists, repeats); lines dropped."""
    lines = text.split("\n")
    kept = [line for line in lines if not any(re.search(d, line) for d in drop)]
    kept = _trim_repeats(_trim_tracebacks(_trim_frames(_trim_frames(kept, CPP_FRAME), SANITIZER_FRAME)))
    return "\n".join(kept), len(lines) - len(kept)


TRIM_NOTE = ("whole lines only: C++/sanitizer frames after the 4th of a block, Python traceback frames "
             "between the 2nd and the 3rd-last, repeats of near-identical lines after the 3rd (the last kept)")
