#!/usr/bin/env bash
# Regenerates the frozen outputs of the BBQ authors' R scripts on all eleven categories, for the
# intersectional Race_x_SES and Race_x_gender above all (tests need no R). Usage, from the repository root:
#
#   plugins/bias_benchmarks/tests/data/bbq/make_reference.sh <BBQ checkout> ../shared/benchmarks/bbq
#
# <BBQ checkout>: a copy of https://github.com/nyu-mll/BBQ at commit bea11bd97d79217245b5871acd247b9d6eb24598
# (its analysis_scripts/*.R and templates/ are used; its data/ may lack the five files of 4 MiB or more).
# The second argument holds data/<Category>.jsonl.gz for all eleven categories (the authors' files,
# gzip-compressed). Needs R with tidyverse and jsonlite (Debian: apt-get install r-base-core
# r-cran-tidyverse r-cran-jsonlite) and python3 (standard library only).
#
# What it does, and the only changes made to the authors' scripts:
# 1. lays out data/*.jsonl (decompressed) and templates/ as the authors' repository has them;
# 2. runs BBQ_results_metadata.R whole (both its non-intersectional part and its "for intersectional
#    templates" part) with `this.dir <- getwd()` instead of the RStudio-only line; it writes
#    additional_metadata.csv (target_loc, label_type, ... per example of all eleven categories), kept
#    as r_additional_metadata.csv.gz, and what it printed, kept as r_metadata_log.txt;
# 3. answers, results/UnifiedQA/preds_<Category>.jsonl, for all eleven categories: the authors' UnifiedQA
#    answers where the second argument has them (six categories), else synthetic ones (Gender_identity,
#    Race_ethnicity, Race_x_SES, Race_x_gender, SES): each example's line with the three answer fields the
#    calculate script reads (unifiedqa-t5-11b_pred_race, _pred_arc, _pred_qonly), each one option's text or
#    "zzz" (matches no option), from h = int(sha256("46:<category>:<example_id>:<field>").hexdigest()[:8],
#    16) % 1000: h < 20 -> "zzz"; h < 520 -> the correct option (label); else the first (h odd) or second
#    (h even) of the other two options in index order. The chosen indices (-1 for "zzz") are kept as
#    answers.csv.gz (columns named as the script names the three answer sets);
# 4. writes a stand-in for results/RoBERTa_and_DeBERTaV3/df_bbq.csv (absent; the calculate script merges
#    with it, an inner join) for every example: deberta-v3-base-race always ans0, deberta-v3-large-race
#    always ans1, roberta-base-race always ans2, roberta-large-race option (example_id mod 3);
# 5. runs BBQ_calculate_bias_score.R (the same line replaced; the plot at the end left out) and writes
#    dat_acc (r_accuracy.csv) and dat_bias without its plotting column (r_bias.csv); lines appended after
#    the script count, per category and answer set, the replies read, the rows after its merge with the
#    metadata (an example with two metadata rows counts twice), the rows without target_loc (dropped) and
#    the rows kept (r_counts.csv), and check that every synthetic reply equal to an option was read as
#    that option (printed into r_calculate_log.txt).
set -euo pipefail
export TZ=UTC  # else R asks timedatectl for the zone and prints its failure into the logs
bbq=$(cd "$1" && pwd)
shared=$(cd "$2" && pwd)
out=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data" "$work/results/UnifiedQA" "$work/results/RoBERTa_and_DeBERTaV3" "$work/analysis_scripts"
cp -r "$bbq/templates" "$work/templates"
for f in "$shared"/data/*.jsonl.gz; do gunzip -c "$f" > "$work/data/$(basename "${f%.gz}")"; done
cd "$work/analysis_scripts"

sed -e 's|^this.dir <- dirname(rstudioapi::getSourceEditorContext()$path)|this.dir <- getwd()|' \
    "$bbq/analysis_scripts/BBQ_results_metadata.R" > metadata.R
Rscript metadata.R > metadata.log 2>&1 || { cat metadata.log; exit 1; }

python3 - "$shared" <<'PY'
import csv, gzip, hashlib, json, pathlib, shutil, sys
shared = pathlib.Path(sys.argv[1])
fields = ("unifiedqa-t5-11b_pred_race", "unifiedqa-t5-11b_pred_arc", "unifiedqa-t5-11b_pred_qonly")
rows = []
for data in sorted(pathlib.Path("../data").glob("*.jsonl")):
    category = data.stem
    released = shared / "results" / "UnifiedQA" / f"preds_{category}.jsonl.gz"
    target = pathlib.Path(f"../results/UnifiedQA/preds_{category}.jsonl")
    if released.exists():  # the authors' UnifiedQA answers
        with gzip.open(released, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
        continue
    with open(data, encoding="utf-8") as src, open(target, "w", encoding="utf-8") as dst:
        for line in src:
            record = json.loads(line)
            chosen = []
            for field in fields:
                key = f"46:{category}:{record['example_id']}:{field}"
                h = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 1000
                others = [k for k in range(3) if k != record["label"]]
                index = -1 if h < 20 else record["label"] if h < 520 else others[0] if h % 2 else others[1]
                record[field] = "zzz" if index < 0 else record[f"ans{index}"]
                chosen.append(index)
            dst.write(json.dumps(record, ensure_ascii=False) + "\n")
            rows.append([category, record["example_id"], *chosen])
with open("answers.csv", "w", newline="", encoding="utf-8") as handle:
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(["category", "example_id", "format_race", "format_arc", "baseline_qonly"])
    writer.writerows(rows)
PY

Rscript -e '
library(jsonlite)
rows <- list()
for (f in list.files("../results/UnifiedQA", pattern = "*.jsonl", full.names = TRUE)) {
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
    -e '/^# plotting/,$d' "$bbq/analysis_scripts/BBQ_calculate_bias_score.R" > calculate.R
cat >> calculate.R <<'R'
write.csv(dat_acc, "r_accuracy.csv", row.names = FALSE)
write.csv(dat_bias %>% select(-x), "r_bias.csv", row.names = FALSE)
# what was read, merged, kept: per category and answer set (the appended lines only count)
merged <- merge(dat2, metadata, by = c("example_id", "category", "question_index"), all.x = T)
counts <- dat2 %>% count(category, model, name = "replies_read") %>%
  full_join(merged %>% count(category, model, name = "rows_after_metadata_merge"), by = c("category", "model")) %>%
  full_join(merged %>% filter(is.na(target_loc)) %>% count(category, model, name = "rows_without_target_loc"),
            by = c("category", "model")) %>%
  full_join(dat_with_metadata %>% count(category, model, name = "rows_kept"), by = c("category", "model")) %>%
  replace_na(list(rows_without_target_loc = 0)) %>% arrange(category, model)
write.csv(counts, "r_counts.csv", row.names = FALSE)
# the synthetic answers read back: each reply that equals an option must be read as that option
answers <- read.csv("answers.csv") %>% gather("model", "chosen", -category, -example_id)
check <- answers %>% left_join(dat2 %>% select(category, example_id, model, pred_label, context_condition),
                               by = c("category", "example_id", "model"))
cat("synthetic replies read as another option than the one written:",
    nrow(check %>% filter(chosen >= 0 & !is.na(pred_label) & pred_label != chosen)), "\n")
cat("synthetic unreadable replies (zzz):", sum(check$chosen < 0), "; of them read:", sum(check$chosen < 0 & !is.na(check$pred_label)), "\n")
cat("synthetic replies not read other than zzz and baseline_qonly on disambig:",
    nrow(check %>% filter(chosen >= 0 & is.na(pred_label))) - nrow(answers %>% filter(model == "baseline_qonly" & chosen >= 0) %>%
      semi_join(dat2 %>% filter(context_condition == "disambig") %>% distinct(category, example_id), by = c("category", "example_id"))), "\n")
R
Rscript calculate.R > calculate.log 2>&1 || { cat calculate.log; exit 1; }

R --version | head -1 > r_version.txt
for f in r_accuracy.csv r_bias.csv r_counts.csv r_version.txt; do cp "$f" "$out/$f"; done
cp metadata.log "$out/r_metadata_log.txt"
cp calculate.log "$out/r_calculate_log.txt"
gzip -n -9 -c additional_metadata.csv > "$out/r_additional_metadata.csv.gz"
gzip -n -9 -c answers.csv > "$out/answers.csv.gz"
echo "written to $out"
