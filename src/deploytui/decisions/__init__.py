"""Which form to ship: choose (pure: figures, rules, ranking, the Pareto front), facts (the one
place it reads the stores) and text (its terminal answer and chart)."""
