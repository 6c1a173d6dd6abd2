"""Build the offline wheel bundle for the GPU image (`.gpu-wheels/`, git-ignored, carried with the working tree).

The GPU image has Python 3.12, torch 2.11 (CUDA 13.0), transformers 5.17, peft and accelerate, reaches no
package index, and receives at most 64 MiB with the working tree. This script asks pip (metadata only,
``--dry-run --report``) what the image's packages resolve to and what the training path needs on top, then
downloads only the difference as cp312 manylinux wheels. bitsandbytes (a 41 MiB wheel of every CUDA and ROCm
build) is installed here with ``--target`` and pruned to ``libbitsandbytes_cuda130.so``; the device puts that
folder on ``PYTHONPATH``. pyarrow (~45 MiB) does not fit: datasets uses the image's, and the install script
(``benchmarks/gpu_install.sh``) falls back to ``--no-deps`` when the image's pyarrow or hub is older than the
pinned datasets asks for.

Run here (needs the package index): ``python benchmarks/gpu_wheels.py [--dest .gpu-wheels] [--force]``.
``--python-version 3.11`` builds a throwaway bundle for this machine's Python to dry-run the install line.
The last line printed is the bundle's size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# What the GPU image ships; the bundle leaves out everything these resolve to. torch stands in as an empty
# local wheel (its CUDA dependencies are not on this index) plus the dependencies its metadata declares.
TORCH = "2.11.0+image"
TORCH_DEPS = ["filelock", "typing-extensions", "setuptools", "sympy", "mpmath", "networkx", "jinja2", "markupsafe",
              "fsspec", "triton"]
IMAGE = [f"torch=={TORCH}", "transformers==5.17.0", "peft", "accelerate"]
# What `evaluator train` and the driver import on top of the image (read from an import trace of
# `evaluator train --quantize 4bit` with a local judge, plus the list), pinned to the versions the
# test suite runs with.
NEEDED = [
    "trl==1.16.0",
    "datasets==5.2.0",
    "math-verify==0.9.0",
    "jsonschema==4.26.0",
    "jsonschema-rs==0.60.3",  # core/schemas.py validates with it (the training path checks rubrics and configs)
    "openpyxl",
    "xlrd",
    "typer",
    "rich",
    "pyyaml",
    "pandas",
]
# Installed by name on the device (their dependencies come from the bundle or the image).
TOP_LEVEL = ["trl", "datasets", "math-verify", "jsonschema", "jsonschema-rs", "openpyxl", "xlrd", "typer", "rich"]
# The CLI's own packages come with the image's transformers; bundled anyway (5 MiB) in case the image lacks them.
# The install script adds these, and pandas, only where the image cannot import them.
ALWAYS = {"typer", "rich", "click", "shellingham", "annotated-doc", "pygments", "markdown-it-py", "mdurl",
          "pydantic", "pydantic-core", "annotated-types", "typing-inspection"}
NOT_BUNDLED = {"pyarrow", "bitsandbytes"}  # the image's pyarrow; bitsandbytes travels pruned
BNB = "bitsandbytes==0.50.2"
BNB_KEEP = "libbitsandbytes_cuda130.so"
PLATFORMS = ["manylinux2014_x86_64", *(f"manylinux_2_{m}_x86_64" for m in (17, 24, 28, 31, 34))]
LIMIT_MIB = 40


def norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def target_flags(py: str) -> list[str]:
    flags = ["--only-binary=:all:", "--python-version", py, "--implementation", "cp"]
    for plat in PLATFORMS:
        flags += ["--platform", plat]
    return flags


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def stand_in_torch(folder: Path) -> Path:
    """An empty ``torch`` wheel of version :data:`TORCH`, so the resolver treats torch as present."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"torch-{TORCH}.dist-info"
    wheel = folder / f"torch-{TORCH}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {TORCH}\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: stand-in\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
    return folder


