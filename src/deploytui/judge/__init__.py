"""How a form's outputs are judged against eager's: numerics (the model's tolerance, per output
by name) and precision (the int8 variants' accuracy budget and its tallies)."""
