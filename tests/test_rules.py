"""messiah.rules: each entering-king rule on positions built to lie on its edges, cshogi's judgement as the
oracle for the full-set point rules, the try rule, and the draw values' view from each ply."""

import cshogi
import pytest

from messiah.rules import (
    ENTERING_KING_RULES,
    FULL_SET_POINTS,
    MAX_LEGAL_MOVES,
    GameRules,
    declaration_points,
    material_points,
    points_needed,
)
from messiah.search.base import terminal_value, win_in

# Black's king on 5b with twelve pieces on ranks a-c (rook, bishop, gold, nine pawns: 20 points) and these
# pieces in hand; white holds the rest of the full set (its king on 5i, nothing near black's king).
CAMP = "9/1R1GK2B1/PPPPPPPPP/9/9/9/ppppppppp/l2l1l2l/4k4 b {hand} 1"
HAND_28 = "3G4SNrb3n"  # 20 + 8 = 28: enough for black under the 27-point rule, not under the 24-point one
HAND_31 = "3G4S4Nrb"  # 31: enough under both
# A two-piece handicap game (white, the giver, has no rook and no bishop anywhere): white's king on 5h with ten
# pieces on ranks g-i (nine pawns, a gold) and seven in hand: 17 points, what CSARule27H asks of it (27 - 10).
HANDICAP = "4K4/9/PPPPPPPPP/L2L1L2L/N1N3N1N/9/ppppppppp/3gk4/9 w RB3g4s 1"


def board(sfen: str) -> cshogi.Board:
    b = cshogi.Board()
    b.set_sfen(sfen)
    return b


def declares(rule: str, sfen: str) -> bool:
    return GameRules(rule).declaration(board(sfen)) == 0


def test_the_point_rules_part_at_their_thresholds():
    at_28, at_31 = CAMP.format(hand=HAND_28), CAMP.format(hand=HAND_31)
    assert material_points(board(at_28)) == material_points(board(at_31)) == FULL_SET_POINTS
    assert declaration_points(board(at_28)) == 28 and declaration_points(board(at_31)) == 31
    assert [declares(rule, at_28) for rule in ENTERING_KING_RULES] == [False, False, False, True, True, False]
    assert [declares(rule, at_31) for rule in ENTERING_KING_RULES] == [False, True, True, True, True, False]


def test_the_handicap_rules_ask_the_giver_for_fewer_points():
    handicap = board(HANDICAP)
    assert material_points(handicap) == FULL_SET_POINTS - 10 and declaration_points(handicap) == 17
    assert points_needed("CSARule27H", handicap) == 17 and points_needed("CSARule24H", handicap) == 21
    assert [declares(rule, HANDICAP) for rule in ENTERING_KING_RULES] == [False, False, False, False, True, False]
    # the receiver (black) is asked the full count
    black = board(HANDICAP.replace(" w ", " b "))
    assert points_needed("CSARule27H", black) == 28


@pytest.mark.parametrize("hand", ["", "P", "3G4S", "3G4SN", "3G4SN3n", "3G4S4N"])
@pytest.mark.parametrize("camp", [CAMP, CAMP.replace("1R1GK2B1", "1R1G3B1").replace("4k4", "3Kk4"),  # king out
                                  CAMP.replace("PPPPPPPPP", "PPPP1PPPP"),  # eleven in the camp
                                  CAMP.replace("9/1R1GK2B1", "4r4/1R1GK2B1"),  # in check from 5a
                                  CAMP.replace("PPPPPPPPP", "PPP6").replace(" b ", " b 6P")])  # six in the camp
def test_the_counted_points_agree_with_cshogi(camp, hand):
    """On full-set-or-less positions (king in or out of the camp, in check or not, short of ten pieces), the
    points counted here and each rule's threshold declare exactly when cshogi's judgement does."""
    b = board(camp.format(hand=hand + "rb"))
    for rule, law in (("CSARule27", cshogi.LAW_27), ("CSARule24", cshogi.LAW_24)):
        points = declaration_points(b)
        assert (points is not None and points >= points_needed(rule, b)) == b.is_nyugyoku(law), (rule, b.sfen())
        assert declares(rule, b.sfen()) == b.is_nyugyoku(law)
        assert declares(rule + "H", b.sfen()) == (points is not None and points >= points_needed(rule + "H", b))


