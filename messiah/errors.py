"""The errors messiah raises on purpose, under one base.

A :class:`MessiahError` carries a message that is complete for a user (what was wrong with which input,
and what to do): the command line prints it as one line and exits 2, the USI engine sends it as an
``info string``. Any other exception is a bug and keeps its traceback. The subclasses also derive from the
builtin their callers have always caught (ValueError for bad input, RuntimeError for a failing program),
so ``except ValueError`` around a parser keeps working.
"""

from __future__ import annotations


class MessiahError(Exception):
    """An error whose message is meant for the user."""


class UserError(MessiahError, ValueError):
    """A value a user gave (a flag, an option, a file name, a setting) cannot be used."""


class DataError(MessiahError, ValueError):
    """A data file (records, openings, a game index) or the shared data folder is missing or malformed."""
