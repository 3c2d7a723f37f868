"""`python -m tvmlite` is the `tvms` command."""

from tvmlite.cli import run

run()
