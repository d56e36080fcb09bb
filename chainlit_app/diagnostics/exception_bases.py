"""Exception class hierarchies of the libraries a vLLM log or the chat meets: class name -> its bases,
most specific first (the class's MRO without itself, Exception and object).

A log prints only an exception's name, so the one exception table (`exceptions.py`) cannot ask Python for
its bases; this table lets `lookup` walk from `httpx.ReadError` to `NetworkError` and `TransportError`
the way it does for a live exception. The table is data (`exception_bases.tsv`, one class a line), generated
by scripts/gen_exception_bases.py from the installed packages (builtins, httpx, httpcore, openai, requests,
urllib3, aiohttp, jinja2, huggingface_hub, safetensors, pydantic, pyzmq, torch, vllm) plus ray's documented
hierarchy; a name two libraries use differently is keyed by its module too. Read once, at import.
"""

from __future__ import annotations

from pathlib import Path

TABLE = Path(__file__).with_name("exception_bases.tsv")


def read_table(text: str) -> dict[str, str]:
    """`name<TAB>bases` lines; lines starting with '#' and blank lines are comments."""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            name, bases = line.split("\t")
            rows[name] = bases
    return rows


BASES: dict[str, str] = read_table(TABLE.read_text(encoding="utf-8"))
