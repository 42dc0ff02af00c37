# Wasserstein projection mechanism experiments: ring, MovieLens-100K, Gowalla (issue 6).
