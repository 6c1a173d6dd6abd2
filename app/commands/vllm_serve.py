"""`evaluator vllm-serve`: start TRL's vLLM server (server-mode rollouts) with the resolved model."""

from __future__ import annotations

import shlex
import subprocess

import typer

from evaluator.core.console import fail


def register(app: typer.Typer) -> None:
    @app.command("vllm-serve")
    def vllm_serve_cmd(
        model: str = typer.Option(..., "--model", help="The run's --model: preset, tiny, hub id or local path."),
        host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0 to serve another machine)."),
        port: int = typer.Option(8000, "--port", help="Port (the run's --vllm-server-port)."),
        gpu_memory_utilization: float = typer.Option(0.9, "--gpu-memory-utilization", help="GPU fraction for vLLM."),
        tensor_parallel_size: int = typer.Option(1, "--tensor-parallel-size", help="GPUs per model replica."),
        max_model_len: int = typer.Option(None, "--max-model-len", help="Context length (default: the model's)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the command instead of starting it."),
    ) -> None:
        """Serve the student with `trl vllm-serve` for `evaluator train --use-vllm --vllm-mode server`."""
        from evaluator.models.source import ModelNotAvailable
        from evaluator.training.config import TrainingError
        from evaluator.training.vllm_options import INSTALL_HINT, VLLM_MAX, VLLM_MIN, installed_vllm
        from evaluator.training.vllm_server import ServeOptions, serve_command

        try:
            cmd = serve_command(ServeOptions(model, host, port, gpu_memory_utilization, tensor_parallel_size,
                                             max_model_len))
        except (TrainingError, ModelNotAvailable) as exc:
            fail(str(exc))
        if dry_run:
            typer.echo(shlex.join(cmd))
            return
        version = installed_vllm()
        if version is None:
            fail(f"vllm-serve needs vLLM, which is not installed here: {INSTALL_HINT}")
        if not VLLM_MIN <= version <= VLLM_MAX:
            fail(f"vLLM {version} is installed but TRL 1.16 works with 0.22–0.31 only: {INSTALL_HINT}")
        raise typer.Exit(subprocess.run(cmd, check=False).returncode)
