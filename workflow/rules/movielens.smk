# MovieLens experiment of Zamanlooy et al. (2025): max TV/KL per age group (issue 4).
