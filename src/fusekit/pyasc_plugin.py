"""``pytest -p fusekit.pyasc_plugin``: the documented name of the pytest plugin :mod:`fusekit.pyasc.plugin`.

The name is this very module (not a copy), so pytest registers the plugin's hooks and state once.
"""

import sys

from fusekit.pyasc import plugin

sys.modules[__name__] = plugin
