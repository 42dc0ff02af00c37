"""From an events table to per-subcategory user histograms in one job (:mod:`.histograms`), and
the steps it shares with the buckets: each subcategory's items (:mod:`.item_tops`), the kept
users' histograms (:mod:`.kept_users`), the subcategories table (:mod:`.subcategories`), the
priors from a public table or a release spec (:mod:`.public_priors`) and the data-derived priors
user by user (:mod:`.data_priors`).
"""
