"""The holdout vault: holdout payloads sealed with AES-256-GCM; plaintext only in memory.

File format (JSON)::

    {"format": "evalsuite-vault/1", "suite": ..., "version": ..., "key_id": ...,
     "items": <count>, "canary": <the suite's canary>, "nonce": <base64>,
     "ciphertext": <base64>}

The header (all fields but nonce and ciphertext) is authenticated as associated data, so
editing any byte of the file makes decryption fail. The nonce is synthetic: the first 12
bytes of HMAC-SHA256(key, header || plaintext), so freezing identical content twice writes an
identical vault (and an identical manifest hash) without ever reusing a nonce for different
plaintexts.

Keys (docs/architecture.md, "Vault"): a suite with ``key = "random"`` gets 32 random bytes at
its first freeze, kept at ``<key_dir>/<suite>.key`` (mode 0600, never inside the project);
example suites with ``key = "canary"`` derive the key from their public canary, which keeps
crawlers and training scrapers out and nothing more.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evalsuite._core.atomic import atomic_write_bytes
from evalsuite._core.hashing import canonical_json
from evalsuite.errors import NotFoundError, UsageError, VaultError

__all__ = [
    "VAULT_FORMAT",
    "KeySpec",
    "VaultKey",
    "check_vault_key",
    "open_vault",
    "resolve_key",
    "save_new_key",
    "seal_vault",
]

VAULT_FORMAT = "evalsuite-vault/1"


@dataclass(frozen=True, slots=True)
class KeySpec:
    """Where to find a suite's vault key (filled in by the CLI from flags and environment)."""

    key_dir: Path
    """Directory of random keys, ``$EVALSUITE_KEY_DIR`` or ``~/.config/evalsuite/keys``."""
    key_file: Path | None = None
    """Explicit key file (``--key-file``); wins over `key_dir`."""
    project: Path | None = None
    """The project root: a random key inside it (symlinks resolved) is refused, since it would
    sit beside the vault it opens, in the tree that is committed and shared."""


@dataclass(frozen=True, slots=True)
class VaultKey:
    """A 32-byte key and its public id."""

    secret: bytes
    source: str
    """Where the key came from, for messages (never the key itself)."""
    unsaved: Path | None = None
    """A key made just now (``resolve_key(create=True)``): the file it is to be written to by
    `save_new_key` once everything else has been checked. None: the key is on disk already."""

    @property
    def key_id(self) -> str:
        """Public identifier: a hash of the key, safe to store in manifests."""
        return "key:" + hashlib.sha256(b"evalsuite-key-id\x1f" + self.secret).hexdigest()[:16]


def _canary_key(canary: str) -> VaultKey:
    secret = hashlib.sha256(f"evalsuite-canary-key\x1f{canary}".encode()).digest()
    return VaultKey(secret=secret, source="derived from the suite's public canary")


def _read_key_file(path: Path) -> VaultKey:
    try:
        text = path.read_text(encoding="ascii").strip()
        secret = base64.b64decode(text, validate=True)
    except (UnicodeDecodeError, binascii.Error, ValueError):
        raise VaultError(
            f"key file {path} is not a base64-encoded 32-byte key; restore the original key "
            "file (a new key cannot open existing vaults)"
        ) from None
    if len(secret) != 32:
        raise VaultError(f"key file {path} holds {len(secret)} bytes; expected 32")
    return VaultKey(secret=secret, source=str(path))


def resolve_key(
    suite: str, mode: Literal["random", "canary"], canary: str, spec: KeySpec, *, create: bool
) -> VaultKey:
    """The vault key of `suite`.

    Args:
        suite: Suite name.
        mode: ``"canary"`` derives the key from `canary`; ``"random"`` reads a key file.
        canary: The suite's canary string.
        spec: Where key files live.
        create: For ``"random"``: make a new key when no key file exists. It is not written
            here: `save_new_key` writes it once the caller's checks have passed.

    Raises:
        NotFoundError: a random key is needed, none exists, and `create` is False.
        UsageError: the key file lies inside the project (`KeySpec.project`).
        VaultError: the key file is unreadable or malformed.
    """
    if mode == "canary":
        return _canary_key(canary)
    path = spec.key_file or spec.key_dir / f"{suite}.key"
    _refuse_inside_project(path, spec)
    if path.is_file():
        return _read_key_file(path)
    if not create:
        raise NotFoundError(
            f"no vault key for suite {suite!r} at {path}. Copy the key file made at the first "
            "freeze there, set EVALSUITE_KEY_DIR to its directory, or pass --key-file."
        )
    secret = secrets.token_bytes(32)
    return VaultKey(secret=secret, source=f"{path} (created)", unsaved=path)


def save_new_key(key: VaultKey) -> None:
    """Write a key made by `resolve_key(create=True)` to its file (mode 0600); else nothing.

    `freeze` calls this once every check has passed, just before the vault is written, so a
    refused freeze leaves no key behind.

    Raises:
        VaultError: a key file appeared at that path in the meantime (another freeze): the
            vault would be sealed with a key nobody keeps.
    """
    if key.unsaved is None:
        return
    if key.unsaved.exists():
        raise VaultError(
            f"a key file appeared at {key.unsaved} while this freeze ran (another freeze of "
            "the suite?); nothing was written. Freeze again: it will use that key."
        )
    atomic_write_bytes(key.unsaved, base64.b64encode(key.secret) + b"\n", mode=0o600)


