"""The Godunov face flux as one native loop: characteristic WENO5 + HLLC/Rusanov per face.

The composite flux (``projection.reconstruct_faces`` then the Riemann solver) is a few hundred
core operations per face; under ``core.jit`` they become about thirty fused passes over
``[5, faces]`` arrays plus the stencil slices that feed them, and the time goes to memory
traffic and dispatch rather than arithmetic (``bench/README.md`` has the profile). Here the
whole chain for one face (gather the six cells, Roe average, left eigenvectors, project, WENO
on each characteristic field from both sides, project back, Riemann flux) is one C function
of scalars, called in a loop the compiler vectorizes across faces, and split across the
thread pool (``core.set_num_threads``).

It computes exactly what the composite computes (the same formulas in the same order, up to
rounding; ``tests/mindflow/cfd/test_native_flux.py`` compares them) and it is bound to the
composite with ``core.ops.kernel_call``: the value comes from C, every derivative, vmap and
non-CPU backend from the composite. Supported: WENO5 (Jiang-Shu) and WENO5-Z on
characteristic variables, HLLC and Rusanov, float32 and float64, 1D/2D/3D, on the CPU with a
C compiler; anything else (other schemes, the positivity limiter, cupy arrays) keeps the
composite path.
"""

from __future__ import annotations

import ctypes
import re

import numpy as np

import diffsci.core.native as native

__all__ = ["NATIVE_RECONSTRUCTORS", "NATIVE_RIEMANN", "face_flux_kernel"]

NATIVE_RECONSTRUCTORS = ("WENO5", "WENO5-Z")
NATIVE_RIEMANN = ("HLLC", "Rusanov")
_CTYPE = {np.dtype("float64"): "double", np.dtype("float32"): "float"}
_UNROLL = '_Pragma("GCC unroll 8") '

# ---- C source ------------------------------------------------------------------------------
# One face: cells c[s][j], s = 0..5 the padded cells pad + f - 3 .. pad + f + 2 (the face lies
# between s = 2 and s = 3), j = 0..4 the conservative components. N, T1, T2: the normal and
# tangential momentum components (1..3). Literals are cast to T so float kernels stay float.

# The three candidates and Jiang-Shu indicators (Jiang & Shu 1996, eqs. 2.9-2.11) shared by
# both weightings; each weighting defines weno() from them.
_WENO_CANDIDATES = """
static inline __attribute__((always_inline)) void weno_candidates(
    T v0, T v1, T v2, T v3, T v4, T* p0, T* p1, T* p2, T* b0, T* b1, T* b2) {
  *p0 = ((T)2 * v0 - (T)7 * v1 + (T)11 * v2) / (T)6;
  *p1 = (-v1 + (T)5 * v2 + (T)2 * v3) / (T)6;
  *p2 = ((T)2 * v2 + (T)5 * v3 - v4) / (T)6;
  T c0 = (T)(13.0 / 12.0), c1 = (T)0.25;
  T a = v0 - (T)2 * v1 + v2, b = v0 - (T)4 * v1 + (T)3 * v2;
  *b0 = c0 * (a * a) + c1 * (b * b);
  a = v1 - (T)2 * v2 + v3; b = v1 - v3;
  *b1 = c0 * (a * a) + c1 * (b * b);
  a = v2 - (T)2 * v3 + v4; b = (T)3 * v2 - (T)4 * v3 + v4;
  *b2 = c0 * (a * a) + c1 * (b * b);
}
"""

_WENO_JS = """
static inline __attribute__((always_inline)) T weno(T v0, T v1, T v2, T v3, T v4) {
  /* WENO5-JS: alpha_k = d_k / (eps + beta_k)^2, eps = 1e-5 */
  T p0, p1, p2, b0, b1, b2;
  weno_candidates(v0, v1, v2, v3, v4, &p0, &p1, &p2, &b0, &b1, &b2);
  T e0 = (T)1e-5 + b0, e1 = (T)1e-5 + b1, e2 = (T)1e-5 + b2;
  T a0 = (T)0.1 / (e0 * e0), a1 = (T)0.6 / (e1 * e1), a2 = (T)0.3 / (e2 * e2);
  T inv = (T)1 / (a0 + a1 + a2);
  return a0 * inv * p0 + a1 * inv * p1 + a2 * inv * p2;
}
"""

