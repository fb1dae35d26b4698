"""Straight Dominoes in RLlib (imports Ray and torch: the ``rllib`` extra), the pieces that
``python -m experiments.train_rllib`` trains with. Ray workers import this module by name, so
every node needs the project installed.

- :func:`make_env`: the env creator RLlib calls on each env runner: RLlib's ``PettingZooEnv``
  over ``straight_dominoes_v1.env`` (the AEC env, observations ``{"observation",
  "action_mask"}``; each agent gets the rewards accumulated since its previous turn);
- :class:`MaskedPPOModule`: RLlib's default PPO torch module (new API stack) that reads our
  observation dict as it is: the network sees ``"observation"``, and the logits of illegal
  actions are pushed to the float minimum with ``"action_mask"`` (int8) in inference,
  exploration and training, so the policy never samples, and never learns from, an illegal
  move. No key renaming or float mask is needed in the env;
- :func:`export_module`: writes the module's policy network (actor encoder + pi head) to the
  numpy ``.npz`` format of :mod:`agents.ppo`, so ``ppo:PATH`` plays it without torch or Ray.
"""

from __future__ import annotations

import os
from typing import Any

from dominoes_env.core.validation import short_repr

try:
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
        DefaultPPOTorchRLModule,
    )
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.utils.torch_utils import FLOAT_MIN
    from torch import nn
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f"agents.rllib needs RLlib and torch: pip install 'straight-dominoes[rllib]' ({err})"
    ) from err

__all__ = ["ENV_NAME", "MaskedPPOModule", "export_module", "make_env", "policy_layers"]

ENV_NAME = "straight_dominoes_v1_rllib"


def make_env(env_config: dict[str, Any] | None = None) -> PettingZooEnv:
    """RLlib's multi-agent env over the AEC env; ``env_config`` holds the env's options (a
    mapping of option names to values: RLlib passes its ``EnvContext``, a dict)."""
    from collections.abc import Mapping

    from dominoes_env import straight_dominoes_v1

    if env_config is None:
        env_config = {}
    if not isinstance(env_config, Mapping):  # 'ab' ended in dict()'s own ValueError
        raise TypeError(f"env_config must be a dict of the env's options (RLlib's EnvContext), "
                        f"not {short_repr(env_config)} ({type(env_config).__name__})")
    return PettingZooEnv(straight_dominoes_v1.env(**env_config))


def _split(batch: dict) -> tuple[dict, Any]:
    """``(batch with the plain observation, action mask)``; leaves ``batch`` unchanged."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict):
        return batch, None
    return {**batch, Columns.OBS: obs["observation"]}, obs["action_mask"]


def _mask(out: dict, mask) -> dict:
    if mask is not None:
        logits = out[Columns.ACTION_DIST_INPUTS]
        out[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask == 0, FLOAT_MIN)
    return out


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """PPO's default torch RLModule over ``{"observation": Box, "action_mask": Box}``.

    The networks are built for the ``"observation"`` box; ``observation_space`` is the whole
    dict again after ``setup`` (what the env runners check against).
    """

    def __init__(self, *, observation_space=None, **kwargs):
        import gymnasium

        if not isinstance(observation_space, gymnasium.spaces.Dict) or set(
                observation_space.spaces) != {"observation", "action_mask"}:
            raise ValueError("MaskedPPOModule needs a Dict observation space with the keys "
                             f"'observation' and 'action_mask', not {observation_space}")
        self._observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observation"], **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self._observation_space_with_mask

    def _forward(self, batch: dict, **kwargs) -> dict:
        batch, mask = _split(batch)
        return _mask(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        batch, mask = _split(batch)
        return _mask(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings=None):
        batch, _ = _split(batch)
        return super().compute_values(batch, embeddings)


# -- export to the numpy format of agents.ppo -------------------------------------------------

_ACTIVATIONS = {nn.Tanh: "tanh", nn.ReLU: "relu", nn.ELU: "elu", nn.SiLU: "silu",
                nn.Sigmoid: "sigmoid", nn.Identity: "identity"}


def policy_layers(module: nn.Module) -> tuple[list[tuple[Any, Any]], str, tuple[Any, Any]]:
    """``([(w, b) per hidden layer], activation, (head_w, head_b))`` of the module's policy path
    (its actor encoder then its pi head), weights as ``(in, out)`` float32 numpy arrays.
    ``ValueError`` for a network the ``.npz`` format cannot hold (several activations, layer
    norm, a hidden layer in the head)."""
    encoder = module.encoder
    actor = getattr(encoder, "actor_encoder", None) or getattr(encoder, "encoder", None)
    if actor is None:
        raise ValueError(f"no actor encoder in {type(encoder).__name__}")
    linears: list[nn.Linear] = []
    activations: set[str] = set()
    for part in (actor, module.pi):
        for sub in part.modules():
            if isinstance(sub, nn.Linear):
                linears.append(sub)
            elif type(sub) in _ACTIVATIONS:
                if type(sub) is not nn.Identity:
                    activations.add(_ACTIVATIONS[type(sub)])
            elif not list(sub.children()):
                raise ValueError(f"layer {sub!r} cannot be exported to the .npz format")
    if len(activations) > 1:
        raise ValueError(f"mixed activations {sorted(activations)} cannot be exported")
    pi_linears = [m for m in module.pi.modules() if isinstance(m, nn.Linear)]
    if len(pi_linears) != 1:
        raise ValueError("the pi head must be one Linear layer (head_fcnet_hiddens=[])")

    def arrays(layer: nn.Linear):
        return (layer.weight.detach().cpu().to(torch.float32).numpy().T.copy(),
                layer.bias.detach().cpu().to(torch.float32).numpy().copy())

    hidden = [arrays(m) for m in linears[:-1]]
    return hidden, (activations.pop() if activations else "identity"), arrays(linears[-1])


def export_module(module: nn.Module, path: str | os.PathLike, metadata: dict[str, Any]) -> None:
    """Write the policy of ``module`` (a :class:`MaskedPPOModule`) to ``path`` for
    ``ppo:PATH`` (:class:`agents.ppo.PPOAgent`), atomically;
    :class:`~dominoes_env.policy_format.PolicyFileError` (a ``ValueError`` naming ``path``) for
    weights ``ppo:PATH`` would refuse (NaN, infinite or above
    :data:`~dominoes_env.policy_format.MAX_WEIGHT`: a diverged run;
    :func:`~dominoes_env.policy_format.weights_problem`), before anything is written."""
    from dominoes_env.obs import DEFAULT_VERSION as OBS_VERSION
    from dominoes_env.policy_format import write_policy

    hidden, activation, (head_w, head_b) = policy_layers(module)
    out: dict[str, Any] = {}
    for i, (w, b) in enumerate(hidden):
        out[f"w{i}"], out[f"b{i}"] = w, b
    out["action_w"], out["action_b"] = head_w, head_b
    obs_size = hidden[0][0].shape[0] if hidden else head_w.shape[0]
    meta = {"obs_size": int(obs_size), "num_actions": int(head_w.shape[1]),
            "obs_version": OBS_VERSION, **metadata}
    write_policy(path, out, activation, meta)  # checked, atomic
