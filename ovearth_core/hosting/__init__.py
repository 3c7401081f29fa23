"""Host the benchmark's public leaderboard on Codabench or EvalAI (issue 40).

``python -m ovearth_core.hosting codabench --gt GT --out bundle.zip`` writes a Codabench
competition bundle; ``... evalai --gt GT --out challenge.zip`` an EvalAI challenge
configuration. Both carry the same scorer (:mod:`.scorer`): the evaluator's numbers, the
competition's limits, one clear message and no scores for a rejected submission.
Details and the steps on each platform: ``docs/hosting.md``.
"""
