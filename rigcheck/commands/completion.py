"""``rigcheck completion bash|zsh|fish``: print a shell completion script, made from the command line
parser itself (every command, its options and their choices; ``--format`` of check and lint offers the
formats the loaded plugins register), so it cannot drift from the commands.

Install (as ruff and pip document theirs)::

    rigcheck completion bash > ~/.local/share/bash-completion/completions/rigcheck
    rigcheck completion zsh > "${fpath[1]}/_rigcheck"     # or: eval "$(rigcheck completion zsh)"
    rigcheck completion fish > ~/.config/fish/completions/rigcheck.fish
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rigcheck.commands._options import add_plugin_options
from rigcheck.exit_codes import EXIT_OK

SHELLS = ("bash", "zsh", "fish")

#: What a completion word may be: bash's ``compgen -W`` and fish's ``complete -a`` expand their words (command
#: substitution included), so a plugin's format named ``$(...)`` or ``(...)`` would run when completing.
SAFE_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh, fish)",
        description="Print a completion script for SHELL to standard output. bash: save it as "
        '~/.local/share/bash-completion/completions/rigcheck; zsh: eval "$(rigcheck completion zsh)" '
        "in ~/.zshrc; fish: save it as ~/.config/fish/completions/rigcheck.fish.",
    )
    parser.add_argument("shell", choices=SHELLS)
    add_plugin_options(parser)
    parser.set_defaults(handler=run)
    return parser


@dataclass(frozen=True)
class Option:
    """One option of a command: its spellings, whether it takes a value, the values it accepts."""

    flags: tuple[str, ...]
    takes_value: bool
    choices: tuple[str, ...]
    help: str


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    options: tuple[Option, ...]


def commands(formats: Sequence[str]) -> list[Command]:
    """Every command of ``rigcheck --help`` with its options, read from the parser; ``formats``: the
    values of a ``--format`` that declares no choices (check and lint: any registered format)."""
    from rigcheck.cli import build_parser

    parser = build_parser()
    found = []
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        helps = {choice.dest: choice.help or "" for choice in getattr(action, "_choices_actions", [])}
        for name, sub in getattr(action, "choices", {}).items():
            options = []
            for option in sub._actions:  # argparse has no public walk of its options
                if not option.option_strings or isinstance(option, argparse._HelpAction):
                    continue
                choices = tuple(str(choice) for choice in option.choices or ())
                if not choices and option.dest == "format":
                    choices = tuple(formats)
                choices = tuple(choice for choice in choices if SAFE_WORD.match(choice))
                options.append(
                    Option(
                        tuple(option.option_strings),
                        option.nargs != 0,
                        choices,
                        (option.help or "").split(";")[0].split("(")[0].strip(),
                    )
                )
            options.append(Option(("-h", "--help"), False, (), "show the help and exit"))
            found.append(Command(name, helps.get(name, ""), tuple(options)))
    return found


def bash_script(found: Sequence[Command]) -> str:
    """A bash function for ``complete -F``: commands first, then each command's options, an option's
    choices after it, and file names otherwise."""
    names = " ".join(command.name for command in found)
    option_cases = []
    choice_cases = []
    for command in found:
        flags = " ".join(flag for option in command.options for flag in option.flags)
        option_cases.append(f"        {command.name}) opts={shlex.quote(flags)} ;;")
        for option in command.options:
            if option.choices:
                pattern = "|".join(f'"{command.name} {flag}"' for flag in option.flags)
                words = shlex.quote(" ".join(option.choices))
                choice_cases.append(
                    f'        {pattern}) COMPREPLY=($(compgen -W {words} -- "$cur")); return ;;'
                )
    return "\n".join(
        [
            "# rigcheck completion for bash (rigcheck completion bash)",
            "_rigcheck() {",
            '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" opts=""',
            "    if [[ $COMP_CWORD -eq 1 ]]; then",
            f'        COMPREPLY=($(compgen -W "{names} --version --help" -- "$cur")); return',
            "    fi",
            '    case "${COMP_WORDS[1]} $prev" in',
            *choice_cases,
            "    esac",
            '    case "${COMP_WORDS[1]}" in',
            *option_cases,
            "    esac",
            '    if [[ "$cur" == -* ]]; then',
            '        COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
            "    else",
            '        COMPREPLY=($(compgen -f -- "$cur"))',
            "    fi",
            "}",
            "complete -o default -F _rigcheck rigcheck",
            "",
        ]
    )


def zsh_script(found: Sequence[Command]) -> str:
    """zsh runs the bash function through its own ``bashcompinit`` (zsh's documented bridge)."""
    return "\n".join(
        [
            "#compdef rigcheck",
            "# rigcheck completion for zsh (rigcheck completion zsh): the bash function, through bashcompinit",
            "autoload -U +X compinit && compinit",
            "autoload -U +X bashcompinit && bashcompinit",
            bash_script(found),
        ]
    )


def fish_script(found: Sequence[Command]) -> str:
    """``complete -c rigcheck`` lines: the commands while none is given, then each command's options."""
    lines = [
        "# rigcheck completion for fish (rigcheck completion fish)",
        "complete -c rigcheck -f",
    ]
    for command in found:
        lines.append(
            f"complete -c rigcheck -n __fish_use_subcommand -a {command.name} -d {_fish(command.help)}"
        )
    for command in found:
        condition = f"'__fish_seen_subcommand_from {command.name}'"
        for option in command.options:
            parts = [f"complete -c rigcheck -n {condition}"]
            for flag in option.flags:
                parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
            if option.choices:
                parts.append(f"-x -a {_fish(' '.join(option.choices))}")
            elif option.takes_value:
                parts.append("-r -F")
            if option.help:
                parts.append(f"-d {_fish(option.help)}")
            lines.append(" ".join(parts))
        lines.append(f"complete -c rigcheck -n {condition} -F")
    return "\n".join(lines) + "\n"


def _fish(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def run(args: argparse.Namespace) -> int:
    from rigcheck.commands._shared import load_registry

    registry = load_registry(args.plugins)
    found = commands(sorted(registry.formats))
    script = {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[args.shell](found)
    print(script, end="")
    return EXIT_OK
