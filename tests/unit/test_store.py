"""FindingsStore and LogRing: what the admin panel shows after many repeated log lines."""

from __future__ import annotations

from chainlit_app.diagnostics import Finding, FindingsStore, LogRing, classify_lines


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _oom(
    line: int, text: str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB"
) -> Finding:
    """An OOM finding as the classifier produces it (same rule id, varying evidence)."""
    return Finding("out_of_memory", line, text, "lower --max-model-len", rule="gpu_oom")


def test_repeated_findings_are_one_entry_with_count_times_and_capped_evidence() -> None:
    clock = Clock()
    store = FindingsStore(clock=clock)
    for n in range(1, 8):
        clock.now += 10
        store.add(_oom(n, f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 GiB"))
    [entry] = store.snapshot()
    assert entry["count"] == 7
    assert entry["kind"] == "out_of_memory" and entry["title"] == "Out of memory"
    assert entry["severity"] == "critical" and entry["fix"] and entry["hint"] == "lower --max-model-len"
    assert (entry["first_seen"], entry["last_seen"]) == (1010.0, 1070.0)
    assert [e["line"] for e in entry["evidence"]] == [3, 4, 5, 6, 7]  # the 5 most recent
    assert entry["evidence"][0] == {
        "line": 3,
        "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB",
        "source": "log",
        "basis": "rule",
    }
    assert (entry["basis"], entry["source"]) == ("rule", "log")  # the panel shows on what basis, and where
    assert entry["resolved"] is False and entry["resolved_at"] is None


def test_without_rule_numbers_do_not_split_entries() -> None:
    store = FindingsStore()
    for port in (8013, 9001):
        text = f"ConnectError: [Errno 111] connect to 127.0.0.1:{port} failed"
        store.add(Finding("connection", 0, text, "h", source="chat"))
    store.add(Finding("auth", 0, "AuthenticationError: Error code: 401", "h", source="chat"))
    snapshot = store.snapshot()
    assert sorted((e["kind"], e["count"]) for e in snapshot) == [("auth", 1), ("connection", 2)]
    assert {e["evidence"][0]["source"] for e in snapshot} == {"chat"}


def test_resolve_all_then_a_new_occurrence_reopens() -> None:
    clock = Clock()
    store = FindingsStore(clock=clock)
    store.add(_oom(1))
    clock.now = 2000.0
    assert store.resolve_all("engine healthy after restart") == 1
    [entry] = store.snapshot()
    assert entry["resolved"] is True and entry["resolved_at"] == 2000.0
    assert entry["resolved_reason"] == "engine healthy after restart"
    assert store.resolve_all("again") == 0  # nothing open any more
    clock.now = 3000.0
    store.add(_oom(9))
    [entry] = store.snapshot()
    assert entry["resolved"] is False and entry["resolved_at"] is None and entry["count"] == 2


def test_snapshot_puts_open_entries_first_newest_first() -> None:
    clock = Clock()
    store = FindingsStore(clock=clock)
    for kind, rule in [("auth", "a"), ("port_in_use", "b"), ("out_of_memory", "c")]:
        clock.now += 1
        store.add(Finding(kind, 1, kind, "h", rule=rule))
    store.resolve_all()
    clock.now += 1
    store.add(Finding("auth", 2, "auth", "h", rule="a"))  # reopened, newest
    clock.now += 1
    store.add(Finding("connection", 3, "connection", "h", rule="d"))
    assert [(e["kind"], e["resolved"]) for e in store.snapshot()] == [
        ("connection", False),
        ("auth", False),
        ("out_of_memory", True),
        ("port_in_use", True),
    ]


def test_store_is_bounded_and_evicts_oldest_resolved_first() -> None:
    clock = Clock()
    store = FindingsStore(max_entries=3, clock=clock)
    for rule in ("old-resolved", "newer-resolved"):
        clock.now += 1
        store.add(Finding("auth", 1, rule, "h", rule=rule))
    store.resolve_all()
    clock.now += 1
    store.add(Finding("auth", 1, "open", "h", rule="open"))
    clock.now += 1
    store.add(Finding("auth", 1, "newest", "h", rule="newest"))
    texts = {e["evidence"][0]["text"] for e in store.snapshot()}
    assert len(store) == 3 and texts == {"newer-resolved", "open", "newest"}
    for i in range(10):  # with nothing resolved, the least recently seen open entry goes
        clock.now += 1
        store.add(Finding("auth", 1, f"x{i}", "h", rule=f"x{i}"))
    assert len(store) == 3


def test_findings_from_a_real_log_fill_the_store() -> None:
    lines = ['INFO:     127.0.0.1:5555 - "POST /v1/chat/completions HTTP/1.1" 401 Unauthorized'] * 40
    store = FindingsStore()
    for finding in classify_lines(lines).findings:
        store.add(finding)
    [entry] = store.snapshot()
    assert entry["kind"] == "auth" and entry["count"] == 5  # the report itself keeps 5 per rule


def test_log_ring_keeps_the_last_lines_with_level_and_redaction() -> None:
    ring = LogRing(size=500, secrets=["tok-123456"])
    for n in range(1, 601):
        ring.append(n, f"(APIServer pid=1) INFO 11-30 14:00:01 [x.py:1] line {n}")
    ring.append(601, "(EngineCore_DP0 pid=2) ERROR 11-30 14:00:02 [core.py:700] boom --api-key tok-123456")
    ring.append(602, "\x1b[33mWARNING 11-30 14:00:03 [y.py:2] careful\x1b[0m\n")
    ring.append(603, 'INFO:     127.0.0.1:1 - "GET /health HTTP/1.1" 200 OK')
    ring.append(604, '  File "/x.py", line 1, in f')
    assert len(ring) == 500
    tail = ring.tail(4)
    assert [(r["n"], r["level"]) for r in tail] == [
        (601, "ERROR"),
        (602, "WARNING"),
        (603, "INFO"),
        (604, ""),
    ]
    assert "tok-123456" not in tail[0]["text"] and "***" in tail[0]["text"]
    assert tail[1]["text"] == "WARNING 11-30 14:00:03 [y.py:2] careful"
    assert len(ring.tail()) == 200 and ring.tail()[0]["n"] == 405
    assert ring.tail(0) == []


def test_log_ring_shows_new_text_when_a_rotated_log_reuses_line_numbers() -> None:
    ring = LogRing(size=10)
    ring.append(1, "INFO old file line one")
    assert ring.tail(1)[0]["text"] == "INFO old file line one"
    ring.clear()
    ring.append(1, "ERROR new file line one")
    ring.append(2, "INFO new file line two")
    assert [r["text"] for r in ring.tail()] == ["ERROR new file line one", "INFO new file line two"]
    ring.append(1, "WARNING same number, other text")  # no clear(): the cache must not return old text
    assert ring.tail(1)[0]["text"] == "WARNING same number, other text"


def test_resolve_kind_leaves_other_kinds_open() -> None:
    """A verified remedy closes the findings of its kind only."""
    store = FindingsStore(clock=lambda: 5.0)
    store.add(Finding(kind="out_of_memory", line=3, text="ValueError: KV cache", hint=""))
    store.add(Finding(kind="port_in_use", line=9, text="OSError: [Errno 98] Address already in use", hint=""))
    assert store.resolve_kind("out_of_memory", "fixed by fit_max_model_len") == 1
    state = {e["kind"]: (e["resolved"], e["resolved_reason"]) for e in store.snapshot()}
    assert state == {"out_of_memory": (True, "fixed by fit_max_model_len"), "port_in_use": (False, "")}
    assert store.resolve_kind("out_of_memory", "again") == 0
