"""S-parameters from lumped-port voltages and currents.

For a port with real reference impedance ``z0`` the power waves (Kurokawa, "Power waves and
the scattering matrix", IEEE T-MTT 13(2), 1965, eq. 2, for real ``Z0``) are

    a = (V + z0 I) / (2 sqrt(z0)),      b = (V - z0 I) / (2 sqrt(z0))                   (1)

with ``V`` the port voltage and ``I`` the current *into* the network at the port's positive
terminal, both frequency-domain values (the running DFT of the port's voltage and current
monitors). Exciting port ``e = 1..M`` in turn gives columns ``a^(e)``, ``b^(e)``; with
``A[:, p, e] = a_p^(e)``, ``B[:, p, e] = b_p^(e)`` the scattering matrix satisfies ``B = S A``,
so

    S = B A^{-1}                                                                        (2)

(``method="solve"``; exact for any port terminations). When the unexcited ports are terminated
in ``z0`` (a lumped source's internal resistance equal to the reference), ``a`` vanishes there
and (2) reduces to MindElec's ``SParameterSolver.eval``: ``S_pe = b_p^(e) / a_e^(e)``
(``method="diagonal"``).

Everything is written with core ops (complex128), so S is differentiable with respect to the
voltages and currents and, through them, to the simulation's parameters.
``reciprocity_error`` and ``passivity`` check the two properties a physical passive reciprocal
structure has (``S = S^T``; singular values of S at most 1), and ``plot_sparams`` draws
``|S|`` in dB and the phase with matplotlib.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from diffsci import core
from diffsci.core import ops

from .dft import RunningDFT

__all__ = [
    "SParameterSolver",
    "passivity",
    "plot_sparams",
    "power_waves",
    "reciprocity_error",
    "s_from_time_signals",
    "s_matrix",
]


def _complex_tensor(x) -> core.Tensor:
    if isinstance(x, core.Tensor):
        if x.dtype in (core.complex64, core.complex128):
            return x
        return ops.complex(ops.astype(x, core.float64), core.zeros(x.shape, dtype=core.float64))
    return core.tensor(np.asarray(x, dtype=np.complex128))


def _z0_values(z0, n_ports: int) -> np.ndarray:
    z = np.broadcast_to(np.asarray(z0, dtype=np.float64), (n_ports,))
    if not np.all(z > 0):
        raise ValueError(f"reference impedance z0 must be real and > 0 ohm per port, got {z0}")
    return z


def power_waves(v, i, z0=50.0):
    """Incident and reflected power waves (1).

    Args:
        v: port voltages (V s in DFT units), complex ``[..., N]`` (last axis: the port).
        i: currents into the ports, same shape.
        z0: reference impedance (ohm), a float or one per port ``[N]``.

    Returns:
        ``(a, b)``: complex128 Tensors of ``v``'s shape (sqrt(W) s for DFT inputs).
    """
    v, i = _complex_tensor(v), _complex_tensor(i)
    if tuple(v.shape) != tuple(i.shape):
        raise ValueError(f"power_waves: v {tuple(v.shape)} and i {tuple(i.shape)} differ")
    z = _z0_values(z0, v.shape[-1])
    zt = core.tensor(z.astype(np.complex128))
    half_root = core.tensor((0.5 / np.sqrt(z)).astype(np.complex128))
    return (v + zt * i) * half_root, (v - zt * i) * half_root


def s_matrix(v, i, z0=50.0, method: str = "solve") -> core.Tensor:
    """Scattering matrix from the port voltages and currents of several excitations.

    Args:
        v: complex ``[nf, M, N]``: ``v[f, e, p]`` is the voltage of port ``p`` when port ``e``
            is excited (``M = N`` for ``"solve"``, ``M <= N`` for ``"diagonal"``; port ``e``
            is the ``e``-th port).
        i: currents into the ports, same layout.
        z0: reference impedance (ohm), a float or ``[N]``.
        method: ``"solve"`` (2) or ``"diagonal"`` (MindElec's ``b_p / a_e``).

    Returns:
        complex128 Tensor ``[nf, N, M]``: ``S[f, p, e]``.
    """
    v, i = _complex_tensor(v), _complex_tensor(i)
    if len(v.shape) != 3:
        raise ValueError(f"s_matrix: v must be [nf, excitations, ports], got {tuple(v.shape)}")
    _nf, m, n = v.shape
    a, b = power_waves(v, i, z0)  # [nf, M, N]
    if method == "solve":
        if m != n:
            raise ValueError(
                f"s_matrix: method='solve' needs one excitation per port, got {m} for {n} ports"
            )
        # S A = B with A[p, e] = a[e, p]: A^T S^T = B^T, i.e. solve(a, b) = S^T
        return ops.swapaxes(ops.solve(a, b), -1, -2)
    if method == "diagonal":
        if m > n:
            raise ValueError(f"s_matrix: {m} excitations for {n} ports")
        a_ee = ops.stack([a[:, e, e] for e in range(m)], axis=-1)  # [nf, M]
        return ops.swapaxes(b, -1, -2) / ops.expand_dims(a_ee, 1)
    raise ValueError(f"s_matrix: method must be 'solve' or 'diagonal', got {method!r}")


def s_from_time_signals(v_t, i_t, dt: float, freqs, t_v=None, t_i=None, z0=50.0, method="solve"):
    """S from time-domain port signals: the running DFT of each, then ``s_matrix``.

    Args:
        v_t, i_t: ``[nt, M, N]`` port voltages (V) and currents into the ports (A), real.
        dt: time step (s).
        freqs: ``[nf]`` frequencies (Hz).
        t_v, t_i: ``[nt]`` sample times (s) of each; defaults ``n dt`` for both. On a Yee grid
            a port voltage (from E) is at ``n dt`` and its current (from H) at
            ``(n - 1/2) dt``: pass both so the phases line up.
        z0, method: as in ``s_matrix``.

    Returns:
        complex128 Tensor ``[nf, N, M]``.
    """
    v_t = v_t if isinstance(v_t, core.Tensor) else core.tensor(np.asarray(v_t, np.float64))
    i_t = i_t if isinstance(i_t, core.Tensor) else core.tensor(np.asarray(i_t, np.float64))
    nt = v_t.shape[0]
    t_v = np.arange(nt) * dt if t_v is None else np.asarray(t_v, dtype=np.float64)
    t_i = np.arange(nt) * dt if t_i is None else np.asarray(t_i, dtype=np.float64)
    dv = RunningDFT(freqs, dt, field_shape=v_t.shape[1:])
    di = RunningDFT(freqs, dt, field_shape=i_t.shape[1:])
    for k in range(nt):
        dv.update(v_t[k], float(t_v[k]))
        di.update(i_t[k], float(t_i[k]))
    return s_matrix(dv.value(), di.value(), z0=z0, method=method)


class SParameterSolver:
    """S-parameters of an N-port by one simulation per excited port (MindElec's name).

    Args:
        run: ``run(e) -> (v_t, i_t)`` simulates the structure with port ``e`` excited (the
            others terminated in their internal resistance) and returns the ports' voltage and
            current histories, ``[nt, N]`` each (V, A; current into the network).
        n_ports: ``N``.
        dt: time step (s).
        t_v, t_i: sample times of the voltage and current histories (``[nt]``, s).
        z0: reference impedance (ohm).

    ``solve()`` runs the ``N`` simulations; ``eval(freqs, method)`` returns ``S [nf, N, N]``.
    """

    def __init__(
        self,
        run: Callable[[int], tuple],
        n_ports: int,
        dt: float,
        t_v: Sequence[float] | None = None,
        t_i: Sequence[float] | None = None,
        z0=50.0,
    ):
        self.run, self.n_ports, self.dt = run, int(n_ports), float(dt)
        self.t_v, self.t_i, self.z0 = t_v, t_i, z0
        self.outputs = None

    def solve(self):
        """Run every excitation; keeps ``outputs = (v_t, i_t)`` as ``[nt, N_exc, N]`` Tensors."""
        vs, is_ = [], []
        for e in range(self.n_ports):
            v, i = self.run(e)
            vs.append(v if isinstance(v, core.Tensor) else core.tensor(np.asarray(v, np.float64)))
            is_.append(i if isinstance(i, core.Tensor) else core.tensor(np.asarray(i, np.float64)))
        self.outputs = (ops.stack(vs, axis=1), ops.stack(is_, axis=1))
        return self.outputs

    def eval(self, freqs, method: str = "solve") -> core.Tensor:
        """``S [nf, N, N]`` at ``freqs`` (Hz) from the kept outputs (``solve`` first)."""
        if self.outputs is None:
            raise RuntimeError("SParameterSolver.eval: call solve() first")
        v_t, i_t = self.outputs
        return s_from_time_signals(
            v_t, i_t, self.dt, freqs, self.t_v, self.t_i, z0=self.z0, method=method
        )


def _numpy(s) -> np.ndarray:
    s = s.numpy() if isinstance(s, core.Tensor) else np.asarray(s)
    return s.reshape((1, *s.shape)) if s.ndim == 2 else s


def reciprocity_error(s) -> float:
    """``max |S - S^T| / max |S|`` over all frequencies (0 for a reciprocal network).

    Args:
        s: ``[nf, N, N]`` or ``[N, N]`` complex.
    """
    s = _numpy(s)
    scale = float(np.max(np.abs(s)))
    return float(np.max(np.abs(s - np.swapaxes(s, -1, -2)))) / (scale if scale > 0 else 1.0)


def passivity(s, tol: float = 1e-9) -> tuple[bool, float]:
    """Whether ``S^H S <= 1`` at every frequency: ``(max singular value <= 1 + tol, that value)``.

    A passive network absorbs or passes on the power it receives, so no incident wave vector
    comes back amplified: every singular value of S is at most 1.
    """
    sv = float(np.max(np.linalg.svd(_numpy(s), compute_uv=False)))
    return sv <= 1.0 + tol, sv


def plot_sparams(freqs, s, pairs=None, path=None, unit: str = "GHz", reference=None):
    """Plot ``|S_pe|`` in dB and its phase (degrees) against frequency.

    Args:
        freqs: ``[nf]`` (Hz).
        s: ``[nf, N, N]`` complex (Tensor or array).
        pairs: ``[(p, e), ...]`` 1-based port pairs; default all.
        path: if given, the figure is saved there (PNG, PDF... by suffix).
        unit: frequency axis unit: "Hz", "kHz", "MHz" or "GHz".
        reference: optional dict ``{(p, e): (freqs_hz, s_db)}`` drawn dashed (published data).

    Returns:
        The matplotlib ``Figure`` (two axes: magnitude, phase).
    """
    from matplotlib.figure import Figure

    scale = {"HZ": 1.0, "KHZ": 1e3, "MHZ": 1e6, "GHZ": 1e9}[unit.upper()]
    s = _numpy(s)
    f = np.asarray(freqs, dtype=np.float64) / scale
    n = s.shape[-1]
    pairs = pairs or [(p, e) for e in range(1, n + 1) for p in range(1, n + 1)]
    fig = Figure(figsize=(8, 6), layout="constrained")
    ax_mag, ax_ph = fig.subplots(2, 1, sharex=True)
    for p, e in pairs:
        z = s[:, p - 1, e - 1]
        with np.errstate(divide="ignore"):
            db = 20.0 * np.log10(np.abs(z))
        (line,) = ax_mag.plot(f, db, label=f"S{p}{e}")
        ax_ph.plot(f, np.degrees(np.angle(z)), color=line.get_color(), label=f"S{p}{e}")
        if reference and (p, e) in reference:
            rf, rdb = reference[(p, e)]
            ax_mag.plot(
                np.asarray(rf) / scale,
                rdb,
                "--",
                color=line.get_color(),
                label=f"S{p}{e} reference",
            )
    ax_mag.set_ylabel("|S| (dB)")
    ax_ph.set_ylabel("phase (deg)")
    ax_ph.set_xlabel(f"frequency ({unit})")
    ax_ph.set_ylim(-180, 180)
    for ax in (ax_mag, ax_ph):
        ax.grid(True, alpha=0.3)
    ax_mag.legend(loc="best", fontsize="small")
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
