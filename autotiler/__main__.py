"""``python -m autotiler`` is the ``autotiler`` command (``generate``, ``build``, ``run``, ``report``;
``python -m autotiler MODEL.py [options]`` is ``generate``)."""

import sys

from .cli import main

sys.exit(main())
