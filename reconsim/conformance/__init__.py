"""reconsim against the real Kubernetes ReplicaSet controller: the data set of its
behaviour on 400 scenarios that ships with reconsim, and the comparison.

One module a concept: :mod:`.load` reads the data set (and makes its Parquet file from the
original folder), :mod:`.mapping` maps a scenario to a cell, :mod:`.compare` runs and
compares them and puts each difference down to a cause, :mod:`.render` prints the table of
``reconsim conformance``. It stands on the model alone; the command line stands on it.
"""
