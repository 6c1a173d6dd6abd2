"""Package discovery: every folder with an ``__init__.py`` under the top-level floors installs as ``evaluator.<path>``.

pyproject.toml cannot map a prefix onto several top-level folders declaratively, so a new pack (or any new
sub-package) would otherwise need its own lines there; this finds them instead.
"""

from setuptools import find_packages, setup

FLOORS = ("app", "core", "models", "methodology", "domains", "training", "evaluation")

packages = [
    f"evaluator.{name}"
    for name in find_packages(include=[f"{floor}*" for floor in FLOORS])
    if name.split(".")[0] in FLOORS
]
setup(packages=packages, package_dir={"evaluator": "."})
