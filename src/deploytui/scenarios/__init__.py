"""What is measured (optimum-benchmark's scenarios), each a producer of records in its own store
with its own text: startup (the start-up runs, results.json), accuracy (the int8 variants on the
accuracy set, their ratios), serving (batch × threads cells, serve.json), sweep (model sizes,
sweep.json, the fit), isolated (a bundle proved in the ship sandbox, ship.json). A scenario runs
its processes through a launcher and names no family."""
