"""The histograms of a table too large for one job, as map/reduce steps (:mod:`.steps`, the
functions the rules call): the users' bucket boundaries (:mod:`.bounds`), the map step of one
partition (:mod:`.split`) and what it leaves behind (:mod:`.partials`), the merge of the
partitions' checks and rankings (:mod:`.merge`), the rankings that need each user's activity
first (:mod:`.ranks`), one bucket's histograms (:mod:`.bucket_histograms`) and the reduce step
of an attribute's priors (:mod:`.bucket_priors`). The results equal
:func:`ldpsample.events.counting.histograms.build_event_histograms`'.
"""
