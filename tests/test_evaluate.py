"""`messiah evaluate` on every data format: the same positions in two formats give the same figures, and
bad jsonl lines are named by file and line."""

import json
from pathlib import Path

import cshogi
import numpy as np
import pytest
from conftest import FORMATS, GAMES, TEACHER, shared

from messiah.cli import main
from messiah.tools.evaluate import evaluate_file


def evaluate(path: Path, limit: int = 0) -> dict:
    return evaluate_file(None, str(path), limit=limit, threads=1)


def legal_teacher_moves(records: np.ndarray) -> int:
    board = cshogi.Board()
    count = 0
    for rec in records:
        board.set_hcp(rec["hcp"])
        count += board.move_from_move16(int(rec["bestMove16"])) in set(board.legal_moves)
    return count


@pytest.mark.parametrize("name", ["sample", "psv_to_hcpe3_sample"])
def test_psv_and_its_hcpe_twin_score_the_same(name):
    """The fixture's pair (packed by cshogi, every move legal), and cshogi's own test fixture in the shared
    data, whose psv stores most moves in cshogi's encoding: only 18 of its 56 decode to legal moves."""
    if name == "sample":
        psv_path, hcpe_path = FORMATS / "sample.psv", FORMATS / "sample.hcpe"
    else:
        psv_path, hcpe_path = shared(f"formats/{name}.psv"), shared(f"formats/{name}.hcpe")
    psv, hcpe = evaluate(psv_path), evaluate(hcpe_path)
    assert psv == hcpe
    # positions whose teacher move is not legal are left out, as training leaves them out
    assert psv["n"] == legal_teacher_moves(np.fromfile(hcpe_path, cshogi.HuffmanCodedPosAndEval))
    assert 0 <= psv["agreement"] <= psv["top3"] <= 1 and psv["value_mse"] is not None


def jsonl_lines(records: np.ndarray, with_eval: bool = True) -> list[str]:
    board = cshogi.Board()
    lines = []
    for rec in records:
        board.set_hcp(rec["hcp"])
        item = {"sfen": board.sfen(), "bestmove": cshogi.move_to_usi(board.move_from_move16(int(rec["bestMove16"])))}
        if with_eval:
            item["eval"] = int(rec["eval"])
        lines.append(json.dumps(item))
    return lines


def test_jsonl_scores_like_the_hcpe_it_was_written_from(tmp_path):
    records = np.fromfile(TEACHER, cshogi.HuffmanCodedPosAndEval)[::20]
    records.tofile(tmp_path / "sample.hcpe")
    (tmp_path / "sample.jsonl").write_text("\n".join(jsonl_lines(records)) + "\n\n")
    hcpe = evaluate(tmp_path / "sample.hcpe")
    jsonl = evaluate(tmp_path / "sample.jsonl")
    assert jsonl["n"] == hcpe["n"] == len(records)
    assert jsonl["agreement"] == hcpe["agreement"] and jsonl["top3"] == hcpe["top3"]
    assert jsonl["value_mse"] == pytest.approx(hcpe["value_mse"])
    assert evaluate(tmp_path / "sample.jsonl", limit=50)["n"] == 50
    # without eval keys there is no value error to report
    (tmp_path / "moves.jsonl").write_text("\n".join(jsonl_lines(records[:30], with_eval=False)))
    assert evaluate(tmp_path / "moves.jsonl")["value_mse"] is None


def test_data_without_evals_has_no_value_mse():
    figures = evaluate(GAMES, limit=300)  # game records: eval 0 throughout
    assert figures["n"] == 300 and figures["value_mse"] is None


def test_bad_jsonl_lines_are_named(tmp_path):
    good = jsonl_lines(np.fromfile(TEACHER, cshogi.HuffmanCodedPosAndEval, count=2))
    start = cshogi.STARTING_SFEN
    bad = {
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNX b - 1": "malformed sfen",
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSN b - 1": "malformed sfen",  # a short rank
        "9/9/9/9/9/9/9/9/9 b - 1": "malformed sfen",  # no kings
        "": "malformed sfen",
    }
    for sfen, message in bad.items():
        (tmp_path / "bad.jsonl").write_text("\n".join([*good, json.dumps({"sfen": sfen, "bestmove": "7g7f"})]))
        with pytest.raises(ValueError, match=f"bad.jsonl:3: {message}"):
            evaluate(tmp_path / "bad.jsonl")
    lines = {
        json.dumps({"sfen": start, "bestmove": "7g7e"}): "bestmove '7g7e' is not a legal move",
        json.dumps({"sfen": start, "bestmove": "7g7f+"}): "bestmove '7g7f\\+' is not a legal move",
        json.dumps({"sfen": start, "bestmove": "P*5e"}): "bestmove 'P\\*5e' is not a legal move",
        json.dumps({"sfen": start}): "not a JSON object with 'sfen' and 'bestmove'",
        "{not json": "not a JSON object",
        json.dumps({"sfen": start, "bestmove": "7g7f", "eval": "high"}): "'eval' must be a number",
    }
    for line, message in lines.items():
        (tmp_path / "bad.jsonl").write_text("\n".join([good[0], "", line, good[1]]))
        with pytest.raises(ValueError, match=f"bad.jsonl:3: {message}"):
            evaluate(tmp_path / "bad.jsonl")


def test_cli_prints_json_and_names_bad_files(tmp_path, capsys):
    main(["evaluate", "--data", str(FORMATS / "sample.psv"), "--threads", "1", "--json"])
    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == {"agreement", "top3", "value_mse", "n"} and figures["n"] == 81  # every move legal
    (tmp_path / "cut.psv").write_bytes(b"\0" * 41)
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--data", str(tmp_path / "cut.psv")])
    assert exit_info.value.code == 2 and "cut.psv" in capsys.readouterr().err


def test_csa_scores_like_the_hcpe_it_was_written_from(tmp_path):
    import cshogi.CSA

    two_games = int(np.fromfile(f"{GAMES}.games", "<u4")[:2].sum())
    records = np.fromfile(GAMES, cshogi.HuffmanCodedPosAndEval, count=two_games)
    records.tofile(tmp_path / "games.hcpe")
    exporter = cshogi.CSA.Exporter(str(tmp_path / "games.csa"))
    board = cshogi.Board()
    for rec in records:
        board.set_hcp(rec["hcp"])
        if board.sfen() == cshogi.STARTING_SFEN:
            exporter.info(cshogi.STARTING_SFEN)
        exporter.move(board.move_from_move16(int(rec["bestMove16"])))
    exporter.close()
    csa, hcpe = evaluate(tmp_path / "games.csa"), evaluate(tmp_path / "games.hcpe")
    assert csa == hcpe and csa["n"] == two_games and csa["value_mse"] is None
