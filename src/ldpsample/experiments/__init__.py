"""Experiment computations behind the pipeline's stages.

Each module holds plain functions (arrays or frames in, tidy polars frames out, randomness
from a seeded ``numpy.random.Generator``) so that the Snakemake scripts stay thin adapters and
every experiment can be run or tested without Snakemake. An experiment with more than one module
has a package of its own (:mod:`.avazu`, :mod:`.movielens`: its data, its tables).
"""
