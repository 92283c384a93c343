"""
tripletsearch native core (C++17, OpenMP)
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['ContinuousConfig', 'ContinuousMethod', 'ContinuousSearcher', 'ContinuousSimOptions', 'ContinuousSimulation', 'DiscreteSearcher', 'DiscreteSimOptions', 'FitResult', 'GAMMA_GRID', 'ItemStore', 'LAPSE_GRID', 'MAX_CHOICES', 'MAX_HYPTEST_CELLS', 'MAX_PARTICLE_DIM', 'ModelKind', 'Opening', 'Optimizer', 'OracleSpec', 'Purpose', 'SearchConfig', 'SearchMethod', 'Selection', 'TrainOptions', 'TrainStatus', 'binomial_upper_tail', 'child_seed', 'collect_log_odds', 'collect_log_weights', 'collect_pair_information', 'collect_table_log_weights', 'epoch_permutation', 'gamma_log_prior', 'max_threads', 'openmp_enabled', 'oracle_choice_prob', 'oracle_grad', 'oracle_log_likelihood', 'oracle_log_prob', 'oracle_prob', 'p_correct_monte_carlo', 'principal_axes', 'require_allocation', 'rng_u64', 'scan_candidates', 'set_simd_isa', 'simd_isa', 'simulate_continuous', 'simulate_discrete', 'train', 'vector_math']
class Purpose:
    """
    The salts of the core's random streams (seeding.hpp).
    
    Members:
    
      SearchQuery
    
      PosteriorDraws
    
      SimDiscreteRun
    
      SimContinuousRun
    
      SimUser
    
      ParticleInit
    
      ResampleMove
    
      QueryDraws
    
      HyptestStage
    
      Opening
    """
    HyptestStage: typing.ClassVar[Purpose]
    Opening: typing.ClassVar[Purpose]
    ParticleInit: typing.ClassVar[Purpose]
    PosteriorDraws: typing.ClassVar[Purpose]
    QueryDraws: typing.ClassVar[Purpose]
    ResampleMove: typing.ClassVar[Purpose]
    SearchQuery: typing.ClassVar[Purpose]
    SimContinuousRun: typing.ClassVar[Purpose]
    SimDiscreteRun: typing.ClassVar[Purpose]
    SimUser: typing.ClassVar[Purpose]
    __members__: typing.ClassVar[dict[str, Purpose]]
    @typing.overload
    def __eq__(self, other: Purpose) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Purpose) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class ModelKind:
    """
    The oracle models.
    
    Members:
    
      GammaCKL
    
      CKL
    
      TSTE
    
      STE
    
      Probit
    """
    CKL: typing.ClassVar[ModelKind]
    GammaCKL: typing.ClassVar[ModelKind]
    Probit: typing.ClassVar[ModelKind]
    STE: typing.ClassVar[ModelKind]
    TSTE: typing.ClassVar[ModelKind]
    __members__: typing.ClassVar[dict[str, ModelKind]]
    @typing.overload
    def __eq__(self, other: ModelKind) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: ModelKind) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class OracleSpec:
    """
    A model and its parameter (gamma, mu, alpha, unused, sigma); validated on construction, pickled and compared by value.
    """
    def __eq__(self, other: typing.Any) -> typing.Any:
        ...
    def __getstate__(self) -> tuple[ModelKind, float]:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, kind: ModelKind, param: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    @property
    def kind(self) -> ModelKind:
        ...
    @property
    def param(self) -> float:
        ...
class Optimizer:
    """
    The embedding trainer's optimizers.
    
    Members:
    
      SGD
    
      Adam
    
      LBFGS
    """
    Adam: typing.ClassVar[Optimizer]
    LBFGS: typing.ClassVar[Optimizer]
    SGD: typing.ClassVar[Optimizer]
    __members__: typing.ClassVar[dict[str, Optimizer]]
    @typing.overload
    def __eq__(self, other: Optimizer) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Optimizer) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class TrainStatus:
    """
    How a fit ended.
    
    Members:
    
      Converged
    
      MaxEpochs
    
      Diverged
    
      Stopped
    
      EarlyStopped
    """
    Converged: typing.ClassVar[TrainStatus]
    Diverged: typing.ClassVar[TrainStatus]
    EarlyStopped: typing.ClassVar[TrainStatus]
    MaxEpochs: typing.ClassVar[TrainStatus]
    Stopped: typing.ClassVar[TrainStatus]
    __members__: typing.ClassVar[dict[str, TrainStatus]]
    @typing.overload
    def __eq__(self, other: TrainStatus) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: TrainStatus) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class TrainOptions:
    """
    Options of the trainer; validated on construction, pickled and compared by value.
    """
    def __eq__(self, other: typing.Any) -> typing.Any:
        ...
    def __getstate__(self) -> tuple[Optimizer, float, int, int, float, int, float, bool, int, int]:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, *, optimizer: Optimizer = Optimizer.LBFGS, lr: typing.SupportsFloat | typing.SupportsIndex = 0.1, batch_size: typing.SupportsInt | typing.SupportsIndex = 0, max_epochs: typing.SupportsInt | typing.SupportsIndex = 1000, tol: typing.SupportsFloat | typing.SupportsIndex = 1e-06, n_iter_no_change: typing.SupportsInt | typing.SupportsIndex = 10, l2: typing.SupportsFloat | typing.SupportsIndex = 0.0, learn_gamma: bool = False, lbfgs_history: typing.SupportsInt | typing.SupportsIndex = 10, n_fixed: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    @property
    def batch_size(self) -> int:
        ...
    @property
    def l2(self) -> float:
        ...
    @property
    def lbfgs_history(self) -> int:
        ...
    @property
    def learn_gamma(self) -> bool:
        ...
    @property
    def lr(self) -> float:
        ...
    @property
    def max_epochs(self) -> int:
        ...
    @property
    def n_fixed(self) -> int:
        ...
    @property
    def n_iter_no_change(self) -> int:
        ...
    @property
    def optimizer(self) -> Optimizer:
        ...
    @property
    def tol(self) -> float:
        ...
class FitResult:
    """
    The result of train().
    """
    @property
    def best_epoch(self) -> int:
        """
        With validation rows: the epoch whose parameters were kept (0: the start).
        """
    @property
    def embedding(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The fitted embedding (n, d).
        """
    @property
    def epochs(self) -> int:
        ...
    @property
    def gamma(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        gamma after every epoch.
        """
    @property
    def loss(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The objective after every epoch.
        """
    @property
    def status(self) -> TrainStatus:
        ...
    @property
    def val_loss(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        With validation rows: their mean negative log-likelihood after every epoch.
        """
class SearchMethod:
    """
    Database search methods.
    
    Members:
    
      GammaCKL
    
      Gauss
    
      Random
    """
    GammaCKL: typing.ClassVar[SearchMethod]
    Gauss: typing.ClassVar[SearchMethod]
    Random: typing.ClassVar[SearchMethod]
    __members__: typing.ClassVar[dict[str, SearchMethod]]
    @typing.overload
    def __eq__(self, other: SearchMethod) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: SearchMethod) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Selection:
    """
    gamma-CKLSearch's selection rules.
    
    Members:
    
      Weighted
    
      Paper
    
      Nearest
    
      InfoGain
    """
    InfoGain: typing.ClassVar[Selection]
    Nearest: typing.ClassVar[Selection]
    Paper: typing.ClassVar[Selection]
    Weighted: typing.ClassVar[Selection]
    __members__: typing.ClassVar[dict[str, Selection]]
    @typing.overload
    def __eq__(self, other: Selection) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Selection) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Opening:
    """
    A database search's first screen.
    
    Members:
    
      Principal
    
      Random
    
      Uniform
    """
    Principal: typing.ClassVar[Opening]
    Random: typing.ClassVar[Opening]
    Uniform: typing.ClassVar[Opening]
    __members__: typing.ClassVar[dict[str, Opening]]
    @typing.overload
    def __eq__(self, other: Opening) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Opening) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class SearchConfig:
    """
    A database search's configuration; validated on construction, pickled and compared by value.
    """
    def __eq__(self, other: typing.Any) -> typing.Any:
        ...
    def __getstate__(self) -> tuple[SearchMethod, float, float, float, int, Selection, float, bool, bool, Opening, int, float, bool]:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, *, method: SearchMethod = SearchMethod.GammaCKL, gamma: typing.SupportsFloat | typing.SupportsIndex = 3.0, r: typing.SupportsFloat | typing.SupportsIndex = 2.0, sigma: typing.SupportsFloat | typing.SupportsIndex = 0.1, n_choices: typing.SupportsInt | typing.SupportsIndex = 2, selection: Selection = Selection.InfoGain, lapse: typing.SupportsFloat | typing.SupportsIndex = 0.0, gamma_auto: bool = False, lapse_auto: bool = False, opening: Opening = Opening.Uniform, guesses: typing.SupportsInt | typing.SupportsIndex = 0, miss: typing.SupportsFloat | typing.SupportsIndex = 0.0, miss_auto: bool = False) -> None:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    @property
    def gamma(self) -> float:
        ...
    @property
    def gamma_auto(self) -> bool:
        ...
    @property
    def guesses(self) -> int:
        ...
    @property
    def lapse(self) -> float:
        ...
    @property
    def lapse_auto(self) -> bool:
        ...
    @property
    def method(self) -> SearchMethod:
        ...
    @property
    def miss(self) -> float:
        ...
    @property
    def miss_auto(self) -> bool:
        ...
    @property
    def n_choices(self) -> int:
        ...
    @property
    def opening(self) -> Opening:
        ...
    @property
    def r(self) -> float:
        ...
    @property
    def selection(self) -> Selection:
        ...
    @property
    def sigma(self) -> float:
        ...
class ItemStore:
    """
    The items (n, d) in the search's single-precision block layout.
    """
    @staticmethod
    def map(path: str) -> ItemStore:
        """
        The store that `save` wrote to `path`, mapped read-only: processes that map one file share its pages (read into memory where files cannot be mapped).
        """
    def __init__(self, X: typing.Any, *, scaled: bool = True, distinct: bool = False) -> None:
        """
        Centres X (and with `scaled` divides it by a power of two) before single precision; with `distinct`, items that coincide there raise ValueError.
        """
    def save(self, path: str) -> None:
        """
        Writes the store to `path`, for ItemStore.map (a header, the centre, the blocks).
        """
    @property
    def center(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def d(self) -> int:
        ...
    @property
    def mapped(self) -> bool:
        """
        Whether the items live in a mapped file.
        """
    @property
    def n(self) -> int:
        ...
    @property
    def scale(self) -> float:
        ...
class DiscreteSearcher:
    """
    A database search session (safe to share between threads: calls take turns).
    """
    def __init__(self, store: ItemStore, config: SearchConfig, seed: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def copy(self, seed: typing.SupportsInt | typing.SupportsIndex) -> DiscreteSearcher:
        """
        This session's state with another seed: from a session neither asked nor told, the same as a new one with that seed (its prior computed once).
        """
    def most_probable(self, m: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.int64]:
        """
        The m items of highest posterior probability (ties: lower index; positive probabilities only) as the next query sees them (test hook).
        """
    def offer(self, shown: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> numpy.typing.NDArray[numpy.int64]:
        """
        The strip of best guesses for the screen `shown` that select() just gave: up to config.guesses items, the most probable ones neither on it nor shown before (GaussSearch: nor passed over), most probable first.
        """
    def posterior(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        P(item is the target) for every item (shown items: 0).
        """
    def principal_axes(self, count: typing.SupportsInt | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        The belief's top `count` principal axes: (values in the input's units, unit vectors as rows). gamma-CKLSearch beyond 32 dimensions: the Ritz pairs of the subspace step taken with the last answer, as its next query uses them; otherwise the eigenpairs of the covariance (test hook).
        """
    def select(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        The items to show next (empty when every item was shown).
        """
    def update(self, shown: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], choice: typing.SupportsInt | typing.SupportsIndex, offered: typing.Annotated[numpy.typing.ArrayLike, numpy.int64] | None = None) -> None:
        """
        The user saw `shown` and picked shown[choice] (choice = -1: no answer), and passed over the strip `offered`.
        """
    def user_posterior(self) -> typing.Any:
        """
        (gamma grid probabilities, lapse grid probabilities), or None when neither is inferred.
        """
    @property
    def config(self) -> SearchConfig:
        ...
    @property
    def cov(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def mean(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def n_items(self) -> int:
        ...
    @property
    def n_queries(self) -> int:
        ...
    @property
    def n_unshown(self) -> int:
        ...
    @property
    def state_bytes(self) -> int:
        """
        The bytes of the session's own state (weights, shown items, moments; not the shared item store).
        """
class ContinuousMethod:
    """
    Continuous search methods.
    
    Members:
    
      HypothesisTest
    
      Posterior
    
      Global
    """
    Global: typing.ClassVar[ContinuousMethod]
    HypothesisTest: typing.ClassVar[ContinuousMethod]
    Posterior: typing.ClassVar[ContinuousMethod]
    __members__: typing.ClassVar[dict[str, ContinuousMethod]]
    @typing.overload
    def __eq__(self, other: ContinuousMethod) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: ContinuousMethod) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class ContinuousConfig:
    """
    A continuous search's configuration; validated on construction, pickled and compared by value. 0 n_particles or stage_cap: the defaults; low, high: one entry per axis, or one for all.
    """
    def __eq__(self, other: typing.Any) -> typing.Any:
        ...
    def __getstate__(self) -> tuple[int, float, list[float], list[float], ContinuousMethod, float, float, int, int, int, float, int, int, int, bool, bool]:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, *, dim: typing.SupportsInt | typing.SupportsIndex = 2, gamma: typing.SupportsFloat | typing.SupportsIndex = 3.0, low: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex] = [-1.0], high: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex] = [1.0], method: ContinuousMethod = ContinuousMethod.Global, alpha: typing.SupportsFloat | typing.SupportsIndex = 0.8, lapse: typing.SupportsFloat | typing.SupportsIndex = 0.0, stage_cap: typing.SupportsInt | typing.SupportsIndex = 0, n_particles: typing.SupportsInt | typing.SupportsIndex = 0, mh_sweeps: typing.SupportsInt | typing.SupportsIndex = 2, resample_ess: typing.SupportsFloat | typing.SupportsIndex = 0.5, cells_per_axis: typing.SupportsInt | typing.SupportsIndex = 0, n_obs: typing.SupportsInt | typing.SupportsIndex = 0, tau: typing.SupportsInt | typing.SupportsIndex = 0, gamma_auto: bool = False, lapse_auto: bool = False) -> None:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    @property
    def alpha(self) -> float:
        ...
    @property
    def cells_per_axis(self) -> int:
        ...
    @property
    def dim(self) -> int:
        ...
    @property
    def gamma(self) -> float:
        ...
    @property
    def gamma_auto(self) -> bool:
        ...
    @property
    def high(self) -> list[float]:
        ...
    @property
    def lapse(self) -> float:
        ...
    @property
    def lapse_auto(self) -> bool:
        ...
    @property
    def low(self) -> list[float]:
        ...
    @property
    def method(self) -> ContinuousMethod:
        ...
    @property
    def mh_sweeps(self) -> int:
        ...
    @property
    def n_obs(self) -> int:
        ...
    @property
    def n_particles(self) -> int:
        """
        Particles of the posterior (the default resolved).
        """
    @property
    def resample_ess(self) -> float:
        ...
    @property
    def stage_cap(self) -> int:
        """
        Queries per stage of the posterior method (the default resolved).
        """
    @property
    def tau(self) -> int:
        ...
