"""The environment an engine process gets: an allowlist, never the app's whole environment.

vLLM runs model code (`--trust-remote-code` runs the model folder's Python), so whatever the engine's
environment holds, the model can read: the app's auth secret (enough to forge an admin's session),
the admin password, CHAT_USERS, the database URL with its password. The engine gets only what vLLM,
torch, the CUDA stack and the hub client read, by name or by prefix; everything else stays with the app.

HF_TOKEN (and the other HF_* names) pass on purpose: gated models need the token to download. It is the
one credential the engine sees; give it a read-only token.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

# Exact names: the process basics (paths, user, locale, time zone, temp folders), the dynamic loader,
# TLS roots and proxies for downloads, and the hub's legacy token name.
ENGINE_ENV_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM",
    "TMPDIR", "TMP", "TEMP", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
    "LD_LIBRARY_PATH", "LD_PRELOAD",  # vLLM's CPU guide preloads tcmalloc and Intel OpenMP
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "HUGGING_FACE_HUB_TOKEN", "TOKENIZERS_PARALLELISM", "PYTHONHASHSEED", "PYTHONWARNINGS",
    "CC", "CXX",  # torch.compile and triton build kernels with the C compiler named here
})

# Prefixes: the locale categories, CUDA and the NVIDIA container runtime, vLLM, the hub and
# transformers, torch and its compilers, the thread pools of the math libraries, NCCL and friends.
ENGINE_ENV_PREFIXES = (
    "LC_", "CUDA_", "NVIDIA_", "VLLM_", "HF_", "TRANSFORMERS_", "TORCH_", "TORCHINDUCTOR_", "PYTORCH_",
    "TRITON_", "OMP_", "KMP_", "MKL_", "OPENBLAS_", "GOMP_", "ONEDNN_", "DNNL_", "NCCL_", "CUBLAS_", "CUDNN_",
    "CUBLASLT_", "NVTE_", "GLOO_", "MASTER_", "RAY_",
)


def engine_environment(base: Mapping[str, str] | None = None, also: Iterable[str] = ()) -> dict[str, str]:
    """The allowed part of `base` (default: this process's environment). `also` names more variables
    to pass (CHAT_ENGINE_ENV); a name ending in `*` passes every variable with that prefix."""
    source = os.environ if base is None else base
    names = set(ENGINE_ENV_NAMES)
    prefixes = list(ENGINE_ENV_PREFIXES)
    for item in also:
        item = item.strip()
        if item.endswith("*"):
            if item[:-1]:
                prefixes.append(item[:-1])
        elif item:
            names.add(item)
    prefix_tuple = tuple(prefixes)
    return {key: value for key, value in source.items() if key in names or key.startswith(prefix_tuple)}


def split_names(text: str) -> list[str]:
    """CHAT_ENGINE_ENV is a comma or space separated list of names (or `PREFIX_*`)."""
    return [part for part in text.replace(",", " ").split() if part]
