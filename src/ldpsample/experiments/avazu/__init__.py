"""The Avazu experiment (Zamanlooy, Diaz & Asoodeh 2025, Section 5): the official CSV converted
to a validated parquet events table (:mod:`.data`), an Avazu-shaped generator for tests and
benchmarks (:mod:`.synthetic`), and the tables it publishes from the events stage's parts
(:mod:`.tables`).
"""
