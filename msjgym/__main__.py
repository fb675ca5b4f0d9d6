"""``python -m msjgym`` runs the command line."""
import sys

from msjgym.cli import main

sys.exit(main())