_WENO_Z = """
static inline __attribute__((always_inline)) T weno(T v0, T v1, T v2, T v3, T v4) {
  /* Borges, Carmona, Costa & Don 2008: alpha_k = d_k (1 + tau5 / (beta_k + eps)) */
  T p0, p1, p2, b0, b1, b2;
  weno_candidates(v0, v1, v2, v3, v4, &p0, &p1, &p2, &b0, &b1, &b2);
  T tau = FABS(b0 - b2);
  T a0 = (T)0.1 * ((T)1 + tau / (b0 + EPS_Z));
  T a1 = (T)0.6 * ((T)1 + tau / (b1 + EPS_Z));
  T a2 = (T)0.3 * ((T)1 + tau / (b2 + EPS_Z));
  T inv = (T)1 / (a0 + a1 + a2);
  return a0 * inv * p0 + a1 * inv * p1 + a2 * inv * p2;
}
"""

# Velocity, pressure, sound speed and physical flux of one face state (flux.primitive_of,
# sound_speed, physical_flux): what both Riemann solvers start from.
_EULER_SIDE = """
static inline __attribute__((always_inline)) void euler_side(const T* u, T gm, T* v, T* p,
                                                             T* c, T* f) {
  T r = u[0];
  for (int k = 1; k <= 3; ++k) v[k] = u[k] / r;
  *p = (gm - (T)1) * (u[4] - (T)0.5 * r * (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]));
  *c = SQRT(gm * *p / r);
  f[0] = u[N]; f[1] = u[N] * v[1]; f[2] = u[N] * v[2]; f[3] = u[N] * v[3];
  f[N] = f[N] + *p; f[4] = v[N] * (u[4] + *p);
}
"""

_HLLC = """
static inline __attribute__((always_inline)) void riemann(const T* ul, const T* ur, T gm, T* f) {
  /* Toro ch. 10: PVRS wave speeds (10.59-10.62) bounded by Einfeldt's Roe estimates, contact
     speed (10.37), star fluxes (10.38-10.39), four-case flux (10.26). */
  T rl = ul[0], rr = ur[0], vl[4], vr[4], pl, pr, cl, cr, fl[5], fr[5];
  euler_side(ul, gm, vl, &pl, &cl, fl);
  euler_side(ur, gm, vr, &pr, &cr, fr);
  T unl = vl[N], unr = vr[N];
  T rho_bar = (T)0.5 * (rl + rr), c_bar = (T)0.5 * (cl + cr);
  T p_star = FMAX((T)0.5 * (pl + pr) - (T)0.5 * (unr - unl) * rho_bar * c_bar, (T)0);
  T g = (gm + (T)1) / ((T)2 * gm);
  T ql = SQRT((T)1 + g * FMAX(p_star / pl - (T)1, (T)0));
  T qr = SQRT((T)1 + g * FMAX(p_star / pr - (T)1, (T)0));
  T sl = SQRT(rl), sr = SQRT(rr);
  T wl = sl / (sl + sr), wr = sr / (sl + sr);
  T u1 = wl * vl[1] + wr * vr[1], u2 = wl * vl[2] + wr * vr[2], u3 = wl * vl[3] + wr * vr[3];
  T hl = (ul[4] + pl) / rl, hr = (ur[4] + pr) / rr;
  T h = wl * hl + wr * hr;
  T q2 = u1 * u1 + u2 * u2 + u3 * u3;
  T c2 = FMAX((gm - (T)1) * (h - (T)0.5 * q2), (T)TINY);
  T c_roe = SQRT(c2);
  T u_roe = N == 1 ? u1 : (N == 2 ? u2 : u3);
  T s_l = FMIN(unl - cl * ql, u_roe - c_roe);
  T s_r = FMAX(unr + cr * qr, u_roe + c_roe);
  T m_l = rl * (s_l - unl), m_r = rr * (s_r - unr);
  T s_star = (pr - pl + unl * m_l - unr * m_r) / (m_l - m_r);
  T fal = m_l / (s_l - s_star), far = m_r / (s_r - s_star);
  T stl[5], str[5];
  stl[0] = fal; stl[N] = fal * s_star; stl[T1] = fal * vl[T1]; stl[T2] = fal * vl[T2];
  stl[4] = fal * (ul[4] / rl + (s_star - unl) * (s_star + pl / m_l));
  str[0] = far; str[N] = far * s_star; str[T1] = far * vr[T1]; str[T2] = far * vr[T2];
  str[4] = far * (ur[4] / rr + (s_star - unr) * (s_star + pr / m_r));
  for (int j = 0; j < 5; ++j) {
    T fsl = fl[j] + s_l * (stl[j] - ul[j]);
    T fsr = fr[j] + s_r * (str[j] - ur[j]);
    f[j] = s_l >= (T)0 ? fl[j] : (s_star >= (T)0 ? fsl : (s_r >= (T)0 ? fsr : fr[j]));
  }
}
"""

