#!/usr/bin/env bash
# Every GEMM provider (nn-gemm-bench) at 1 and 2 threads, each in its own
# process, as one Markdown table of milliseconds (medians of 3 runs):
#
#   bench/gemm-providers.sh [BUILD_DIR]
#
# Providers that are not installed are skipped (Debian: libopenblas0-pthread,
# libopenblas0-openmp, libblis4-pthread, libdnnl2).
set -euo pipefail
bench=${1:-build}/bin/nn-gemm-bench
out=$(mktemp -d)
for provider in openblas-pthread openblas-openmp blis-pthread onednn; do
  for threads in 1 2; do
    "$bench" --provider "$provider" --threads "$threads" \
      --benchmark_min_time=3 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true --benchmark_format=json \
      >"$out/$provider.$threads.json" 2>/dev/null || true
  done
done
python3 - "$out" <<'PY'
import glob, json, os, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    provider, threads = os.path.basename(path)[:-5].rsplit(".", 1)
    text = open(path).read()
    if "{" not in text:
        continue  # not installed
    for b in json.loads(text[text.index("{"):])["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        _, vocabulary, layout = b["run_name"].split("/")[:3]
        rows.setdefault((provider, threads), {})[(vocabulary, layout)] = b["real_time"]
columns = [(v, l) for v in ("1000", "10000") for l in ("0", "1", "2")]
names = {"0": "fwd", "1": "dX", "2": "dW"}
print("| provider | threads | " + " | ".join(f"V={v} {names[l]}" for v, l in columns) + " |")
print("|---|---|" + "---|" * len(columns))
for (provider, threads), times in sorted(rows.items()):
    print(f"| {provider} | {threads} | " + " | ".join(f"{times.get(c, float('nan')):.1f}" for c in columns) + " |")
PY
rm -r "$out"