def _refuse_inside_project(path: Path, spec: KeySpec) -> None:
    """A random key inside the project tree (after resolving symlinks) is refused."""
    if spec.project is None:
        return
    project = spec.project.resolve()
    where = path.resolve()
    if where == project or where.is_relative_to(project):
        via = "--key-file" if spec.key_file is not None else "EVALSUITE_KEY_DIR"
        raise UsageError(
            f"the vault key {path} ({via}) lies inside the project {project}, next to the vault "
            "it opens and in the tree that is committed and shared. Keep keys outside the "
            "project: set EVALSUITE_KEY_DIR to a private directory elsewhere (default "
            "~/.config/evalsuite/keys) or pass --key-file with a path outside it. Nothing was "
            "written or read."
        )


_HEADER = ("format", "suite", "version", "key_id", "items", "canary")


def _header(suite: str, version: str, key: VaultKey, count: int, canary: str) -> dict[str, Any]:
    return {
        "format": VAULT_FORMAT,
        "suite": suite,
        "version": version,
        "key_id": key.key_id,
        "items": count,
        "canary": canary,
    }


def seal_vault(
    path: Path,
    records: list[dict[str, Any]],
    *,
    suite: str,
    version: str,
    key: VaultKey,
    canary: str,
) -> None:
    """Encrypt `records` (holdout item payloads) into `path`, atomically.

    The suite's `canary` is written in clear in the (authenticated) header, so that a
    crawler that copies the file copies the canary with it.
    """
    header = _header(suite, version, key, len(records), canary)
    aad = canonical_json(header).encode("utf-8")
    plaintext = canonical_json(records).encode("utf-8")
    nonce = hmac.new(key.secret, aad + b"\x00" + plaintext, hashlib.sha256).digest()[:12]
    # cryptography here, not at the top: resolving a key or reading a header needs none of it
    # (`verify` of a recorded check starts without it; docs/design/startup.md)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    ciphertext = AESGCM(key.secret).encrypt(nonce, plaintext, aad)
    document = dict(header)
    document["nonce"] = base64.b64encode(nonce).decode("ascii")
    document["ciphertext"] = base64.b64encode(ciphertext).decode("ascii")
    atomic_write_bytes(path, (json.dumps(document, indent=1, sort_keys=True) + "\n").encode())


def _read_checked(
    path: Path, *, suite: str, version: str, key: VaultKey
) -> tuple[dict[str, Any], bytes, bytes]:
    """The vault's header, nonce and ciphertext, after checking everything but the tag."""
    if not path.is_file():
        raise NotFoundError(f"vault not found: {path}")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        header = {k: document[k] for k in _HEADER}
        nonce = base64.b64decode(document["nonce"], validate=True)
        ciphertext = base64.b64decode(document["ciphertext"], validate=True)
    except (json.JSONDecodeError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
        raise VaultError(
            f"{path} is not a readable evalsuite vault (damaged or edited); restore it from "
            "version control"
        ) from None
    if (
        header["format"] != VAULT_FORMAT
        or header["suite"] != suite
        or (header["version"] != version)
    ):
        raise VaultError(
            f"{path} is a vault of {header['suite']}@{header['version']} "
            f"({header['format']}), expected {suite}@{version} ({VAULT_FORMAT})"
        )
    if header["key_id"] != key.key_id:
        raise VaultError(
            f"wrong key for {path}: the vault was sealed with {header['key_id']}, the key from "
            f"{key.source} is {key.key_id}. Use the key file made when this suite was first "
            "frozen (--key-file or EVALSUITE_KEY_DIR)."
        )
    return header, nonce, ciphertext


def check_vault_key(path: Path, *, suite: str, version: str, key: VaultKey) -> None:
    """Check that `key` is the key of the vault at `path`, without decrypting anything.

    Reads the header only: format, suite, version and key id. Together with the vault
    file's hash recorded in the manifest, this tells before a holdout run reserves its
    look whether the vault will open.

    Raises:
        NotFoundError: the vault file does not exist.
        VaultError: the file is not a vault of `suite@version`, or the key is another.
    """
    _read_checked(path, suite=suite, version=version, key=key)


def open_vault(path: Path, *, suite: str, version: str, key: VaultKey) -> list[dict[str, Any]]:
    """Decrypt a vault in memory and return its item payloads.

    Raises:
        NotFoundError: the vault file does not exist.
        VaultError: the file is corrupt, belongs to another suite or version, was edited, or
            the key is wrong. The message says which, and never contains item text.
    """
    header, nonce, ciphertext = _read_checked(path, suite=suite, version=version, key=key)
    aad = canonical_json(header).encode("utf-8")
    from cryptography.exceptions import InvalidTag  # only when decrypting (see `seal_vault`)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        plaintext = AESGCM(key.secret).decrypt(nonce, ciphertext, aad)
    except (InvalidTag, ValueError):
        raise VaultError(
            f"{path} does not decrypt: its content was modified after freezing (or the key "
            "is wrong). Restore the vault from version control."
        ) from None
    records = json.loads(plaintext.decode("utf-8"))
    if not isinstance(records, list) or len(records) != header["items"]:
        raise VaultError(f"{path}: decrypted content is not the recorded list of items")
    return records
