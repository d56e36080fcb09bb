"""What an install says of itself: a model reference that leads to no config, a vLLM that lacks one of its own
modules, transformers' lazy import failing on a package that does not fit or naming one the environment lacks,
Ray's list of possible causes.

Learnt from holdout round 11 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms11.py`).
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

INSTALL_RULES: tuple[Rule, ...] = (
    rule(
        "no_config_found",
        Kind.MODEL_NOT_FOUND,
        # vLLM's get_config looked for config.json (and Mistral's params.json) under the name it was given, in a
        # local folder of that name and then on the hub, and found neither: the name leads to no model (a repo
        # id with no local copy where the hub is out of reach, a hub cache's repository folder instead of its
        # snapshots/<commit> folder), as the hub's HFValidationError for a path reads (`hf_validation`)
        r"No supported config format found in",
        hint=Msg("rule.no_config_found"),
        examples=(
            # vLLM #13150 (a comment, Xinference's conda env running vLLM as a library)
            "ValueError: No supported config format found in Benasd/Qwen2.5-VL-72B-Instruct-Pointer-AWQ",
        ),
    ),
    rule(
        "vllm_own_module_missing",
        Kind.STARTUP_FAILURE,
        # vLLM's own code importing its own module, which is not there: the install is incomplete (a source
        # install whose package list missed a folder, vllm-ascend #707 with vLLM 0.8.3's `vllm.benchmarks`), not
        # another release (a plugin importing a vLLM module that moved is raised in the plugin's code). The
        # compiled extensions (`vllm._C`, `vllm._moe_C`) are a build's, read by the build rules.
        r"No module named '?vllm\.(?!_)[\w.]+",
        raised_in=("<module> from vllm.", "<module> import vllm."),
        hint=Msg("rule.vllm_own_module_missing"),
        examples=("ModuleNotFoundError: No module named 'vllm.benchmarks.serve'",),
    ),
    rule(
        "installed_versions_conflict",
        Kind.VERSION_MISMATCH,
        # pip's report after an install: a package left in the environment requires a version of another that
        # is not the one installed now. Unlike `dependencies_unresolvable` (the resolver refused, nothing was
        # installed) pip went ahead, so the environment holds versions that do not fit together
        r"\brequires [\w.\-\[\]]+[^,]*, but you have [\w.\-]+ \S+ which is incompatible",
        hint=Msg("rule.installed_versions_conflict"),
        examples=(
            "vllm 0.17.1 requires torch==2.10.0, but you have torch 2.8.0 which is incompatible.",  # INF-MLLM #86
            # vLLM #431 (an NGC PyTorch container whose torch pip replaced)
            "torchvision 0.15.0a0 requires torch==1.14.0a0+410ce96, but you have torch 2.0.1 which is incompatible.",
        ),
    ),
    rule(
        "cuda_reinit_in_fork",
        Kind.STARTUP_FAILURE,
        # CUDA was initialised in the parent before the workers were forked: the forked workers cannot use it
        # (and may crash in the driver). Workers are forked while the engine starts: a launch setting
        # (VLLM_WORKER_MULTIPROC_METHOD=spawn), whatever fatal signal follows
        r"Cannot re-initialize CUDA in forked subprocess",
        hint=Msg("rule.cuda_reinit_in_fork"),
        examples=(  # trl #6679 (trl vllm-serve, tensor parallel 4)
            "Failed to get device capability: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
            "multiprocessing, you must use the 'spawn' start method.",
        ),
    ),
    rule(
        "lazy_import_failed",
        Kind.VERSION_MISMATCH,
        # transformers (and the libraries built on its lazy module: diffusers, peft) import a submodule on first
        # use and wrap whatever that import raised: a package in the environment that does not fit the others
        # (vLLM #4912: a package built for pydantic 1 under pydantic 2, "'FieldInfo' object has no attribute
        # 'required'"). A module that is simply missing is an ImportError, read by the exception table.
        r"Failed to import (?:transformers|diffusers|peft)\.[\w.]+ because of the following error",
        hint=Msg("rule.lazy_import_failed"),
        examples=(
            "RuntimeError: Failed to import transformers.models.clip.modeling_clip because of the following error "
            "(look up to see its traceback):",
        ),
    ),
    rule(
        "optional_package_missing",
        Kind.VERSION_MISMATCH,
        # transformers' own words for a package the model's code or tokenizer needs and the environment lacks (its
        # `requires_backends` and tokenizer conversion), said in a ValueError or ImportError of its own: the
        # environment does not hold what the model needs, as a ModuleNotFoundError would say (the exception table)
        r"You need to have \w+ installed to convert a slow tokenizer|"
        r"\brequires the [\w.-]+ library but it was not found in your environment",
        hint=Msg("rule.optional_package_missing"),
        examples=(  # casperhansen/llama-3-70b-instruct-awq, discussion 4 (vLLM 0.3.1)
            "You need to have sentencepiece installed to convert a slow tokenizer to a fast one.",
            "ImportError: LlamaTokenizer requires the protobuf library but it was not found in your environment. "
            "Checkout the instructions on the installation page of its repo:",
        ),
    ),
)
