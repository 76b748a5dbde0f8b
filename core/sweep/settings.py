"""The settings a sweep tries: every context limit crossed with every fill order, under one plan or none."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

from ..errors import RequestError

FILL_ORDERS = (("history", "evidence"), ("evidence", "history"))


@dataclass(frozen=True)
class Setting:
    """``None`` keeps what each request recorded."""

    context_limit: int | None = None
    fill_order: tuple[str, ...] | None = None
    plan_name: str | None = None
    plan: dict[str, Any] | None = None  # the plan's JSON (carried whole, so a remote worker needs no file)

    @property
    def label(self) -> str:
        parts = [f"limit {self.context_limit}" if self.context_limit is not None else "recorded limit"]
        if self.fill_order is not None:
            parts.append("fill " + ",".join(self.fill_order))
        if self.plan_name is not None:
            parts.append(f"plan {self.plan_name}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "context_limit": self.context_limit,
                "fill_order": list(self.fill_order) if self.fill_order is not None else None,
                "plan": self.plan_name, "plan_data": self.plan}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Setting":
        fill = data.get("fill_order")
        return cls(data.get("context_limit"), tuple(fill) if fill is not None else None, data.get("plan"),
                   data.get("plan_data"))


def parse_limits(text: str | None) -> list[int | None]:
    if not text:
        return [None]
    limits: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        if part in ("recorded", "r"):
            limits.append(None)
            continue
        scale = 1
        if part.endswith("k"):
            part, scale = part[:-1], 1024
        if not part.isdigit() or int(part) * scale <= 0:
            raise RequestError([("--context-limit", f"{part!r} is not a positive number of tokens "
                                                    "(e.g. 8192,16k,recorded)")], source="command line")
        limits.append(int(part) * scale)
    return list(dict.fromkeys(limits))


def parse_fill_orders(texts: list[str] | None) -> list[tuple[str, ...] | None]:
    """``--fill-order`` may be given more than once; ``both`` tries the two orders, ``recorded`` keeps each
    request's own."""
    if not texts:
        return [None]
    orders: list[tuple[str, ...] | None] = []
    for text in texts:
        if text.strip() == "both":
            orders += list(FILL_ORDERS)
            continue
        if text.strip() == "recorded":
            orders.append(None)
            continue
        order = tuple(p.strip() for p in text.split(",") if p.strip())
        if sorted(order) != ["evidence", "history"]:
            raise RequestError([("--fill-order", f"{text!r} must name history and evidence once each "
                                                 "(e.g. evidence,history), or be both or recorded")],
                               source="command line")
        orders.append(order)
    return list(dict.fromkeys(orders))


def load_plan(path: str | None) -> tuple[str | None, dict[str, Any] | None]:
    if path is None:
        return None, None
    from ..loading import read_json
    from ..plans import parse_plan

    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("plan"), dict):
        data = data["plan"]  # a plan request: its plan
    parse_plan(data, source=path)  # refuse a bad plan once, up front
    return Path(path).name, data


def settings_from(limits: str | None, fill_orders: list[str] | None, plan: str | None) -> list[Setting]:
    plan_name, plan_data = load_plan(plan)
    return [Setting(limit, order, plan_name, plan_data)
            for limit, order in product(parse_limits(limits), parse_fill_orders(fill_orders))]