_RUSANOV = """
static inline __attribute__((always_inline)) void riemann(const T* ul, const T* ur, T gm, T* f) {
  /* Rusanov 1961: F = (F_L + F_R)/2 - a/2 (U_R - U_L), a = max(|u_n| + c) (Toro 10.5.1) */
  T vl[4], vr[4], pl, pr, cl, cr, fl[5], fr[5];
  euler_side(ul, gm, vl, &pl, &cl, fl);
  euler_side(ur, gm, vr, &pr, &cr, fr);
  T a = FMAX(FABS(vl[N]) + cl, FABS(vr[N]) + cr);
  for (int j = 0; j < 5; ++j)
    f[j] = (T)0.5 * (fl[j] + fr[j]) - (T)0.5 * a * (ur[j] - ul[j]);
}
"""

_FACE = """
static inline __attribute__((always_inline)) void face_flux(const T* restrict q, ptrdiff_t base, ptrdiff_t sa, ptrdiff_t sv,
                             T gm, T* f) {
  T c[6][5];
  for (int s = 0; s < 6; ++s)
    for (int j = 0; j < 5; ++j) c[s][j] = q[base + s * sa + j * sv];
  /* Roe average of the two cells sharing the face (projection.roe_average) */
  const T* a = c[2];
  const T* b = c[3];
  T sl = SQRT(a[0]), sr = SQRT(b[0]);
  T inv = (T)1 / (sl + sr);
  T vel[4];
  for (int k = 1; k <= 3; ++k) vel[k] = (a[k] / sl + b[k] / sr) * inv;
  T kl = (T)0.5 * (a[1] * a[1] + a[2] * a[2] + a[3] * a[3]) / a[0];
  T kr = (T)0.5 * (b[1] * b[1] + b[2] * b[2] + b[3] * b[3]) / b[0];
  T hl = (a[4] + (gm - (T)1) * (a[4] - kl)) / a[0];
  T hr = (b[4] + (gm - (T)1) * (b[4] - kr)) / b[0];
  T h = (sl * hl + sr * hr) * inv;
  T q2 = (T)0.5 * (vel[1] * vel[1] + vel[2] * vel[2] + vel[3] * vel[3]);
  T cc = SQRT(FMAX((gm - (T)1) * (h - q2), (T)1e-30 * h * h + (T)TINY));
  /* left eigenvectors (projection.characteristic_matrices): waves un - c, entropy, shear t1,
     shear t2, un + c */
  T un = vel[N];
  T inv_c = (T)1 / cc;
  T b1 = (gm - (T)1) * inv_c * inv_c;
  T b2 = b1 * q2;
  T hb = (T)0.5 * b1;
  T L[5][5];
  L[0][0] = (T)0.5 * (b2 + un * inv_c); L[4][0] = (T)0.5 * (b2 - un * inv_c);
  for (int k = 1; k <= 3; ++k) {
    L[0][k] = -hb * vel[k]; L[4][k] = -hb * vel[k]; L[1][k] = b1 * vel[k];
    L[2][k] = (T)0; L[3][k] = (T)0;
  }
  L[0][N] = -hb * vel[N] - (T)0.5 * inv_c; L[4][N] = -hb * vel[N] + (T)0.5 * inv_c;
  L[0][4] = hb; L[4][4] = hb;
  L[1][0] = (T)1 - b2; L[1][4] = -b1;
  L[2][0] = -vel[T1]; L[2][T1] = (T)1; L[2][4] = (T)0;
  L[3][0] = -vel[T2]; L[3][T2] = (T)1; L[3][4] = (T)0;
  T w[6][5];
  for (int s = 0; s < 6; ++s)
    for (int i = 0; i < 5; ++i)
      w[s][i] = L[i][0] * c[s][0] + L[i][1] * c[s][1] + L[i][2] * c[s][2] + L[i][3] * c[s][3]
                + L[i][4] * c[s][4];
  T wl[5], wr[5];
  for (int i = 0; i < 5; ++i) {
    wl[i] = weno(w[0][i], w[1][i], w[2][i], w[3][i], w[4][i]);
    wr[i] = weno(w[5][i], w[4][i], w[3][i], w[2][i], w[1][i]);
  }
  /* right eigenvectors: back to conservative face states */
  T R[5][5];
  R[0][0] = (T)1; R[0][1] = (T)1; R[0][2] = (T)0; R[0][3] = (T)0; R[0][4] = (T)1;
  for (int k = 1; k <= 3; ++k) {
    R[k][0] = vel[k]; R[k][1] = vel[k]; R[k][2] = (T)0; R[k][3] = (T)0; R[k][4] = vel[k];
  }
  R[N][0] = vel[N] - cc; R[N][4] = vel[N] + cc; R[T1][2] = (T)1; R[T2][3] = (T)1;
  R[4][0] = h - un * cc; R[4][1] = q2; R[4][2] = vel[T1]; R[4][3] = vel[T2];
  R[4][4] = h + un * cc;
  T ul[5], ur[5];
  for (int i = 0; i < 5; ++i) {
    ul[i] = R[i][0] * wl[0] + R[i][1] * wl[1] + R[i][2] * wl[2] + R[i][3] * wl[3]
            + R[i][4] * wl[4];
    ur[i] = R[i][0] * wr[0] + R[i][1] * wr[1] + R[i][2] * wr[2] + R[i][3] * wr[3]
            + R[i][4] * wr[4];
  }
  riemann(ul, ur, gm, f);
}

typedef struct {
  const T* q; T* out; double gm;
  ptrdiff_t d0, d1, d2, s0, s1, s2, sa, sv, off, ov, by_rows;
} job_t;

static void run_range(void* p, ptrdiff_t lo, ptrdiff_t hi) {
  const job_t* J = (const job_t*)p;
  /* locals, not J->...: the stores to out could alias *J, which would stop vectorization */
  const T* restrict q = J->q;
  T* restrict out = J->out;
  const T gm = (T)J->gm;
  const ptrdiff_t d1 = J->d1, d2 = J->d2, s0 = J->s0, s1 = J->s1, sa = J->sa, sv = J->sv;
  const ptrdiff_t off = J->off, ov = J->ov;
  ptrdiff_t r0 = 0, r1 = J->d0 * d1, k0 = 0, k1 = d2;
  if (J->by_rows) { r0 = lo; r1 = hi; } else { k0 = lo; k1 = hi; }
  for (ptrdiff_t r = r0; r < r1; ++r) {
    const ptrdiff_t base = off + (r / d1) * s0 + (r % d1) * s1;
    const ptrdiff_t obase = r * d2;
    /* the inner dim is contiguous; ivdep: out never overlaps q (GCC would otherwise want more
       run-time alias checks than it allows and give up vectorizing) */
    _Pragma("GCC ivdep") for (ptrdiff_t i2 = k0; i2 < k1; ++i2) {
      T f[5];
      face_flux(q, base + i2, sa, sv, gm, f);
      for (int j = 0; j < 5; ++j) out[j * ov + obase + i2] = f[j];
    }
  }
}

void godunov_flux(const T* q, T* out, double gm, ptrdiff_t d0, ptrdiff_t d1, ptrdiff_t d2,
                  ptrdiff_t s0, ptrdiff_t s1, ptrdiff_t s2, ptrdiff_t sa, ptrdiff_t sv,
                  ptrdiff_t off, ptrdiff_t threads) {
  job_t J = {q, out, gm, d0, d1, d2, s0, s1, s2, sa, sv, off, d0 * d1 * d2, d0 * d1 > 1};
  ptrdiff_t n = J.by_rows ? d0 * d1 : d2;
  /* a face costs ~1000 flops: a few hundred faces per thread already pay for the wake-up */
  ptrdiff_t grain = J.by_rows ? (512 + d2 - 1) / d2 : 512;
  diffsci_parallel_for(run_range, &J, n, grain, J.by_rows ? 1 : 16, threads);
}
"""


