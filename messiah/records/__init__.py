"""The records layer: every data format messiah reads or writes, in the core so that tools which train
nothing (``evaluate``, ``book``, ``fit-winrate``) read data without the training code.

- :mod:`~messiah.records.formats`: hcpe, YaneuraOu PackedSfenValue, CSA, KIF and jsonl, each read as cshogi
  hcpe records (cshogi's dtypes and parsers);
- :mod:`~messiah.records.datafile`: a file of any format as one indexable :class:`Records`, and the split into
  games;
- :mod:`~messiah.records.gameindex`: the game index beside a file (``NAME.games``), which its writers append to;
- :mod:`~messiah.records.candidates`: the teacher's top lines beside a file (``NAME.multipv``), gensfen's with MultiPV;
- :mod:`~messiah.records.selfplayfile`: the self-play record format that ``messiah rl`` writes;
- :mod:`~messiah.records.decode`: records decoded once into position arrays, legal moves and the teacher's move.
"""

from messiah.records.candidates import CANDIDATES, candidate_row, candidates_path, read_candidates
from messiah.records.datafile import Records, count_games, follows, read_records, split_by_game
from messiah.records.decode import Decoded, decode
from messiah.records.formats import (
    HCPE,
    PSV,
    SUFFIXES,
    GameRecords,
    check_hcpe,
    psv_to_hcpe,
    read_game_records,
    read_games,
    read_hcpe,
    read_jsonl,
    read_psv,
)
from messiah.records.gameindex import GAME_INDEX_SUFFIX, append_game_index, game_index_path, read_game_index

__all__ = ["CANDIDATES", "GAME_INDEX_SUFFIX", "HCPE", "PSV", "SUFFIXES", "Decoded", "GameRecords", "Records",
           "append_game_index", "candidate_row", "candidates_path", "check_hcpe", "count_games", "decode", "follows",
           "game_index_path", "psv_to_hcpe", "read_candidates", "read_game_index", "read_game_records", "read_games",
           "read_hcpe", "read_jsonl", "read_psv", "read_records", "split_by_game"]
