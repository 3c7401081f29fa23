"""``python -m ovearth_core.leaderboard FOLDER``: the documented entry point of
:mod:`ovearth_core.analysis.leaderboard`, where the ranking lives (analysis layer).

This module is only a command; nothing imports it (the layer test allows it this one upward
import)."""

# The command lives beside the ranking; its --help imports neither numpy nor the evaluator.
from ovearth_core.analysis.leaderboard_cli import main

if __name__ == "__main__":
    raise SystemExit(main())
