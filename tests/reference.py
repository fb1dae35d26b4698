"""An independent, slow re-statement of the layout rules, written from docs/rules.md without
the engine's incremental bookkeeping. Property tests check the engine against it."""

from __future__ import annotations

from dominoes_env.core import RuleConfig

ENDS = ("left", "right", "up", "down")


class ReferenceLayout:
    def __init__(self, rules: RuleConfig):
        self.rules = rules
        self.tiles = rules.tiles.tiles
        self.value = {}  # end -> pip value showing
        self.outer = {}  # end -> index of the outermost tile on that end
        self.arms = {e: [] for e in ENDS}  # tiles played on each end, in order
        self.lead = None
        self.spinner = None  # (tile index, end it sits on or None for the lead, arm position)

    def open_ends(self):
        if self.lead is None:
            return []
        ends = ["left", "right"]
        if self.spinner is not None and self.cross_open():
            ends += ["up", "down"]
        return ends

    def spinner_sides_covered(self) -> int:
        tile, end, pos = self.spinner
        if end is None:
            return bool(self.arms["left"]) + bool(self.arms["right"])
        return 1 + (len(self.arms[end]) > pos + 1)

    def cross_open(self) -> bool:
        if self.spinner is None:
            return False
        if self.rules.spinner_cross == "immediately":
            return True
        return self.spinner_sides_covered() == 2

    def legal(self, hand_mask: int) -> set[tuple[int, str | None]]:
        mine = [i for i in range(len(self.tiles)) if hand_mask >> i & 1]
        if self.lead is None:
            return {(i, None) for i in mine}
        return {(i, e) for e in self.open_ends() for i in mine if self.value[e] in self.tiles[i]}

    def play(self, tile: int, end: str | None) -> None:
        a, b = self.tiles[tile]
        if end is None:
            self.lead = tile
            self.value["left"], self.value["right"] = a, b
            self.outer["left"] = self.outer["right"] = tile
            if a == b and self.rules.spinner != "none":
                self.spinner = (tile, None, None)
                self.value["up"] = self.value["down"] = a
            return
        assert (tile, end) in self.legal(1 << tile), "engine allowed an illegal play"
        v = self.value[end]
        self.value[end] = b if a == v else a
        self.outer[end] = tile
        self.arms[end].append(tile)
        if (
            a == b
            and self.spinner is None
            and self.rules.spinner == "first_double"
            and end in ("left", "right")
        ):
            self.spinner = (tile, end, len(self.arms[end]) - 1)
            self.value["up"] = self.value["down"] = a

    def count(self) -> int:
        """Count the open ends from scratch, following the text of RULES.md."""
        if self.lead is None:
            return 0
        total = 0
        left, right = self.outer["left"], self.outer["right"]
        if left == right:  # one tile is the outer tile of both long sides: count it once
            total += sum(self.tiles[left])
        else:
            for end in ("left", "right"):
                total += self._end_value(end)
        for end in ("up", "down"):
            if self.arms[end]:
                total += self._end_value(end)
        return total

    def _end_value(self, end: str) -> int:
        a, b = self.tiles[self.outer[end]]
        if a != b:
            return self.value[end]
        # a double outermost: counts both halves, unless it is the spinner with both sides covered
        if (
            self.spinner is not None
            and self.spinner[0] == self.outer[end]
            and self.spinner_sides_covered() == 2
        ):
            return 0
        return 2 * a
