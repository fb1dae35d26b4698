"""Deprecated: the RLlib env creator, masking RLModule and export moved to
:mod:`agents.rllib`.

Every public name of the new module is still importable from here for one version, with a
``DeprecationWarning``; import it from :mod:`agents.rllib` instead.
"""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "agents.rllib")
