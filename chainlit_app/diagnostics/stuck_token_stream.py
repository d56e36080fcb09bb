"""A stream that never finished and whose every chunk is the same lone digit or lower-case letter (read by
`StreamAssembler.flush`, named `stream_degenerate_output`).

A model whose weights or kernels are broken (a GGUF quantization split over tensor-parallel ranks, vLLM #11160)
emits one token id whatever the input: each chunk's content is '0' (or 'm'), and the stream never reaches a
finish_reason. A healthy answer's first chunk is a word or punctuation, and a healthy stream's chunks differ; so a
cut stream whose chunks so far are all one digit or one lower-case letter is degenerate output, not an unfinished
answer.
"""

from __future__ import annotations

MIN_CHUNKS = 3


def stuck_on_one_token(pieces: list[str]) -> bool:
    """Whether every chunk of a stream, three at least, is the same single digit or lower-case ASCII letter
    (one or two such chunks are also how a healthy numbered answer, "1", "." ..., may begin when cut)."""
    if len(pieces) < MIN_CHUNKS or len(set(pieces)) != 1:
        return False
    piece = pieces[0]
    return len(piece) == 1 and piece.isascii() and (piece.isdigit() or piece.islower())