class ContinuousSearcher:
    """
    A continuous search session (safe to share between threads: calls take turns).
    """
    def __init__(self, config: ContinuousConfig, seed: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def ask(self) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        The pending query (a, b), the same until told.
        """
    def estimate(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The point estimate of the target.
        """
    def observe(self, a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], a_is_closer: bool) -> bool:
        """
        Records the answer to a query asked elsewhere (replacing any pending one); True when a stage ended.
        """
    def tell(self, a_is_closer: bool) -> bool:
        """
        Records the answer; True when a stage ended.
        """
    def user_posterior(self) -> typing.Any:
        """
        (gamma grid probabilities, lapse grid probabilities), or None when neither is inferred.
        """
    @property
    def center(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def config(self) -> ContinuousConfig:
        ...
    @property
    def depth(self) -> int:
        ...
    @property
    def edge(self) -> float:
        ...
    @property
    def n_particles(self) -> int:
        ...
    @property
    def n_queries(self) -> int:
        ...
    @property
    def n_stages(self) -> int:
        ...
class DiscreteSimOptions:
    """
    What each search of simulate_discrete may take, and where a call's runs sit in the study (run r's streams are keyed by first_run + r); validated on construction, pickled and compared by value.
    """
    def __eq__(self, other: typing.Any) -> typing.Any:
        ...
    def __getstate__(self) -> tuple[int, float, int, float]:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, *, max_queries: typing.SupportsInt | typing.SupportsIndex = 200, oracle_lapse: typing.SupportsFloat | typing.SupportsIndex = 0.0, first_run: typing.SupportsInt | typing.SupportsIndex = 0, oracle_miss: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    @property
    def first_run(self) -> int:
        ...
    @property
    def max_queries(self) -> int:
        ...
    @property
    def oracle_lapse(self) -> float:
        ...
    @property
    def oracle_miss(self) -> float:
        ...
class ContinuousSimOptions:
    """
    What simulate_continuous runs and records (checked against the configuration by simulate_continuous), pickled and compared by value.
    """
    def __eq__(self, other: typing.Any) -> typing.Any:
        ...
    def __getstate__(self) -> tuple[int, int, int, float, float, int]:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, *, n_runs: typing.SupportsInt | typing.SupportsIndex = 1, max_queries: typing.SupportsInt | typing.SupportsIndex = -1, max_stages: typing.SupportsInt | typing.SupportsIndex = -1, oracle: OracleSpec = ..., oracle_lapse: typing.SupportsFloat | typing.SupportsIndex = 0.0, first_run: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    @property
    def first_run(self) -> int:
        ...
    @property
    def max_queries(self) -> int:
        ...
    @property
    def max_stages(self) -> int:
        ...
    @property
    def n_runs(self) -> int:
        ...
    @property
    def oracle(self) -> OracleSpec:
        ...
    @property
    def oracle_lapse(self) -> float:
        ...
class ContinuousSimulation:
    """
    The records of simulate_continuous.
    """
    @property
    def centers(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def depths(self) -> numpy.typing.NDArray[numpy.int64]:
        ...
    @property
    def edges(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def errors(self) -> typing.Any:
        ...
    @property
    def n_queries(self) -> numpy.typing.NDArray[numpy.int64]:
        ...
    @property
    def stage_errors(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def stage_queries(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def targets(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
def binomial_upper_tail(n: typing.SupportsInt | typing.SupportsIndex, p: typing.SupportsFloat | typing.SupportsIndex, tau: typing.SupportsInt | typing.SupportsIndex) -> float:
    """
    P(Binomial(n, p) >= tau), the hypothesis test's acceptance probability.
    """
def child_seed(seed: typing.SupportsInt | typing.SupportsIndex, purpose: Purpose, index: typing.SupportsInt | typing.SupportsIndex) -> int:
    """
    seeding.hpp's child_seed.
    """
def collect_choice_information(lapse: typing.SupportsFloat | typing.SupportsIndex, log_odds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], log_weights: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], picks: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    Mutual information (nats) between the ranked answer (picks successive choices) to each set of k candidates and the head's position, shape (C,): sets are (C, k) rows of the log-odds table.
    """
def collect_choice_log_weights(lapse: typing.SupportsFloat | typing.SupportsIndex, log_odds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], answers: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], picks: typing.SupportsInt | typing.SupportsIndex, log_prior: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    Log weights (M,) of a head's support points from ranked answers: log_prior plus the log-probability of each answer, a row of k table rows (the picks first, in order), by successive choices among those left, each pick mixed with a lapse.
    """
def collect_log_odds(spec: OracleSpec, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], support: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], items: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    The model's log-odds terms f(||s_m - x_i||^2) of the given items for every support point, shape (len(items), M): a pair (a, b) of rows has log-odds F[b] - F[a] of 'a closer'.
    """
def collect_log_weights(spec: OracleSpec, lapse: typing.SupportsFloat | typing.SupportsIndex, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], support: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], answers: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], log_prior: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    Log weights (M,) of a head's support points: log_prior plus the log-probability of each answer (closer, farther) with the head at the point, the model mixed with a lapse.
    """
def collect_pair_information(lapse: typing.SupportsFloat | typing.SupportsIndex, log_odds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], log_weights: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], pairs: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    Mutual information (nats) between the answer to each candidate pair and the head's position, shape (C,): pairs are (C, 2) rows of the log-odds table, log_weights the support points' (unnormalized). Lapse 0 under AVX2: float lanes, to about 1e-7 nats.
    """
def collect_table_log_weights(lapse: typing.SupportsFloat | typing.SupportsIndex, log_odds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], answers: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], log_prior: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    collect_log_weights from a log-odds table: log_prior plus the log-probability of each answer, given as rows (closer, farther) of the table, at each support point.
    """
def epoch_permutation(seed: typing.SupportsInt | typing.SupportsIndex, epoch: typing.SupportsInt | typing.SupportsIndex, m: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.int64]:
    """
    The trainer's minibatch order of one epoch.
    """
def gamma_log_prior(j: typing.SupportsInt | typing.SupportsIndex) -> float:
    """
    log prior mass of GAMMA_GRID[j] (log-uniform on [0.5, 32]).
    """
def max_threads() -> int:
    """
    Threads OpenMP would use by default (respects OMP_NUM_THREADS); 1 in a serial build.
    """
def openmp_enabled() -> bool:
    """
    Whether the core uses OpenMP.
    """
def oracle_choice_prob(spec: OracleSpec, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], heads: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], candidates: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    P(candidate c named closest to the head), shape (m, k).
    """
def oracle_grad(spec: OracleSpec, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], triplets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    Gradient of oracle_log_likelihood with respect to X, shape (n, d).
    """
def oracle_log_likelihood(spec: OracleSpec, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], triplets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], threads: typing.SupportsInt | typing.SupportsIndex) -> float:
    """
    Sum of the rows' log-probabilities.
    """
