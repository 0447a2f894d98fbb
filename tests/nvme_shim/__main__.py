"""python -m tests.nvme_shim OUTDIR [DRIVE...]: write each drive's pages (see pages.py)."""

import sys

from .pages import main

sys.exit(main(sys.argv[1:]))
