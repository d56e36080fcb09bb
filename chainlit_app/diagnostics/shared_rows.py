"""The cluster's findings as the panel shows them: this process's entries and the other processes' rows
merged by cause, each saying which process saw it (shared_store.py reads and writes the rows).

Pure functions, so the merge is tested without a database. A row holds one process's view of one cause
(kind + cause key, stored as the store's entry id); the panel shows one entry per cause with the counts
summed, the first and last times over all processes, and open while any process has it open.
"""

from __future__ import annotations

from typing import Any

from chainlit_app.i18n import Msg, localize

from .store import MAX_EVIDENCE
from .taxonomy import kind_info

# What a process publishes: what it made itself. Log findings are not: every process tails the same
# CHAT_LOG_FILE and finds them anyway, so publishing them would only repeat each one N times.
SHARED_SOURCES = frozenset({"chat", "probe", "preflight"})


def text_to_json(value: Any) -> Any:
    """A stored text for the table: a Msg keeps its key and values, so every process renders it in the
    reader's language, as its own findings are."""
    if isinstance(value, Msg):
        return {"msg": value.key, "values": {key: text_to_json(item) for key, item in value.values.items()}}
    if isinstance(value, list | tuple):
        return [text_to_json(item) for item in value]
    if isinstance(value, str):
        return str(value)
    return value


def text_from_json(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"msg", "values"} and isinstance(value["values"], dict):
        return Msg(str(value["msg"]), **{key: text_from_json(item) for key, item in value["values"].items()})
    if isinstance(value, list):
        return [text_from_json(item) for item in value]
    return value


def _seen(process: str, count: int, first_seen: float, last_seen: float, resolved: bool) -> dict[str, Any]:
    return {"process": process, "count": count, "first_seen": first_seen, "last_seen": last_seen,
            "resolved": resolved}


def row_entry(row: dict[str, Any]) -> dict[str, Any]:
    """Another process's row as the store's `to_dict` shows an entry (texts in the current language)."""
    info = kind_info(row["kind"])
    return {
        "id": row["cause_id"],
        "kind": row["kind"],
        "title": info.title if info else row["kind"],
        "severity": row["severity"],
        "count": row["count"],
        "first_seen": row["first_seen"],
        "last_seen": row["last_seen"],
        "evidence": [{**item, "process": row["process"]} for item in row["evidence"]],
        "hint": localize(text_from_json(row["hint"])),
        "fix": list(info.fix) if info else [],
        "resolved": row["resolved"],
        "resolved_at": row["resolved_at"],
        "resolved_reason": localize(text_from_json(row["resolved_reason"])),
        "basis": row["basis"],
        "rule": row["rule"],
        "source": row["source"],
        "seen_by": [_seen(row["process"], row["count"], row["first_seen"], row["last_seen"], row["resolved"])],
    }


def _merge_into(entry: dict[str, Any], other: dict[str, Any]) -> None:
    """`other` (one more process's view of the same cause) folded into `entry`."""
    entry["count"] += other["count"]
    entry["first_seen"] = min(entry["first_seen"], other["first_seen"])
    if other["last_seen"] > entry["last_seen"]:
        entry["last_seen"] = other["last_seen"]
        for name in ("hint", "basis", "rule", "source"):  # the newest occurrence says what it is now
            entry[name] = other[name] or entry[name]
    entry["seen_by"] += other["seen_by"]
    evidence = entry["evidence"]
    for item in other["evidence"]:
        if len(evidence) < MAX_EVIDENCE and item not in evidence:
            evidence.append(item)
    if entry["resolved"] and other["resolved"]:
        if (other["resolved_at"] or 0.0) > (entry["resolved_at"] or 0.0):
            entry["resolved_at"], entry["resolved_reason"] = other["resolved_at"], other["resolved_reason"]
    elif other["resolved"] is False:  # open while any process has it open
        entry["resolved"], entry["resolved_at"], entry["resolved_reason"] = False, None, ""


def merged(local: list[dict[str, Any]], rows: list[dict[str, Any]], process: str,
           limit: int) -> list[dict[str, Any]]:
    """This process's snapshot (store.to_dict entries) with the rows of the others, one entry per cause,
    open entries first and newest first, at most `limit`. The process's own rows stand in only for causes
    its store no longer holds (evicted, or from before a restart of the process)."""
    entries: dict[str, dict[str, Any]] = {}
    for item in local:
        entry = {**item, "evidence": [{**e, "process": process} for e in item["evidence"]],
                 "seen_by": [_seen(process, item["count"], item["first_seen"], item["last_seen"], item["resolved"])]}
        entries[entry["id"]] = entry
    local_ids = set(entries)
    for row in rows:
        other = row_entry(row)
        if row["process"] == process and other["id"] in local_ids:
            continue
        if other["id"] in entries:
            _merge_into(entries[other["id"]], other)
        else:
            entries[other["id"]] = other
    ordered = sorted(entries.values(), key=lambda e: (e["resolved"], -e["last_seen"]))[:limit]
    for entry in ordered:
        entry["seen_by"].sort(key=lambda seen: -seen["last_seen"])
    return ordered


def causes_to_drop(rows: list[dict[str, Any]], limit: int) -> list[tuple[str, str]]:
    """The causes beyond `limit` in the table, as the store evicts: resolved ones first, then the oldest."""
    groups: dict[tuple[str, str], tuple[bool, float]] = {}
    for row in rows:
        key = (row["kind"], row["cause_id"])
        was_open, last = groups.get(key, (False, 0.0))
        groups[key] = (was_open or not row["resolved"], max(last, row["last_seen"]))
    if len(groups) <= limit:
        return []
    ranked = sorted(groups, key=lambda key: groups[key])  # resolved (False) before open, oldest first
    return ranked[:len(groups) - limit]
