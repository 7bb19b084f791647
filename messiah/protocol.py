"""The text of the USI protocol that both sides of it read: whole numbers as USI sends them, a value squeezed
into one ``info string`` line, and the ``go`` command. The engine (:mod:`messiah.engine.usi`) answers by them
and the match relay (:mod:`messiah.arena.watchdog`) times searches by them, so both read a ``go`` alike."""

from __future__ import annotations

import re

from messiah.errors import UserError


class UsiError(UserError):
    """A command or an option value the engine cannot take; the message goes to the GUI as an info string."""


# ASCII digits only: str.isdigit() also accepts superscripts and other Unicode digits that int() refuses.
INTEGER = re.compile(r"[+-]?[0-9]+")
HUGE = 10**18  # numbers beyond this are clamped (int() of 4,300+ digits raises; so many means no limit)


def parse_int(text: str, what: str) -> int:
    """The integer ``text`` stands for, clamped to +-HUGE; UsiError naming ``what`` otherwise."""
    if not INTEGER.fullmatch(text):
        raise UsiError(f"{what} must be a whole number, got {text[:40]!r}")
    digits = text.lstrip("+-")
    value = HUGE if len(digits) > 18 else min(HUGE, int(digits))
    return -value if text.startswith("-") else value


def one_line(text: object, limit: int = 300) -> str:
    """``text`` as one line of at most ``limit`` characters: what an info string can carry."""
    words = " ".join(str(text).split())
    return words if len(words) <= limit else words[:limit] + "..."


GO_NUMBERS = ("btime", "wtime", "byoyomi", "binc", "winc", "nodes", "depth", "movetime")


def parse_go(args: list[str]) -> tuple[dict[str, int], set[str], list[str]]:
    """go's numeric arguments, its flags (infinite, ponder, mate) and the words it ignored.

    USI says unknown words are ignored, and a GUI waits for the bestmove whatever it sent, so nothing here
    refuses a go: a limit without a usable number (``byoyomi`` at the end, ``nodes -5``, ``depth ²``) is
    ignored and named. Negative clock times are read as 0. ``mate`` takes milliseconds or ``infinite``."""
    numbers: dict[str, int] = {}
    flags: set[str] = set()
    ignored: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        value = args[i + 1] if i + 1 < len(args) else None
        if word == "mate":
            flags.add("mate")
            if value is not None and INTEGER.fullmatch(value):
                numbers["mate"] = parse_int(value, "go mate")
                i += 1
            elif value == "infinite":
                i += 1
        elif word in GO_NUMBERS:
            if value is None or not INTEGER.fullmatch(value):
                ignored.append(word)
            else:
                number = parse_int(value, word)
                if word in ("nodes", "depth") and number < 1:
                    ignored.append(f"{word} {value}")
                else:
                    numbers[word] = max(0, number)
                i += 1
        elif word in ("infinite", "ponder"):
            flags.add(word)
        else:
            ignored.append(one_line(word, 20))
        i += 1
    return numbers, flags, ignored
