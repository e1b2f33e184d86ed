"""2-D frequency-domain Maxwell (Helmholtz) PINNs on the core engine: MindElec's real case and
a complex-valued point source with an absorbing boundary.

Real case (MindElec ``physics_driven/frequency_domain_maxwell``, ``src/helmholtz.py``)::

    (d2/dx2 + d2/dy2 + k^2) u = 0      on [0, 1]^2,   k = 2,
    u = sin(k x)                        on the boundary,

whose solution is ``u = sin(k x)``. MindElec's network (``src/model.py``, ``FFNN``): four
``Dense(64)`` layers with ``sin`` activations and a linear output; its boundary residual is
``100 (u - sin(k x))``.

Complex case (time convention ``exp(-i omega t)``, outgoing waves ``~ exp(+i k r)``)::

    (Delta + k^2) u = -f,    f = exp(-|x - x_s|^2 / (2 s^2)) / (2 pi s^2)   in [0, 1]^2,
    du/dn - i k u = 0                                                       on the boundary

(first-order Sommerfeld / impedance absorbing condition, Engquist & Majda 1977; its free-space
analogue is ``u = f * (i/4) H0^(1)(k r)``). ``u`` is complex: the network has real sine hidden
layers and a complex ``Dense`` output layer (complex128/complex64 weight and bias), the
residuals are complex tensors and the loss is ``mean |r|^2``; core's gradients of a real loss
with respect to complex parameters follow JAX's convention ``dL/dRe - i dL/dIm`` (twice the
Wirtinger ``dL/dz``) and core's Adam conjugates them, so nothing is split into real and
imaginary parts by hand. The reference is :func:`fd_helmholtz`, a second-order 5-point finite
difference solve (``scipy.sparse``) with the same boundary condition through ghost nodes.

The Laplacian of the network is taken by two nested forward-mode products per axis
(:func:`laplacian`), which works unchanged for complex outputs of real inputs.
"""

import itertools
import math

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from diffsci import core
from diffsci.core import nn
from diffsci.datasets.geometry import Rectangle

# ---- networks ----------------------------------------------------------------------------------


class FFNN(nn.Cell):
    """MindElec's ``FFNN`` (``src/model.py``): ``layers`` hidden ``Dense(neurons)`` with ``sin``.

    ``[N, in_dim] -> [N, out_dim]``. ``input_scale`` and ``input_center`` map the input as
    ``(x - center) * scale`` before the first layer (MindElec's ``MultiScaleFCCell`` option of
    the same names); the real case leaves them at 1 and 0 like MindElec's FFNN.
    """

    def __init__(
        self,
        in_dim,
        out_dim,
        neurons=64,
        layers=4,
        input_scale=1.0,
        input_center=0.0,
        dtype=core.float32,
    ):
        super().__init__()
        self.input_scale = float(input_scale)
        self.input_center = float(input_center)
        sizes = [in_dim] + [neurons] * layers
        self.hidden = nn.CellList(
            [nn.Dense(a, b, dtype=dtype) for a, b in itertools.pairwise(sizes)]
        )
        self.act = nn.Sin()
        self.out = nn.Dense(neurons, out_dim, dtype=dtype)

    def features(self, x):
        """The last hidden layer, ``[N, neurons]``."""
        h = (x - self.input_center) * self.input_scale  # [N, in_dim]
        for dense in self.hidden:
            h = self.act(dense(h))  # [N, neurons]
        return h

    def construct(self, x):
        return self.out(self.features(x))  # [N, out_dim]


class ComplexHeadNet(nn.Cell):
    """Real sine features, complex output: ``u = h(x) w^T + b`` with complex ``w``, ``b``.

    ``[N, 2]`` real -> ``[N, 1]`` complex. The trunk is :class:`FFNN`'s hidden stack; the output
    layer's weight ``[1, neurons]`` and bias ``[1]`` are complex Parameters (real and imaginary
    parts drawn like a real ``Dense``'s weight).
    """

    def __init__(self, neurons=64, layers=4, input_scale=1.0, input_center=0.0, dtype=None):
        super().__init__()
        dtype = core.float64 if dtype is None else dtype
        cdtype = core.complex128 if dtype == core.float64 else core.complex64
        self.trunk = FFNN(2, 1, neurons, layers, input_scale, input_center, dtype=dtype)
        rng = np.random.default_rng(int(core.get_seed() or 0) + 7)
        bound = 1.0 / math.sqrt(neurons)
        w = rng.uniform(-bound, bound, (1, neurons)) + 1j * rng.uniform(-bound, bound, (1, neurons))
        self.weight = core.Parameter(core.tensor(w, dtype=cdtype), name="weight")
        self.bias = core.Parameter(core.zeros((1,), dtype=cdtype), name="bias")
        self.cdtype = cdtype

    def construct(self, x):
        h = self.trunk.features(x).astype(self.cdtype)  # [N, neurons] complex
        return core.ops.matmul(h, self.weight.T) + self.bias  # [N, 1] complex

    def trainable_params(self, recurse=True):
        # the trunk's output Dense is unused: train only what the forward pass reads
        skip = {id(p) for p in self.trunk.out.trainable_params()}
        return [p for p in super().trainable_params(recurse) if id(p) not in skip]


