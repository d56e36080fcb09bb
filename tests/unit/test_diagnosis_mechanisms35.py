"""The general mechanisms of the round-35 pass (issue 11: holdout round 35's misses, moved to dev), on the real
lines they were written from and beside the shapes that must keep their reading: a GPU too old for torch's FP8
kernel, a GPU newer than the toolkit's compilers, a package transformers names as missing below its head line, and
a completions choice pretty-printed alone with an empty text.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_gpu_too_old_for_torchs_fp8_kernel() -> None:
    # neuralmagic's Llama-3.1-70B-Instruct-FP8, discussion 2: an A100 (8.0)
    line = ("[rank0]: RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= "
            "9.0 or 8.9, or ROCm MI300+")
    assert _root([line]) == ("version_mismatch", "gpu_capability_too_low")
    # vLLM's FlashAttention check says the same words of devices, then picks another backend: not this rule
    fallback = ("(EngineCore pid=1673840) ERROR 08-13 16:42:32 [fa_utils.py:273] Cannot use FA version 2 is not "
                "supported due to FA2 is only supported on devices with compute capability >= 8")
    assert _root([fallback])[1] != "gpu_capability_too_low"


def test_a_gpu_newer_than_the_toolkits_compilers() -> None:
    # MinerU on a DGX Spark (GB10, sm_121a): Triton's bundled ptxas, after the app's own start-up lines
    lines = ["Start MinerU FastAPI Service: http://0.0.0.0:8000", "Application startup complete",
             "Model loading took 2.1612 GiB memory", "Internal Triton PTX codegen error", "",
             "ptxas fatal : Value 'sm_121a' is not defined for option 'gpu-name'"]
    assert _root(lines) == ("version_mismatch", "gpu_newer_than_toolkit")
    assert _root(["nvcc fatal   : Unsupported gpu architecture 'compute_120'"]) == (
        "version_mismatch", "gpu_newer_than_toolkit")


def test_the_package_transformers_names_below_its_head_line_decides() -> None:
    # casperhansen/llama-3-70b-instruct-awq, discussion 4 (vLLM 0.3.1)
    lines = ["ValueError: Couldn't instantiate the backend tokenizer from one of:",
             "(1) a tokenizers library serialization file,", "(2) a slow tokenizer instance to convert or",
             "(3) an equivalent slow tokenizer class to instantiate and convert.",
             "You need to have sentencepiece installed to convert a slow tokenizer to a fast one."]
    assert _root(lines) == ("version_mismatch", "optional_package_missing")
    # the head line alone still names the tokenizer that could not be built
    assert _root(lines[:1]) == ("startup_failure", "backend_tokenizer_not_built")


def test_a_completions_choice_alone_with_an_empty_text() -> None:
    # TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ, discussion 3: a body pretty-printed and cut to its choices
    lines = ['python3 -m vllm.entrypoints.openai.api_server --model "$MODEL_NAME" --quantization awq',
             '    "choices": [', "        {", '            "index": 0,', '            "text": "",',
             '            "logprobs": null,', '            "finish_reason": "length"', "        }", "    ],"]
    assert classify_lines(lines).kind == "empty_output"
    # the same choice with an answer is an answer
    answered = [line.replace('"text": ""', '"text": " Paris is the capital of France."') for line in lines]
    assert classify_lines(answered).kind == HEALTHY
