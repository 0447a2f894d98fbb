"""Beyond one run at a time: sweeps of simulated drives (and, later, fleets of real ones).

    overrides  a variant of a preset: some of its keys given other values
    specs      a sweep's variants as given: a grid, a list (TOML, CSV), seeded random samples
    runner     the interface: run jobs (a new run, or a stored one continued), report outcomes
    local      the runner on this machine's cores (side_by_side.py: memory-aware, one thread a drive)
    cluster    the runner on a Dask cluster's workers (--cluster; Dask imported only then): each run
               made in a private database on a worker, its rows stored by the client (store/transfer.py)
    certs      a cluster's TLS certificates (`ssdlab fleet certs`) and each role's Dask Security from them
    sweeps     a sweep planned (every variant checked before anything runs), stored, run, resumed
    results    a sweep's table: each variant's overrides and primary scores (CSV, JSON)

The cluster's runner sends the same jobs to a Dask cluster (METHODOLOGY.md section 8): a job
is self-contained (its preset's text travels in its request, no file is needed where it runs),
and only the client writes the database.
"""
