"""The plugin's stimuli: ``seat:<path>`` (May et al.'s SEAT files, from your copy) and ``guo2021`` (CEAT I1-I4)."""

from __future__ import annotations

from assoc import Design, Stimuli, StimuliError, load_seat_tests

from .ceat import GUO


def load_seat(path: str | None = None) -> Stimuli:
    """May et al.'s SEAT tests from ``path`` (a test file, their ``tests/`` folder or a folder holding it).

    The files are CC BY-NC 4.0: assoc never ships them, so ``seat`` alone is refused with what to write.
    """
    if path is None:
        raise StimuliError(
            "the SEAT test files (May et al. 2019, sent-bias's tests/) are CC BY-NC 4.0 and not bundled: give your "
            "copy as seat:<path> (a test file such as .../tests/weat1.jsonl, the tests/ folder, or the sent-bias "
            "checkout)"
        )
    return load_seat_tests(path)


def load_guo2021() -> Stimuli:
    """CEAT's intersectional tests I1-I4 (Guo & Caliskan 2021; ``ceat.py``'s WEAT groups 11-14), one design each."""
    from assoc.stats import CEAT_INTERSECTIONAL_TESTS

    designs = []
    for name, test in CEAT_INTERSECTIONAL_TESTS.items():
        x, y, a, b = test.labels
        designs.append(
            Design(
                name=name,
                target={x: test.x, y: test.y},
                attribute={a: test.a, b: test.b},
                description=test.description,
                notes=(f"ceat.py's WEAT group {test.ceat_py_group}",),
            )
        )
    return Stimuli(
        designs,
        name="guo2021",
        description="CEAT's intersectional tests I1-I4 (Guo & Caliskan 2021)",
        meta={"citation": GUO},
    )
