"""``python -m autotiler MODEL.py [-o DIR] [--L1 N] ...``"""

import sys

from .cli import main

sys.exit(main())
