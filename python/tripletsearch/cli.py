"""Command line: ``python -m tripletsearch <command>`` (or the ``tripletsearch`` script).

Commands
--------
demo                  a short tour of the oracle models and the theory tools
reproduce embedding   the paper's Figure 5 (Musical Artists) and 1-D alien eggs
reproduce discrete    the user study in simulation: gamma-CKLSearch vs GaussSearch
reproduce continuous  Figure 4: exponential convergence of the continuous search
reproduce users       searches that adapt to the person (gamma="auto") vs gamma fixed at 3
reproduce theory      the appendix's gamma-d figure beside Theorem 2.1's exact line
reproduce collect     collecting triplets: random, arr and active queries, simulated and replayed
info                  build facts: version, OpenMP, threads
serve                 the search service (pip install 'tripletsearch[serve]')
export                a service's recorded answers as triplets for Embedding.fit
report                a study's methods compared, people's gamma and lapse fitted

``reproduce {embedding,continuous,discrete,collect}`` run on a Dask cluster with ``--scheduler
ADDRESS`` or on a local one of N worker processes with ``--workers N`` (the ``dask`` extra):
the same numbers as a local run.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

import numpy as np

from . import __version__, _core, theory
from .oracles import CKL, STE, TSTE, GammaCKL, Probit


def _demo_oracles(rng: np.random.Generator) -> None:
    """One query under the five models, scale invariance, a Food-sized gradient."""
    X = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.5]])
    query = [[0, 1, 2]]  # "item 1 is closer to head 0 than item 2"
    print("P(item 1 judged closer to head 0 than item 2), D_1 = 1.00, D_2 = 4.25:")
    for o in (GammaCKL(3.0), GammaCKL(25.0), CKL(), TSTE(), STE(), Probit(0.5)):
        print(f"  {o!r:<22} p = {o.prob(X, query)[0]:.4f}")
    # scale-free: gamma-CKL does not care about the units, t-STE does
    print("\nScale invariance (the same query at coordinates scaled by c):")
    for c in (1e-8, 1.0, 1e8):
        g, t = GammaCKL(3.0).prob(c * X, query)[0], TSTE().prob(c * X, query)[0]
        print(f"  c = {c:7.0e}   GammaCKL(3) p = {g:.6f}   TSTE p = {t:.6f}")
    n, d, m = 100, 10, 190_376
    Xr = rng.normal(size=(n, d))
    Q = rng.integers(0, n, size=(m, 3))
    oracle = GammaCKL(10.0)
    T = oracle.sample(Xr, Q, random_state=rng)
    t0 = time.perf_counter()
    G = oracle.grad(Xr, T)
    dt = time.perf_counter() - t0
    acc = np.mean(oracle.prob(Xr, T) > 0.5)
    print(
        f"\nSimulated {m:,} answers of GammaCKL(10) on {n} items in d = {d}: "
        f"{acc:.1%} name the truly closer item;\n"
        f"  log-likelihood {oracle.log_likelihood(Xr, T):.1f}, gradient norm "
        f"{np.linalg.norm(G):.1f} in {dt * 1e3:.1f} ms ({_core.max_threads()} threads)"
    )


def _demo_embedding(rng: np.random.Generator) -> None:
    """Embeddings learned from the Musical Artists' human triplets."""
    from . import datasets
    from .embedding import Embedding

    music = datasets.load_music()
    perm = rng.permutation(len(music.triplets))
    cut = int(0.9 * len(perm))
    train, test = music.triplets[perm[:cut]], music.triplets[perm[cut:]]
    print(f"\nMusical Artists ({len(music.triplets):,} human triplets, {music.n_items} artists):")
    settings: tuple[tuple[str, dict[str, Any]], ...] = (
        ("gamma-ckl", {}),  # gamma="auto"
        ("t-ste", {}),
        ("ckl", {}),
    )
    for model, kw in settings:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            emb = Embedding(model, dim=20, random_state=0, **kw).fit(train, music.n_items)
        chosen = f", gamma {emb.gamma_:.2f} chosen" if model == "gamma-ckl" else ""
        print(
            f"  {model:<10} d = 20: held-out accuracy {emb.score(test):.1%}, "
            f"NLL {emb.log_loss(test):.3f}  (fit {time.perf_counter() - t0:.2f} s{chosen})"
        )


def _demo_search(rng: np.random.Generator) -> None:
    """Both searches with simulated users."""
    from .continuous import simulate_continuous
    from .discrete import simulate_discrete

    items = rng.uniform(-1.0, 1.0, size=(1000, 5))
    print("\nDatabase search, 1000 items in d = 5, simulated users (gamma = 3):")
    for k in (2, 4):
        sim = simulate_discrete(items, n_choices=k, n_runs=200, random_state=0)
        print(
            f"  {k} shown per query: {sim.mean:.1f} +- {sim.stderr:.1f} queries to find "
            f"the target (median {sim.median:g})"
        )
    cont = simulate_continuous(2, 3.0, n_runs=20, max_queries=100, random_state=0)
    assert cont.errors is not None  # recorded: max_queries is given
    med = np.median(cont.errors, axis=0)
    print(
        "Continuous search in [-1, 1]^2 (gamma = 3): median distance to the target after "
        f"10/50/100 queries: {med[10]:.1e} / {med[50]:.1e} / {med[100]:.1e}"
    )


