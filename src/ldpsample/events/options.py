"""The options of one events table (``events.<name>`` of a config), as one frozen object.

:class:`EventsOptions` holds every key of an evaluation (path, user, item, count, attributes,
prior, items, top_items, rank_items_by, activity_by, min_user_count, activity_scope, min_users,
exclude_users, on_null, on_bad_rows, epsilons, methods) with the kinds as enums. The workflow
builds it once per entry from the checked config (events_common.smk) and hands each rule the
fields it uses (:meth:`EventsOptions.params`, :data:`HISTOGRAM_FIELDS`, :data:`ROSTER_FIELDS`,
:data:`METRICS_FIELDS`); the scripts rebuild it (:meth:`EventsOptions.from_params`) and pass it
whole to :func:`~ldpsample.events.counting.histograms.build_event_histograms` and
:func:`~ldpsample.events.evaluation.evaluate_events`. Its defaults are the events schema's
(workflow/schemas/events.schema.yaml; a test keeps the two equal), so the Python API and a config
entry ``{path, user, item}`` give the same numbers.

Standard library only: the workflow loads this file by path, without the package's polars (and
without registering it as a module, so its annotations are evaluated, not postponed: a dataclass
with postponed annotations looks its module up in ``sys.modules``).
"""

import dataclasses
import enum
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "AUTO",
    "AUTO_TOP_ITEMS",
    "HISTOGRAM_FIELDS",
    "METRICS_FIELDS",
    "ROSTER_FIELDS",
    "ActivityScope",
    "EventsOptions",
    "Method",
    "OnBadRows",
    "OnNull",
    "PriorKind",
    "attribute_prior",
]


class PriorKind(enum.StrEnum):
    """How a subcategory's prior q is made. A config writes the first three by name, a public
    table or an earlier spec as a mapping; ``spec`` (a release's domain and q) and ``given``
    (the map/reduce steps' priors over every bucket) are what the metrics of such jobs use."""

    USER_MEAN = "user_mean"
    POOLED = "pooled"
    UNIFORM = "uniform"
    TABLE = "table"
    SPEC = "spec"
    GIVEN = "given"


class ActivityScope(enum.StrEnum):
    """Where ``min_user_count`` is counted: the subcategory's top items, or the whole table."""

    TOP_ITEMS = "top_items"
    GLOBAL = "global"


class OnNull(enum.StrEnum):
    """A row with a null user or item: dropped (and counted) or an error."""

    DROP = "drop"
    ERROR = "error"


class OnBadRows(enum.StrEnum):
    """A faulty row: an error naming its file, line and value, or skipped and counted."""

    ERROR = "error"
    SKIP = "skip"


class Method(enum.StrEnum):
    """A mechanism evaluated (:data:`ldpsample.events.schemas.METHODS` lists its divergences)."""

    MINIMAX = "minimax"
    MOLLIFIER_TV = "mollifier_tv"
    MOLLIFIER_KL = "mollifier_kl"
    RANDOMIZED_RESPONSE = "randomized_response"


#: ``top_items: auto``: :data:`AUTO_TOP_ITEMS` in an evaluation, the public domain in a release.
AUTO = "auto"
#: The items per subcategory of ``top_items: auto`` in an evaluation.
AUTO_TOP_ITEMS = 100


