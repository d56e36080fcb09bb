"""Benchmarks of the chat console against bare vLLM (`make bench`, or `python -m bench [--full]`).

Figures, not pass/fail tests: every figure is measured side by side in one run, against the same vLLM
server, and printed next to its target. `bench.chainlit_client` is also a reusable client of a running
Chainlit app (the socket.io protocol the browser speaks), for load tests.
"""
