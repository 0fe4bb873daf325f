"""Memory budgets of the per-process caches of loaded resources (models, embeddings).

:class:`BytesLRU` keeps loaded objects for the life of the process, least recently used
first out once their total size passes a budget in bytes. Budgets default to a fraction
of the machine's physical memory and can be set by environment variables, so a notebook
reuses what it loaded while a long study over many resources does not run out of memory.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from assoc.errors import OptionError

V = TypeVar("V")


def physical_memory() -> int:
    """Bytes of physical memory of this machine (4 GiB when the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return 4 << 30


def budget_from_environment(variable: str) -> int | None:
    """The byte budget set in ``$variable`` (a number, ``2e9`` allowed), or None when unset."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return None
    try:
        value = int(float(text))
    except ValueError as exc:
        raise OptionError(f"{variable} must be a number of bytes, got {text!r}") from exc
    if value < 0:
        raise OptionError(f"{variable} must be 0 or more bytes, got {text!r}")
    return value


class BytesLRU(Generic[V]):
    """A thread-safe least-recently-used cache bounded by the total size of its values.

    The one in-memory LRU of the project: word embeddings (the weat plugin) and the loaded models of
    every engine (:class:`assoc.lm.model_cache.ModelCache`, one per device kind) are kept in it.

    Parameters
    ----------
    variable:
        Environment variable that sets the budget in bytes (read at every insertion).
    default:
        Budget when neither ``max_bytes`` nor the variable is set (a callable, evaluated late).
    on_evict:
        Called once after entries were dropped to stay within the budget or on :meth:`release`
        (e.g. :func:`free_memory`, to return a model's memory to the device). Default: nothing
        after an eviction, a garbage collection after :meth:`release`.

    ``max_bytes`` (attribute) overrides both; 0 turns caching off. The value just inserted
    is always kept, even when it alone exceeds the budget.
    """

    def __init__(self, variable: str, default: Callable[[], int], on_evict: Callable[[], None] | None = None):
        self.variable = variable
        self.default = default
        self.on_evict = on_evict
        self.max_bytes: int | None = None
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.RLock()

    def budget(self) -> int:
        """The budget in bytes now in force."""
        if self.max_bytes is not None:
            return int(self.max_bytes)
        from_environment = budget_from_environment(self.variable)
        return self.default() if from_environment is None else from_environment

    def get(self, key: Hashable) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            return self._entries[key][0]

    def put(self, key: Hashable, value: V, nbytes: int) -> V:
        """Keep ``value`` (of ``nbytes``) unless the budget is 0; evict the least recently used beyond it."""
        if self.budget() <= 0:
            return value
        with self._lock:
            self._entries[key] = (value, int(nbytes))
            self._entries.move_to_end(key)
            self.make_room(0, keep=key)
        return value

    def make_room(self, incoming: int, keep: Hashable | None = None) -> int:
        """Evict the least recently used entries (never ``keep``) until ``incoming`` more bytes fit; return how many."""
        budget = self.budget()
        with self._lock:
            used = sum(size for _, size in self._entries.values())
            evicted = 0
            for old in [key for key in self._entries if key != keep]:
                if used + incoming <= budget:
                    break
                used -= self._entries.pop(old)[1]
                evicted += 1
        if evicted and self.on_evict is not None:
            self.on_evict()
        return evicted

    def largest(self) -> int:
        """The size in bytes of the largest value held (0 when empty)."""
        with self._lock:
            return max((size for _, size in self._entries.values()), default=0)

    def pop(self, key: Hashable) -> V | None:
        """Drop ``key`` (no eviction callback: the caller decides); its value, or None."""
        with self._lock:
            entry = self._entries.pop(key, None)
        return None if entry is None else entry[0]

    def keys(self) -> list[Hashable]:
        """The keys held, least recently used first."""
        with self._lock:
            return list(self._entries)

    def release(self, match: Callable[[Hashable], bool] | None = None) -> int:
        """Drop the entries whose key ``match``es (all when None); return how many."""
        with self._lock:
            gone = [key for key in self._entries if match is None or match(key)]
            for key in gone:
                del self._entries[key]
        if gone:
            if self.on_evict is not None:
                self.on_evict()
            else:
                import gc

                gc.collect()
        return len(gone)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


#: Environment variable: bytes that one computation's large arrays may take (a number, ``8e9`` allowed).
WORK_MEMORY_VARIABLE = "ASSOC_WORK_MEMORY"


def work_memory_budget() -> int:
    """Bytes one computation may hold in large arrays: ``$ASSOC_WORK_MEMORY``, else half the physical memory."""
    chosen = budget_from_environment(WORK_MEMORY_VARIABLE)
    return physical_memory() // 2 if chosen is None else chosen


def _size(nbytes: float) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes / 2**10:.1f} KiB"


def check_fits_memory(
    count: int, bytes_each: float, *, option: str, what: str, fixed: float = 0, given: int | None = None
) -> None:
    """Raise :class:`OptionError` unless ``count`` items of ``bytes_each`` bytes (plus ``fixed``) fit the budget.

    The message says the largest ``option`` that fits :func:`work_memory_budget`, and how to raise it;
    ``given`` is the value the user gave when it differs from ``count`` (e.g. a count capped by a size).
    """
    budget = work_memory_budget()
    need = fixed + count * bytes_each
    if need <= budget:
        return
    allowed = max(0, int((budget - fixed) // bytes_each)) if bytes_each > 0 else 0
    raise OptionError(
        f"{option}={count if given is None else given:,} needs about {_size(need)} for {what}, more than the "
        f"memory budget of {_size(budget)} (half this machine's memory; ${WORK_MEMORY_VARIABLE} sets it): "
        f"at most {option}={allowed:,}"
    )


def free_memory() -> None:
    """Return the memory of dropped models: a garbage collection, then CUDA's cached blocks."""
    import gc

    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover
        pass
