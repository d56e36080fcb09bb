"""The vLLM server: command building, supervision and probes. Knows nothing of Chainlit."""