def resolve(requirements: list[str], py: str, tmp: Path, tag: str) -> dict[str, str]:
    """Name → version pip would install for ``requirements`` on the target (metadata only, nothing installed)."""
    report = tmp / f"{tag}.json"
    pip(
        "install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report),
        "--find-links", str(stand_in_torch(tmp / "stand-in")),
        "--target", str(tmp / "never"), *target_flags(py), *requirements,
    )
    doc = json.loads(report.read_text(encoding="utf-8"))
    return {norm(i["metadata"]["name"]): i["metadata"]["version"] for i in doc["install"]}


def bundle_bitsandbytes(dest: Path, py: str, tmp: Path) -> None:
    """bitsandbytes with only the CUDA 13.0 library, as an importable folder (dist-info kept for version checks)."""
    pip("download", "--quiet", "--no-deps", "-d", str(tmp / "bnb"), *target_flags(py), BNB)
    wheel = next((tmp / "bnb").glob("bitsandbytes-*.whl"))
    target = dest / "bnb"
    pip("install", "--quiet", "--no-deps", "--no-compile", "--target", str(target), str(wheel))
    for lib in (target / "bitsandbytes").glob("libbitsandbytes_*"):
        if lib.name != BNB_KEEP:
            lib.unlink()
    for cache in target.rglob("__pycache__"):
        shutil.rmtree(cache)


def size_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=Path(".gpu-wheels"))
    parser.add_argument("--python-version", default="3.12")
    parser.add_argument("--force", action="store_true", help="replace an existing bundle")
    parser.add_argument("--datasets", default="5.2.0",
                        help="datasets version: 5.2.0 needs pyarrow>=24 and huggingface-hub>=1.31; 5.0.0 needs pyarrow>=21")
    args = parser.parse_args()
    if args.dest.exists():
        if not args.force:
            print(f"{args.dest} exists; pass --force to rebuild it", file=sys.stderr)
            return 2
        shutil.rmtree(args.dest)
    wheels = args.dest / "wheels"
    wheels.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        image = {**resolve(IMAGE, args.python_version, tmp, "image"), **dict.fromkeys(TORCH_DEPS, "image")}
        needed = [f"datasets=={args.datasets}" if n.startswith("datasets==") else n for n in NEEDED]
        full = resolve([*IMAGE, *needed], args.python_version, tmp, "full")
        bundle = sorted(n for n in full if (n not in image or n in ALWAYS) and n not in NOT_BUNDLED)
        pip("download", "--quiet", "--no-deps", "-d", str(wheels), *target_flags(args.python_version),
            *(f"{n}=={full[n]}" for n in bundle))
        if args.python_version == "3.12":
            bundle_bitsandbytes(args.dest, args.python_version, tmp)
    (args.dest / "requirements.txt").write_text("\n".join(TOP_LEVEL) + "\n", encoding="utf-8")
    (args.dest / "bundle.json").write_text(
        json.dumps({"python": args.python_version, "image_assumed": IMAGE, "image_resolved": image, "bundled": {n: full[n] for n in bundle},
                    "left_to_the_image": sorted(NOT_BUNDLED - {"bitsandbytes"})}, indent=1),
        encoding="utf-8",
    )
    total = size_mib(args.dest)
    for path in sorted(wheels.iterdir()):
        print(f"{path.stat().st_size / 2**20:7.2f} MiB  {path.name}")
    if (args.dest / "bnb").exists():
        print(f"{size_mib(args.dest / 'bnb'):7.2f} MiB  bnb/ (bitsandbytes, {BNB_KEEP} only)")
    print(f"gpu wheel bundle: {len(bundle)} wheels + bitsandbytes folder, {total:.1f} MiB in {args.dest}"
          f" (limit {LIMIT_MIB} MiB)")
    return 0 if total <= LIMIT_MIB else 1


if __name__ == "__main__":
    sys.exit(main())
