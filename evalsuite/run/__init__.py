"""Stage 2: run a model against a frozen manifest through inspect-ai.

This is the only stage (with task code and the reference agents) that imports `inspect_ai`.
"""

from evalsuite.run._episode import (
    EPISODE_KEY,
    EpisodeSpec,
    EpisodeState,
    HarnessFault,
    episode_seed,
    episode_setup,
    episode_spec,
    guarded_call,
)
from evalsuite.run._samples import item_to_sample, standalone_samples

__all__ = [
    "EPISODE_KEY",
    "EpisodeSpec",
    "EpisodeState",
    "HarnessFault",
    "episode_seed",
    "episode_setup",
    "episode_spec",
    "guarded_call",
    "item_to_sample",
    "standalone_samples",
]
