"""Stage 1: suites and items become frozen, versioned manifests with a sealed holdout vault.

Public API::

    suite = load_suite(layout, "support")
    result = freeze(layout, "support", "1.0.0", keys=keys, now=now)
    report = verify(layout, "support", "1.0.0", keys=keys)
"""

from evalsuite.manifest._catalog import frozen_versions, load_manifest, parse_ref
from evalsuite.manifest._fingerprints import FINGERPRINT_FORMAT, NGRAM_SIZE, SHORT_MIN, item_texts
from evalsuite.manifest._freeze import FreezeResult, freeze, load_holdout_items
from evalsuite.manifest._history import HashSources, history_check
from evalsuite.manifest._items import (
    Item,
    LoadedItem,
    item_hash,
    load_family_items,
    load_suite_items,
    read_item_source,
)
from evalsuite.manifest._schema import Manifest, ManifestItem, read_manifest
from evalsuite.manifest._split import Split, split_salt, stratified_split
from evalsuite.manifest._suite import FamilyConfig, SuiteConfig, list_suite_names, load_suite
from evalsuite.manifest._vault import KeySpec, VaultKey, check_vault_key, open_vault, resolve_key
from evalsuite.manifest._verify import ItemProblem, VerifyReport, verify

__all__ = [
    "FINGERPRINT_FORMAT",
    "NGRAM_SIZE",
    "SHORT_MIN",
    "FamilyConfig",
    "FreezeResult",
    "HashSources",
    "Item",
    "ItemProblem",
    "KeySpec",
    "LoadedItem",
    "Manifest",
    "ManifestItem",
    "Split",
    "SuiteConfig",
    "VaultKey",
    "VerifyReport",
    "check_vault_key",
    "freeze",
    "frozen_versions",
    "history_check",
    "item_hash",
    "item_texts",
    "list_suite_names",
    "load_family_items",
    "load_holdout_items",
    "load_manifest",
    "load_suite",
    "load_suite_items",
    "open_vault",
    "parse_ref",
    "read_item_source",
    "read_manifest",
    "resolve_key",
    "split_salt",
    "stratified_split",
    "verify",
]
