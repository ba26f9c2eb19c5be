"""Self-contained bundles of a deployment form, and the check that runs one in isolation.

Generic: it takes what a form ships as plain data (`spec.BundleSpec`) and knows nothing of the
form registry. `bundler.bundle` writes the folder (or .tar.gz), `sandbox.run_checked` runs its `run`
entry under bubblewrap with the measuring core, `store` keeps the verdicts (a model's ship.json).
This module imports nothing, so the report can read the store without the machinery.
"""
