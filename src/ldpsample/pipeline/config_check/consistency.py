"""Cross-field checks: what a JSON schema cannot express, run by :func:`check_consistency`.

Functions of the config dict (after :func:`~.schema.check_config`), so they are testable
without Snakemake; each raises a :class:`~.errors.ConfigError` naming the key: data_dir,
downloads, the ε folder names, the theory and wpm sections, avazu.variants, then the events
entries (:mod:`.events`).
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import config_error
from .events import check_events
from .names import AVAZU_VARIANT_KEYS, avazu_variant_name, check_epsilon_folder_names


def check_consistency(config: dict, *, download_dir: str | os.PathLike[str]) -> None:
    """Every cross-field check, in order: data_dir, downloads, the ε folder names, theory, wpm,
    avazu.variants, events. ``download_dir`` is where the workflow downloads (data_dir may name
    it before it exists)."""
    _check_data_dir(config, download_dir)
    for dataset, source in config["downloads"].items():
        if source.get("md5") and source.get("sha256"):
            raise config_error(f"downloads.{dataset}", "give md5 or sha256, not both")
    for key in ("synthetic", "movielens", "avazu"):
        check_epsilon_folder_names(f"{key}.epsilons", config[key]["epsilons"])
    check_theory(config)
    check_wpm(config)
    check_avazu_variants(config)
    check_events(config)


def _check_data_dir(config: dict, download_dir: str | os.PathLike[str]) -> None:
    data_dir = Path(config["data_dir"])
    if not data_dir.is_dir() and data_dir.resolve() != Path(download_dir).resolve():
        raise config_error(
            "data_dir",
            f"{config['data_dir']!r} is not an existing folder (it should hold pre-placed "
            "raw data in the official layouts; resources/, the download folder, needs none)",
        )


def check_theory(config: dict) -> None:
    """The theory section: an increasing ε grid, q_min <= 1/n, Example 1's two distributions."""
    theory = config["theory"]
    grid = theory["epsilon_grid"]
    if grid["start"] >= grid["stop"]:
        raise config_error(
            "theory.epsilon_grid.start",
            f"{grid['start']!r} must be < theory.epsilon_grid.stop ({grid['stop']!r})",
        )
    for index, q_min in enumerate(theory["q_mins"]):
        if q_min > 1 / theory["n"]:
            raise config_error(
                f"theory.q_mins[{index}]",
                f"{q_min!r} exceeds 1/theory.n = {1 / theory['n']!r}",
            )
    example = theory["example_1"]
    if len(example["q"]) != len(example["p"]):
        raise config_error(
            "theory.example_1.p",
            f"has {len(example['p'])} entries, theory.example_1.q has {len(example['q'])}",
        )
    for key in ("q", "p"):
        if abs(sum(example[key]) - 1) > 1e-9:
            raise config_error(
                f"theory.example_1.{key}", f"must sum to 1, got {sum(example[key])!r}"
            )


def check_wpm(config: dict) -> None:
    """The wpm section: an ordered bounding box, ε folder names, the derived Gowalla file."""
    wpm = config["wpm"]
    box = wpm["gowalla"]["bbox"]
    for low, high in (("lat_min", "lat_max"), ("lon_min", "lon_max")):
        if box[low] >= box[high]:
            raise config_error(
                f"wpm.gowalla.bbox.{low}",
                f"{box[low]!r} must be < wpm.gowalla.bbox.{high} ({box[high]!r})",
            )
    for key in ("movielens.epsilons", "gowalla.epsilons", "gowalla.map_epsilons"):
        experiment, name = key.split(".")
        check_epsilon_folder_names(f"wpm.{key}", wpm[experiment][name])
    derived = os.path.join(config["data_dir"], wpm["gowalla"]["derived_file"])
    if (
        wpm["gowalla"]["source"] == "derived"
        and config["experiments"].get("wpm_gowalla") is True
        and not Path(derived).is_file()
    ):
        raise config_error(
            "wpm.gowalla.derived_file",
            f"{derived!r} not found (it is never downloaded; set wpm.gowalla.source: snap "
            "or point data_dir at a copy)",
        )


def check_avazu_variants(config: dict) -> None:
    """Each avazu.variants entry changes something and names its own folder."""
    avazu = config["avazu"]
    seen = {"avazu"}
    for index, overrides in enumerate(avazu.get("variants", [])):
        key = f"avazu.variants[{index}]"
        unknown = sorted(set(overrides) - set(AVAZU_VARIANT_KEYS))
        if unknown or not overrides:
            raise config_error(
                key,
                f"{overrides!r}: a variant sets one or more of {list(AVAZU_VARIANT_KEYS)}",
            )
        if all(avazu[k] == v for k, v in overrides.items()):
            raise config_error(
                key, f"{overrides!r} equals the avazu section itself (results/avazu/)"
            )
        folder = f"results/avazu/{avazu_variant_name(overrides)}"
        if folder in seen:
            raise config_error(key, f"{overrides!r} repeats the variant {folder}")
        seen.add(folder)
