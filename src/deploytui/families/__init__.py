"""The runtime families: one package each (its forms, build steps, runner, inspectors, ship spec).

Kept empty: a runner module of a family starts as `python -m deploytui.families.<name>.<runner>`,
and its start-up is measured, so importing the package costs nothing.
"""
