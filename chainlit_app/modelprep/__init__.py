"""Model folders we build ourselves. `build.py` runs under the engine's Python (torch, transformers)."""
