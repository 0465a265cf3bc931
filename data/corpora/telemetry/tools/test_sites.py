from sites import PILOT_SITES, by_city, cafe, café


def test_ascii_alias_builds_the_same_site():
    built = cafe(
        "X", "Y",
        "h1",
    )
    assert built == café("X", "Y", "h1")


def test_pilot_has_one_site_in_lyon():
    assert [s.name for s in by_city("Lyon")] == ["Café Lumière"]


def test_every_site_has_hosts():
    for site in PILOT_SITES:
        assert site.hosts, f"{site.name} has no hosts"


# pytest captures print() output, so a failing site check shows what the factory printed.
