"""The Ray executor: work units on a Ray cluster (``pip install ray``; ``pip install -e '.[ray]'`` in the repository).

Design (see ``docs/scale.md``):

* **Actors, not tasks or Ray Data.** Each worker is a Ray actor that holds one loaded model
  (``Scorer.load_worker``) and runs unit after unit of that model: a masked LM loads once
  per worker, not once per unit. The driver assigns units to actors itself, keeping each
  actor on the model it has loaded and spreading idle actors over models nobody works on,
  so a 100-model study reloads a model only when an actor moves on to the next one. Ray
  Data's ``map_batches`` with an actor pool also loads once per actor, but one pipeline
  holds one model (100 models = 100 pipelines, each with its own actor start-up), its output
  is a dataset rather than per-unit results the driver can cache as they arrive, and it
  pulls in pyarrow-heavy machinery for what is a list of independent calls.
* **Resources per unit.** Actors are created with the resources the units ask for
  (``WorkUnit.resources``: ``{"GPU": 1, "CPU": 1}`` for a model on CUDA, ``{"CPU": 1}``
  otherwise), as many as the cluster can hold at once (or ``max_workers``).
* **Results through Ray.** A unit's rows return as the actor call's result (Ray's object
  store), never through a shared file system; the driver writes them to its own cache.
* **Faults.** A worker process that dies (killed, out of memory, node lost) is restarted by
  Ray and the units it was running are retried (``max_retries`` times); a unit that raises
  (e.g. its model cannot be loaded) stops the study with :class:`~assoc.scoring.units.UnitError`
  naming the unit and its model. Finished units are in the driver's cache either way.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from assoc.components.options import Option
from assoc.errors import OptionError
from assoc.executors.base import Executor, Worker
from assoc.scoring.units import UnitError, UnitOutcome, WorkUnit

if TYPE_CHECKING:
    from assoc.scoring.scorer import Scorer

INSTALL_HINT = (
    "the Ray executor needs Ray, which is not installed: pip install ray "
    "(in a clone of the assoc repository: pip install -e '.[ray]')"
)
#: Seconds to wait for a Ray cluster address to answer before giving up (``RayExecutor(connect_timeout=...)``
#: or ``$ASSOC_RAY_CONNECT_TIMEOUT`` changes it). Ray itself would wait minutes for an address that is wrong.
DEFAULT_CONNECT_TIMEOUT = 30.0
CONNECT_TIMEOUT_VARIABLE = "ASSOC_RAY_CONNECT_TIMEOUT"
#: An HTTP/2 client preface and an empty SETTINGS frame: a Ray cluster (a gRPC server) answers with
#: its own SETTINGS frame, so one round trip tells a Ray address from a port where something else listens.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
#: Units queued on one actor at a time: the next one is ready when the current one finishes.
IN_FLIGHT_PER_WORKER = 2


def import_ray() -> Any:
    """Import Ray, or raise :class:`~assoc.errors.OptionError` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise OptionError(INSTALL_HINT) from exc
    return ray


def _connect_timeout(value: float | None) -> float:
    if value is None:
        text = os.environ.get(CONNECT_TIMEOUT_VARIABLE, "").strip()
        if not text:
            return DEFAULT_CONNECT_TIMEOUT
        try:
            value = float(text)
        except ValueError:
            raise OptionError(f"{CONNECT_TIMEOUT_VARIABLE} must be a number of seconds, got {text!r}") from None
        what = CONNECT_TIMEOUT_VARIABLE
    else:
        what = "connect_timeout"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < float(value) < float("inf"):
        raise OptionError(f"{what} must be a positive number of seconds, got {value!r}")
    return float(value)


def parse_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a Ray address, None for ``auto``/``local``; an :class:`OptionError` if malformed."""
    text = str(address).strip()
    if text.lower() in ("auto", "local"):
        return None
    rest = text[len("ray://") :] if text.lower().startswith("ray://") else text
    if "://" in rest:
        raise OptionError(f"Ray address {address!r}: expected HOST:PORT, ray://HOST:PORT or auto")
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")  # [::1]:6379
    if not sep or not host:
        raise OptionError(f"Ray address {address!r} has no port: expected HOST:PORT (e.g. 10.0.0.5:6379) or auto")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise OptionError(f"Ray address {address!r}: the port {port!r} is not a number from 1 to 65535")
    return host, int(port)


def check_address(address: str, timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
    """Raise one :class:`OptionError` naming ``address`` unless a Ray cluster answers there within ``timeout`` s.

    Ray's own connection attempt retries for minutes on a wrong address; this check is bounded:
    it resolves the host, opens a TCP connection and sends an HTTP/2 preface, which a Ray
    cluster (a gRPC server) answers with a SETTINGS frame.
    """
    import socket
    import time

    parsed = parse_address(address)
    if parsed is None:
        return
    host, port = parsed
    hint = f"(waited up to {timeout:g} s; RayExecutor(connect_timeout=...) or ${CONNECT_TIMEOUT_VARIABLE} changes it)"
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise OptionError(f"Ray address {address!r}: cannot resolve the host {host!r} ({exc})") from None
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            connection.sendall(_HTTP2_PREFACE)
            connection.settimeout(max(0.001, deadline - time.monotonic()))
            header = b""
            while len(header) < 9:
                chunk = connection.recv(9 - len(header))
                if not chunk:
                    break
                header += chunk
    except TimeoutError:
        raise OptionError(f"Ray address {address!r}: no answer like a Ray cluster's {hint}") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OptionError(f"cannot reach the Ray cluster at {address!r}: {reason} {hint}") from None
    if len(header) < 9 or header[3] != 0x04:  # HTTP/2 frame type 4: SETTINGS
        raise OptionError(
            f"Ray address {address!r}: something listens there, but it does not answer like a Ray cluster "
            "(expected the cluster's GCS port, usually 6379, or ray://HOST:10001)"
        )


class UnitActor:
    """The Ray actor body: one :class:`~assoc.executors.base.Worker` (one loaded model at a time).

    ``threads`` is set in the actor's process around each unit, as the local executor does in the driver.
    """

    def __init__(self, scorer: Scorer, threads: int | None = None):
        self.worker = Worker(scorer, threads)

    def run(self, unit: WorkUnit) -> UnitOutcome:
        """Compute one unit (loading its model first if this actor holds another one)."""
        return self.worker.run(unit)

    def pid(self) -> int:
        """The actor's process id (tests kill it to simulate a lost worker)."""
        return os.getpid()


