"""``python -m benchmarks [NAME ...] [--rounds N] [--quick] [--device cpu|cuda|auto] [--threads N]``."""

from benchmarks.harness import main

main()
