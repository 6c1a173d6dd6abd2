"""The GPU memory planner: architecture specs, cost terms, settings and rows, each phase's rows, the estimate, vLLM rows, the plan and the OOM checklist."""
