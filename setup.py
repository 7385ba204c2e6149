"""Packaging that pyproject.toml cannot say: the packages found under model/ and explorer/, plus
`model.assets`, which pyproject.toml maps onto the top-level assets/ folder (the package finder
only looks inside model/, so it would never list it)."""
from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["model*", "explorer*"]), "model.assets"])
