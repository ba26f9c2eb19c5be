"""The size sweep: the mlp family built and measured at each size (sweep), sweep.json (store), the
fit (fit), its tables and charts (text)."""
