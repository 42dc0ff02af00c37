# Avazu experiment of Zamanlooy et al. (2025): max TV per attribute subcategory (issue 4).