def _source(dtype, axis, reconstructor, riemann):
    t = _CTYPE[dtype]
    suffix = "f" if t == "float" else ""
    normal = axis + 1
    t1, t2 = (k for k in (1, 2, 3) if k != normal)
    defines = [
        f"#define T {t}",
        f"#define N {normal}",
        f"#define T1 {t1}",
        f"#define T2 {t2}",
        f"#define SQRT sqrt{suffix}",
        f"#define FABS fabs{suffix}",
        # the floors of the composite's Roe averages (1e-300 underflows to 0 in float32, as
        # the composite's weak Python scalar does)
        "#define TINY " + ("1e-300" if t == "double" else "0.0f"),
        # WENO5-Z's epsilon (reconstructor.base.tiny)
        "#define EPS_Z " + ("1e-40" if t == "double" else "1e-20f"),
    ]
    # numpy's maximum/minimum propagate NaN (C's fmax drops it): a NaN must reach the
    # solver's check, which names the step and the cell
    defines.append(
        "static inline __attribute__((always_inline)) T FMAX(T a, T b) { return ((a > b) | (a != a)) ? a : b; }\n"
        "static inline __attribute__((always_inline)) T FMIN(T a, T b) { return ((a < b) | (a != a)) ? a : b; }"
    )
    weno = _WENO_Z if reconstructor == "WENO5-Z" else _WENO_JS
    solver = _HLLC if riemann == "HLLC" else _RUSANOV
    body = _WENO_CANDIDATES + weno + _EULER_SIDE + solver + _FACE
    # the per-face loops over 5 components and 6 cells must unroll completely, or the loop over
    # faces has inner loops and control flow and does not vectorize
    body = re.sub(r"(\n\s*)(for \(int )", lambda m: m.group(1) + _UNROLL + m.group(2), body)
    return native.math_header() + native.parallel_header() + "\n".join(defines) + "\n" + body


