"""Evidence: what real tools measured on a machine (nvidia-smi, nccl-tests, fio, ...), parsed into
one model that the evidence rules compare with the rig spec. Parsers are plugins registered through
the ``rigcheck_evidence_parsers`` hook; rigcheck's own live in ``rigcheck.evidence.parsers``."""