def test_the_try_rule_moves_the_king_to_the_try_square():
    b = board("9/4K4/9/9/9/9/9/9/4k4 b - 1")  # black's king on 5b, 5a free and unattacked
    move = GameRules("TryRule").declaration(b)
    assert cshogi.move_to_usi(move) == "5b5a"
    assert GameRules("CSARule27").declaration(b) is None
    b.push(move)
    assert GameRules("TryRule").tried(b) and not GameRules("CSARule27").tried(b)
    assert terminal_value(b, 1, GameRules("TryRule")) == pytest.approx(1 - win_in(1))  # white has lost
    guarded = board("4r4/4K4/9/9/9/9/9/9/4k4 b - 1")  # a white rook on 5a: the king cannot go there ... but takes
    assert cshogi.move_to_usi(GameRules("TryRule").declaration(guarded)) == "5b5a"
    covered = board("3gr4/4K4/9/9/9/9/9/9/4k4 b - 1")  # the rook on 5a is guarded by the gold on 6a
    assert GameRules("TryRule").declaration(covered) is None
    far = board("9/9/4K4/9/9/9/9/9/4k4 b - 1")
    assert GameRules("TryRule").declaration(far) is None


def test_a_declaration_is_a_win_in_the_search_under_its_rule_only():
    at_28 = board(CAMP.format(hand=HAND_28))
    assert terminal_value(at_28, 2, GameRules("CSARule27")) == win_in(2)
    assert terminal_value(at_28, 2, GameRules("CSARule24")) is None
    assert terminal_value(at_28, 2, GameRules("NoEnteringKing")) is None


def test_draw_values_are_the_engine_s_at_its_own_plies():
    """DrawValueBlack is the engine's draw value when it plays black: a black root sees it at even plies (black
    to move) and the opponent's one minus it at odd plies; a white root takes DrawValueWhite."""
    rules = GameRules(draw_black=0.3, draw_white=0.8)
    b = cshogi.Board()  # black to move
    assert rules.draw_value(b, 0) == pytest.approx(0.3) and rules.draw_value(b, 2) == pytest.approx(0.3)
    assert rules.draw_value(b, 1) == pytest.approx(1 - 0.8)  # a white root: white's 0.8 seen by black as 0.2
    b.push_usi("7g7f")  # white to move
    assert rules.draw_value(b, 0) == pytest.approx(0.8)
    assert rules.draw_value(b, 1) == pytest.approx(1 - 0.3)
    with pytest.raises(ValueError, match="unknown entering-king rule"):
        GameRules("CSARule99")


def test_a_repetition_takes_the_draw_value():
    b = cshogi.Board()
    for move in "5i5h 5a5b 5h5i 5b5a".split():
        b.push_usi(move)
    assert terminal_value(b, 4, GameRules(draw_black=0.25)) == pytest.approx(0.25)  # black root, black to move
    assert terminal_value(b, 4) == pytest.approx(0.5)


def test_the_most_legal_moves_a_position_has_is_the_bound_the_records_and_root_sharing_are_sized_by():
    """MAX_LEGAL_MOVES is the rules' number (the known 593-move position), and the self-play record's move values
    and the root-parallel table's rows are as wide as it."""
    from messiah.records.selfplayfile import SELFPLAY
    from messiah.search.parallel import RootTable

    most = board("R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1")
    assert len(list(most.legal_moves)) == MAX_LEGAL_MOVES == 593
    assert SELFPLAY["values"].shape == (MAX_LEGAL_MOVES,)
    assert RootTable(2).views()[1].shape == (2, MAX_LEGAL_MOVES)