# ---- derivatives -------------------------------------------------------------------------------


def laplacian(fn, x):
    """``sum_j d2 fn / dx_j^2`` at every row of ``x [N, d]``: ``[N, m]`` (complex if ``fn`` is).

    Two nested forward-mode products per axis with the tangent ``e_j`` at every point; ``fn``
    must act on each row alone (a point-wise network).
    """
    n, d = x.shape
    total = None
    for j in range(d):
        e = np.zeros((n, d))
        e[:, j] = 1.0
        e = core.tensor(e, dtype=x.dtype)  # [N, d]

        def first(y, e=e):
            return core.jvp(fn, (y,), (e,))[1]  # [N, m]: d fn / dx_j

        second = core.jvp(first, (x,), (e,))[1]  # [N, m]: d2 fn / dx_j^2
        total = second if total is None else total + second
    return total


def normal_derivative(fn, xb, nb):
    """``grad fn . n`` at boundary points ``xb [M, d]`` with unit normals ``nb [M, d]``: ``[M, m]``."""
    return core.jvp(fn, (xb,), (nb,))[1]


def abs2(z):
    """``|z|^2`` as a real tensor (``z`` real or complex)."""
    if core.dtype.is_complex(z.dtype):
        return core.ops.real(z * core.ops.conj(z))
    return z * z


# ---- the real case (MindElec) ------------------------------------------------------------------


def real_loss_terms(model, k, bc_weight=100.0):
    """``(x [N, 2], xb [M, 2]) -> {"pde", "bc"}``: MindElec's Helmholtz2D residuals, squared."""

    def terms(x, xb):
        r_pde = laplacian(model, x) + (k * k) * model(x)  # [N, 1]
        r_bc = bc_weight * (model(xb) - core.ops.sin(k * xb[:, 0:1]))  # [M, 1]
        return {"pde": (r_pde**2).mean(), "bc": (r_bc**2).mean()}

    return terms


def real_test_data(coord_min, coord_max, axis_size, k):
    """MindElec's ``data_prepare``: an ``axis_size^2`` grid and ``u = sin(k x)``.

    Returns ``(points [axis_size^2, 2], label [axis_size^2, 1])``, rows in ``meshgrid(x, y)``
    order (``y`` slow).
    """
    xs = np.linspace(coord_min[0], coord_max[0], axis_size)
    ys = np.linspace(coord_min[1], coord_max[1], axis_size)
    xx, yy = np.meshgrid(xs, ys)  # [ny, nx]
    pts = np.stack([xx.ravel(), yy.ravel()], axis=1)
    return pts, np.sin(k * pts[:, 0:1])


# ---- the complex case --------------------------------------------------------------------------


def gaussian_source(x, center, sigma):
    """``exp(-|x - c|^2 / (2 sigma^2)) / (2 pi sigma^2)`` at ``x [N, 2]`` (unit integral): ``[N, 1]``."""
    r2 = np.sum((np.asarray(x) - np.asarray(center)) ** 2, axis=1, keepdims=True)
    return np.exp(-r2 / (2.0 * sigma**2)) / (2.0 * math.pi * sigma**2)


def complex_loss_terms(model, k, bc_weight=1.0, residual_scale=1.0):
    """``(x [N, 2], f [N, 1], xb [M, 2], nb [M, 2]) -> {"pde", "bc"}`` (module docstring).

    ``pde = mean |s (Delta u + k^2 u + f)|^2``, ``bc = w mean |du/dn - i k u|^2`` with
    ``s = residual_scale`` and ``w = bc_weight``; ``u`` complex, both terms real.
    """

    def terms(x, f, xb, nb):
        u = model(x)  # [N, 1] complex
        r_pde = (laplacian(model, x) + (k * k) * u + f) * residual_scale  # [N, 1] complex
        r_bc = normal_derivative(model, xb, nb) - (1j * k) * model(xb)  # [M, 1] complex
        return {"pde": abs2(r_pde).mean(), "bc": bc_weight * abs2(r_bc).mean()}

    return terms


