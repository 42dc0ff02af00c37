# Helpers of estimate.smk (snakemake --lint flags rules and functions in one file): the paths of
# a release's estimates and the library modules its jobs import. They use EVENTS_RESULTS,
# get_events_datasets, is_events_release and get_script_sources from events_common.smk and
# common.smk.


def get_events_estimate_outputs(name):
    """A release's estimate/ files: from the published folder alone (estimates.csv, tests.csv,
    figure.png) and, from the private histograms too, errors.csv."""
    base = f"{EVENTS_RESULTS}/{name}/estimate"
    return {
        table: f"{base}/{table}.{suffix}"
        for table, suffix in (
            ("estimates", "csv"),
            ("tests", "csv"),
            ("figure", "png"),
            ("errors", "csv"),
        )
    }


def get_estimate_outputs():
    """The estimate/ files of every enabled events table with release: true."""
    return [
        path
        for name in get_events_datasets()
        if is_events_release(name)
        for path in get_events_estimate_outputs(name).values()
    ]
