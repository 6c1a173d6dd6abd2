"""The GPU memory planner: architecture specs, cost terms, the estimate, vLLM rows, the plan and the OOM checklist."""
