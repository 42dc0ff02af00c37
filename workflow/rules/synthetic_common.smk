# Helpers of the synthetic stage (workflow/rules/synthetic.smk), included by it.


def get_synthetic_parts():
    return expand(
        "results/synthetic/parts/n~{n}/eps~{eps}/values.parquet",
        n=sorted(config["synthetic"]["n"]),
        eps=get_epsilon_folders(config["synthetic"]["epsilons"]),
    )


def get_synthetic_threads(wildcards):
    """Threads of one synthetic job: 1 below the 2**20 entries (grid_size x n) from which the
    library's kernels split their work over threads (minimax._APPLY_THREADED_ENTRIES,
    _DENSE_THREADED_ENTRIES), else 2. More would leave a cluster job pending on small nodes;
    a profile raises it with set-threads (docs/cluster.md)."""
    entries = int(wildcards.n) * config["synthetic"]["grid_size"]
    return 1 if entries < 2**20 else 2