def fd_helmholtz(n, k, source, coord_min=(0.0, 0.0), coord_max=(1.0, 1.0), g=None):
    """Solve ``(Delta + k^2) u = -source`` with ``du/dn - i k u = g`` on a square, by finite
    differences.

    The 5-point Laplacian on ``n x n`` nodes (boundary nodes included, spacing ``h``); at a
    boundary node the outside neighbour is a ghost eliminated with the central difference of
    the boundary condition, ``u_ghost = u_mirror + 2 h (g + i k u_0)`` (second order; a corner
    has one ghost per side). One sparse LU solve (``scipy.sparse.linalg.spsolve``).

    Args:
        n: nodes per axis (the grid must be square: ``h`` equal in x and y).
        k: wavenumber (1/m).
        source: ``points [M, 2] -> [M] or [M, 1]`` values of the source term.
        coord_min, coord_max: the square's corners.
        g: None (the absorbing condition) or ``(points [M, 2], normals [M, 2]) -> [M]`` data.

    Returns:
        ``(xs [n], ys [n], u [n_y, n_x] complex128)``.
    """
    lo, hi = np.asarray(coord_min, float), np.asarray(coord_max, float)
    if not np.isclose(hi[0] - lo[0], hi[1] - lo[1]):
        raise ValueError(f"fd_helmholtz: needs a square, got {coord_min} .. {coord_max}")
    xs = np.linspace(lo[0], hi[0], n)
    ys = np.linspace(lo[1], hi[1], n)
    h = xs[1] - xs[0]
    xx, yy = np.meshgrid(xs, ys)  # [ny, nx]; index = iy * n + ix
    pts = np.stack([xx.ravel(), yy.ravel()], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    iy, ix = np.divmod(np.arange(n * n), n)
    rhs = -np.asarray(source(pts), dtype=complex).reshape(-1)
    diag = np.full(n * n, -4.0 / h**2 + k * k, dtype=complex)
    rows, cols, vals = [np.arange(n * n)], [np.arange(n * n)], [diag]
    for dy, dx, normal in ((0, -1, (-1, 0)), (0, 1, (1, 0)), (-1, 0, (0, -1)), (1, 0, (0, 1))):
        jy, jx = iy + dy, ix + dx
        inside = (jy >= 0) & (jy < n) & (jx >= 0) & (jx < n)
        # interior neighbour: coupling 1/h^2
        rows.append(idx[iy[inside], ix[inside]])
        cols.append(idx[jy[inside], jx[inside]])
        vals.append(np.full(inside.sum(), 1.0 / h**2, dtype=complex))
        # ghost: 1/h^2 to the mirror node, 2 i k / h on the diagonal, -2 g / h to the rhs
        out = ~inside
        my, mx = iy[out] - dy, ix[out] - dx
        rows.append(idx[iy[out], ix[out]])
        cols.append(idx[my, mx])
        vals.append(np.full(out.sum(), 1.0 / h**2, dtype=complex))
        rows.append(idx[iy[out], ix[out]])
        cols.append(idx[iy[out], ix[out]])
        vals.append(np.full(out.sum(), 2j * k / h, dtype=complex))
        if g is not None:
            nrm = np.broadcast_to(np.asarray(normal, float), (out.sum(), 2))
            gb = np.asarray(g(pts[out], nrm), dtype=complex).reshape(-1)
            np.add.at(rhs, idx[iy[out], ix[out]], -2.0 * gb / h)
    a = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n * n, n * n)
    )
    u = spla.spsolve(a.tocsc(), rhs)
    return xs, ys, u.reshape(n, n)


def free_space_solution(pts, k, center, sigma, n_quad=64):
    """``u = f * (i/4) H0^(1)(k r)``: the Gaussian source's outgoing field in free space.

    Radially symmetric: ``u(r) = int_0^inf G(r, s) f(s) 2 pi s ds`` with the ring average
    ``<H0(k|x - y|)>_{|y|=s} = J0(k r_<) H0(k r_>)`` (Graf's addition theorem); Gauss-Legendre
    on ``s in [0, 8 sigma]`` split at ``r``. ``pts [M, 2]`` -> ``[M]`` complex.
    """
    from scipy.special import hankel1, j0

    r = np.linalg.norm(np.asarray(pts) - np.asarray(center), axis=1)
    smax = 8.0 * sigma
    t, w = np.polynomial.legendre.leggauss(n_quad)
    out = np.zeros(r.shape, dtype=complex)

    def ring(s, rr):
        lt = np.minimum(s, rr)
        gt = np.maximum(s, rr)
        gt = np.maximum(gt, 1e-300)
        dens = np.exp(-(s**2) / (2 * sigma**2)) / (2 * math.pi * sigma**2)
        return 0.25j * j0(k * lt) * hankel1(0, k * gt) * dens * 2 * math.pi * s

    for a, b in (
        (np.zeros_like(r), np.minimum(r, smax)),
        (np.minimum(r, smax), np.full_like(r, smax)),
    ):
        half = 0.5 * (b - a)
        for ti, wi in zip(t, w):
            s = a + half * (ti + 1.0)
            out += wi * half * ring(s, r)
    return out


def make_geometry(coord_min, coord_max, dtype=np.float64):
    """The rectangle of the config (``datasets.geometry.Rectangle``)."""
    return Rectangle("rectangle", coord_min, coord_max, dtype=dtype)
