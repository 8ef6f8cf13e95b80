"""``python -m tests.redteam ARGS``: evalsuite's CLI with the ``redteam/...`` provider registered.

python -m tests.redteam --root COPY run support@2.0.0 --model redteam/sweep --epochs N
"""

import tests.redteam.cheap_models  # noqa: F401  (registers the redteam provider)
from evalsuite.cli import main

if __name__ == "__main__":
    main()
