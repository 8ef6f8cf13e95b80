"""The names of the n-gram specs, apart from their numpy implementation in `text`.

A fingerprint format names its spec (docs/design/guard-normalisation.md); reading or checking
a manifest needs the names, not numpy, so `verify` and `suites` start without it
(docs/design/startup.md).
"""

__all__ = ["NGRAM_V2", "NGRAM_V3"]

NGRAM_V2 = "evalsuite-ngram/2"
NGRAM_V3 = "evalsuite-ngram/3"
