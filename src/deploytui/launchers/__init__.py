"""Launchers: where a form's process runs and how it is measured there (optimum-benchmark's
word). `base.Launcher` is the seam; `here` runs on this machine, `sandbox` in the ship sandbox
(bubblewrap: only the bundle and /usr). The scenarios take a launcher and name none; the
families name none either."""
