r"""The ``server`` model kind: a causal LM behind an inference server, named ``server:<model>``.

The server is vLLM, or any OpenAI-compatible server that returns the prompt's log-probabilities.
The kind serves ``sentence``, ``continuation`` and ``choice`` exactly as the ``causal`` kind does
(:class:`~assoc.lm.causal.kind.CausalRequests`: the same BOS policy ``bos``, the same
context/continuation split, the same token ids), but its engine
(:class:`~assoc.lm.server.engine.ServedLM`) sends the token ids to ``<base_url>/completions`` and
reads each token's log-probability from the reply (:mod:`assoc.lm.server.protocol`), so scorers
that run on a causal engine (``clm``) take it too.

Opening a model (:meth:`ServerLanguageModel.open`) asks the server what it serves (``GET
/v1/models``: the served name, the folder it was started on, ``max_model_len``, whether it is vLLM),
finds the tokenizer (the ``tokenizer`` option, else the folder the server reports, else the model's
name as a Hub id: :mod:`assoc.lm.server.tokenizer`), and checks it against the server's
``/tokenize`` where the server has one. Nothing
is sent before the first request; every answer is stored on arrival, and a stored prompt is never
sent again (``offline=true``: only stored answers, and what the server said of itself remembered).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.errors import ModelError, OptionError
from assoc.lm.causal.kind import CausalRequests
from assoc.lm.causal.text import BOS_POLICIES
from assoc.lm.identity import looks_like_path
from assoc.lm.kinds import ChoiceByLikelihood, LanguageModel
from assoc.lm.remote.options import endpoint_settings
from assoc.lm.remote.store import ResponseStore
from assoc.lm.remote.urls import check_base_url, check_reachable, client_url, public_endpoint, read_api_key, safe_url
from assoc.lm.requests import LogProb
from assoc.lm.server.engine import Endpoint, ServedLM
from assoc.lm.server.options import SERVER_OPTIONS
from assoc.lm.server.protocol import SPACE, CompletionServiceError, request_params
from assoc.lm.server.tokenizer import RustTokenizer, find_tokenizer

if TYPE_CHECKING:
    from assoc.components.options import Option
    from assoc.infra.cache import Cache, Namespace
    from assoc.lm.causal.requests import CausalRequest

_DEFAULTS = {option.name: option.default for option in SERVER_OPTIONS}
_DEFAULTS.update(cache=True, cache_dir=None)
#: What :meth:`ServerLanguageModel.open` remembers of an opened model, for provenance and offline runs.
MEMO_KIND = "server-model"

#: Descriptions of the models opened in this process, by (endpoint, model): provenance reads them.
_OPENED: dict[tuple[str, str], dict[str, Any]] = {}


def _option(options: Mapping[str, Any], name: str) -> Any:
    return options.get(name, _DEFAULTS.get(name))


def model_name(spec: str) -> str:
    """The model's name as the server knows it: ``spec`` without its ``server:`` prefix."""
    spec = spec.strip()
    return spec[len("server:") :].strip() if spec.startswith("server:") else spec


def server_base_url(options: Mapping[str, Any]) -> str:
    """The server's OpenAI-compatible address: the ``base_url`` option, else ``$OPENAI_BASE_URL``; one line without."""
    import os

    url = options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    if not url:
        raise OptionError(
            "a server model needs the server's address: base_url=http://HOST:PORT/v1 (or OPENAI_BASE_URL); "
            "docs/servers.md says how to start one"
        )
    try:
        return check_base_url(url)
    except ValueError as exc:
        raise OptionError(f"base_url {exc}") from None


def root_url(base_url: str) -> str:
    """The server's root (where vLLM answers ``/tokenize`` and ``/version``): ``base_url`` without its ``/v1``."""
    url = client_url(base_url)[0].rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


@dataclass
class ServerInfo:
    """What the server says of the model it serves (``GET /v1/models``, ``GET /version``)."""

    model: str
    root: str | None = None
    max_model_len: int | None = None
    owned_by: str | None = None
    revision: str | None = None
    version: str | None = None

    @property
    def vllm(self) -> bool:
        """Whether the server says it is vLLM (``owned_by``: it offers ``prompt_logprobs``)."""
        return (self.owned_by or "").lower() == "vllm"