class RayExecutor(Executor):
    """Run work units on a Ray cluster.

    Parameters
    ----------
    address:
        The cluster to join (``"auto"``, ``"ray://host:10001"``, ``"host:6379"``). Default:
        ``$RAY_ADDRESS`` when set, else a local Ray started for the run (and stopped after it).
        When Ray is already initialised in this process, that session is used as it is.
    max_workers:
        At most this many actors (default: as many as the cluster's resources hold).
    resources:
        Resources of every actor, overriding what the units ask for (e.g. ``{"CPU": 4}`` to give
        a CPU model four threads).
    max_retries:
        How often a unit is retried when its worker process dies (not when it raises).
    init_options:
        Extra keyword arguments of ``ray.init`` when this executor starts or joins Ray
        (e.g. ``{"num_cpus": 2}`` for a local Ray, ``{"runtime_env": {...}}``).
    connect_timeout:
        Seconds an address (``HOST:PORT`` or ``ray://HOST:PORT``) may take to answer as a Ray
        cluster (default ``$ASSOC_RAY_CONNECT_TIMEOUT``, else 30). The address is checked when the
        executor is made, before any work: a malformed address, an unknown host, a refused
        connection or a port that does not answer like Ray is one :class:`~assoc.errors.OptionError`
        naming the address.
    """

    name = "ray"
    description = "a Ray cluster (pip install ray; see docs/scale.md)"
    cli_options = (
        Option(
            "address",
            str,
            None,
            help=(
                "the cluster to join, HOST:PORT, ray://HOST:PORT or auto (default: $RAY_ADDRESS, else a local Ray "
                "started for the run); it must answer within $ASSOC_RAY_CONNECT_TIMEOUT seconds (30)."
            ),
        ),
    )

    def __init__(
        self,
        address: str | None = None,
        *,
        max_workers: int | None = None,
        resources: Mapping[str, float] | None = None,
        max_retries: int = 3,
        init_options: Mapping[str, Any] | None = None,
        connect_timeout: float | None = None,
    ):
        self.connect_timeout = _connect_timeout(connect_timeout)
        if address is not None or os.environ.get("RAY_ADDRESS"):
            check_address(address or os.environ["RAY_ADDRESS"], self.connect_timeout)
        self.ray = import_ray()
        if max_workers is not None and (not isinstance(max_workers, int) or max_workers < 1):
            raise OptionError(f"max_workers must be a positive integer, got {max_workers!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise OptionError(f"max_retries must be a non-negative integer, got {max_retries!r}")
        self.address = address
        self.max_workers = max_workers
        self.resources = dict(resources) if resources is not None else None
        self.max_retries = max_retries
        self.init_options = dict(init_options or {})
        self._started = False

    def describe(self) -> dict[str, Any]:
        """Name, cluster address (as configured) and Ray version."""
        address = self.address or os.environ.get("RAY_ADDRESS") or "local"
        return {"name": self.name, "address": address, "ray_version": self.ray.__version__}

    def connect(self) -> None:
        """Join (or start) Ray unless this process is already connected."""
        if self.ray.is_initialized():
            return
        options = {"include_dashboard": False, "log_to_driver": False, **self.init_options}
        address = self.address or os.environ.get("RAY_ADDRESS") or None
        if address is not None:
            check_address(address, self.connect_timeout)
        try:
            self.ray.init(address=address, **options)
        except (ConnectionError, ValueError, RuntimeError, TimeoutError) as exc:
            where = f"the Ray cluster at {address!r}" if address else "a local Ray"
            raise OptionError(f"cannot join {where}: {' '.join(str(exc).split())}") from None
        self._started = True

    def close(self) -> None:
        """Stop the Ray session this executor started (a session it joined is left alone)."""
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
        self._started = False

    def _workers_for(self, need: Mapping[str, float], n_units: int) -> int:
        total = self.ray.cluster_resources()
        fits = [int(total.get(name, 0) // amount) for name, amount in need.items() if amount > 0]
        count = min(fits) if fits else n_units
        if count < 1:
            raise OptionError(
                f"the Ray cluster cannot run a worker that needs {dict(need)} (cluster resources: {dict(total)})"
            )
        return max(1, min(count, n_units, self.max_workers or n_units))

    def run(self, scorer: Scorer, units: Iterable[WorkUnit], *, threads: int | None = None) -> Iterator[UnitOutcome]:
        """Run ``units`` on Ray actors and yield each outcome as it arrives.

        All units are taken at the start (the actors are sized and assigned by model). Every actor
        sets ``threads`` (torch's intra-op threads) around its units; ``None`` leaves the worker
        process's default (Ray sets ``OMP_NUM_THREADS`` to the actor's CPUs, so torch usually
        uses one thread per reserved CPU). ``threads`` does not change the CPUs an actor reserves:
        ``resources={"CPU": n}`` does.
        """
        units = list(units)
        if not units:
            return
        ray = self.ray
        self.connect()
        from ray.exceptions import RayActorError, RayTaskError

        # Units that ask for different resources get different actors (e.g. a CPU model and a GPU model).
        shapes: dict[tuple[tuple[str, float], ...], list[WorkUnit]] = {}
        for unit in units:
            need = self.resources if self.resources is not None else dict(unit.resources)
            shapes.setdefault(tuple(sorted(need.items())), []).append(unit)
        remote_actor = ray.remote(UnitActor)
        actors: list[Any] = []
        pools: list[tuple[list[Any], dict[str, deque[WorkUnit]]]] = []
        for shape, members in shapes.items():
            need = dict(shape)
            count = self._workers_for(need, len(members))
            options: dict[str, Any] = {
                "num_cpus": need.get("CPU", 0),
                "num_gpus": need.get("GPU", 0),
                "max_restarts": self.max_retries,
                "max_task_retries": self.max_retries,
            }
            custom = {k: v for k, v in need.items() if k not in ("CPU", "GPU")}
            if custom:
                options["resources"] = custom
            # The scorer (its options) is passed by value, not as an object-store reference: a restarted
            # actor must be able to rebuild itself even when the driver's references are gone.
            pool = [remote_actor.options(**options).remote(scorer, threads) for _ in range(count)]
            actors += pool
            queues: dict[str, deque[WorkUnit]] = {}
            for unit in members:
                queues.setdefault(unit.model, deque()).append(unit)
            pools.append((pool, queues))
        holding: dict[int, str | None] = {id(actor): None for actor in actors}
        load: dict[int, int] = {id(actor): 0 for actor in actors}
        pending: dict[Any, tuple[WorkUnit, Any]] = {}
        finished = 0

        def next_unit(actor: Any, queues: dict[str, deque[WorkUnit]]) -> WorkUnit | None:
            model = holding[id(actor)]
            if model is not None and queues.get(model):
                return queues[model].popleft()
            waiting = [m for m, q in queues.items() if q]
            if not waiting:
                return None
            # the model fewest actors hold (ties: plan order): spreads actors over models, few reloads
            workers_on = {m: sum(1 for a in holding if holding[a] == m) for m in waiting}
            chosen = min(waiting, key=lambda m: workers_on[m])
            holding[id(actor)] = chosen
            return queues[chosen].popleft()

        def feed() -> None:
            for pool, queues in pools:
                for actor in pool:
                    while load[id(actor)] < IN_FLIGHT_PER_WORKER:
                        unit = next_unit(actor, queues)
                        if unit is None:
                            break
                        pending[actor.run.remote(unit)] = (unit, actor)
                        load[id(actor)] += 1

        try:
            feed()
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                ref = ready[0]
                unit, actor = pending.pop(ref)
                load[id(actor)] -= 1
                try:
                    outcome = ray.get(ref)
                except RayTaskError as exc:
                    cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                    raise UnitError(unit, f"{type(cause).__name__}: {cause}", finished) from cause
                except RayActorError as exc:
                    if "creation task" in str(exc):  # the scorer could not even be unpickled on the worker
                        raise UnitError(
                            unit,
                            f"its Ray worker could not start: {exc}; is the scorer's plugin "
                            "installed on every node of the cluster?",
                            finished,
                        ) from exc
                    raise UnitError(
                        unit,
                        f"its worker died {self.max_retries + 1} time(s) ({exc}); a unit that "
                        "kills its worker every time usually runs out of memory",
                        finished,
                    ) from exc
                finished += 1
                yield outcome
                feed()
        finally:
            for actor in actors:
                ray.kill(actor)
            if pending:
                # ray.kill is asynchronous: wait until the killed actors' queued calls have ended, so no unit
                # runs after the study has stopped (a caller that fixes the cause and reruns must not race them).
                ray.wait(list(pending), num_returns=len(pending), timeout=30)
