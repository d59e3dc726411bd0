"""rigcheck's exit codes, as ruff and ESLint use them: 0 when no finding reaches ``--fail-on``, 1 when
one does, 2 for bad input, a bad command line, a broken plugin or an internal error."""

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
