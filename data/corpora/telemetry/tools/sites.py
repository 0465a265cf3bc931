"""Demo sites for the staging dashboards: the coffee chain that pilots the agent.

The pilot customer names its sites in French, so the factory is `café()`; `cafe()` is the ASCII
spelling for people without a compose key. Both build the same Site.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Site:
    name: str
    city: str
    kind: str = "café"
    hosts: tuple[str, ...] = field(default_factory=tuple)


def café(name: str, city: str, *hosts: str) -> Site:
    return Site(name=name, city=city, kind="café", hosts=tuple(hosts))


def cafe(name: str, city: str, *hosts: str) -> Site:
    # ASCII alias of café(); keep the two in sync.
    return café(name, city, *hosts)


def roastery(name: str, city: str, *hosts: str) -> Site:
    return Site(name=name, city=city, kind="roastery", hosts=tuple(hosts))


PILOT_SITES = [
    café(
        "Café Lumière", "Lyon",
        "lum-pos-1", "lum-pos-2",
    ),
    café(
        "Le Petit Café", "Paris",
        "lpc-pos-1",
    ),
    cafe(
        "Cafe Nord", "Lille",
        "nord-pos-1",
    ),
    roastery("Torréfaction Sud", "Marseille", "sud-roast-1"),
]


def by_city(city: str) -> list[Site]:
    return [s for s in PILOT_SITES if s.city == city]
