"""Package discovery for setuptools (the project's metadata is in pyproject.toml).

Every package is found, none listed by hand: ``msjgym`` and its subpackages (a new family's
``msjgym/systems/<family>/`` included), and the top-level ``policies/`` folder, installed as ``msjgym.policies`` with
its subpackages (a new family's ``policies/<family>/`` included). pyproject.toml alone cannot say the second: its
``packages.find`` finds ``policies`` under its own name, and the rename needs ``package_dir``."""
from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["msjgym", "msjgym.*"])
    + [f"msjgym.{name}" for name in find_packages(include=["policies", "policies.*"])],
    package_dir={"msjgym.policies": "policies"},
)
