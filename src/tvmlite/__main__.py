"""`python -m tvmlite` is the `tvms` command."""

import sys

from tvmlite.cli import main

sys.exit(main())