_FUNCTIONS = {}  # (dtype, axis, reconstructor, riemann) -> ctypes function


def _function(dtype, axis, reconstructor, riemann):
    key = (dtype, axis, reconstructor, riemann)
    fn = _FUNCTIONS.get(key)
    if fn is None:
        lib = native.load(_source(dtype, axis, reconstructor, riemann))
        fn = native.function(lib, "godunov_flux", 13)
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double] + [ctypes.c_ssize_t] * 10
        _FUNCTIONS[key] = fn
    return fn


def face_flux_kernel(mesh_info, gamma, axis, reconstructor, riemann):
    """The native kernel of ``GodunovFlux.compute_flux`` for one axis, or None.

    Args:
        mesh_info (MeshInfo): ``number_of_cells``, ``pad``.
        gamma (float): heat ratio.
        axis (int): 0, 1, 2.
        reconstructor (str): ``"WENO5"`` or ``"WENO5-Z"`` (characteristic variables).
        riemann (str): ``"HLLC"`` or ``"Rusanov"``.

    Returns:
        callable | None: ``kernel(xp, con_var) -> flux`` for ``core.ops.kernel_call``
        (``con_var`` padded ``[5, ...]`` as ``compute_flux`` takes it; the flux ``[5, ...]``
        with ``n + 1`` faces along ``axis``), or None where this machine has no compiler.
        The kernel itself declines (returns None) for non-numpy arrays and other dtypes.
    """
    if reconstructor not in NATIVE_RECONSTRUCTORS or riemann not in NATIVE_RIEMANN:
        return None
    if not native.available():
        return None
    cells = [int(n) for n in mesh_info.number_of_cells]
    pad = int(mesh_info.pad)
    gamma = float(gamma)

    def kernel(xp, con_var):
        if xp is not np or con_var.dtype not in _CTYPE or con_var.ndim != 4:
            return None
        q = np.ascontiguousarray(con_var)
        # output dims: n + 1 faces along axis, interior cells elsewhere; input offsets: the
        # stencil starts 3 cells left of the face (padded cell pad - 3 + f), other padded axes
        # are cropped by pad
        out_shape = [5]
        strides = []
        offset = 0
        elem = q.itemsize
        for k in range(3):
            size = q.shape[k + 1]
            stride = q.strides[k + 1] // elem
            if k == axis:
                if size != cells[k] + 2 * pad:
                    return None
                out_shape.append(cells[k] + 1)
                offset += (pad - 3) * stride
            else:
                out_shape.append(cells[k])
                if size == cells[k] + 2 * pad and size != cells[k]:
                    offset += pad * stride
                elif size != cells[k]:
                    return None
            strides.append(stride)
        out = np.empty(out_shape, dtype=q.dtype)
        # loop dims: drop size-1 dims, innermost last, padded in front to three
        dims = [(out_shape[k + 1], strides[k]) for k in range(3) if out_shape[k + 1] > 1]
        dims = [(1, 0)] * (3 - len(dims)) + dims
        if dims[2][1] != 1:  # the C loop reads the inner dim contiguously (a padded n = 1 axis)
            return None
        fn = _function(q.dtype, axis, reconstructor, riemann)
        fn(
            native.address(q),
            native.address(out),
            gamma,
            dims[0][0],
            dims[1][0],
            dims[2][0],
            dims[0][1],
            dims[1][1],
            dims[2][1],
            q.strides[axis + 1] // elem,
            q.strides[0] // elem,
            offset,
            native.num_threads(),
        )
        return out

    return kernel