def _get(url: str, headers: Mapping[str, str], timeout: float, body: Any = None) -> tuple[int, Any]:
    """(status, JSON reply or None) of a GET (or a POST of ``body``) to ``url``; status 0 when unreachable."""
    data = json.dumps(body).encode("utf-8") if body is not None else None
    request = urllib.request.Request(url, data=data, headers={**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return int(reply.status), json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as exc:
        return int(exc.code), None
    except (urllib.error.URLError, OSError, ValueError):
        return 0, None


def _headers(base_url: str, api_key: str) -> dict[str, str]:
    _, headers, _ = client_url(base_url)
    return {"Authorization": f"Bearer {api_key}", **headers}


def fetch_info(base_url: str, api_key: str, model: str, timeout: float) -> ServerInfo:
    """Ask the server what it serves; refuse in one line a model it does not serve."""
    headers = _headers(base_url, api_key)
    url = client_url(base_url)[0].rstrip("/")
    status, reply = _get(f"{url}/models", headers, timeout)
    shown = safe_url(base_url)
    if status == 0:
        raise CompletionServiceError(f"cannot reach the server at {shown} (GET /models): is it running?")
    entries = reply.get("data") if isinstance(reply, dict) else None
    if status != 200 or not isinstance(entries, list):
        info = ServerInfo(model)  # a server without /models: nothing known beyond the name
    else:
        found = next((e for e in entries if isinstance(e, dict) and e.get("id") == model), None)
        if found is None:
            names = ", ".join(str(e.get("id")) for e in entries if isinstance(e, dict)) or "none"
            raise ModelError(f"server model {model!r} is not served at {shown} (it serves: {names})")
        length = found.get("max_model_len")
        info = ServerInfo(
            model,
            root=str(found["root"]) if found.get("root") else None,
            max_model_len=int(length) if isinstance(length, int) and not isinstance(length, bool) else None,
            owned_by=str(found["owned_by"]) if found.get("owned_by") else None,
            revision=str(found["revision"]) if found.get("revision") else None,
        )
    status, reply = _get(f"{root_url(base_url)}/version", headers, timeout)
    if status == 200 and isinstance(reply, dict) and reply.get("version"):
        info.version = str(reply["version"])
    return info


def server_tokenize(
    base_url: str, api_key: str, model: str, text: str, special: bool, timeout: float
) -> list[int] | None:
    """The server's token ids of ``text`` (with its special tokens or not: vLLM's ``/tokenize``), None without one."""
    status, reply = _get(
        f"{root_url(base_url)}/tokenize",
        _headers(base_url, api_key),
        timeout,
        {"model": model, "prompt": text, "add_special_tokens": special},
    )
    if status != 200 or not isinstance(reply, dict) or not isinstance(reply.get("tokens"), list):
        return None
    return [int(i) for i in reply["tokens"]]


class ServerLanguageModel(CausalRequests, ChoiceByLikelihood, LanguageModel):
    """A causal LM behind an inference server, opened for requests: the ``server`` kind (module docstring).

    Attributes
    ----------
    engine:
        The :class:`~assoc.lm.server.engine.ServedLM` (the causal engine's shape; what ``clm`` runs on).
    bos:
        The BOS policy of its requests (the causal kind's ``bos``).
    info:
        What the server said of the model (:class:`ServerInfo`).
    """

    kind: ClassVar[str] = "server"
    prefix: ClassVar[str | None] = "server"
    serves: ClassVar[frozenset[str]] = frozenset({"continuation", "sentence", "choice"})
    options: ClassVar[tuple[Option, ...]] = SERVER_OPTIONS
    #: One work unit per study unless unit_size is set: the queue of requests stays full (LMScorer.preferred_unit_items)
    unit_items: ClassVar[int | None] = 65536
    description: ClassVar[str] = (
        "a causal LM behind an inference server (vLLM, or any OpenAI-compatible /completions that returns the "
        "prompt's log-probabilities): server:<model> with base_url; the same tokens as the causal kind, checked"
    )

    def __init__(self, spec: str, engine: ServedLM, info: ServerInfo, details: Mapping[str, Any], bos: str):
        if bos not in BOS_POLICIES:
            raise OptionError(f"bos must be one of {', '.join(BOS_POLICIES)}, got {bos!r}")
        self.name = spec
        self.engine = engine
        self.fingerprint = engine.fingerprint
        self.info = info
        self.details = dict(details)
        self.bos = bos
        self.batch_tokens = None

    # -- the kind, before anything is opened ---------------------------------------------------------
    @classmethod
    def check(cls, spec: str, options: Mapping[str, Any]) -> None:
        """Refuse, in one line, an empty model name, no server address, or a tokenizer folder that is not there."""
        if not model_name(spec):
            raise ModelError(f"server model {spec!r}: no model name after the prefix; write server:<served model>")
        server_base_url(options)
        tokenizer = options.get("tokenizer")
        if tokenizer and looks_like_path(tokenizer) and not Path(tokenizer).expanduser().is_dir():
            raise ModelError(f"server model {spec!r}: the tokenizer folder {tokenizer!r} does not exist")

    @classmethod
    def identify(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> str:
        """What answers: ``server:<endpoint without credentials>:<model>`` (without connecting)."""
        return f"server:{public_endpoint(server_base_url(options))}:{model_name(spec)}"

    @classmethod
    def describe_spec(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> dict[str, Any]:
        """What provenance records of ``spec`` (the server's model name, root, revision, tokenizer, ...) once opened."""
        key = (public_endpoint(server_base_url(options)), model_name(spec))
        found = _OPENED.get(key)
        if found is None and cache is not None:
            remembered = cache.recall(MEMO_KIND, list(key))
            found = remembered.get("describe") if isinstance(remembered, dict) else None
        return dict(found) if isinstance(found, dict) else {}

    @classmethod
    def open(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> ServerLanguageModel:
        """Ask the server what it serves, find and check the tokenizer, and get ready to send (nothing sent yet)."""
        cls.check(spec, options)
        model = model_name(spec)
        base_url = server_base_url(options)
        endpoint = public_endpoint(base_url)
        offline = bool(_option(options, "offline"))
        root: Any = _option(options, "cache_dir") or cache
        enabled = bool(_option(options, "cache")) and getattr(root, "enabled", True)
        memo = cache if cache is not None and getattr(cache, "enabled", False) else None
        remembered = memo.recall(MEMO_KIND, [endpoint, model]) if memo is not None else None
        given = _option(options, "tokenizer")
        if offline:
            if not isinstance(remembered, dict):
                raise CompletionServiceError(
                    f"offline: nothing is remembered of server model {model!r} at {safe_url(base_url)}; run once "
                    "without offline=true"
                )
            info = ServerInfo(**remembered["info"])
            found = remembered.get("describe", {})
            if found.get("tokenizer_library") == "tokenizers" and (given or found["tokenizer"]) == found["tokenizer"]:
                tokenizer: Any = RustTokenizer(found["tokenizer"])  # checked against the server when remembered
                about = {k: found[k] for k in ("tokenizer", "tokenizer_library", "tokenizer_check")}
            else:
                tokenizer, about = find_tokenizer(given, model, info.root, None)
            api_key = "EMPTY"
        else:
            api_key = read_api_key(base_url, _option(options, "api_key_env") or "OPENAI_API_KEY")
            timeout = float(_option(options, "connect_timeout")) + float(_option(options, "timeout"))
            check_reachable(base_url, float(_option(options, "connect_timeout")), CompletionServiceError)
            info = fetch_info(base_url, api_key, model, timeout)

            def tokenize(text: str, special: bool) -> list[int] | None:
                return server_tokenize(base_url, api_key, model, text, special, timeout)

            tokenizer, about = find_tokenizer(given, model, info.root, tokenize)
        form = _option(options, "logprobs_form")
        if form == "auto":
            form = "prompt_logprobs" if info.vllm else "echo"
        echo_max_tokens = int(_option(options, "echo_max_tokens"))
        max_model_len = _option(options, "max_model_len") or info.max_model_len
        generated = 1 if form == "prompt_logprobs" else echo_max_tokens
        # the server takes prompt + generated tokens within max_model_len
        max_length = int(max_model_len) - max(generated, 1) if max_model_len else 2**31
        settings = endpoint_settings(options, base_url, api_key)
        engine = ServedLM(
            spec,
            tokenizer,
            f"server:{endpoint}:{model}",
            max_length,
            Endpoint(
                settings=settings,
                endpoint=endpoint,
                model=model,
                form=form,
                params=request_params(form, echo_max_tokens),
                generated=generated,
                prompts_per_request=int(_option(options, "prompts_per_request")),
                offline=offline,
            ),
            ResponseStore(root, enabled=enabled, space=SPACE),
        )
        details = {
            "kind": cls.kind,
            "fingerprint": engine.fingerprint,
            "endpoint": safe_url(base_url),
            "model": model,
            "root": info.root,
            "revision": info.revision,
            "server": " ".join(part for part in (info.owned_by, info.version) if part) or None,
            "max_model_len": max_model_len,
            **about,
            "logprobs_form": form,
            "bos": str(options.get("bos", "auto")),
        }
        _OPENED[(endpoint, model)] = details
        if memo is not None:
            memo.remember(MEMO_KIND, [endpoint, model], {"info": asdict(info), "describe": details})
        return cls(spec, engine, info, details, str(options.get("bos", "auto")))

    # -- provenance and reports -----------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """Kind, fingerprint, endpoint, the served model's name, root and revision, tokenizer, max_model_len, form."""
        return dict(self.details)

    def take_report(self) -> dict[str, Any] | None:
        """What this handle sent, received and refused since it was last asked (the run report's part)."""
        return {"server": self.engine.take_report()}

    # -- the causal requests' hooks -------------------------------------------------------------------
    def refusal(self, request: CausalRequest) -> LogProb | None:
        """Why the server gave ``request`` no values (misaligned, missing log-probs, not round trip, ...)."""
        found = self.engine.refusal(request)
        return LogProb.missing(found.status, found.reason) if found is not None else None

    def request_checkpoints(self, checkpoints: Namespace | None) -> Namespace | None:
        """None: every answer is already in the response store the moment it arrives (the kind's checkpoint)."""
        return None

    def close(self) -> None:
        """Nothing held between calls (the HTTP clients live for one call)."""
        self.engine.close()
