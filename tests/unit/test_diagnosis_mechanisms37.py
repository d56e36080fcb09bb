"""The rule of the round-37 pass (issue 11: holdout round 37's miss, moved to dev), on the real lines it was written
from: vLLM refusing a `--quantization` that names another method than the checkpoint's config, with or without
its exception's class (a poster quoting the message alone had read healthy).
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_quantization_argument_the_checkpoint_does_not_declare() -> None:
    # neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8, discussion 3: the message alone, then the arguments
    quoted = ["Quantization method specified in the model config (compressed-tensors) does not match the "
              "quantization method specified in the `quantization` argument (fp8)",
              "--model neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8 --quantization fp8 --tensor-parallel-size 1"]
    assert _root(quoted) == ("startup_failure", "quantization_argument_mismatch")
    # Aphrodite's (a vLLM fork) same check, with its class (a holdout log of an earlier round, named by the phase)
    typed = ["ValueError: Quantization method specified in the model config (bitsandbytes) does not match the "
             "quantization method specified in the `quantization` argument (bnb)."]
    assert _root(typed) == ("startup_failure", "quantization_argument_mismatch")
