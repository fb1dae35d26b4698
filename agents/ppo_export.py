"""Export a trained (Maskable)PPO ``MlpPolicy`` to the numpy ``.npz`` format of
:mod:`agents.ppo`. Training-only: torch is imported here, never by :mod:`agents.ppo`.

>>> # after training:  export_policy(model, "agents/policies/ppo_2p.npz", {"rules": {...}})
"""

from __future__ import annotations

import os
from typing import Any

from dominoes_env.optional import require
from dominoes_env.policy_format import ACTIVATIONS, write_policy


def _activation_name(module) -> str:
    from torch import nn

    names = {nn.Tanh: "tanh", nn.ReLU: "relu", nn.ELU: "elu", nn.LeakyReLU: "leaky_relu",
             nn.Sigmoid: "sigmoid", nn.SiLU: "silu", nn.GELU: "gelu", nn.Identity: "identity"}
    for cls, name in names.items():
        if type(module) is cls:
            if cls is nn.LeakyReLU and module.negative_slope != 0.01:
                break
            if cls is nn.GELU and module.approximate != "none":
                break
            return name
    raise ValueError(
        f"activation {module!r} cannot be exported; supported: {', '.join(ACTIVATIONS)}")


def export_policy(model, path: str | os.PathLike, metadata: dict[str, Any] | None = None) -> None:
    """Write the policy network of ``model`` (a ``MaskablePPO`` or ``PPO`` with ``MlpPolicy``,
    or its ``.policy``) to ``path`` for :class:`agents.ppo.PPOAgent`.

    ``metadata`` is stored as JSON next to the weights; put the training rules under ``"rules"``
    (``RuleConfig.to_dict()``), the observation version under ``"obs_version"`` (default: the
    current ``OBS_VERSION``; it must be registered and match the policy's input size) and
    anything else worth keeping (steps, seed, git commit).
    Raises ``ValueError`` for a policy this format cannot hold (a non-flat observation, a
    features extractor other than flattening, an unsupported activation), and
    :class:`~dominoes_env.policy_format.PolicyFileError` (a ``ValueError`` naming ``path``) for
    weights ``ppo:PATH`` would refuse (NaN, infinite or above
    :data:`~dominoes_env.policy_format.MAX_WEIGHT`: a diverged run;
    :func:`~dominoes_env.policy_format.weights_problem`), before anything is written.
    """
    torch = require("torch", "train", "exporting a policy")
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from torch import nn

    from dominoes_env.core import RuleConfig
    from dominoes_env.obs import DEFAULT_VERSION as OBS_VERSION
    from dominoes_env.obs import observation_spec

    policy = getattr(model, "policy", model)
    extractor = getattr(policy, "pi_features_extractor", None) or policy.features_extractor
    if not isinstance(extractor, FlattenExtractor):
        raise ValueError("only FlattenExtractor policies can be exported, "
                         f"not {type(extractor).__name__}")
    space = policy.observation_space
    if getattr(space, "shape", None) is None or len(space.shape) != 1:
        raise ValueError(f"only flat Box observations can be exported, not {space}")
    arrays: dict[str, Any] = {}
    activation = None
    layers = 0
    for module in policy.mlp_extractor.policy_net:
        if isinstance(module, nn.Linear):
            arrays[f"w{layers}"] = module.weight.detach().cpu().to(torch.float32).numpy().T.copy()
            arrays[f"b{layers}"] = module.bias.detach().cpu().to(torch.float32).numpy().copy()
            layers += 1
        else:
            name = _activation_name(module)
            if activation not in (None, name):
                raise ValueError(f"mixed activations ({activation}, {name}) cannot be exported")
            activation = name
    head = policy.action_net
    if not isinstance(head, nn.Linear):
        raise ValueError(f"the action head must be a Linear layer, not {type(head).__name__}")
    arrays["action_w"] = head.weight.detach().cpu().to(torch.float32).numpy().T.copy()
    arrays["action_b"] = head.bias.detach().cpu().to(torch.float32).numpy().copy()
    meta = {"obs_size": int(space.shape[0]), "num_actions": int(head.out_features),
            "obs_version": OBS_VERSION, **(metadata or {})}
    spec = observation_spec(meta["obs_version"])  # a version this package encodes
    rules = meta.get("rules")
    if isinstance(rules, dict):
        want = spec.layout(RuleConfig.from_dict(rules)).size
        if want != meta["obs_size"]:
            raise ValueError(f"the policy takes {meta['obs_size']} inputs, but observation "
                             f"version {spec.version} has {want} for its rules")
    write_policy(path, arrays, activation or "identity", meta)  # checked, atomic
