# Data acquisition: official downloads with checksums (config `downloads:`), or pre-placed
# copies in data_dir. HTTP goes through pooch: a temporary file renamed only after its checksum
# matched, retries after a dropped connection. The marker download.done is written last, so a
# later run trusts a download only once it is complete and verified.


localrules:
    download_dataset,


rule download_dataset:
    output:
        done=f"{DOWNLOAD_DIR}/{{dataset}}/download.done",
    log:
        "logs/download_dataset/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(REGISTRY.DATASETS),
    conda:
        CONDA_ENV
    params:
        dataset="{dataset}",
        dest_dir=lambda wildcards, output: str(Path(output.done).parent.parent),
        source=lambda wildcards: get_download_source(wildcards.dataset),
    script:
        "../../scripts/download_dataset.py"
