"""Scoring one attribute for every ε: each kept user's divergences under every method and the
audit of every kernel used (:mod:`.metrics`), and the release kernel with its privacy check
(:mod:`.release_kernel`).
"""
