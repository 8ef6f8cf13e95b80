"""Stage 1: suites and items become frozen, versioned manifests with a sealed holdout vault.

Public API::

    suite = load_suite(layout, "support")
    result = freeze(layout, "support", "1.0.0", keys=keys, now=now)
    report = verify(layout, "support", "1.0.0", keys=keys)
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.manifest._audit_record import (
        AUDIT_UNHASHED,
        AuditStatus,
        audit_results_path,
        audit_status,
        judge_audit_file,
        judge_states,
        read_audit_file,
        read_judge_audit,
        suite_audit_status,
    )
    from evalsuite.manifest._candidates import (
        CANDIDATE_VERSION,
        Candidate,
        candidate_version,
        find_duplicates,
        load_latest,
        read_candidates,
    )
    from evalsuite.manifest._catalog import (
        frozen_versions,
        load_manifest,
        manifest_path,
        parse_ref,
    )
    from evalsuite.manifest._dev_items import read_frozen_dev_items
    from evalsuite.manifest._files import (
        BINARY_ENCODING,
        file_bytes,
        file_data_uri,
        freeze_sample_value,
    )
    from evalsuite.manifest._fingerprints import (
        FINGERPRINT_FORMAT,
        FORMATS,
        NGRAM_SIZE,
        SHORT_MIN,
        FingerprintFormat,
        describe_difference,
        fingerprint_item,
        item_texts,
        render_fingerprints,
    )
    from evalsuite.manifest._flag_retire import flagged_retirements, parse_flags
    from evalsuite.manifest._freeze import FreezeResult, freeze, load_holdout_items
    from evalsuite.manifest._freeze_audit import (
        AuditOutcome,
        FreezeAudit,
        FreezeCandidate,
        audit_file_path,
    )
    from evalsuite.manifest._history import HashSources, history_check
    from evalsuite.manifest._items import (
        Item,
        LoadedItem,
        SandboxSpec,
        TaskRecords,
        item_hash,
        load_family_items,
        load_suite_items,
        read_item_source,
    )
    from evalsuite.manifest._judge_config import JudgeConfig
    from evalsuite.manifest._leak_record import leak_audit_path, read_leak_audit
    from evalsuite.manifest._lean import (
        ManifestSummary,
        StampSummary,
        SuiteSummary,
        load_manifest_summary,
        load_suite_summary,
        read_manifest_summary,
    )
    from evalsuite.manifest._names import list_suite_names
    from evalsuite.manifest._schema import (
        AuditStamp,
        Manifest,
        ManifestFamily,
        ManifestItem,
        compute_manifest_hash,
        read_manifest,
    )
    from evalsuite.manifest._split import Split, split_salt, stratified_split
    from evalsuite.manifest._suite import FamilyConfig, SuiteConfig, load_suite
    from evalsuite.manifest._task_ref import TASK_REFERENCE_FORMS, task_reference_kind
    from evalsuite.manifest._vault import (
        KeySpec,
        VaultKey,
        check_vault_key,
        open_vault,
        resolve_key,
    )
    from evalsuite.manifest._verify import ItemProblem, VerifyReport, verify
    from evalsuite.manifest._verify_cache import VerifyCache
    from evalsuite.manifest._version_diff import diff_versions
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._audit_record": (
                "AUDIT_UNHASHED",
                "AuditStatus",
                "audit_results_path",
                "audit_status",
                "judge_audit_file",
                "judge_states",
                "read_audit_file",
                "read_judge_audit",
                "suite_audit_status",
            ),
            "._catalog": (
                "frozen_versions",
                "load_manifest",
                "manifest_path",
                "parse_ref",
            ),
            "._dev_items": ("read_frozen_dev_items",),
            "._fingerprints": (
                "FINGERPRINT_FORMAT",
                "NGRAM_SIZE",
                "SHORT_MIN",
                "item_texts",
                "describe_difference",
                "fingerprint_item",
                "render_fingerprints",
                "FORMATS",
                "FingerprintFormat",
            ),
            "._freeze": (
                "FreezeResult",
                "freeze",
                "load_holdout_items",
            ),
            "._freeze_audit": (
                "AuditOutcome",
                "FreezeAudit",
                "FreezeCandidate",
                "audit_file_path",
            ),
            "._history": (
                "HashSources",
                "history_check",
            ),
            "._items": (
                "Item",
                "LoadedItem",
                "SandboxSpec",
                "TaskRecords",
                "item_hash",
                "load_family_items",
                "load_suite_items",
                "read_item_source",
            ),
            "._names": ("list_suite_names",),
            "._lean": (
                "ManifestSummary",
                "StampSummary",
                "SuiteSummary",
                "load_manifest_summary",
                "load_suite_summary",
                "read_manifest_summary",
            ),
            "._schema": (
                "AuditStamp",
                "Manifest",
                "ManifestItem",
                "compute_manifest_hash",
                "read_manifest",
                "ManifestFamily",
            ),
            "._split": (
                "Split",
                "split_salt",
                "stratified_split",
            ),
            "._judge_config": ("JudgeConfig",),
            "._suite": (
                "FamilyConfig",
                "SuiteConfig",
                "load_suite",
            ),
            "._task_ref": (
                "TASK_REFERENCE_FORMS",
                "task_reference_kind",
            ),
            "._vault": (
                "KeySpec",
                "VaultKey",
                "check_vault_key",
                "open_vault",
                "resolve_key",
            ),
            "._verify": (
                "ItemProblem",
                "VerifyReport",
                "verify",
            ),
            "._verify_cache": ("VerifyCache",),
            "._leak_record": (
                "leak_audit_path",
                "read_leak_audit",
            ),
            "._files": (
                "file_bytes",
                "file_data_uri",
                "BINARY_ENCODING",
                "freeze_sample_value",
            ),
            "._version_diff": ("diff_versions",),
            "._flag_retire": (
                "flagged_retirements",
                "parse_flags",
            ),
            "._candidates": (
                "CANDIDATE_VERSION",
                "Candidate",
                "candidate_version",
                "find_duplicates",
                "load_latest",
                "read_candidates",
            ),
        },
    )

__all__ = [
    "AUDIT_UNHASHED",
    "BINARY_ENCODING",
    "CANDIDATE_VERSION",
    "FINGERPRINT_FORMAT",
    "FORMATS",
    "NGRAM_SIZE",
    "SHORT_MIN",
    "TASK_REFERENCE_FORMS",
    "AuditOutcome",
    "AuditStamp",
    "AuditStatus",
    "Candidate",
    "FamilyConfig",
    "FingerprintFormat",
    "FreezeAudit",
    "FreezeCandidate",
    "FreezeResult",
    "HashSources",
    "Item",
    "ItemProblem",
    "JudgeConfig",
    "KeySpec",
    "LoadedItem",
    "Manifest",
    "ManifestFamily",
    "ManifestItem",
    "ManifestSummary",
    "SandboxSpec",
    "Split",
    "StampSummary",
    "SuiteConfig",
    "SuiteSummary",
    "TaskRecords",
    "VaultKey",
    "VerifyCache",
    "VerifyReport",
    "audit_file_path",
    "audit_results_path",
    "audit_status",
    "candidate_version",
    "check_vault_key",
    "compute_manifest_hash",
    "describe_difference",
    "diff_versions",
    "file_bytes",
    "file_data_uri",
    "find_duplicates",
    "fingerprint_item",
    "flagged_retirements",
    "freeze",
    "freeze_sample_value",
    "frozen_versions",
    "history_check",
    "item_hash",
    "item_texts",
    "judge_audit_file",
    "judge_states",
    "leak_audit_path",
    "list_suite_names",
    "load_family_items",
    "load_holdout_items",
    "load_latest",
    "load_manifest",
    "load_manifest_summary",
    "load_suite",
    "load_suite_items",
    "load_suite_summary",
    "manifest_path",
    "open_vault",
    "parse_flags",
    "parse_ref",
    "read_audit_file",
    "read_candidates",
    "read_frozen_dev_items",
    "read_item_source",
    "read_judge_audit",
    "read_leak_audit",
    "read_manifest",
    "read_manifest_summary",
    "render_fingerprints",
    "resolve_key",
    "split_salt",
    "stratified_split",
    "suite_audit_status",
    "task_reference_kind",
    "verify",
]
