"""The core every layer stands on: the run record (record), the stores and their locks (store,
locks), where a model's files are (workspace, paths), the model spec (modelref), running a
child (procs), the measuring launcher (measure + launcher.c), the run defaults, and the small
neutral helpers (jsonio, hashing, units, tensorfile, runenv, machine, plot)."""
