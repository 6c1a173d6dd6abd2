"""운용사 ratings: asset managers rated from their funds' scores and the analysts' qualitative pillars."""
