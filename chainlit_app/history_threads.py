"""A thread's row written without reading it first (no Chainlit).

Chainlit's `update_thread` reads the thread's row (and the user's identifier) before every upsert, in a
session and transaction of their own, to merge metadata it was not given. A new chat's first question
calls it twice (its first message makes sure the thread exists; the first interaction names it), so a
burst of new chats spent most of its history time on reads that cannot be batched. When no metadata or
tags are given, one upsert does the same without the read: it creates the row as Chainlit would, or
changes only the columns given, and it joins the batched writes (`history_batch`).
"""

from __future__ import annotations

from chainlit_app.history_batch import Statement


def ensure_thread(thread_id: str, created_at: str) -> Statement:
    """The thread exists afterwards; an existing one is left as it is."""
    return ('INSERT INTO threads ("id", "createdAt", "metadata") VALUES (:id, :createdAt, :metadata) '
            'ON CONFLICT ("id") DO NOTHING',
            {"id": thread_id, "createdAt": created_at, "metadata": "{}"})


def name_thread(thread_id: str, created_at: str, name: str, user_id: str | None,
                user_identifier: str | None) -> Statement:
    """Name the thread (and give it its user): a new row as Chainlit makes it, or only these columns of an
    existing one (its metadata and creation time stay)."""
    changed = {"name": name, **({"userId": user_id, "userIdentifier": user_identifier} if user_id else {})}
    values = {"id": thread_id, "createdAt": created_at, **changed, "metadata": "{}"}
    columns = ", ".join(f'"{key}"' for key in values)
    placeholders = ", ".join(f":{key}" for key in values)
    updates = ", ".join(f'"{key}" = EXCLUDED."{key}"' for key in changed)
    return (f'INSERT INTO threads ({columns}) VALUES ({placeholders}) ON CONFLICT ("id") DO UPDATE SET {updates}',
            values)