def oracle_log_prob(spec: OracleSpec, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], triplets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    log of oracle_prob, shape (m,).
    """
def oracle_prob(spec: OracleSpec, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], triplets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    Probability of each row's stated outcome, shape (m,).
    """
def p_correct_monte_carlo(gamma: typing.SupportsFloat | typing.SupportsIndex, dim: typing.SupportsInt | typing.SupportsIndex, n_samples: typing.SupportsInt | typing.SupportsIndex, seed: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> tuple[float, float]:
    """
    (mean, standard error) of the Monte-Carlo estimate of p_Q (Theorem 2.1).
    """
def principal_axes(cov: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], count: typing.SupportsInt | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
    """
    The top `count` eigenpairs (values, vectors as rows) of a covariance, as the searches compute them: Jacobi rotations up to 32 dimensions, subspace iteration beyond.
    """
def require_allocation(bytes: typing.SupportsFloat | typing.SupportsIndex, name: str) -> None:
    """
    ValueError naming `name` when `bytes` exceed this machine's memory (the core's check).
    """
def rng_u64(seed: typing.SupportsInt | typing.SupportsIndex, stream: typing.SupportsInt | typing.SupportsIndex, count: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.uint64]:
    """
    The first `count` outputs of the generator's stream (seed, stream).
    """
def scan_candidates(store: ItemStore, protos: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], kb: typing.SupportsInt | typing.SupportsIndex, weights: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rule: typing.SupportsInt | typing.SupportsIndex, *, center: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None = None, vectors: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None = None, axis: typing.Annotated[numpy.typing.ArrayLike, numpy.int64] | None = None, steps: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None = None) -> numpy.typing.NDArray[numpy.int64]:
    """
    Test hook: for each proto (store frame), the kb items of lowest score (rule 0: D / w, 1: w sqrt(D), 2: D; w rounded to the sessions' single-precision weights), ties by index; with center/vectors/axis/steps the pre-test runs on projections, which is exact only when protos = center + steps[c] vectors[axis[c]] with unit rows in vectors (the caller's promise; not checked).
    """
