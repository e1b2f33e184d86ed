"""Face reconstruction in conservative, primitive or characteristic variables.

MindFlow reconstructs the conservative variables component by component, which lets
oscillations from one wave family leak into the others behind strong shocks. Here the
variables are a choice (config key ``reconstruction_variables``):

- ``conservative``: MindFlow's behaviour, each of (rho, rho u, rho v, rho w, E) on its own;
- ``primitive``: (rho, u, v, w, p) reconstructed, converted back to conservative faces;
- ``characteristic`` (the default for WENO5/WENO5-Z/TENO5/WENO7): at every face the stencil
  is projected onto the left eigenvectors of the Euler flux Jacobian along ``axis``, evaluated
  at the Roe average of the two cells that share the face; each characteristic field is
  reconstructed on its own and projected back with the right eigenvectors (Toro, *Riemann
  Solvers and Numerical Methods for Fluid Dynamics*, 3rd ed., §3.2; Shu, ICASE 97-65, §2.8).

The eigenvectors assume an ideal gas with constant ``gamma`` (``material.gamma``).
Everything is written with core ops, so it is differentiable and runs under ``core.jit``.
"""

from __future__ import annotations

from diffsci.core import ops

from ..utils import cal_con_var, cal_pri_var

RECONSTRUCTION_VARIABLES = ("characteristic", "primitive", "conservative")


def reconstruct_faces(
    con_var, axis, mesh_info, material, reconstructor, variables="characteristic"
):
    """Left and right conservative states at the faces along ``axis``.

    Args:
        con_var (Tensor): padded conservative variables, [5, nx(+2 pad), ny(+2 pad), nz(+2 pad)].
        axis (int): 0, 1, 2 for x, y, z.
        mesh_info (MeshInfo): the mesh (``pad``, ``number_of_cells``); the reconstructor's.
        material (Material): ``gamma`` for the conversions and the eigenvectors.
        reconstructor (Reconstructor): a reconstructor built on ``mesh_info``.
        variables (str): ``"characteristic"``, ``"primitive"`` or ``"conservative"``.

    Returns:
        tuple[Tensor, Tensor]: ``(con_left, con_right)``, each [5, ...] with ``n + 1`` faces
        along ``axis`` and the interior cells along the other axes.
    """
    del mesh_info  # the reconstructor carries it; kept for the documented signature
    if variables == "conservative":
        return (
            reconstructor.reconstruct_from_left(con_var, axis),
            reconstructor.reconstruct_from_right(con_var, axis),
        )
    if variables == "primitive":
        pri_var = cal_pri_var(con_var, material)
        pri_left = reconstructor.reconstruct_from_left(pri_var, axis)
        pri_right = reconstructor.reconstruct_from_right(pri_var, axis)
        return cal_con_var(pri_left, material), cal_con_var(pri_right, material)
    if variables == "characteristic":
        return _characteristic_faces(con_var, axis, material.gamma, reconstructor)
    raise ValueError(
        f"space_solver.reconstruction_variables: unknown value {variables!r}; "
        f"accepted values: {', '.join(RECONSTRUCTION_VARIABLES)}"
    )


def _characteristic_faces(con_var, axis, gamma, reconstructor):
    r = reconstructor.half_width
    # cells pad + f + s, s = -r .. r - 1: the union of the left and right stencils of face f
    cells = reconstructor.shifted(con_var, axis, range(-r, r))  # 2r x [5, n+1, ...]
    left_eig, right_eig = characteristic_matrices(cells[r - 1], cells[r], axis, gamma)
    like = cells[r][0]
    left_cols = matrix_columns(left_eig, like)
    right_cols = matrix_columns(right_eig, like)
    fields = [column_matvec(left_cols, cell) for cell in cells]  # 2r x [5, n+1, ...]
    w_left = reconstructor.face_value(fields[: 2 * r - 1])
    w_right = reconstructor.face_value(fields[2 * r - 1 : 0 : -1])
    return column_matvec(right_cols, w_left), column_matvec(right_cols, w_right)


def roe_average(con_left, con_right, gamma):
    """Roe-averaged velocity, total enthalpy and sound speed of two conservative states.

    Args:
        con_left, con_right (Tensor): [5, ...].
        gamma (float): heat ratio.

    Returns:
        tuple: ``(vel, h, c)``: ``vel`` a list of the 3 velocity components, each [...].
    """
    rho_l, rho_r = con_left[0], con_right[0]
    sl, sr = ops.sqrt(rho_l), ops.sqrt(rho_r)
    inv = 1.0 / (sl + sr)
    vel = [(con_left[k + 1] / sl + con_right[k + 1] / sr) * inv for k in range(3)]
    h_l = _total_enthalpy(con_left, gamma)
    h_r = _total_enthalpy(con_right, gamma)
    h = (sl * h_l + sr * h_r) * inv
    q2 = 0.5 * (vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2])
    # a non-physical face state (e.g. after a failed step) must not turn into NaN here: the
    # positivity limiter and the solver's NaN check deal with it downstream
    c2 = ops.maximum((gamma - 1.0) * (h - q2), 1e-30 * h * h + 1e-300)
    return vel, h, ops.sqrt(c2)


