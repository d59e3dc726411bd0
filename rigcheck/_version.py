"""rigcheck's version and the version of its plugin API, in a module of their own so that
``rigcheck.core`` never imports the top-level package."""

__version__ = "0.1.0"
#: Version of the plugin API (hooks and the objects they pass). Minor versions only add: 1.1 added
#: the checker base classes (PerNodeChecker, PerGpuTypeChecker, WorkloadOnRigChecker, EvidenceChecker),
#: ``Rule.graded`` and ``CheckContext.first_gpu_node`` / ``estimate_for`` / ``estimate_on``; 1.2 added the
#: ``rigcheck_config_schema`` hook with ``CheckContext.plugin_config`` (``plugins-config`` in the project
#: config), ``rigcheck.SpecError`` and ``rigcheck.find_label``; 1.3 added ``CheckContext.selected``; 1.4 added
#: the library functions ``rigcheck.check`` and ``rigcheck.estimate``; 1.5 added ``Checker.gpu_vendor``,
#: ``Checker.walked_gpus`` and ``rigcheck.plan``.
__plugin_api__ = "1.5"
