#!/usr/bin/env bash
# Regenerates the frozen outputs of the BBQ authors' R scripts that the tests compare assoc with
# (tests need no R). Usage, from the repository root:
#
#   plugins/bias_benchmarks/tests/data/bbq_six/make_reference.sh ../shared/benchmarks/bbq
#
# The argument is a copy of nyu-mll/BBQ (commit bea11bd) laid out as the authors' repository, with
# data/*.jsonl[.gz], results/UnifiedQA/preds_*.jsonl[.gz], templates/ and analysis_scripts/*.R.
# Needs R with tidyverse and jsonlite (Debian: apt-get install r-base-core r-cran-tidyverse r-cran-jsonlite).
#
# What it does, and the only changes made to the authors' scripts:
# 1. copies the layout into a temporary directory, decompressing .jsonl.gz;
# 2. runs BBQ_results_metadata.R up to "# for intersectional templates" (its intersectional part stops
#    with an error when those categories are absent), with `this.dir <- getwd()` instead of the
#    RStudio-only line, and writes `dat_base_selected` as additional_metadata.csv;
# 3. writes a stand-in for results/RoBERTa_and_DeBERTaV3/df_bbq.csv (absent from the copy; the
#    calculate script merges with it): four positional "models" with one logit per option,
#    deberta-v3-base-race always ans0, deberta-v3-large-race always ans1, roberta-base-race always
#    ans2, roberta-large-race option (example_id mod 3); they only keep the merge from dropping
#    examples and give the string matching replies that equal an option;
# 4. runs BBQ_calculate_bias_score.R (the same line replaced; the plot at the end left out) and
#    writes dat_acc, dat_bias and the per-example pred_label of dat_with_metadata;
# 5. runs the script's string-matching steps alone on matching_cases.csv (replies written for the
#    tests: each of the script's fixes and its fallback) and writes their pred_label.
set -euo pipefail
src=$(cd "$1" && pwd)
out=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data" "$work/results/UnifiedQA" "$work/results/RoBERTa_and_DeBERTaV3" "$work/analysis_scripts"
cp -r "$src/templates" "$work/templates"
for f in "$src"/data/*.jsonl*; do
  case "$f" in *.gz) gunzip -c "$f" > "$work/data/$(basename "${f%.gz}")";; *) cp "$f" "$work/data/";; esac
done
for f in "$src"/results/UnifiedQA/preds_*.jsonl*; do
  case "$f" in
    *.gz) gunzip -c "$f" > "$work/results/UnifiedQA/$(basename "${f%.gz}")";;
    *) cp "$f" "$work/results/UnifiedQA/";;
  esac
done
cd "$work/analysis_scripts"
sed -e 's|^this.dir <- dirname(rstudioapi::getSourceEditorContext()$path)|this.dir <- getwd()|' \
    -e '/^# for intersectional templates/,$d' "$src/analysis_scripts/BBQ_results_metadata.R" > metadata.R
echo 'write.csv(dat_base_selected, "additional_metadata.csv", row.names = FALSE)' >> metadata.R
Rscript metadata.R > metadata.log 2>&1 || { cat metadata.log; exit 1; }
Rscript -e '
library(jsonlite)
rows <- list()
for (f in list.files("../data", pattern = "*.jsonl", full.names = TRUE)) {
  d <- stream_in(file(f), verbose = FALSE)
  for (m in c("deberta-v3-base-race", "deberta-v3-large-race", "roberta-base-race", "roberta-large-race")) {
    pick <- switch(m, "deberta-v3-base-race" = rep(0, nrow(d)), "deberta-v3-large-race" = rep(1, nrow(d)),
                   "roberta-base-race" = rep(2, nrow(d)), "roberta-large-race" = d$example_id %% 3)
    rows[[length(rows) + 1]] <- data.frame(index = d$example_id, cat = d$category, model = m,
      ans0 = as.numeric(pick == 0), ans1 = as.numeric(pick == 1), ans2 = as.numeric(pick == 2))
  }
}
write.csv(do.call(rbind, rows), "../results/RoBERTa_and_DeBERTaV3/df_bbq.csv", row.names = FALSE)
'
sed -e 's|^this.dir <- dirname(rstudioapi::getSourceEditorContext()$path)|this.dir <- getwd()|' \
    -e '/^# plotting/,$d' "$src/analysis_scripts/BBQ_calculate_bias_score.R" > calculate.R
cat >> calculate.R <<'R'
write.csv(dat_acc, "r_accuracy.csv", row.names = FALSE)
write.csv(dat_bias %>% select(-x), "r_bias.csv", row.names = FALSE)
write.csv(dat_with_metadata %>% select(category, example_id, model, pred_label) %>% arrange(category, model, example_id),
          "r_pred_label.csv", row.names = FALSE)
R
Rscript calculate.R > calculate.log 2>&1 || { cat calculate.log; exit 1; }
# 5. the authors' string matching alone (their mutate chain from "get rid of extra characters" to
#    the two-word fallback, copied out of the script as it is) on replies written to test each rule
{
  echo 'library(tidyverse); library(stringr)'
  echo 'dat <- read.csv("matching_cases.csv", stringsAsFactors = FALSE, na.strings = "NA")'
  echo 'dat2 <- dat %>%'
  awk '/mutate\(ans0 = gsub\("\\\\}"/{on=1} /mutate\(pred_cat/{on=0} on' "$src/analysis_scripts/BBQ_calculate_bias_score.R"
  echo '  identity()'
  echo 'write.csv(dat2 %>% select(case, pred_label), "r_matching.csv", row.names = FALSE)'
} > matching.R
cp "$out/matching_cases.csv" .
Rscript matching.R > matching.log 2>&1 || { cat matching.R matching.log; exit 1; }
R --version | head -1 > r_version.txt
for f in r_accuracy.csv r_bias.csv r_matching.csv r_version.txt; do cp "$f" "$out/$f"; done
gzip -n -9 -c r_pred_label.csv > "$out/r_pred_label.csv.gz"
gzip -n -9 -c additional_metadata.csv > "$out/r_additional_metadata.csv.gz"
echo "written to $out"
