"""Signal names from exit statuses: a negative return code (killed by a signal), a shell's 128+N, or a name."""

from __future__ import annotations

import signal

from aoti_debug.common.intparse import to_int


def signal_number_name(num: int) -> str:
    """SIGSEGV for 11; 'signal 77' for a number with no name here."""
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def signal_name(exit_status: int | str | None) -> str | None:
    """The signal an exit status says ended a process: -11 (subprocess), 139 (a shell's 128+11), 'SIGSEGV' or
    '-11' as text; None for a normal exit or an unreadable status."""
    if exit_status is None:
        return None
    if isinstance(exit_status, str):
        if not exit_status.lstrip("-").isdigit():
            return exit_status.upper() if exit_status.upper().startswith("SIG") else None
        if (parsed := to_int(exit_status)) is None:
            return None
        exit_status = parsed
    num = -exit_status if exit_status < 0 else exit_status - 128 if 128 < exit_status < 160 else None
    return signal_number_name(num) if num else None
