# Data acquisition: official downloads with checksums, or pre-placed copies in data_dir (issue 4).
# A download verifies its checksum (GroupLens md5; sha256 recorded on first download for Kaggle
# and SNAP), writes through a .part file and leaves no file behind on failure; a re-run resumes.


localrules:
    download_dataset,


rule download_dataset:
    output:
        done=f"{DOWNLOAD_DIR}/{{dataset}}/download.done",
    log:
        "logs/download_dataset/{dataset}.log",
    wildcard_constraints:
        dataset="ml-100k|ml-1m|avazu|gowalla",
    conda:
        CONDA_ENV
    params:
        dataset="{dataset}",
        dest_dir=lambda wildcards, output: str(Path(output.done).parent.parent),
    script:
        "../../scripts/download_dataset.py"
