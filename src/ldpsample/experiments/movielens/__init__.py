"""The MovieLens experiment (Zamanlooy, Diaz & Asoodeh 2025, Section 5): the ML-100K/ML-1M
readers, common genres and age groups (:mod:`.data`), and those files as events tables with the
tables the experiment publishes (:mod:`.tables`).
"""
