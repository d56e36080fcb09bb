"""Login throttling by (address, name) with backoff, in a bounded table; and the origin policy."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chainlit_app.origins import OriginPolicy
from chainlit_app.settings import Settings
from chainlit_app.throttle import LoginThrottle, ThrottlePolicy


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_backoff_doubles_per_pair_and_spares_other_addresses() -> None:
    clock = Clock()
    throttle = LoginThrottle(ThrottlePolicy(free_failures=5, base_delay=1.0, max_delay=60.0), clock)
    waits = [throttle.failed("10.0.0.9", "admin") for _ in range(9)]
    assert waits == [0, 0, 0, 0, 0, 1, 2, 4, 8]
    assert throttle.wait_left("10.0.0.9", "admin") == 8
    assert throttle.wait_left("10.0.0.10", "admin") == 0, "the admin's own address is not held back"
    assert throttle.wait_left("10.0.0.9", "alice") == 0, "other names from that address are not held back yet"
    clock.now += 8
    assert throttle.wait_left("10.0.0.9", "admin") == 0
    for _ in range(20):
        throttle.failed("10.0.0.9", "admin")
    assert throttle.wait_left("10.0.0.9", "admin") == 60, "capped at max_delay"


def test_success_clears_the_pair() -> None:
    throttle = LoginThrottle(ThrottlePolicy(free_failures=1), Clock())
    throttle.failed("a", "bob")
    assert throttle.failed("a", "bob") > 0
    throttle.succeeded("a", "bob")
    assert throttle.wait_left("a", "bob") == 0


def test_one_address_spraying_names_is_slowed_too() -> None:
    throttle = LoginThrottle(ThrottlePolicy(free_failures=5, free_failures_per_address=20), Clock())
    for number in range(21):
        throttle.failed("10.0.0.9", f"name{number}")
    assert throttle.wait_left("10.0.0.9", "fresh-name") > 0
    assert throttle.wait_left("10.0.0.10", "fresh-name") == 0


def test_table_stays_bounded_and_forgets() -> None:
    clock = Clock()
    throttle = LoginThrottle(ThrottlePolicy(max_entries=100, forget_after=600.0), clock)
    for number in range(5000):
        throttle.failed(f"10.1.{number // 250}.{number % 250}", f"random-{number}")
    assert len(throttle) <= 100
    clock.now += 601
    assert len(throttle) == 0


def test_origin_policy() -> None:
    policy = OriginPolicy(["https://chat.example.org/"])
    assert policy.allows(None, "127.0.0.1:8000"), "no Origin: not a browser acting for another page"
    assert policy.allows("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert policy.allows("https://chat.example.org", "127.0.0.1:8000")
    assert not policy.allows("http://evil.example", "127.0.0.1:8000")
    assert not policy.allows("null", "127.0.0.1:8000")
    assert not policy.allows("http://127.0.0.1:8001", "127.0.0.1:8000")
    assert "CHAT_ALLOWED_ORIGINS" in policy.refusal("http://evil.example", "127.0.0.1:8000")


def test_allowed_origins_setting() -> None:
    settings = Settings(allowed_origins="https://chat.example.org, http://10.0.0.5:8000/")
    assert settings.auth.origins == ["https://chat.example.org", "http://10.0.0.5:8000"]
    for bad in ("*", "chat.example.org", "https://chat.example.org/app"):
        with pytest.raises(ValidationError, match="CHAT_ALLOWED_ORIGINS entry"):
            Settings(allowed_origins=bad)
