import math

from messiah.winrate import MAX_CP, WinRateScale


def test_round_trip_and_known_points():
    s = WinRateScale(a=1 / 600, b=0.0)
    assert abs(s.to_winrate(0) - 0.5) < 1e-12
    assert abs(s.to_winrate(600) - 1 / (1 + math.exp(-1))) < 1e-12
    for cp in (-2500, -300, 0, 17, 1200):
        assert s.to_cp(s.to_winrate(cp)) == cp


def test_offset_and_clipping():
    s = WinRateScale(a=1 / 875, b=-0.08)
    assert s.to_winrate(0) < 0.5  # b < 0: an even eval is slightly below 50%
    assert s.to_cp(0.5) == round(0.08 * 875)
    assert s.to_cp(1.0) == MAX_CP and s.to_cp(0.0) == -MAX_CP
    assert s.to_cp(1 - 1e-15) == MAX_CP