def set_simd_isa(isa: str) -> bool:
    """
    Selects the kernels' instruction set (tests); False when the CPU or build lacks it.
    """
def simd_isa() -> str:
    """
    The instruction set the block kernels run: 'avx2' or 'portable'.
    """
def simulate_continuous(config: ContinuousConfig, options: ContinuousSimOptions, seed: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> ContinuousSimulation:
    """
    Searches for targets uniform in Omega by simulated gamma-CKL users.
    """
def simulate_discrete(store: ItemStore, config: SearchConfig, oracle: OracleSpec, oracle_store: ItemStore, targets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], options: DiscreteSimOptions, seed: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.bool]]:
    """
    One search per target, users answering by `oracle` at the positions of oracle_store (at random with probability options.oracle_lapse): (queries until the target was shown, found).
    """
def train(spec: OracleSpec, init: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], triplets: numpy.ndarray, options: TrainOptions, seed: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex, callback: typing.Any = None, validation: typing.Any = None) -> FitResult:
    """
    Fits an embedding from `init` (n, d) to triplet rows (int32 rows are read as they are, other integer rows as int64; the validation rows are read as the rows); callback(epoch, loss, gamma) -> bool after every epoch (False stops the fit). With `validation` rows the fit stops early on their loss and ends at its best epoch.
    """
def train_trials(spec: OracleSpec, init: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sets: list, options: TrainOptions, threads: typing.SupportsInt | typing.SupportsIndex, callback: typing.Any = None) -> tuple:
    """
    Fits an embedding from `init` to trial sets by L-BFGS: (embedding, loss per epoch, gamma per epoch, epochs, status).
    """
def trials_log_prob(spec: OracleSpec, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sets: list, threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    log p of every trial of the sets [(rows, kind, k, r, ordered), ...], set after set.
    """
def trials_loss_grad(spec: OracleSpec, X: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sets: list, threads: typing.SupportsInt | typing.SupportsIndex) -> tuple:
    """
    (sum log p, its gradient (n, d), its derivative in log gamma) over every trial.
    """
def vector_math(name: str, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    exp or log of each value by the row kernels' vector code under the active ISA (the C library's for the last n % 4 values, and under 'portable'): tests of its accuracy.
    """
GAMMA_GRID: list = [0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0]
LAPSE_GRID: list = [0.0, 0.02, 0.05, 0.1, 0.2, 0.3]
MAX_CHOICES: int = 64
MAX_HYPTEST_CELLS: int = 4294967296
MAX_PARTICLE_DIM: int = 15
