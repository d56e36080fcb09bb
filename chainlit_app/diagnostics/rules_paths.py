"""Rules for a model or a device that is not where the server looks (read before the hub's and the build's rules).

- A model named by a path or a bare name that is no folder here: transformers' `Incorrect path_or_model_id:
  '/data1/models/deepseek'` (a host path never mounted into the container, vLLM #8262), and its offline message
  when the name it could not find is no hub id (`it looks like Qwen-14B-Chat-AWQ is not the path to a directory
  containing a file named config.json`, a folder mounted on the cache and named without its path, vLLM #2247):
  model_not_found. A hub id (`owner/name`) in the same offline words is a hub out of reach (`hf_offline`),
  unless the file is Python code: the model's config names its code by a hub id (`auto_map`) although the model
  is a local folder, model_not_found (ChatGLM3 #946).
- No device at all: `Failed to infer device type`, `No platform detected, vLLM is running on
  UnspecifiedPlatform` (a container started without the GPUs, vLLM #13946 and #12847): vLLM saw no platform
  to run on, a start-up failure, not a build or driver that does not fit.

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

PATH_RULES: tuple[Rule, ...] = (
    rule(
        # before model_path_not_there and hf_offline: the file not found is code the model's config names by a hub
        # id (auto_map "THUDM/chatglm3-6b--tokenization_chatglm.ChatGLMTokenizer") while the model is a local
        # folder; pointing auto_map at the folder's module is the fix (ChatGLM3 #946)
        "remote_code_by_hub_id",
        Kind.MODEL_NOT_FOUND,
        r"is not the path to a directory containing a file named [\w.-]+\.py\b",
        hint=Msg("rule.remote_code_by_hub_id"),
        examples=(
            "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
            "cached files and it looks like THUDM/chatglm3-6b is not the path to a directory containing a file "
            "named tokenization_chatglm.py.",
        ),
    ),
    rule(
        "model_path_not_there",
        Kind.MODEL_NOT_FOUND,
        r"Incorrect path_or_model_id:|"
        # the name transformers could not find is a path or a bare name, never a hub id 'owner/name'
        r"it looks like (?:[^\s/]+|[/.~]\S*) is not the path to a directory containing",
        hint=Msg("rule.model_path_not_there"),
        examples=(
            "OSError: Incorrect path_or_model_id: '/data1/models/deepseek'. Please provide either the path to a local "
            "folder or the repo_id of a model on the Hub.",  # vLLM #8262
            "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
            "cached files and it looks like Qwen-14B-Chat-AWQ is not the path to a directory containing a file named "
            "config.json.",  # vLLM #2247
        ),
    ),
    rule(
        "no_platform_detected",
        Kind.STARTUP_FAILURE,
        r"Failed to infer device type|No platform detected, vLLM is running on UnspecifiedPlatform",
        hint=Msg("rule.no_platform_detected"),
        examples=(
            "RuntimeError: Failed to infer device type",  # vLLM #13946
            "INFO 05-14 04:44:35 [__init__.py:243] No platform detected, vLLM is running on UnspecifiedPlatform",
        ),
    ),
)
