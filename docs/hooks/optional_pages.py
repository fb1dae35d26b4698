"""MkDocs hook: pages other branches of the project add (``docs/rllib.md``) join the navigation
when they exist, so the site builds (``--strict`` included) with or without them."""

from __future__ import annotations

from pathlib import Path

#: page -> its title, listed after the OpenSpiel page when the file exists
OPTIONAL = {"rllib.md": "RLlib"}


def on_config(config, **kwargs):
    docs = Path(config["docs_dir"])
    nav = config["nav"]
    anchor = next(i for i, item in enumerate(nav) if "OpenSpiel" in item)
    for page, title in OPTIONAL.items():
        listed = any(page in item.values() for item in nav if isinstance(item, dict))
        if (docs / page).is_file() and not listed:
            anchor += 1
            nav.insert(anchor, {title: page})
    return config
