"""How often the app does per-token and per-probe work: less under load, never slower than a reader sees."""

from __future__ import annotations

import time

from chainlit_app.monitor import Monitor
from chainlit_app.pacing import (
    FLUSH_SECONDS,
    MAX_FLUSH_SECONDS,
    PEAK_HALF_LIFE_SECONDS,
    StreamPace,
    flush_interval,
    load_level,
)


def test_one_answer_updates_at_screen_rate_and_many_answers_update_less_often() -> None:
    assert flush_interval(1) == FLUSH_SECONDS
    assert flush_interval(4) == FLUSH_SECONDS
    assert 10 <= 1 / FLUSH_SECONDS <= 30, "one answer alone: about as many updates a second as a reader can follow"
    assert FLUSH_SECONDS < flush_interval(8) < flush_interval(16)
    assert flush_interval(32) <= MAX_FLUSH_SECONDS == flush_interval(500)
    assert 1 / MAX_FLUSH_SECONDS >= 4, "a reader still sees text move several times a second"


def test_metrics_are_polled_every_probe_only_while_the_panel_is_watched() -> None:
    monitor = Monitor(lambda: None, lambda: None, unwatched_metrics_interval=0.3)
    assert monitor._metrics_due(), "the first probe reads metrics"
    assert not monitor._metrics_due(), "unwatched: not again before the interval"
    time.sleep(0.35)
    assert monitor._metrics_due()
    monitor.panel_viewed()
    assert monitor._metrics_due() and monitor._metrics_due(), "watched: every probe"


def test_vllm_is_asked_for_single_tokens_until_a_rate_is_known() -> None:
    pace = StreamPace()
    assert pace.stream_interval(1) == pace.stream_interval(32) == 1


def test_a_fast_engine_sends_tokens_in_groups_of_one_ui_update() -> None:
    pace = StreamPace()
    pace.record(streams=1, tokens=301, first_to_last_seconds=1.0)  # 300 tokens/s: a GPU serving one reader
    assert pace.stream_interval(1) == int(300 * FLUSH_SECONDS)  # a chunk every 50 ms, as the UI updates


def test_a_slow_engine_keeps_single_tokens_and_a_busy_one_groups_a_few() -> None:
    pace = StreamPace()
    pace.record(streams=1, tokens=28, first_to_last_seconds=1.0)  # 27 tokens/s: this 2-core CPU, one reader
    assert pace.stream_interval(1) == 1, "slower than the screen: every token goes out on its own"
    pace.record(streams=32, tokens=65, first_to_last_seconds=6.4)  # 10 tokens/s each with 32 readers
    assert pace.stream_interval(32) == int(10 * flush_interval(32)) == 2
    assert 1 / (pace.stream_interval(32) / 10) >= 4, "a reader still sees about 4 updates a second"


def test_an_unseen_load_level_borrows_the_lower_rate_scaled_down() -> None:
    pace = StreamPace()
    pace.record(streams=4, tokens=801, first_to_last_seconds=4.0)  # 200 tokens/s each at 4 readers
    assert pace.rate(16) == 200 * 4 / 16
    assert pace.stream_interval(16) == int(50 * flush_interval(16))
    assert pace.rate(2) == 200, "a busier level's rate is a floor for a quieter one"
    pace.record(streams=32, tokens=101, first_to_last_seconds=10.0)  # 10 tokens/s each at 32 readers
    assert pace.rate(16) == 10.0, "the nearest busier level now"


def test_rates_follow_the_engine_but_one_odd_answer_does_not_swing_them() -> None:
    pace = StreamPace()
    pace.record(streams=8, tokens=101, first_to_last_seconds=1.0)
    pace.record(streams=8, tokens=11, first_to_last_seconds=1.0)  # one slow answer
    rate = pace.rate(8)
    assert rate is not None and 10 < rate < 100
    pace.record(streams=8, tokens=1, first_to_last_seconds=0.0)  # a one-token answer says nothing about rate
    assert pace.rate(8) == rate


def test_the_interval_is_capped_and_load_levels_are_powers_of_two() -> None:
    pace = StreamPace(max_interval=4)
    pace.record(streams=1, tokens=10_001, first_to_last_seconds=1.0)
    assert pace.stream_interval(1) == 4
    assert [load_level(n) for n in (0, 1, 2, 3, 5, 17, 32, 33)] == [1, 1, 2, 4, 8, 32, 32, 64]


def test_a_burst_of_questions_is_paced_for_the_load_it_makes_not_the_first_arrivals() -> None:
    pace = StreamPace()
    assert pace.expected_load(32, now=100.0) == 32
    assert pace.expected_load(1, now=101.0) >= 30, "a second later, the next burst's first question"
    assert pace.expected_load(1, now=100.0 + 10 * PEAK_HALF_LIFE_SECONDS) == 1, "the peak fades when load goes"
    assert pace.expected_load(40, now=1000.0) == 40
