"""Without the shared data folder every command still works with what the package ships: the benchmarks
bench positions of random play, self-play starts from random plies (match's random openings: test_match)."""

import cshogi


def test_bench_positions_come_from_random_play_without_the_teacher_file(tmp_path, monkeypatch, capsys):
    from messiah.tools import bench

    monkeypatch.setattr(bench, "DEFAULT_POSITIONS", tmp_path / "teacher_s6.hcpe")
    positions = bench.position_set(bench.DEFAULT_POSITIONS, limit=12)
    assert "random play" in capsys.readouterr().err
    assert len(positions.boards) == 12 == len(positions.hcps)
    for board, hcp in zip(positions.boards, positions.hcps, strict=True):
        again = cshogi.Board()
        again.set_hcp(hcp)
        assert again.sfen().rsplit(" ", 1)[0] == board.sfen().rsplit(" ", 1)[0]
        assert 2 <= sum(sum(side) for side in board.pieces_in_hand) <= 12 and not board.is_game_over()
    assert [b.sfen() for b in bench.random_positions(12).boards] == [b.sfen() for b in positions.boards]


def test_self_play_starts_from_random_plies_without_the_opening_set(tmp_path, monkeypatch):
    from messiah.train.rl import config

    monkeypatch.setattr(config, "DEFAULT_OPENINGS", tmp_path / "absent.sfen")
    assert config.default_openings() == ""
    (tmp_path / "absent.sfen").write_text("startpos moves 7g7f\n")
    assert config.default_openings() == str(tmp_path / "absent.sfen")
