"""Engines against engines: the USI client of other engines, matches through cshogi.cli, the Elo and SPRT
statistics, the strength ladder and tuning by matches. It drives engines as processes and imports none
of the engine's code."""
