"""Evidence that rigcheck itself wrote as JSON (``Evidence.model_dump_json()``), read back as is.

Recognised as a JSON object with the keys ``"tool"`` and ``"source"``; the ``tool`` stays the one
that produced the facts (nvidia-smi-xml, fio...), not this parser's name.
"""

from __future__ import annotations

import json
import re

from pydantic import ValidationError

from rigcheck.evidence.model import Evidence


class EvidenceJsonParser:
    name = "rigcheck-evidence"

    def detect(self, text: str) -> bool:
        head = text.lstrip()
        return (
            head.startswith("{")
            and bool(re.search(r'"tool"\s*:', text))
            and bool(re.search(r'"source"\s*:', text))
        )

    def parse(self, text: str, path: str) -> Evidence:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
            return Evidence(
                source=path, tool=self.name, problems=[f"the evidence JSON does not parse: {exc}"]
            )
        if not isinstance(data, dict):
            return Evidence(source=path, tool=self.name, problems=["the evidence JSON is not an object"])
        try:
            return Evidence.model_validate(data)
        except ValidationError as exc:
            errors = "; ".join(
                f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
                for error in exc.errors()[:5]
            )
            return Evidence(
                source=path,
                tool=str(data.get("tool") or self.name),
                problems=[f"the evidence JSON does not match the evidence model: {errors}"],
            )


PARSER = EvidenceJsonParser()
