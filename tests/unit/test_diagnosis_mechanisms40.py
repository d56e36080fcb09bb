"""The round-40 pass (issue 11: three of holdout round 40's four misses, moved to dev), on the real lines it was
written from, beside the shapes that must keep their reading: a CPython message quoted whole, an attribute
missing on one of the API server's request handlers, a buffer overflow said in words, and a checkpoint weight
vLLM's Transformers backend has no parameter for.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

TOKENIZATION = "'OpenAIServingTokenization' object has no attribute 'show_available_models'"


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_message_quoted_whole_is_read_inside_its_quotes() -> None:
    # ipex-llm #13012: the poster quoted the server's message, then named the image
    posted = [f'"{TOKENIZATION}"', "", "intelanalytics/ipex-llm-serving-xpu   2.2.0-b13"]
    assert _root(posted)[0] == "engine_error"
    for quoted in (f"“{TOKENIZATION}”", f"`{TOKENIZATION}`", f"AttributeError: {TOKENIZATION}", TOKENIZATION):
        assert _root([quoted])[0] == "engine_error", quoted
    # a request handler's missing attribute is a request's; another object's stays a start-up's by default
    assert _root(["'LlamaConfig' object has no attribute 'rope_theta'"])[0] == "startup_failure"
    # a sentence that quotes a message is not the message
    assert _root([f'the docs say "{TOKENIZATION}" can be ignored'])[0] == "healthy"


def test_a_buffer_overflow_said_in_words() -> None:
    # poolside/Laguna-S-2.1-NVFP4 discussion 3: FlashInfer's workspace, pasted through a markdown link
    lines = ["vllm serve poolside/Laguna-S-2.1-NVFP4 --trust-remote-code --tensor-parallel-size 1 "
             "--gpu-memory-utilization 0.95",
             "['aligned_alloc' at /workspace/include/flashinfer/allocator.h:49: Buffer overflow when allocating memory "
             "for batch_prefill_tmp_v with size 471269376 and alignment 16, but only 413138944 bytes available in "
             "AlignedAllocator. Increase the workspace buffer size.](RuntimeError: Error in function 'aligned_alloc' "
             "at /workspace/include/flashinfer/allocator.h:49: Buffer overflow when allocating memory for "]
    assert _root(lines) == ("startup_failure", "failure_sentence")
    # the word alone, in a sentence that says nothing failed, is not read
    assert _root(["the overflow of the waiting queue is shown in the dashboard"])[0] == "healthy"


def test_a_weight_the_transformers_backend_has_no_parameter_for() -> None:
    # swiss-ai/Apertus-8B-Instruct-2509 discussion 8: xIELU's beta, in a transformers older than the model
    lines = ["ValueError: There is no module or parameter named 'model.layers.10.mlp.act_fn.beta' in "
             "TransformersForCausalLM", 'vllm serve "swiss-ai/Apertus-8B-Instruct-2509"']
    assert _root(lines) == ("version_mismatch", "transformers_backend_lacks_weight")
    # vLLM's own model class with an extra checkpoint weight is not read as a version
    native = ["ValueError: There is no module or parameter named 'lm_head.weight' in Qwen2ForCausalLM"]
    assert _root(native)[0] == "startup_failure"
