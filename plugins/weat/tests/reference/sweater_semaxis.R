# How the sweater SemAxis numbers frozen in test_weat_metrics.py were made (not run by the tests).
# Run with R 4.2.2 (Debian r-base-core) in a sweater checkout (chainsawriot/sweater, the commit
# "Add semaxis, fix #5"), whose data/glove_math.rda it loads.
# sweater's own R code (R/semaxis.R at the fetched snapshot), with base-R stand-ins for the three
# functions it calls from packages this machine cannot install (CRAN unreachable):
#   text2vec::sim2(x, y, method = "cosine", norm = "l2"): rows of x and y scaled to unit length, x %*% t(y)
#   purrr::map_dbl(S, f): vapply(S, f, numeric(1))
#   raw_cosine (sweater's C++ src/weat.cpp): dot / (sqrt(sum x1^2) * sqrt(sum x2^2))
sim2 <- function(x, y, method = "cosine", norm = "l2") {
  xn <- x / sqrt(rowSums(x^2)); yn <- y / sqrt(rowSums(y^2)); xn %*% t(yn)
}
map_dbl <- function(.x, .f) { f <- if (inherits(.f, "formula")) { body <- .f[[2]]; env <- environment(.f); function(x) eval(body, list(. = x), env) } else .f; vapply(.x, f, numeric(1)) }
raw_cosine <- function(x1, x2) { x1 <- as.numeric(x1); x2 <- as.numeric(x2); sum(x1 * x2) / (sqrt(sum(x1 * x1)) * sqrt(sum(x2 * x2))) }
src <- readLines("R/semaxis.R")
src <- gsub("text2vec::sim2(", "sim2(", src, fixed = TRUE)
src <- gsub("purrr::map_dbl(", "map_dbl(", src, fixed = TRUE)
eval(parse(text = src))
load("data/glove_math.rda")
S <- c("math", "algebra", "geometry", "calculus", "equations", "computation", "numbers", "addition")
A <- c("male", "man", "boy", "brother", "he", "him", "his", "son")
B <- c("female", "woman", "girl", "sister", "she", "her", "hers", "daughter")
cat(R.version.string, "\n")
for (l in c(0, 1, 3)) {
  res <- semaxis(glove_math, S, A, B, l = l)
  cat("l =", l, "\n"); print(res$P, digits = 15)
  if (l > 0) { for (a in c(A, B)) { s <- sim2(glove_math, glove_math[a, , drop = FALSE])[, 1]; cat(a, ":", names(head(sort(s, decreasing = TRUE), l + 1)), "\n") } }
}
