"""Config validation whose first line names the key path and the bad value.

:func:`check_config` is what the workflow runs before any job: numbers written in exponent
form, which YAML 1.1 reads as strings (``1e-12``, ``1e6``), are read as the numbers the schema
expects (:func:`convert_exponent_numbers`); every number must be finite (JSON Schema's
``minimum`` lets NaN through, since every comparison with NaN is false) and every integer fit
in 64 bits; then the JSON Schema (draft 2020-12, ``$ref`` to sibling files) is checked.
Errors are raised as :class:`ConfigError` with a first line such as::

    config error at synthetic.epsilons[0]: -1 must be > 0

followed by the key's description from the schema. :func:`check_consistency` runs the
cross-field checks that a schema cannot express (theory, wpm, avazu.variants, events, ...),
which raise the same error through :func:`config_error`. The workflow runs both in
``check_config()`` of ``workflow/rules/common.smk`` and turns a ConfigError into a WorkflowError.

One module per concern, every public name re-exported here:

* :mod:`.errors` -- :class:`ConfigError`, ``config error at <key>: ...`` and the
  ``... and N more:`` message of several problems;
* :mod:`.yaml_numbers` -- numbers in exponent form read as numbers, finite, within 64 bits;
* :mod:`.schema` -- :func:`check_config`, the JSON Schema and the events entries' defaults;
  :mod:`.schema_messages` -- a schema error as one sentence naming the key;
* :mod:`.names` -- the folder names config values become (``eps~<ε>``, Avazu variants, events
  datasets);
* :mod:`.consistency` -- :func:`check_consistency` and the cross-field checks of data_dir,
  downloads, theory, wpm and avazu.variants;
* :mod:`.events` -- the events entries' checks; :mod:`.release` -- what a publication needs;
* :mod:`.entries` -- the same checks for entries given outside a config (the notebook path).

Light enough to load by path at parse time (``load_library_module`` in
``workflow/rules/common.smk``, as ``ldpsample_config_check`` with its modules as
``ldpsample_config_check.<module>``): relative imports only, the standard library and what
Snakemake itself imports (PyYAML, jsonschema, referencing, numpy), and of ldpsample only
``events/reading/files.py``, loaded by path.
"""

from __future__ import annotations

from .consistency import (
    check_avazu_variants,
    check_consistency,
    check_theory,
    check_wpm,
)
from .entries import check_events_entries
from .errors import ConfigError, config_error, key_path
from .events import check_events
from .names import (
    AVAZU_VARIANT_KEYS,
    EPSILON_FOLDER_PATTERN,
    EVENTS_NAME_PATTERN,
    avazu_variant_name,
    check_epsilon_folder_names,
    epsilon_folder_name,
)
from .release import (
    DEFAULT_LEDGER,
    RELEASE_KEYS,
    check_events_release,
    events_ledger,
    events_release_problems,
)
from .schema import apply_events_defaults, check_config, events_defaults
from .yaml_numbers import INT64_MAX, check_finite, convert_exponent_numbers

__all__ = [
    "AVAZU_VARIANT_KEYS",
    "DEFAULT_LEDGER",
    "EPSILON_FOLDER_PATTERN",
    "EVENTS_NAME_PATTERN",
    "INT64_MAX",
    "RELEASE_KEYS",
    "ConfigError",
    "apply_events_defaults",
    "avazu_variant_name",
    "check_avazu_variants",
    "check_config",
    "check_consistency",
    "check_epsilon_folder_names",
    "check_events",
    "check_events_entries",
    "check_events_release",
    "check_finite",
    "check_theory",
    "check_wpm",
    "config_error",
    "convert_exponent_numbers",
    "epsilon_folder_name",
    "events_defaults",
    "events_ledger",
    "events_release_problems",
    "key_path",
]
