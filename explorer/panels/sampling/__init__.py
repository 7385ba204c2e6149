"""The sampling playground: temperature, top-k and top-p on one next-token distribution."""
