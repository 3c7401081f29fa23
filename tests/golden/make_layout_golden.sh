#!/usr/bin/env bash
# Writes the outputs that tests/test_layout_golden.py compares the current code with.
# Run it from a checkout of the commit *before* a refactor, so the expected files come from the
# old code, never from the code under test:
#   git worktree add /tmp/old <commit> && (cd /tmp/old && PY=/path/to/python sh tests/golden/make_layout_golden.sh OUT)
set -euo pipefail
out=${1:?output folder}
py=${PY:-python}
demo=assets/demo
mkdir -p "$out"
for task in vocabulary referring reasoning; do
  for p in box_detector cautious_segmenter strong_localiser weak_baseline; do
    "$py" -m ovearth_core --gt $demo/ground_truth.json --predictions $demo/predictions/$p.json \
      --task $task --modalities auto --output "$out/cli_${task}_${p}.json"
  done
  "$py" -m ovearth_core.analysis --gt $demo/ground_truth.json --predictions $demo/predictions/box_detector.json \
    --task $task --modalities segmentation,bbox,oriented_bbox --output "$out/analysis_${task}_box_detector.json"
done
"$py" -m ovearth_core --gt $demo/ground_truth.json --predictions $demo/predictions/box_detector.json \
  --task vocabulary --modalities bbox,oriented_bbox --iou-threshold 0.3 --score-threshold 0.2 \
  --bbox-format xyxy --output "$out/cli_vocabulary_box_detector_options.json"
"$py" -m ovearth_core.analysis --gt $demo/ground_truth.json --predictions $demo/predictions/strong_localiser.json \
  --task vocabulary --modalities auto --hard-negatives --output "$out/analysis_vocabulary_strong_localiser_hn.json"
"$py" -m ovearth_core.leaderboard $demo --subsets 50 --seed 3 --output "$out/leaderboard.json"
"$py" -m ovearth_core.report --gt $demo/ground_truth.json --predictions $demo/predictions/strong_localiser.json \
  --compare $demo/predictions/cautious_segmenter.json --modalities auto --resamples 1000 --seed 7 \
  --out "$out/report_compare.html"
"$py" -m ovearth_core.report --gt $demo/ground_truth.json --predictions $demo/predictions/box_detector.json \
  --task vocabulary --modalities bbox,oriented_bbox --worst 4 --out "$out/report_single.html"