@dataclasses.dataclass(frozen=True, kw_only=True)
class EventsOptions:
    """The keys of one ``events.<name>`` entry that an evaluation reads, defaults as the schema.

    ``key`` is the entry's config key (``events.<name>``), which error messages name. Lists are
    held as tuples, the kinds as enums (text is converted; a value outside the kind raises a
    ``ValueError`` naming ``<key>.<field>``). ``prior`` is a :class:`PriorKind` or a mapping (a
    public table ``{path, user, item, count, attributes}``, or ``{spec: <folder>}``); a public
    table's absent columns are the events table's. ``top_items`` is an integer, None (every item)
    or ``"auto"`` (:attr:`evaluation_top_items`).
    """

    path: Any
    user: str
    item: str
    key: str = "events"
    count: str | None = None
    attributes: tuple[str, ...] = ()
    prior: PriorKind | Mapping[str, Any] = PriorKind.POOLED
    items: tuple[Any, ...] | None = None
    top_items: int | str | None = AUTO
    rank_items_by: str | None = None
    activity_by: str | None = None
    min_user_count: float = 0
    activity_scope: ActivityScope = ActivityScope.TOP_ITEMS
    min_users: int = 1
    exclude_users: tuple[Any, ...] = ()
    on_null: OnNull = OnNull.DROP
    on_bad_rows: OnBadRows = OnBadRows.ERROR
    epsilons: tuple[float, ...] = (0.5, 1, 2, 4, 8)
    methods: tuple[Method, ...] = tuple(Method)

    def __post_init__(self) -> None:
        convert = {
            "activity_scope": ActivityScope,
            "on_null": OnNull,
            "on_bad_rows": OnBadRows,
        }
        for name, kind in convert.items():
            object.__setattr__(self, name, self._kind(name, kind, getattr(self, name)))
        prior = self.prior
        if isinstance(prior, Mapping):
            prior = dict(prior)
            if "path" in prior:  # a public table's columns default to the events table's
                defaults = {
                    "user": self.user,
                    "item": self.item,
                    "count": self.count,
                    "attributes": list(self.attributes),
                }
                prior = {**defaults, **prior}
            object.__setattr__(self, "prior", prior)
        else:
            object.__setattr__(self, "prior", self._kind("prior", PriorKind, prior))
        for name in ("attributes", "exclude_users", "epsilons"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.items is not None:
            object.__setattr__(self, "items", tuple(self.items))
        methods = tuple(self._kind("methods", Method, m) for m in self.methods)
        object.__setattr__(self, "methods", methods)
        top = self.top_items
        if not (
            top is None
            or top == AUTO
            or (isinstance(top, numbers.Integral) and not isinstance(top, bool) and top >= 1)
        ):
            raise ValueError(
                f"config key {self.key}.top_items: {top!r} is not an integer >= 1, null or auto"
            )

    def _kind(self, name: str, kind: type[enum.StrEnum], value: Any) -> Any:
        try:
            return kind(value)
        except ValueError:
            allowed = " or ".join(m.value for m in kind)
            raise ValueError(f"config key {self.key}.{name}: {value!r} is not {allowed}") from None

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any], *, key: str = "events") -> "EventsOptions":
        """The options of a (checked) config entry or a rule's params: its keys that are
        fields (other keys, such as a release's, are not an evaluation's); absent ones take
        the defaults. A ``key`` in ``entry`` wins over the argument."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in entry.items() if k in names}
        values.setdefault("key", key)
        return cls(**values)

    from_params = from_entry

    @property
    def prior_kind(self) -> PriorKind:
        """The prior's kind: a mapping is a public table, or a spec (``{spec: ...}``)."""
        if isinstance(self.prior, Mapping):
            return PriorKind.SPEC if "spec" in self.prior else PriorKind.TABLE
        return self.prior

    @property
    def evaluation_top_items(self) -> int | None:
        """``top_items`` as an evaluation reads it: ``auto`` is :data:`AUTO_TOP_ITEMS`."""
        return AUTO_TOP_ITEMS if self.top_items == AUTO else self.top_items  # type: ignore[return-value]

    def for_attribute(self, attribute: str | None) -> "EventsOptions":
        """The options of one attribute's histogram job: ``attributes`` just ``[attribute]``
        (none for the whole table, ``attributes: []``) and a public table prior restricted to
        that attribute's column. ``None`` keeps every attribute."""
        if attribute is None or not self.attributes:
            return self
        prior = attribute_prior(self.prior, attributes=self.attributes, attribute=attribute)
        return dataclasses.replace(self, attributes=(attribute,), prior=prior)

    def params(self, fields: Iterable[str]) -> dict[str, Any]:
        """The named fields as plain, deterministic values (a rule's ``params:``): kinds as
        text, sequences as lists, sets (items, excluded users, ε, methods) sorted, a prior
        mapping by key."""
        out: dict[str, Any] = {}
        for name in fields:
            value = getattr(self, name)
            if name in ("items", "exclude_users"):
                value = None if value is None else sorted(str(v) for v in value)
            elif name == "epsilons":
                value = sorted(float(e) for e in value)
            elif name == "methods":
                value = sorted(str(m) for m in value)
            elif name == "prior":
                value = (
                    {k: _plain(value[k]) for k in sorted(value)}
                    if isinstance(value, Mapping)
                    else str(value)
                )
            else:
                value = _plain(value)
            out[name] = value
        return out


def attribute_prior(prior: Any, *, attributes: Sequence[str], attribute: str | None) -> Any:
    """``prior`` for one attribute's job: a public table's ``attributes`` (one column per
    attribute of ``attributes``, in order) restricted to the column of ``attribute``; any other
    prior, no attribute (``None``) or no attributes at all, ``prior`` as it is."""
    if attribute is None or not attributes or not (isinstance(prior, Mapping) and "path" in prior):
        return prior
    index = list(attributes).index(attribute)
    return {**prior, "attributes": [list(prior["attributes"])[index]]}


def _plain(value: Any) -> Any:
    """Enums as text, tuples as lists (a YAML/JSON value)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_plain(v) for v in value]
    return value


#: The fields a histogram job (one job or the map/reduce steps) uses: all but ε and methods.
HISTOGRAM_FIELDS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(EventsOptions) if f.name not in ("epsilons", "methods")
)
#: The fields a roster job (every user of a release's table) uses (``item`` only completes the
#: object: the roster reads the user column alone).
ROSTER_FIELDS: tuple[str, ...] = (
    "key",
    "path",
    "user",
    "item",
    "exclude_users",
    "on_null",
    "on_bad_rows",
)
#: The fields a metrics job uses besides its prior kind: the ε and the methods.
METRICS_FIELDS: tuple[str, ...] = ("epsilons", "methods")
