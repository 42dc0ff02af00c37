"""Experiment computations behind the pipeline's stages.

Uses: nothing at import; each module is imported by name.

Each module holds plain functions (arrays or frames in, tidy polars frames out, randomness
from a seeded ``numpy.random.Generator``) so that the Snakemake scripts stay thin adapters and
every experiment can be run or tested without Snakemake.
"""
