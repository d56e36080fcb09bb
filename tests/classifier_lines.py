"""Two vLLM start-up lines that both classifier test modules use: the engine's out-of-memory cause and the
API server's "see root cause above" wrapper, process prefix first as vLLM's V1 engine prints them.
Kept in one place so the rule-behaviour tests (test_classifier.py) and the input/output tests
(test_classifier_io.py) read the same lines.
"""

WRAPPER = (
    "(APIServer pid=42) RuntimeError: Engine core initialization failed. See root cause above. "
    "Failed core proc(s): {}"
)
OOM = (
    "(EngineCore_DP0 pid=123) ERROR 11-30 14:00:01 [core.py:700] ValueError: No available memory for the "
    "cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
)
