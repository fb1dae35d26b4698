"""Deprecated: behaviour cloning (collect_demonstrations, dataset_demonstrations, pretrain_policy)
moved to :mod:`agents.imitation`.

Every public name of the new module is still importable from here for one version, with a
``DeprecationWarning``; import it from :mod:`agents.imitation` instead.
"""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "agents.imitation")
