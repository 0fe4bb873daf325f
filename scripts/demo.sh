#!/usr/bin/env bash
# The demo: score the Caliskan et al. (2017) flowers/insects WEAT on the built-in GloVe 6B 50d vectors,
# analyse it, and replicate all ten Caliskan tests side by side with the published values.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
export PATH="$VENV/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
OUT=demo-output
mkdir -p "$OUT"

echo "== installed scorers"
assoc scorers
echo
echo "== score: WEAT 1 (flowers/insects x pleasant/unpleasant) on glove-6b-50d"
assoc score --scorer weat --stimuli caliskan:weat1 --model glove-6b-50d --out "$OUT/weat1.csv"
echo
echo "== analyze: effect size d and permutation p"
assoc analyze weat --table "$OUT/weat1.csv" --out "$OUT/weat1-analysis.csv"
"$VENV/bin/python" - "$OUT/weat1-analysis.csv" <<'PY'
import sys
import assoc
result = assoc.read_table(sys.argv[1])
print(result.T.to_string(header=False))
PY
echo
echo "== all ten Caliskan et al. (2017) tests next to the published values"
assoc weat caliskan --model glove-6b-50d --out "$OUT/caliskan.csv"
assoc plot estimates --table "$OUT/caliskan.csv" -o estimate=d -o label=test \
  -o compare=published_glove840b_d,iat_d -o "title=WEAT d on GloVe 6B 50d vs. published" --out "$OUT/caliskan-d.png"
echo
echo "Tables written to $OUT/ (CSV with provenance sidecars); figure: $OUT/caliskan-d.png"
