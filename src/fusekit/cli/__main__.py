"""``python -m fusekit.cli``: the ``fusekit`` command."""

import sys

from fusekit.cli import main

sys.exit(main())
