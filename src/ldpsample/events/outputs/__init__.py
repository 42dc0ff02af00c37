"""The evaluation tables an events experiment writes from its per-attribute parts: worst cases,
win summaries, the audit and the per-user table (:mod:`.tables`), and the utility/privacy
trade-off table (:mod:`.tradeoff`).
"""