def _demo_theory() -> None:
    """Theorem 2.1: accuracy on random queries and the linear gamma-d law."""
    print("\nTheorem 2.1: p_Q = P(correct answer), query points uniform in the unit ball:")
    print("  d     gamma=3   gamma=10   gamma for p_Q = 0.8")
    for dim in (1, 2, 5, 10, 50):
        print(
            f"  {dim:<5} {theory.p_correct(dim, 3.0):.4f}    {theory.p_correct(dim, 10.0):.4f}"
            f"     {theory.calibrate_gamma(dim, 0.8):8.3f}"
        )


def _demo(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(args.seed)
    print(f"tripletsearch {__version__}: the oracle models of Chumbalov et al. (UAI 2024)\n")
    _demo_oracles(rng)
    _demo_embedding(rng)
    _demo_search(rng)
    _demo_theory()
    return 0


def _cluster(args: argparse.Namespace) -> Any:
    """The Dask client of ``--scheduler`` / ``--workers``, or None (a local run)."""
    if args.scheduler is None and args.workers is None:
        return None
    if args.what not in ("embedding", "continuous", "discrete", "collect"):
        raise SystemExit(f"error: --scheduler / --workers: not for 'reproduce {args.what}'")
    try:
        from distributed import Client
    except ImportError:
        raise SystemExit(
            "error: --scheduler / --workers need the 'dask' extra: "
            "pip install 'tripletsearch[dask]'"
        ) from None
    if args.scheduler is not None:
        return Client(args.scheduler)
    if args.workers < 1:
        raise SystemExit(f"error: --workers: must be >= 1, got {args.workers}")
    from ._distributed import local_cluster

    cluster = local_cluster(args.workers)
    print(f"a local Dask cluster of {args.workers} worker processes: {cluster.dashboard_link}")
    return Client(cluster)


def _reproduce(args: argparse.Namespace) -> int:
    from . import reproduce

    client = _cluster(args)
    try:
        kw = {"quick": args.quick, "n_jobs": args.n_jobs}
        if args.what == "embedding":
            reproduce.reproduce_embedding(args.out, client=client, **kw)
        elif args.what == "discrete":
            reproduce.reproduce_discrete(args.out, client=client, **kw)
        elif args.what == "continuous":
            reproduce.reproduce_continuous(args.out, client=client, **kw)
        elif args.what == "users":
            reproduce.reproduce_users(args.out, **kw)
        elif args.what == "theory":
            reproduce.reproduce_theory(args.out, **kw)
        elif args.what == "collect":
            reproduce.reproduce_collect(args.out, client=client, **kw)
    finally:
        if client is not None:
            cluster = client.cluster if args.scheduler is None else None
            client.close()
            if cluster is not None:
                cluster.close()
    return 0


def _info(args: argparse.Namespace) -> int:
    print(f"tripletsearch {__version__}")
    print(f"OpenMP: {'yes' if _core.openmp_enabled() else 'no (serial build)'}")
    print(f"default threads: {_core.max_threads()}")
    return 0


class _Help(argparse.RawDescriptionHelpFormatter):
    """Help in plain text, with each option's default.

    The default is added where the option has one and its help does not say it already.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            default not in (None, False, argparse.SUPPRESS, [])
            and "default" not in text
            and not action.option_strings == []
        ):
            text += (" " if text else "") + "(default: %(default)s)"
        return text


class _Parser(argparse.ArgumentParser):
    """The command line's parsers: plain-text help with defaults (the subcommands' too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)


def _description() -> str:
    """The module docstring's first line and last paragraph, as plain text.

    argparse lists the commands.
    """
    parts = (__doc__ or "").replace("``", "").strip().split("\n\n")
    return parts[0] + "\n\n" + parts[-1]


def main(argv: list[str] | None = None) -> int:
    """Run the command of ``argv`` (default: ``sys.argv[1:]``); its exit code.

    Without a command: the help, exit code 0.
    """
    parser = _Parser(prog="tripletsearch", description=_description())
    sub = parser.add_subparsers(dest="command", metavar="command")
    p_demo = sub.add_parser("demo", help="a short tour of the oracles and the theory tools")
    p_demo.add_argument("--seed", type=int, default=0)
    p_demo.set_defaults(func=_demo)
    p_rep = sub.add_parser("reproduce", help="reproduce an experiment of the paper")
    p_rep.add_argument(
        "what",
        choices=["embedding", "discrete", "continuous", "users", "theory", "collect"],
        help="embedding (Figure 5), discrete (the user study simulated), continuous (Figure 4), "
        "users (gamma auto against 3), theory (the gamma-d figure), collect (query samplers)",
    )
    p_rep.add_argument("--out", default="reproduce-out", help="output folder")
    p_rep.add_argument("--quick", action="store_true", help="a smaller, faster run")
    p_rep.add_argument("--n-jobs", type=int, default=None, help="parallel fits")
    p_rep.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run on this Dask cluster (embedding, continuous, discrete, collect; the dask extra)",
    )
    p_rep.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="start a local Dask cluster of N worker processes and run on it",
    )
    p_rep.set_defaults(func=_reproduce)
    p_info = sub.add_parser("info", help="version, OpenMP, threads")
    p_info.set_defaults(func=_info)
    from .serve.cli import add_commands  # argparse only: the service imports when run

    add_commands(sub)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
