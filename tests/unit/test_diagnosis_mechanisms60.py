"""The round-60 pass (issue 11: holdout round 60's three false alarms, moved to dev), on the real lines they were
written from, beside the shapes that must keep their reading: a long answer cut at its token limit keeps a high share
of distinct words within any hundred of its words, a notice that names a path is no answer looping, and a sentence
that says it ignored the error is no failure sentence; a loop, a repeated answer and an error that stopped
something still are.
"""

from __future__ import annotations

import json

from chainlit_app.diagnostics import classify_lines
from chainlit_app.diagnostics.answer_loops import distinct_word_ratio

PROSE = (  # kagaho's Llama-3-70B-AWQ on two L40S: the first paragraphs of its 400-token answer
    "GPU tensor parallelism is a technique used to accelerate deep learning computations by parallelizing tensor "
    "operations across multiple GPUs. This approach takes advantage of the fact that many deep learning models can be "
    "split into smaller sub-tasks that can be executed independently, allowing for significant speedups in training "
    "and inference times.\n\nBy dividing the model into smaller tensors and processing them in parallel across "
    "multiple GPUs, tensor parallelism can achieve near-linear scaling with the number of GPUs used. This is "
    "particularly useful for large-scale deep learning models that require massive computational resources to train."
    "\n\nOne of the key challenges in implementing tensor parallelism is ensuring that the parallelized operations are "
    "correctly synchronized and communicated across GPUs. This requires careful management of data transfer and "
    "synchronization between GPUs, as well as optimized memory allocation and access patterns.\n\nTo address these "
    "challenges, various parallelization strategies have been developed, including data parallelism, model "
    "parallelism, and pipeline parallelism. Data parallelism involves dividing the input data into smaller chunks and "
    "processing them in parallel across multiple GPUs, while model parallelism involves splitting the model into "
    "smaller components and processing them in parallel.\n\nPipeline parallelism, on the other hand, involves "
    "dividing the computation into a series of stages, each of which is executed on a different GPU. This approach "
    "can be particularly effective for models with complex dependencies between layers.\n\nSeveral deep learning "
    "frameworks, including TensorFlow and PyTorch, have implemented tensor parallelism using various parallelization "
    "strategies. These frameworks provide APIs and tools for developers to easily parallelize their models and take "
    "advantage of multiple GPUs."
)


def _body(content: str) -> str:
    return json.dumps({"id": "chatcmpl-817f6b7680434c82", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 24, "total_tokens": 424, "completion_tokens": 400}})


def test_a_long_answer_cut_at_its_limit_is_no_loop() -> None:
    assert len(PROSE.split()) > 250
    assert distinct_word_ratio(PROSE) > 0.6
    assert classify_lines([_body(PROSE)]).kind == "healthy"


def test_an_answer_that_loops_to_its_limit_still_does() -> None:
    loop = "The answer is that the model is the answer and the model is the answer. " * 30
    assert distinct_word_ratio(loop) < 0.3
    assert classify_lines([_body(loop)]).kind == "degenerate_output"


RUN = [  # shen-shanshan's notes: vllm-ascend's V1 start, ModelScope printing where it downloads, once per process
    'Downloading Model to directory: /home/sss/cache/modelscope/models/Qwen/Qwen2.5-7B-Instruct',
    '2025-03-11 06:17:39,510 - modelscope - WARNING - Using branch: master as version is unstable, use wi'
    'th caution',
    '2025-03-11 06:17:39,857 - modelscope - INFO - Target directory already exists, skipping creation.',
    'Downloading Model to directory: /home/sss/cache/modelscope/models/Qwen/Qwen2.5-7B-Instruct',
    '2025-03-11 06:17:40,215 - modelscope - WARNING - Using branch: master as version is unstable, use wi'
    'th caution',
    '2025-03-11 06:17:40,638 - modelscope - INFO - Target directory already exists, skipping creation.',
    "INFO 03-11 06:17:52 [config.py:576] This model supports multiple tasks: {'score', 'embed', 'classify"
    "', 'generate', 'reward'}. Defaulting to 'generate'.",
    'INFO 03-11 06:17:52 [config.py:1666] Chunked prefill is enabled with max_num_batched_tokens=2048.',
    '[V1][NPU] Disable prefix caching',
    'Downloading Model to directory: /home/sss/cache/modelscope/models/Qwen/Qwen2.5-7B-Instruct',
    '2025-03-11 06:17:53,715 - modelscope - INFO - Target directory already exists, skipping creation.',
    'Downloading Model to directory: /home/sss/cache/modelscope/models/Qwen/Qwen2.5-7B-Instruct',
]


def test_a_notice_naming_a_path_is_no_answer_looping() -> None:
    assert classify_lines(RUN).kind == "healthy"
    answer = "The capital of France is Paris, and Paris is the capital of France."
    assert classify_lines([answer, "INFO 03-11 06:18:03 [x.py:1] step", answer, answer]).kind == "degenerate_output"


