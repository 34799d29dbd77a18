"""Files in, files out, no service: the use case under ``pressroom process``, ``pressroom
watch`` and the offline review desk — ``process`` (one file), ``spread`` (many files and the
pages of a big one over processes), ``folder`` (the review folder a held copy waits in). The
commands in ``cli/`` parse arguments and print; they hold no work of their own."""