def _total_enthalpy(con, gamma):
    rho = con[0]
    kinetic = 0.5 * (con[1] * con[1] + con[2] * con[2] + con[3] * con[3]) / rho
    pressure = (gamma - 1.0) * (con[4] - kinetic)
    return (con[4] + pressure) / rho


def characteristic_matrices(con_left, con_right, axis, gamma):
    """Left and right eigenvectors of the Euler flux Jacobian along ``axis`` at the Roe average.

    Waves ordered ``u_n - c, entropy, shear t1, shear t2, u_n + c`` with ``n = axis`` and
    ``t1 < t2`` the other two axes. ``L R = I``.

    Args:
        con_left, con_right (Tensor): [5, ...] the two cells that share each face.
        axis (int): 0, 1, 2.
        gamma (float): heat ratio.

    Returns:
        tuple[list, list]: ``(L, R)``, each a 5 x 5 nested list whose entries are tensors
        [...] or Python floats; ``L[i][j]`` is row ``i`` (characteristic field ``i``).
    """
    vel, h, c = roe_average(con_left, con_right, gamma)
    n = axis
    t1, t2 = (k for k in range(3) if k != n)
    un = vel[n]
    q2 = 0.5 * (vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2])
    inv_c = 1.0 / c
    b1 = (gamma - 1.0) * inv_c * inv_c
    b2 = b1 * q2

    def unit(k, m):
        return 1.0 if k == m else 0.0

    right = [[None] * 5 for _ in range(5)]
    right[0][0], right[0][1], right[0][2], right[0][3], right[0][4] = 1.0, 1.0, 0.0, 0.0, 1.0
    for k in range(3):
        right[k + 1][0] = vel[k] - c if k == n else vel[k]
        right[k + 1][1] = vel[k]
        right[k + 1][2] = unit(k, t1)
        right[k + 1][3] = unit(k, t2)
        right[k + 1][4] = vel[k] + c if k == n else vel[k]
    right[4] = [h - un * c, q2, vel[t1], vel[t2], h + un * c]

    half_b1 = 0.5 * b1
    left = [
        [0.5 * (b2 + un * inv_c)]
        + [-half_b1 * vel[k] - 0.5 * inv_c if k == n else -half_b1 * vel[k] for k in range(3)]
        + [half_b1],
        [1.0 - b2] + [b1 * vel[k] for k in range(3)] + [-b1],
        [-vel[t1]] + [unit(k, t1) for k in range(3)] + [0.0],
        [-vel[t2]] + [unit(k, t2) for k in range(3)] + [0.0],
        [0.5 * (b2 - un * inv_c)]
        + [-half_b1 * vel[k] + 0.5 * inv_c if k == n else -half_b1 * vel[k] for k in range(3)]
        + [half_b1],
    ]
    return left, right


def matvec(matrix, var):
    """``out[i] = sum_j matrix[i][j] * var[j]`` for a 5 x 5 nested list of tensors/floats.

    Args:
        matrix (list[list]): entries broadcastable against ``var[j]``; 0.0 entries are skipped.
        var (Tensor): [5, ...].

    Returns:
        Tensor: [5, ...].
    """
    components = [var[j] for j in range(5)]
    rows = []
    for row in matrix:
        acc = None
        for m, comp in zip(row, components, strict=True):
            if isinstance(m, float):
                if m == 0.0:
                    continue
                term = comp if m == 1.0 else m * comp
            else:
                term = m * comp
            acc = term if acc is None else acc + term
        rows.append(acc)
    return ops.stack(rows, axis=0)


def matrix_columns(matrix, like):
    """The columns of a 5 x 5 nested list as five [5, ...] tensors (floats broadcast to ``like``).

    Args:
        matrix (list[list]): entries tensors shaped like ``like`` or Python floats.
        like (Tensor): [...], the shape and dtype of one entry.

    Returns:
        list[Tensor]: ``cols[j][i] == matrix[i][j]``, each [5, ...].
    """
    constants = {}

    def entry(m):
        if not isinstance(m, float):
            return m
        if m not in constants:
            constants[m] = ops.full_like(like, m)
        return constants[m]

    return [ops.stack([entry(row[j]) for row in matrix], axis=0) for j in range(5)]


def column_matvec(cols, var):
    """``out = sum_j cols[j] * var[j]``: one [5, ...] expression (a single fused kernel under jit).

    Args:
        cols (list[Tensor]): the five columns of the matrix, each [5, ...].
        var (Tensor): [5, ...].

    Returns:
        Tensor: [5, ...].
    """
    acc = cols[0] * var[0:1]
    for j in range(1, 5):
        acc = acc + cols[j] * var[j : j + 1]
    return acc
