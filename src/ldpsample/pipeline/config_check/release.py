"""What a publication of an ``events.<name>`` entry needs, checked before any job.

:func:`events_release_problems`: with ``release: true`` every input of the mechanism other
than the users' data is public (docs/publishing.md); with ``release: false`` the publication
keys (:data:`RELEASE_KEYS`) keep their defaults. Also the ledger's default file
(:func:`events_ledger`) and what ``top_items: auto`` means (:data:`AUTO_TOP_ITEMS`).
"""

from __future__ import annotations

from typing import Any

from .errors import ConfigError, _combined, _show, config_error

#: Keys that only a publication uses, with their schema defaults (a config error with
#: release: false unless at the default; tests/test_publish.py checks them against the schema).
RELEASE_KEYS: dict[str, Any] = {
    "release_seed": None,
    "samples": 1,
    "attributes_public": False,
    "subcategories": None,
    "prior_smoothing": 0,
    "release_mode": None,
    "subcategory_shares": None,
    "ledger": None,
    "budget": None,
    "population": None,
}
#: Where the ledger of events.<name> lives when events.<name>.ledger is null: the project's one
#: ledger, whatever the entry's name (spend follows the users across renames and entries).
DEFAULT_LEDGER = "privacy/ledger.sqlite"


def events_ledger(name: str, entry: dict) -> str:
    """The ledger file of ``events.<name>`` (its ``ledger`` key, or the project's one)."""
    del name
    return entry.get("ledger") or DEFAULT_LEDGER


def check_events_release(key: str, entry: dict) -> None:
    """Raise one :class:`ConfigError` listing :func:`events_release_problems`, if any."""
    problems = events_release_problems(key, entry)
    if problems:
        raise ConfigError(_combined(problems))


def events_release_problems(key: str, entry: dict) -> list[str]:
    """What makes a release publishable, checked before any job (docs/publishing.md): every
    input of the mechanism other than the users' data is public. With ``release: false`` the
    publication keys must keep their defaults (they would be ignored). One line per problem,
    each naming its key and the way out."""
    problems: list[str] = []

    def problem(where: str, message: str) -> None:
        problems.append(str(config_error(where, message)))

    prior = entry["prior"]
    if not entry.get("release"):
        for name, default in RELEASE_KEYS.items():
            value = entry.get(name, default)
            if value != default:
                problem(
                    f"{key}.{name}",
                    f"{_show(value)} is only used by a publication: set {key}.release: true, "
                    f"or remove {name}",
                )
        return problems
    public_table = isinstance(prior, dict) and "path" in prior
    reused_spec = isinstance(prior, dict) and "spec" in prior
    if prior in ("pooled", "user_mean"):
        problem(
            f"{key}.prior",
            f"{prior!r} is computed from the very users being released, so the release would "
            "not be ε-LDP; with release: true use prior: uniform (with items), a public table "
            "{path, user, item, count, attributes} or an earlier spec {spec: <folder>}",
        )
    if prior == "uniform" and entry.get("items") is None:
        problem(
            f"{key}.items",
            "null: a release's item domain must be public; list the items, or give a public "
            "prior table (prior: {path, ...}) whose items are the domain",
        )
    if prior == "uniform" and entry["attributes"] and not entry.get("subcategories"):
        problem(
            f"{key}.subcategories",
            "null: a release's subcategories must be public; list each attribute's values "
            f"(subcategories: {{{entry['attributes'][0]}: [...]}}), or give a public prior "
            "table (prior: {path, ...})",
        )
    if entry.get("top_items") not in (None, "auto") and not public_table:
        problem(
            f"{key}.top_items",
            f"{entry['top_items']!r} would rank the items on the private table; with release: "
            "true top_items ranks a public prior table's items, so give prior: {path, ...} "
            "or leave top_items at auto",
        )
    if reused_spec and entry.get("items") is not None:
        problem(
            f"{key}.items", "a reused spec (prior: {spec: ...}) fixes the domain: set items: null"
        )
    if entry.get("rank_items_by") is not None:
        problem(
            f"{key}.rank_items_by",
            f"{entry['rank_items_by']!r} ranks the items on the private table; with release: "
            "true set rank_items_by: null (top_items ranks the public prior table)",
        )
    if entry["min_users"] > 1:
        problem(
            f"{key}.min_users",
            f"{entry['min_users']!r} would make a subcategory's release depend on other users' "
            "data; with release: true set min_users: 1 (every spec subcategory is released)",
        )
    if entry["min_user_count"] > 0 and not entry.get("attributes_public"):
        problem(
            f"{key}.min_user_count",
            f"{_show(entry['min_user_count'])}: a participation rule on a user's own data "
            "discloses whether it passed; set min_user_count: 0, or declare subcategory "
            "membership public (attributes_public: true; the manifest states the rule)",
        )
    if entry.get("release_mode") == "joint" and entry.get("attributes_public"):
        problem(
            f"{key}.release_mode",
            "'joint' keeps membership hidden (one draw per attribute from every user); set "
            "attributes_public: false, or release_mode: per_subcategory",
        )
    if (
        entry.get("subcategory_shares") is not None
        and entry.get("release_mode") != "joint"
        and not reused_spec
    ):
        problem(
            f"{key}.subcategory_shares",
            f"{_show(entry['subcategory_shares'])}: only a joint release uses shares; set "
            "release_mode: joint, or subcategory_shares: null",
        )
    return problems
