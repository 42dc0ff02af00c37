# Data acquisition: official downloads with checksums, or pre-placed copies in data_dir (issue 4).
