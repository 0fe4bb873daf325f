"""``python -m benchmarks [NAME ...] [--rounds N] [--quick] [--device cpu|cuda|auto] [--threads N]``.

``python -m benchmarks gpu [--quick] [--device cuda] [--dtypes float32,bfloat16]``: the GPU benchmark
(``benchmarks.gpu``, one process on the machine's own torch; ``scripts/gpu-bench.sh`` runs it from a bare copy).
"""

import sys

if sys.argv[1:2] == ["gpu"]:
    from benchmarks.gpu import main as gpu_main

    gpu_main(sys.argv[2:])
else:
    from benchmarks.harness import main

    main()
