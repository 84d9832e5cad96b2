"""Benchmarks: workloads, the discrete-event simulator, the harness, reports and the CLI."""


__all__: list[str] = []
