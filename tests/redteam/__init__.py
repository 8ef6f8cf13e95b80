"""Red team: cheap policies played through the model interface (issue 29's acceptance)."""
