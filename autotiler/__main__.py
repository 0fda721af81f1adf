"""``python -m autotiler`` is the ``autotiler`` command (``generate``, ``build``, ``run``, ``report``;
``python -m autotiler MODEL.py [options]`` is ``generate``)."""

import sys

from .command import main

sys.exit(main())
