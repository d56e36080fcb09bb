"""How often the app does per-token and per-probe work: less under load, never slower than a reader sees."""

from __future__ import annotations

import time

from chainlit_app.chat import FLUSH_SECONDS, MAX_FLUSH_SECONDS, flush_interval
from chainlit_app.monitor import Monitor


def test_one_answer_updates_at_screen_rate_and_many_answers_update_less_often() -> None:
    assert flush_interval(1) == FLUSH_SECONDS
    assert flush_interval(4) == FLUSH_SECONDS
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
