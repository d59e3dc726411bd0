"""One module per ``rigcheck`` command (after ruff's ``crates/ruff/src/commands/``).

Each module has ``add_parser(subparsers)``, which adds the command and its options and sets ``handler``
to its ``run(args) -> int`` (the exit code). ``rigcheck.cli.build_parser`` calls every ``add_parser``;
``rigcheck.cli.main`` calls the chosen ``run`` and turns errors into one line and exit code 2. At its top a
module imports only the standard library, the exit codes and the helpers below; the core, the live side
and the tracer are imported inside ``run``, so that parsing the command line loads nothing heavy.

Shared by several commands: :mod:`._options` (option groups), :mod:`._shared` (plugins, renderers,
colour, loading specs, writing output) and :mod:`.reporting` (the report path of ``check`` and ``lint``).
A command whose files may name other files (``check``, ``lint``, ``validate``, ``estimate``) sets
``confined=True``: ``main`` confines reads to the checked root while it runs (docs/security.md).
"""