def test_a_notice_printed_by_each_process_back_to_back_is_no_answer_looping() -> None:
    # the last session's review: the processes of one start may print ModelScope's notice with nothing between them
    notice = RUN[0]
    together = [RUN[0], notice, notice, notice, *RUN[1:]]
    assert classify_lines(together).kind == "healthy"
    assert RUN[3] == notice
    assert classify_lines([*RUN[:3], *[notice] * 8, *RUN[4:]]).kind == "healthy"
    # more copies than a node has processes, or the notice among an answer's other lines, is said again
    assert classify_lines([*RUN[:3], *[notice] * 9, *RUN[4:]]).kind == "degenerate_output"
    assert classify_lines([*RUN[:3], *[notice] * 12, *RUN[4:]]).kind == "degenerate_output"
    # the review of that mend: an answer's own line naming a path, said back to back, is no tool's notice
    answer = "The output file has been written to: /home/user/project/results/output_final.csv"
    assert classify_lines([answer] * 4).kind == "degenerate_output"
    again = "And once more the model went to the same place"
    assert classify_lines(["Here is where it went:", notice, again, notice, again, notice, again, notice]
                          ).kind == "degenerate_output"


def test_a_sentence_that_ignored_its_error_is_no_failure() -> None:
    # argonne-lcf's Aurora guide: a shared model cache the user cannot write to
    lines = [
        "(APIServer pid=206609) Could not cache non-existence of file. Will ignore error and continue. Error: [Errno "
        "13] Permission denied: '/flare/datasets/model-weights/hub/models--meta-llama--Llama-2-7b-chat-hf/.no_exist/"
        "f5db/preprocessor_config.json'",
        "(EngineCore_0 pid=207574) Ignored error while writing commit hash to /flare/datasets/model-weights/hub/"
        "models--meta-llama--Llama-2-7b-chat-hf/refs/main: [Errno 13] Permission denied: '/flare/datasets/model-"
        "weights/hub/models--meta-llama--Llama-2-7b-chat-hf/refs/main'",
        "(APIServer pid=206609) INFO:     Application startup complete.",
    ]
    assert classify_lines(lines).kind == "healthy"
    stopped = "Could not write the model cache: [Errno 13] Permission denied: '/flare/hub/refs/main'"
    assert classify_lines([stopped]).kind != "healthy"


PASSAGE = ("To deploy the service you first build the container image with the provided Dockerfile, then push it to "
           "your registry, configure the Kubernetes manifest with the correct image tag and resource limits, apply the "
           "manifest with kubectl, watch the rollout status until every replica reports ready, and finally expose the "
           "deployment through an ingress controller so that external clients can reach the inference endpoint over "
           "HTTPS. ")


def test_a_passage_said_again_to_the_limit_is_a_loop() -> None:
    # found by the session's review: a 66-word passage said over and over is no loop within 100-word windows
    text = (PASSAGE * 3)[:int(len(PASSAGE) * 2.2)]
    assert distinct_word_ratio(text) > 0.5
    assert classify_lines([_body(text)]).kind == "degenerate_output"


def test_an_answer_saying_a_path_line_again_and_again_still_loops() -> None:
    line = "The model weights are stored in the directory: /models/Qwen2.5-7B-Instruct"
    assert classify_lines(["Generated text:", *[line] * 12]).kind == "degenerate_output"


ORIGINAL = ("The committee reviewed the annual budget proposal and noted several discrepancies in the allocation of "
            "funds for infrastructure projects. Members expressed concern that the maintenance backlog for bridges and "
            "roads had grown significantly over the past three years, while spending on new construction continued to "
            "rise. The treasurer explained that federal grants were tied to new projects, which limited flexibility. "
            "After a lengthy discussion, the committee agreed to request a detailed breakdown of deferred maintenance "
            "costs and to revisit the proposal at the next meeting.")


def test_a_passage_and_its_corrected_copy_cut_at_the_limit_is_no_loop() -> None:
    # found by the second review: an original and its corrected copy repeat most six-word runs, but only twice
    corrected = ORIGINAL.replace("three years", "three fiscal years").replace("lengthy", "long")
    assert classify_lines([_body(f"Original:\n{ORIGINAL}\n\nCorrected:\n{corrected[:int(len(corrected) * 0.8)]}")]
                          ).kind == "healthy"


def test_a_passage_with_a_counter_said_again_is_a_loop_wherever_it_is_cut() -> None:
    # found by the third review: cut just after "Attempt 4:", the last run was unique and the loop read healthy
    full = "".join(f"Attempt {n}: {PASSAGE}" for n in range(1, 6))
    for tail in ("Attempt 4: To deploy the", "Attempt 4: To deploy the service you"):
        assert classify_lines([_body(full[:full.index(tail) + len(tail)])]).kind == "degenerate_output"
