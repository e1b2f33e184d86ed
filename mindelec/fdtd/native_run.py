"""The whole time loop as native code: one C call per run forward, checkpointed native reverse.

``Simulation.run`` stages its steps as a ``core.ops.scan`` whose body calls the native half steps
(``native_yee``) through the engine: per step, the compiled body's Python (launching two
kernels, the injections, the monitors) costs more than the 2D kernels themselves (100 x 100:
~40 us of Python around ~19 us of C), and its reverse pass, a scan over the body's VJP, more
again. Where a run is made only of what C can do on its own (both half steps native, soft point
sources fused into the E half step, monitors that sample field values at grid points:
``Monitor.points``, no dispersive media, no Mur boundaries, no source state), ``NativeRun``
runs it as one ``core.custom_vjp`` of the operands

    (H^{-1/2} flat, E^0 flat, source values [steps, n_src], coefficient maps, CPML profiles)
        -> (H^{steps-1/2} flat, E^{steps} flat, probe values [steps, n_points])

whose value is one C loop over the steps (``fdtd_forward``: per step the generated H and E
kernels, the injections ``E[at] += value`` and the probe gathers; the state of a step is the
H kernel's flat result followed by the E kernel's, ``carry`` numbers) and whose VJP is the
discrete adjoint of that loop (``fdtd_backward``), the same arithmetic as the scan's reverse
pass in another order of sums. Per step, from the last: the probes' cotangents are scattered
into the state's; the E half step's elementwise adjoint pass (``native_yee``'s ``adj1``)
completes the E cotangent with the H half step's stencil pass of the step after (the
transposed differences of the H scratch it left: fused, ``HalfStep.source(fuse=...)``) and
writes it out (the sources' cotangents are read there); the H half step's elementwise pass
likewise absorbs the E stencil pass of this step; the material maps' cotangents are summed in
the passes' own result slots (``accumulate``). The two results alternate between two buffers
per half step, so the state's cotangent is never copied.

Memory: the checkpoint policy of the run (``core.ops.CheckpointPolicy``: ``None`` = about
``2 sqrt(N)`` stored states, an int ``k`` = every k-th, a budget, ``False`` = all) is applied as
``core.ops.scan`` applies it (uniform checkpointing, the two-level case of Griewank & Walther's
checkpointed adjoint, "Algorithm 799: revolve", ACM TOMS 26 (2000)): the forward rule stores the
state at every segment start, and the backward pass recomputes one segment at a time
(recursively for nested levels) into a buffer of ``segment + 1`` states, then runs that
segment's adjoint (``reverse_carries`` counts it all).

The leaf segments of a reverse pass are one C call (``fdtd_leaves``: no Python between
segments). Two threads (``core.set_num_threads``; a grid of at least ``PIPELINE_MIN_CELLS``
cells too small for the kernels to split its rows among threads; and, under a budget, when the
memory below fits it): ``fdtd_leaves`` starts a worker pthread that recomputes segment ``s - 1``
(saving the E curl sums of each step, ``save_acc``) and then sums the E maps' cotangents of
segment ``s + 1`` (``g * curl``, ``g * E_old``: one elementwise pass, ``fdtd_coef``) while the
calling thread runs segment ``s``'s adjoint chain without them; the two hand over through a
spin-then-sleep flag per segment. The reverse pass then costs about the chain alone. Where every
H coefficient is a number (no mu_r, sigma_m or PMC-masked map: ``light_reverse``; an eps_r or
eps_r and sigma design), no pass reads a recomputed state but for its curl sums and E
components: the chain reads none, ``fdtd_coef`` only ``g``, the curl sums and, for ``Ca`` maps,
``E_old``. The worker then recomputes into a ring of two states, saving those rows, so the
reverse pass holds the segment starts, two states and two segments of E cotangent, curl-sum (and
E_old) rows (100x100 TMz eps_r design, 2000 steps: 94 states; one thread runs the same schedule
in turn, one segment of rows: 71 states, against 91 for recompute-then-adjoint); and, the chain
waiting on no recomputation, the worker recomputes segment s while the chain runs it. Otherwise
the worker fills a second segment buffer, and which thread sums a segment's map cotangents is
chosen as the work goes, from the CPU time each thread has spent (the chain computes them more
cheaply, the curls being at hand); holding two leaf segments changes the memory-optimal segment
length: the default two-level policy's ``N / L + L`` states (least at ``L = sqrt(N)``) become
``N / L + 2 L``, least at ``L = sqrt(N / 2)``, so that case's default uses it (``leaf_policy``).
Without POSIX threads (``fdtd_leaves`` does not build) the segments are looped over in Python on
one thread.

Both values are bound to composites with ``core.ops.kernel_call`` (the reference is the same loop
written with ``yee.update_h``/``update_e`` in a ``core.ops.scan``; its VJP the adjoint's
reference), so forward mode, higher orders, vmap and other backends see the composite.
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

from diffsci import core
import diffsci.core.native as native
from diffsci.core import ops
from diffsci.core.control.loops import CheckpointPolicy, as_policy

from .native_yee import _CTYPE

__all__ = ["NativeRun", "native_run_for"]

_DRIVER = r"""
#include <stddef.h>
#include <string.h>
typedef void (*half_fn)(const T**, T*, const double*, ptrdiff_t, ptrdiff_t, ptrdiff_t, ptrdiff_t);

/* dyn: triples (table slot, base, offset): base 0 = the step's old state, 1 = its new state,
   2 = the cotangent of the new state's H part, 3 = of its E part */
static void fill(const T** tab, const ptrdiff_t* dyn, ptrdiff_t n, const T* const* bases) {
  for (ptrdiff_t m = 0; m < n; ++m) {
    const ptrdiff_t* d = dyn + 3 * m;
    tab[d[0]] = bases[d[1]] + d[2];
  }
}

/* a: the arguments, see NativeRun._run_forward. State 0 is read at s0; state k >= 1 is
   written to save + (k / every) * carry when k is a multiple of every below n_save * every
   (the segment starts a reverse pass keeps), else to buf + (k % nslots) * carry; the last
   state is copied to final (when given). */
void fdtd_forward(const ptrdiff_t* a) {
  half_fn fh = (half_fn)a[0]; const T** th = (const T**)a[1];
  const ptrdiff_t* dh = (const ptrdiff_t*)a[2]; ptrdiff_t ndh = a[3];
  const double* nh = (const double*)a[4];
  half_fn fe = (half_fn)a[5]; const T** te = (const T**)a[6];
  const ptrdiff_t* de = (const ptrdiff_t*)a[7]; ptrdiff_t nde = a[8];
  const double* ne = (const double*)a[9];
  const T* s0 = (const T*)a[10];
  T* buf = (T*)a[11]; ptrdiff_t nslots = a[12], carry = a[13], size_h = a[14], steps = a[15];
  const T* values = (const T*)a[16]; ptrdiff_t n_inj = a[17];
  const ptrdiff_t* inj = (const ptrdiff_t*)a[18];
  const ptrdiff_t* probes = (const ptrdiff_t*)a[19]; ptrdiff_t n_probe = a[20];
  T* traces = (T*)a[21];
  ptrdiff_t n0 = a[22], n1 = a[23], n2 = a[24], threads = a[25];
  T* save = (T*)a[26]; ptrdiff_t every = a[27], n_save = a[28];
  T* final = (T*)a[29];
  T* acc = (T*)a[30]; ptrdiff_t acc_len = a[31];  /* the E kernel's curl sums, per step */
  T* eold = (T*)a[32];  /* the E components of each step's old state, acc_len per step */
  if (save && n_save > 0) memcpy(save, s0, (size_t)carry * sizeof(T));
  const T* cur = s0;
  for (ptrdiff_t k = 0; k < steps; ++k) {
    const ptrdiff_t m1 = k + 1;
    if (eold) memcpy(eold + k * acc_len, cur + size_h, (size_t)acc_len * sizeof(T));
    T* next = (save && m1 % every == 0 && m1 / every < n_save)
                  ? save + (m1 / every) * carry
                  : buf + (m1 % nslots) * carry;
    const T* bases[3] = {cur, next, acc ? acc + k * acc_len : 0};
    fill(th, dh, ndh, bases);
    fh(th, next, nh, n0, n1, n2, threads);
    fill(te, de, nde, bases);
    fe(te, next + size_h, ne, n0, n1, n2, threads);
    for (ptrdiff_t m = 0; m < n_inj; ++m) next[inj[m]] += values[k * n_inj + m];
    for (ptrdiff_t p = 0; p < n_probe; ++p) traces[k * n_probe + p] = next[probes[p]];
    cur = next;
  }
  if (final) memcpy(final, cur, (size_t)carry * sizeof(T));
}

/* a: the arguments, see NativeRun._run_backward. The adjoints' results alternate between two
   buffers per half step (AE[2], AH[2]); the part [gF, gpsi] of the last ones is the cotangent
   of the state (same layout as the state's H and E parts), their adj2 passes add the sources'
   cotangents into the other field's, and their adj1 passes sum the coefficient maps' in the
   buffers' own slots. */
void fdtd_backward(const ptrdiff_t* a) {
  half_fn fe1 = (half_fn)a[0], fe2 = (half_fn)a[1]; const T** te = (const T**)a[2];
  const ptrdiff_t* de = (const ptrdiff_t*)a[3]; ptrdiff_t nde = a[4];
  const double* ne = (const double*)a[5];
  half_fn fh1 = (half_fn)a[6], fh2 = (half_fn)a[7]; const T** th = (const T**)a[8];
  const ptrdiff_t* dh = (const ptrdiff_t*)a[9]; ptrdiff_t ndh = a[10];
  const double* nh = (const double*)a[11];
  const T* buf = (const T*)a[12]; ptrdiff_t carry = a[13], size_h = a[14], steps = a[15];
  const T* s0 = (const T*)a[39];  /* state 0 (states k >= 1: buf + k * carry) */
  T* AE[2] = {(T*)a[16], (T*)a[17]};
  T* AH[2] = {(T*)a[18], (T*)a[19]};
  ptrdiff_t off_e = a[20], off_h = a[21];  /* where [gF, gpsi] starts in AE, AH */
  ptrdiff_t src_e = a[22], src_h = a[23];  /* the E adj2's target in the H part, H's in E */
  ptrdiff_t p = a[24];  /* the buffers holding the cotangent of the last state */
  const T* gtraces = (const T*)a[25]; const ptrdiff_t* probes = (const ptrdiff_t*)a[26];
  ptrdiff_t n_probe = a[27];
  T* gvalues = (T*)a[28]; const ptrdiff_t* inj = (const ptrdiff_t*)a[29]; ptrdiff_t n_inj = a[30];
  ptrdiff_t n0 = a[31], n1 = a[32], n2 = a[33], threads = a[34];
  /* gout: where the E adjoint's elementwise pass writes the completed cotangent of the E
     components (the coefficient maps' rows for fdtd_coef: stride len_e per step; or one
     scratch row, stride 0); the sources' cotangents are read there */
  T* gout = (T*)a[35]; ptrdiff_t len_e = a[36];
  /* fuse_e: the H adjoint's stencil pass runs inside the next step's E adjoint elementwise
     pass (it reads the H scratch, left pending): run here only once, at the end, to hand on
     a complete cotangent */
  ptrdiff_t fuse_e = a[37];
  for (ptrdiff_t k = steps - 1; k >= 0; --k) {
    const ptrdiff_t q = 1 - p;
    T* gh = AH[p] + off_h;
    T* ge = AE[p] + off_e;
    T* grow = gout + k * len_e;
    const T* bases[5] = {k ? buf + k * carry : s0, buf + (k + 1) * carry, gh, ge, grow};
    for (ptrdiff_t m = 0; m < n_probe; ++m) {
      const ptrdiff_t at = probes[m];
      if (at < size_h) gh[at] += gtraces[k * n_probe + m];
      else ge[at - size_h] += gtraces[k * n_probe + m];
    }
    fill(te, de, nde, bases);
    fe1(te, AE[q], ne, n0, n1, n2, threads);
    for (ptrdiff_t m = 0; m < n_inj; ++m) gvalues[k * n_inj + m] = grow[inj[m] - size_h];
    if (fe2) fe2(te, gh + src_e, ne, n0, n1, n2, threads);  /* (0: fused into fh1) */
    fill(th, dh, ndh, bases);
    fh1(th, AH[q], nh, n0, n1, n2, threads);
    if (!fuse_e) fh2(th, AE[q] + off_e + src_h, nh, n0, n1, n2, threads);
    p = q;
  }
  if (fuse_e) fh2(th, AE[p] + off_e + src_h, nh, n0, n1, n2, threads);
}

/* the E coefficient maps' cotangents of steps 0 .. steps - 1, summed into out (laid out as
   the E adjoint's result): per step k and E component o, gB += g * acc (the curl sum the
   recomputation saved) and gA += g * E_old (E of state k: s0, or buf + k * carry), g the
   cotangent fdtd_backward stored. comps: per component (offset in the state, gA offset or -1,
   gB offset or -1). */
void fdtd_coef(const ptrdiff_t* a) {
  const T* s0 = (const T*)a[0]; const T* buf = (const T*)a[1];
  ptrdiff_t carry = a[2], steps = a[3];
  const T* store = (const T*)a[4]; const T* accs = (const T*)a[5]; ptrdiff_t len = a[6];
  T* out = (T*)a[7];
  const ptrdiff_t* comps = (const ptrdiff_t*)a[8]; ptrdiff_t n_comp = a[9], cells = a[10];
  const T* eold = (const T*)a[11];  /* E_old rows (fdtd_forward's), or 0: read the states */
  for (ptrdiff_t k = 0; k < steps; ++k) {
    const T* state = k ? buf + k * carry : s0;
    for (ptrdiff_t o = 0; o < n_comp; ++o) {
      const T* restrict g = store + k * len + o * cells;
      const T* restrict acc = accs + k * len + o * cells;
      const T* restrict old = eold ? eold + k * len + o * cells : state + comps[3 * o];
      if (comps[3 * o + 2] >= 0) {
        T* restrict d = out + comps[3 * o + 2];
        for (ptrdiff_t i = 0; i < cells; ++i) d[i] += g[i] * acc[i];
      }
      if (comps[3 * o + 1] >= 0) {
        T* restrict d = out + comps[3 * o + 1];
        for (ptrdiff_t i = 0; i < cells; ++i) d[i] += g[i] * old[i];
      }
    }
  }
}
"""

_LEAVES = r"""
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
typedef void (*drv_fn)(const ptrdiff_t*);

/* argument slots the segments change (see fdtd_forward, fdtd_backward, fdtd_coef) */
enum { F_S0 = 10, F_BUF = 11, F_NSLOTS = 12, F_STEPS = 15, F_VALUES = 16, F_ACC = 30,
       F_EOLD = 32, F_N = 33 };
enum { B_BUF = 12, B_CARRY = 13, B_STEPS = 15, B_P = 24, B_GT = 25, B_GV = 28, B_GOUT = 35,
       B_S0 = 39, B_N = 40 };
enum { C_S0 = 0, C_BUF = 1, C_CARRY = 2, C_STEPS = 3, C_STORE = 4, C_ACC = 5, C_EOLD = 11,
       C_N = 12 };

typedef struct {
  drv_fn fwd, bwd, coef;
  const ptrdiff_t *tf, *tb_chain, *tb_both, *tc;  /* argument templates */
  ptrdiff_t nseg; const ptrdiff_t *start, *k0, *n;  /* the segments, last first */
  ptrdiff_t buf[2], store[2], acc[2], eold[2];
  ptrdiff_t p, item, n_inj, n_probe, values, gtraces, gvalues;
  int light;  /* the adjoint and fdtd_coef read no state: recompute into a ring of 2 */
  const ptrdiff_t* scratch; ptrdiff_t n_scratch, scratch_bytes;
  /* the hand-over: go = segments whose adjoint the main thread has begun, done = segments
     whose worker share is finished; on_worker[i]: segment i's map cotangents on the worker */
  volatile ptrdiff_t go, done; char* on_worker;
  pthread_mutex_t mu; pthread_cond_t cv;
  double spent[2];  /* CPU seconds of work: main, worker */
} leaves_t;

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void post(leaves_t* L, volatile ptrdiff_t* slot, ptrdiff_t value) {
  pthread_mutex_lock(&L->mu);
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&L->cv);
  pthread_mutex_unlock(&L->mu);
}

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* until *slot >= value: spin (the other thread is usually microseconds away; a pause each
   turn, a yield every 256) for at most 100 us, as core's thread pool does, then sleep on the
   condition variable (a loaded machine) */
static void await(leaves_t* L, volatile ptrdiff_t* slot, ptrdiff_t value) {
  const double start = wall_now();
  for (unsigned s = 1;; ++s) {
    if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) >= value) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (s % 256 == 0) {
      if (wall_now() - start > 1e-4) break;
      sched_yield();
    }
  }
  pthread_mutex_lock(&L->mu);
  while (__atomic_load_n(slot, __ATOMIC_ACQUIRE) < value) pthread_cond_wait(&L->cv, &L->mu);
  pthread_mutex_unlock(&L->mu);
}

static void recompute(leaves_t* L, ptrdiff_t i, int b, int with_acc) {
  ptrdiff_t a[F_N];
  memcpy(a, L->tf, sizeof a);
  a[F_S0] = L->start[i]; a[F_BUF] = L->buf[b]; a[F_NSLOTS] = L->light ? 2 : L->n[i] + 1;
  a[F_STEPS] = L->n[i];
  a[F_VALUES] = L->n_inj ? L->values + L->k0[i] * L->n_inj * L->item : 0;
  a[F_ACC] = with_acc ? L->acc[b] : 0;
  a[F_EOLD] = with_acc ? L->eold[b] : 0;
  L->fwd(a);
}

static void adjoint(leaves_t* L, ptrdiff_t i, int b, int chain) {
  ptrdiff_t a[B_N];
  memcpy(a, chain ? L->tb_chain : L->tb_both, sizeof a);
  a[B_BUF] = L->buf[b]; a[B_STEPS] = L->n[i]; a[B_P] = L->p; a[B_S0] = L->start[i];
  a[B_GT] = L->gtraces + L->k0[i] * L->n_probe * L->item;
  a[B_GV] = L->gvalues + L->k0[i] * L->n_inj * L->item;
  if (chain) a[B_GOUT] = L->store[b];
  if (L->light) { a[B_BUF] = L->start[i]; a[B_CARRY] = 0; }  /* (addresses never read) */
  for (ptrdiff_t m = 0; m < L->n_scratch; ++m)  /* nothing pending from the H adjoint yet */
    memset((void*)L->scratch[m], 0, (size_t)L->scratch_bytes);
  L->bwd(a);
  L->p = (L->p + L->n[i]) % 2;
}

static void coef(leaves_t* L, ptrdiff_t i, int b) {
  ptrdiff_t a[C_N];
  memcpy(a, L->tc, sizeof a);
  a[C_S0] = L->start[i]; a[C_BUF] = L->buf[b]; a[C_STEPS] = L->n[i];
  a[C_STORE] = L->store[b]; a[C_ACC] = L->acc[b]; a[C_EOLD] = L->eold[b];
  if (L->light) { a[C_BUF] = L->start[i]; a[C_CARRY] = 0; }
  L->coef(a);
}

/* the worker's share while the adjoint of segment i runs: the maps' cotangents of segment
   i - 1 (when left to it), then the recomputation of segment i + 1 */
static void behind(leaves_t* L, ptrdiff_t i) {
  const double t0 = cpu_now();
  if (i >= 1 && L->on_worker[i - 1]) coef(L, i - 1, (int)((i - 1) % 2));
  if (i + 1 < L->nseg) recompute(L, i + 1, (int)((i + 1) % 2), 1);
  L->spent[1] += cpu_now() - t0;
}

static void* worker(void* arg) {
  leaves_t* L = (leaves_t*)arg;
  for (ptrdiff_t i = 0; i < L->nseg; ++i) {
    await(L, &L->go, i + 1);
    behind(L, i);
    post(L, &L->done, i + 1);
  }
  return 0;
}

/* the light schedule's worker: segment i's curl sums, then (once this segment's adjoint has
   run) its map cotangents */
static void* light_worker(void* arg) {
  leaves_t* L = (leaves_t*)arg;
  for (ptrdiff_t i = 0; i < L->nseg; ++i) {
    double t0 = cpu_now();
    recompute(L, i, (int)(i % 2), 1);
    L->spent[1] += cpu_now() - t0;
    await(L, &L->go, i + 1);
    t0 = cpu_now();
    coef(L, i, (int)(i % 2));
    L->spent[1] += cpu_now() - t0;
    post(L, &L->done, i + 1);
  }
  return 0;
}

/* a: see NativeRun._run_leaves. Recompute and reverse each leaf segment, last first. a[27]
   (schedule) 0: in turn, into one buffer, each adjoint summing its map cotangents. 1: with
   a[32] (thread), a worker thread recomputes segment i + 1 into the other buffer (with its E
   curl sums) while this thread runs segment i's adjoint; each segment's map cotangents go to
   the worker (fdtd_coef, after that adjoint) while its CPU time plus this thread's waits stay
   below this thread's (a[30] = -1; 0: never, 1: always), else they stay in the adjoint's own
   passes; without a[32] the same work runs in turn here. a[31] (light): no pass reads a
   state but the recomputation (the adjoint leaves every map cotangent to fdtd_coef, which
   reads E_old from the rows a[33], a[34] the recomputation copies, when a Ca map needs
   them): the recomputation goes to a ring of two states, keeping the curl sums (and E_old)
   only, and runs ahead on the worker (see below). stats (a[28]): this thread's adjoint CPU
   seconds, the worker's CPU seconds, this thread's wait (wall seconds), the segments whose
   map cotangents fdtd_coef summed. */
void fdtd_leaves(const ptrdiff_t* a) {
  leaves_t L;
  memset(&L, 0, sizeof L);
  L.fwd = (drv_fn)a[0]; L.bwd = (drv_fn)a[1]; L.coef = (drv_fn)a[2];
  L.tf = (const ptrdiff_t*)a[3]; L.tb_chain = (const ptrdiff_t*)a[4];
  L.tb_both = (const ptrdiff_t*)a[5]; L.tc = (const ptrdiff_t*)a[6];
  L.nseg = a[7]; L.start = (const ptrdiff_t*)a[8]; L.k0 = (const ptrdiff_t*)a[9];
  L.n = (const ptrdiff_t*)a[10];
  for (int b = 0; b < 2; ++b) {
    L.buf[b] = a[11 + b]; L.store[b] = a[13 + b]; L.acc[b] = a[15 + b]; L.eold[b] = a[33 + b];
  }
  L.p = a[17]; L.item = a[18]; L.n_inj = a[19]; L.n_probe = a[20];
  L.values = a[21]; L.gtraces = a[22]; L.gvalues = a[23];
  L.scratch = (const ptrdiff_t*)a[24]; L.n_scratch = a[25]; L.scratch_bytes = a[26];
  const int schedule = (int)a[27];
  double* stats = (double*)a[28];
  L.on_worker = (char*)a[29];
  const ptrdiff_t share = a[30];  /* -1: balance by CPU time; 0, 1: never, always */
  L.light = (int)a[31];
  const int maps = L.tb_chain != 0;
  double waited = 0.0, shared = 0.0;
  if (!schedule) {
    for (ptrdiff_t i = 0; i < L.nseg; ++i) {
      recompute(&L, i, 0, 0);
      adjoint(&L, i, 0, 0);
    }
  } else if (L.light) {
    /* the adjoint chain reads no state, so it never waits for a recomputation: the worker
       recomputes segment i (its curl sums), then sums its map cotangents once this thread
       has run its adjoint; this thread waits only to reuse the rows of segment i - 2 */
    pthread_mutex_init(&L.mu, 0);
    pthread_cond_init(&L.cv, 0);
    pthread_t th;
    const int threaded = a[32] && L.nseg > 1 && pthread_create(&th, 0, light_worker, &L) == 0;
    for (ptrdiff_t i = 0; i < L.nseg; ++i) {
      const int b = (int)(i % 2);
      if (threaded && i >= 2) {
        const double w0 = wall_now();
        await(&L, &L.done, i - 1);
        waited += wall_now() - w0;
      }
      if (!threaded) recompute(&L, i, b, 1);  /* (the same work in turn) */
      const double t0 = cpu_now();
      adjoint(&L, i, b, 1);
      L.spent[0] += cpu_now() - t0;
      if (threaded) post(&L, &L.go, i + 1);
      else coef(&L, i, b);
    }
    if (threaded) pthread_join(th, 0);
    shared = (double)L.nseg;
    pthread_cond_destroy(&L.cv);
    pthread_mutex_destroy(&L.mu);
  } else {
    pthread_mutex_init(&L.mu, 0);
    pthread_cond_init(&L.cv, 0);
    recompute(&L, 0, 0, 1);
    pthread_t th;
    const int threaded = a[32] && L.nseg > 1 && pthread_create(&th, 0, worker, &L) == 0;
    for (ptrdiff_t i = 0; i < L.nseg; ++i) {
      /* (the last segment's: nothing is left to overlap them with) */
      L.on_worker[i] = maps && i + 1 < L.nseg
                       && (share < 0 ? L.spent[1] + waited <= L.spent[0] : share);
      shared += L.on_worker[i];
      if (threaded) post(&L, &L.go, i + 1);
      const double t0 = cpu_now();
      adjoint(&L, i, (int)(i % 2), L.on_worker[i]);
      L.spent[0] += cpu_now() - t0;
      if (threaded) {
        const double w0 = wall_now();
        await(&L, &L.done, i + 1);
        waited += wall_now() - w0;
      } else {  /* no thread: the same work in turn */
        if (L.on_worker[i]) coef(&L, i, (int)(i % 2));
        if (i + 1 < L.nseg) recompute(&L, i + 1, (int)((i + 1) % 2), 1);
      }
    }
    if (threaded) pthread_join(th, 0);
    pthread_cond_destroy(&L.cv);
    pthread_mutex_destroy(&L.mu);
  }
  if (stats) {
    stats[0] = L.spent[0]; stats[1] = L.spent[1]; stats[2] = waited; stats[3] = shared;
  }
}
"""

PIPELINE_MIN_CELLS = 2048
# Above this many cells a step's kernels take far longer than the scan's per-step Python work
# (~50 us), which is all the whole-loop call saves, and the scan of native half steps measured
# faster (3D 128^3 with CPML, 1 thread: 315 against 190 Mcell/s; 2D 1024^2 TMz about equal;
# 2D 512^2: the loop 1.3x faster, 100^2: 9x): larger grids keep the scan.
NATIVE_LOOP_MAX_CELLS = 2**19
# Which thread sums a segment's map cotangents when pipelining: -1 as the two threads' CPU
# times balance (see fdtd_leaves), 0 the adjoint's own passes, 1 the worker (the tests force both)
_SHARE_COEF = -1
_FUSE = True  # the E adjoint's stencil pass inside the H adjoint's elementwise pass
_DRIVERS = {}  # ctype -> (forward, backward) ctypes functions


def _driver(ctype):
    found = _DRIVERS.get(ctype)
    if found is None:
        lib = native.load(f"#define T {ctype}\n" + _DRIVER)
        found = _DRIVERS[ctype] = (
            native.function(lib, "fdtd_forward", 1),
            native.function(lib, "fdtd_backward", 1),
            native.function(lib, "fdtd_coef", 1),
        )
    return found


def _leaves_driver():
    """``fdtd_leaves`` (ctypes), or None where it does not build (no POSIX threads): the
    reverse pass then loops over the segments in Python, on one thread."""
    if "leaves" not in _DRIVERS:
        try:
            lib = native.load(_LEAVES)
            _DRIVERS["leaves"] = native.function(lib, "fdtd_leaves", 1)
        except (OSError, RuntimeError, AttributeError):
            _DRIVERS["leaves"] = None
    return _DRIVERS["leaves"]


def _fn_address(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


def _index_array(values):
    return np.ascontiguousarray(np.asarray(values, dtype=np.intp).reshape(-1))


def native_run_for(sim):
    """A ``NativeRun`` for ``sim`` where its whole loop can run natively and pays (at most
    ``NATIVE_LOOP_MAX_CELLS`` cells), else None."""
    if "h" not in sim._plans or "e" not in sim._plans or not native.available():
        return None
    if int(np.prod(sim.grid.shape)) > NATIVE_LOOP_MAX_CELLS:
        return None
    if sim.dispersive is not None or sim.boundaries.has_mur:
        return None
    if tuple(sim.sources) != tuple(sim._fused):  # every source fused into the E kernel
        return None
    from .monitors import Monitor

    points = []
    for monitor in sim.monitors:
        found = monitor.points()
        kind = type(monitor)
        if found is None or any(
            getattr(kind, m) is not getattr(Monitor, m)
            for m in ("init_carry", "update", "finalize")
        ):
            return None
        points.append(found)
    plans = [sim._plans["h"][0], sim._plans["e"][0]]
    for plan in plans:
        if plan.adjoint_kernel() is None or plan.kernel() is None:
            return None
    run = NativeRun(sim, points)
    return run if run.plumbing is not None else None


class NativeRun:
    """The run of ``sim`` as one native loop (see the module docstring).

    Args:
        sim: the ``Simulation`` (its native plans, sources, monitors).
        points: per monitor ``(component, [index, ...], squeeze)`` (``Monitor.points``).
    """

    def __init__(self, sim, points):
        grid = sim.grid
        self.sim = sim
        self.grid = grid
        self.ph = sim._plans["h"][0]
        self.pe = sim._plans["e"][0]
        ph, pe = self.ph, self.pe
        cells = int(np.prod(grid.shape))
        self.cells = cells
        # the state: the H kernel's flat result, then the E kernel's
        self.size_h, self.size_e = ph.size, pe.size
        self.carry = ph.size + pe.size
        self.offset = {}  # component or psi key -> offset in the state
        for base, plan in ((0, ph), (ph.size, pe)):
            at = base
            for name in plan.terms:
                self.offset[name] = at
                at += cells
            for key, size in zip(plan.psi_keys, plan.sizes[len(plan.terms) :], strict=True):
                self.offset[("psi", key)] = at
                at += size
        self.inj = _index_array([self.size_h + at for at in pe._inj_at])
        self.n_inj = len(pe._inj_at)
        self.monitor_points = []
        probes = []
        for component, indices, squeeze in points:
            start = len(probes)
            for index in indices:
                flat = int(np.ravel_multi_index(tuple(index), grid.shape))
                probes.append(self.offset[component] + flat)
            self.monitor_points.append((start, len(probes), squeeze))
        self.probes = _index_array(probes)
        self.n_probe = len(probes)
        # operands after the states and values: the coefficient Tensors, then the profiles
        self.coef_names = []
        for plan in (ph, pe):
            self.coef_names += [c for c in plan.coef_names if plan.coef_kinds[c] != "number"]
        self.profile_names = [*ph.profile_names, *pe.profile_names]
        self._pipeline_rows = grid.shape  # see _threads
        self.plumbing = self._adjoint_plumbing()

    # ---- operands ---------------------------------------------------------------------------
    def operands(self, state, coeffs, values):
        """``[h0 flat, e0 flat, values [steps, n_inj] (if sources), *coefs, *profiles]``."""
        ph, pe = self.ph, self.pe
        h0 = ops.concatenate(
            [state.get(n).reshape(-1) for n in ph.terms]
            + [state.psi[k].reshape(-1) for k in ph.psi_keys]
        )
        e0 = ops.concatenate(
            [state.get(n).reshape(-1) for n in pe.terms]
            + [state.psi[k].reshape(-1) for k in pe.psi_keys]
        )
        out = [h0, e0]
        if self.n_inj:
            out.append(values)
        out += [coeffs[c] for c in self.coef_names]
        out += [coeffs[p] for p in self.profile_names]
        return out

    def unpack_state(self, h, e, template):
        """A ``FieldState`` from the flat H and E parts (``template``: its aux)."""
        comps, psi = self.ph.unpack(tuple(self.ph.split(h)))
        e_comps, e_psi = self.pe.unpack(tuple(self.pe.split(e)))
        comps.update(e_comps)
        psi.update(e_psi)
        return template.replace(psi=psi, **comps)

    def results(self, traces, steps):
        """Per monitor: its values ``[steps]`` (one point) or ``[steps, K]``."""
        out = []
        for start, stop, squeeze in self.monitor_points:
            part = traces[:, start:stop]
            out.append(part.reshape((steps,)) if squeeze else part)
        return out

    def _split_operands(self, operands):
        n = 3 if self.n_inj else 2
        h0, e0 = operands[0], operands[1]
        values = operands[2] if self.n_inj else None
        rest = operands[n:]
        coefs = dict(zip(self.coef_names, rest[: len(self.coef_names)], strict=True))
        profiles = dict(zip(self.profile_names, rest[len(self.coef_names) :], strict=True))
        return h0, e0, values, coefs, profiles

    # ---- the function -------------------------------------------------------------------------
    def leaf_policy(self, steps, checkpoint, pipeline=None):
        """The policy the native reverse pass runs for ``checkpoint``: the same, except the
        default two-level one when pipelining (``pipeline`` None: as ``_threads`` decides)
        with two segment buffers (not ``light_reverse``), whose segments become
        ``ceil(sqrt(steps / 2))`` steps (see the module docstring). An interval or a budget
        the caller gave is kept as given."""
        policy = as_policy(checkpoint)
        if pipeline is None:
            pipeline = self._threads()[0]
        if pipeline and self.light_reverse():
            return policy
        if not pipeline or policy.every is not None or policy.budget is not None:
            return policy
        plan = policy.plan(steps)
        if plan is None or plan[1].plan(plan[0]) is not None:  # one level, or more than two
            return policy
        seg = math.ceil(math.sqrt(steps / 2))
        if not 1 < seg < plan[0]:
            return policy
        return CheckpointPolicy(every=seg, min_length=policy.min_length)

    def function(self, steps, checkpoint):
        """``f(*operands) -> (h flat, e flat, traces [steps, n_points])``, a custom_vjp whose
        rules run the native loops (``checkpoint``: the policy of the reverse pass)."""
        policy = self.leaf_policy(steps, checkpoint)
        key = (steps, policy)  # (policies hash by their settings)
        cache = self.__dict__.setdefault("_functions", {})
        found = cache.get(key)
        if found is not None:
            return found
        plan = policy.plan(steps)
        size_out = self.carry + steps * self.n_probe
        # residuals: every state (no plan) or the state at each segment start
        n_saved = steps + 1 if plan is None else math.ceil(steps / plan[0])

        def split_out(flat):
            h = flat[: self.size_h]
            e = flat[self.size_h : self.carry]
            traces = flat[self.carry : size_out].reshape((steps, self.n_probe))
            return h, e, traces

        def reference(*operands):
            return self.reference(steps, *operands)

        def fun(*operands):
            kernel = self._forward_kernel(steps, None)
            flat = ops.kernel_call(reference, kernel, *operands, shape=(size_out,))
            return split_out(flat)

        def fwd(*operands):
            kernel = self._forward_kernel(steps, plan, save=True)

            def ref_saved(*a):
                return ops.concatenate(
                    [reference(*a), ops.zeros((n_saved * self.carry,), dtype=a[0].dtype)]
                )

            flat = ops.kernel_call(
                ref_saved, kernel, *operands, shape=(size_out + n_saved * self.carry,)
            )
            return split_out(flat[:size_out]), (operands, flat[size_out:])

        def bwd(residuals, gs):
            operands, saved = residuals
            dtype = operands[0].dtype
            gh, ge, gt = gs
            gh = ops.zeros((self.size_h,), dtype=dtype) if gh is None else gh
            ge = ops.zeros((self.size_e,), dtype=dtype) if ge is None else ge
            gt = ops.zeros((steps, self.n_probe), dtype=dtype) if gt is None else gt
            kernel = self._backward_kernel(steps, policy, plan)
            g_size = self.carry + steps * self.n_inj + len(self.coef_names) * self.cells

            def ref_adjoint(*a):
                return self.adjoint_reference(steps, *a)

            flat = ops.kernel_call(
                ref_adjoint, kernel, *operands, saved, gh, ge, gt, shape=(g_size,)
            )
            out = [flat[: self.size_h], flat[self.size_h : self.carry]]
            at = self.carry
            if self.n_inj:
                out.append(flat[at : at + steps * self.n_inj].reshape((steps, self.n_inj)))
                at += steps * self.n_inj
            for _name in self.coef_names:
                shape = tuple(operands[len(out)].shape)
                out.append(flat[at : at + self.cells].reshape(shape))
                at += self.cells
            return (*out, *([None] * len(self.profile_names)))

        call = core.custom_vjp(fun)
        call.defvjp(fwd, bwd)
        cache[key] = call
        return call

    # ---- references -----------------------------------------------------------------------
    def reference(self, steps, *operands):
        """The loop with core ops (``yee`` updates, ``index_add`` injections, gathers), the
        result flattened as the kernel's: ``[h, e, traces]``."""
        from .state import FieldState

        h0, e0, values, coefs, profiles = self._split_operands(operands)
        coeffs = {**self.sim.coeffs, **coefs, **profiles}
        ph, pe = self.ph, self.pe
        comps, psi = ph.unpack(tuple(ph.split(h0)))
        e_comps, e_psi = pe.unpack(tuple(pe.split(e0)))
        state = FieldState(**comps, **e_comps, psi={**psi, **e_psi})
        names = [*ph.terms, *[("psi", k) for k in ph.psi_keys]]
        names += [*pe.terms, *[("psi", k) for k in pe.psi_keys]]

        def flat(st):
            return [st.psi[n[1]] if isinstance(n, tuple) else st.get(n) for n in names]

        def body(carry, x):
            named = dict(zip(names, carry, strict=True))
            st = FieldState(
                **{n: v for n, v in named.items() if not isinstance(n, tuple)},
                psi={n[1]: v for n, v in named.items() if isinstance(n, tuple)},
            )
            new, new_psi = ph.unpack(ph.reference(*ph.operands(st, coeffs)))
            st = st.replace(psi={**st.psi, **new_psi}, **new)
            values_n = x[0] if self.n_inj else None
            new, new_psi = pe.unpack(pe.reference(*pe.operands(st, coeffs, values_n)))
            st = st.replace(psi={**st.psi, **new_psi}, **new)
            out = flat(st)
            if not self.n_probe:
                return out, []
            whole = ops.concatenate([v.reshape(-1) for v in out])
            return out, [whole[self.probes]]

        xs = [values] if self.n_inj else [ops.zeros((steps, 1), dtype=h0.dtype)]
        carry, ys = ops.scan(body, flat(state), xs=xs)
        parts = [v.reshape(-1) for v in carry]
        if self.n_probe:
            parts.append(ys[0].reshape(-1))
        return ops.concatenate(parts)

    def adjoint_reference(self, steps, *tensors):
        """``vjp(reference)`` at the operands for the cotangents ``(gh, ge, gt)``, flattened as
        the adjoint kernel's result (states, values, coefficient maps)."""
        n_ops = len(tensors) - 4
        operands, (gh, ge, gt) = tensors[:n_ops], tensors[n_ops + 1 :]
        n_prof = len(self.profile_names)
        diff, profiles = operands[: n_ops - n_prof], operands[n_ops - n_prof :]

        def ref(*a):
            return self.reference(steps, *a, *profiles)

        _, vjp_fn = core.vjp(ref, *diff)
        g = ops.concatenate([gh, ge, gt.reshape(-1)])
        cts = vjp_fn(g)
        return ops.concatenate(
            [
                (ops.zeros((int(np.prod(x.shape)),), dtype=g.dtype) if c is None else c).reshape(-1)
                for c, x in zip(cts, diff, strict=True)
            ]
        )

    # ---- native plumbing --------------------------------------------------------------------
    def _adjoint_layout(self, plan):
        """``{(group, name): offset}`` of the parts of ``plan``'s adjoint result."""
        out, at = {}, 0
        for group, name, shape in plan.adjoint_parts():
            out[(group, name)] = at
            at += int(np.prod(shape))
        return out

    def _adjoint_plumbing(self):
        """Where the reverse pass finds things in the adjoints' results (``fdtd_backward``):
        the start of ``[gF, gpsi]`` (the state part's cotangent) in the E and H results, the
        offsets at which their adj2 passes add the sources' cotangents (into the H, E part's
        cotangent), and per coefficient map ``(buffer "e"/"h", offset)`` of its summed
        cotangent. None where the sources of a half step are not the other part's components
        in order, ``cells`` apart (not on Yee grids)."""
        ph, pe, cells = self.ph, self.pe, self.cells
        le, lh = self._adjoint_layout(pe), self._adjoint_layout(ph)
        off_e = le[("gF", next(iter(pe.terms)))]
        off_h = lh[("gF", next(iter(ph.terms)))]
        targets = []
        for plan, layout, base in ((pe, le, 0), (ph, lh, self.size_h)):
            names = plan.sources()
            first = self.offset[names[0]] - base
            for i, n in enumerate(names):
                if (
                    self.offset[n] - base != first + i * cells
                    or layout[("gS", n)] != layout[("gS", names[0])] + i * cells
                    or layout[("gS", names[0])] != 0
                ):
                    return None
            targets.append(first)
        slots = []
        for c in self.coef_names:
            plan, layout, which = (ph, lh, "h") if c in ph.coef_names else (pe, le, "e")
            group = "gA" if c[1] == "a" else "gB"
            slots.append((which, layout[(group, c.split("_", 1)[1])]))
        return off_e, off_h, targets[0], targets[1], slots

    def reverse_carries(self, steps, checkpoint, pipeline=None):
        """Memory of the reverse pass in states (``carry`` numbers each; the float counts the
        cotangent stores as fractions): the saved segment starts of every level (as
        ``core.ops.scan`` stores them), the leaf buffer of ``segment + 1`` states and, when
        pipelining (``None``: as this machine's thread count decides), a second leaf buffer
        and two segments of the E cotangents and curl sums the coefficient maps need; with
        ``light_reverse``, a ring of two states instead of the leaf buffers, and one segment of
        those rows on one thread."""
        policy = as_policy(checkpoint)
        if pipeline is None:  # as the backward kernel decides
            pipeline = self._threads()[0] and (
                policy.budget is None or self.reverse_carries(steps, policy, True) <= policy.budget
            )
        policy = self.leaf_policy(steps, policy, pipeline)
        stored, length = 0, steps
        plan = policy.plan(length)
        if plan is None:
            return float(steps + 1)
        while plan is not None:
            seg, policy = plan
            stored += math.ceil(length / seg)
            length = seg
            plan = policy.plan(length)
        # the E cotangents and the E curl sums: a segment of each, two when pipelining
        rows = sum(sh[1] for sh in self.store_shapes(1) if sh is not None) / self.carry
        if self.light_reverse() and length < steps:  # (and the E_old rows, for Ca maps)
            stored += 2 + (1 + pipeline) * (2 + self.reads_e_old()) * length * rows
        elif pipeline:
            stored += 2 * (length + 1) + 2 * 2 * length * rows
        else:
            stored += length + 1
        return float(stored)

    def _threads(self):
        """``(pipeline, kernel threads)``: recompute on a second thread when there are two, the
        kernels cannot split this grid's rows among them (``native_yee``'s grain) and the grid
        has at least ``PIPELINE_MIN_CELLS`` cells (below, a segment's work is too small for the
        worker's start and hand-overs; set when they cost tens of microseconds, from Python), and
        ``fdtd_leaves`` builds."""
        threads = native.num_threads()
        shape3 = self.ph.shape3
        rows, grain = shape3[0] * shape3[1], (32768 + shape3[2] - 1) // shape3[2]
        if (
            threads >= 2
            and rows < 2 * grain
            and self.cells >= PIPELINE_MIN_CELLS
            and _leaves_driver() is not None
        ):
            return True, 1
        return False, threads

    def _context(self, dtype, coefs, profiles):
        """The kernels' tables and the driver's functions for one call: built once per (dtype,
        forward variants, thread) and kept; each call writes the addresses of its coefficient
        maps and profiles into their slots (the arrays live as long as the call)."""
        named = {**coefs, **profiles}
        variants = []
        for plan in (self.ph, self.pe):
            n_dyn = len(plan.sources()) + len(plan.terms) + len(plan.psi_keys)
            probe = [np.empty(1, dtype=dtype)] * n_dyn
            probe += [named[c] for c in plan.coef_names if plan.coef_kinds[c] != "number"]
            probe += [named[p] for p in plan.profile_names]
            variants.append(plan.variant(probe))
        key = (np.dtype(dtype), tuple(variants), threading.get_ident())
        cache = self.__dict__.setdefault("_contexts", {})
        ctx = cache.get(key)
        if ctx is None:
            ctx = cache[key] = self._new_context(dtype, variants)
        for tab, slots in ctx["statics"]:
            for slot, name in slots:
                tab[slot] = native.address(named[name])
        return ctx

    def _new_context(self, dtype, variants):
        ctype = _CTYPE[np.dtype(dtype)]
        fwd_fn, bwd_fn, coef_fn = _driver(ctype)
        ctx = {"fwd": fwd_fn, "bwd": bwd_fn, "coef": coef_fn, "keep": [], "statics": []}
        keep = ctx["keep"]

        # the adjoints' scratch arrays (the differences' cotangents), shared by the tables of a
        # half step: the H adjoint's elementwise pass reads the E adjoint's (it absorbs the E
        # adjoint's stencil pass: ``HalfStep.source(fuse=...)``)
        scratch = {
            plan.kind: [
                np.empty(self.cells, dtype=dtype)
                for _ in range(sum(len(t) for t in plan.terms.values()))
            ]
            for plan in (self.ph, self.pe)
        }
        keep.append(scratch)
        ctx["scratch"] = scratch
        ctx["g_row"] = np.empty(len(self.pe.terms) * self.cells, dtype=dtype)

        def table(
            plan,
            mode,
            sources_base,
            g_base=None,
            variant=None,
            fuse=None,
            acc=False,
            write_g=False,
        ):
            n_dyn = len(plan.sources()) + len(plan.terms) + len(plan.psi_keys)
            statics = [c for c in plan.coef_names if plan.coef_kinds[c] != "number"]
            statics += list(plan.profile_names)
            extra = []
            if mode == "forward":
                masked, stream = variant
                if masked:
                    extra = [m for _n, m, _a in plan.masked.values()]
                fns = [plan._compiled(dtype, "forward", masked, stream, save_acc=acc)]
            else:
                extra = list(scratch[plan.kind])
                if fuse is not None:
                    extra += scratch[fuse.kind]
                fns = [
                    plan._compiled(
                        dtype, "adj1", accumulate=True, coef=variant, fuse=fuse, write_g=write_g
                    )
                ]
                fns.append(
                    None
                    if plan is self.pe and _FUSE
                    else plan._compiled(dtype, "adj2", accumulate=True)
                )
            total = n_dyn + len(statics) + (1 if mode != "forward" else 0) + len(extra)
            total += acc + write_g
            tab = (ctypes.c_void_p * total)()
            dyn = []
            for m, name in enumerate(plan.sources()):
                dyn.append((m, sources_base, self.offset[name]))
            at = len(plan.sources())
            for m, name in enumerate(plan.terms):
                dyn.append((at + m, 0, self.offset[name]))
            at += len(plan.terms)
            for m, key in enumerate(plan.psi_keys):
                dyn.append((at + m, 0, self.offset[("psi", key)]))
            at += len(plan.psi_keys)
            ctx["statics"].append((tab, [(at + m, name) for m, name in enumerate(statics)]))
            at += len(statics)
            if mode != "forward":
                dyn.append((at, g_base, 0))
                at += 1
            for a in extra:
                keep.append(a)
                tab[at] = native.address(a)
                at += 1
            if acc:  # the curl sums' row of the step (base 2 of fdtd_forward)
                dyn.append((at, 2, 0))
            if write_g:  # the completed E cotangent's row (base 4 of fdtd_backward)
                dyn.append((at, 4, 0))
            dyn = _index_array(dyn)
            keep.extend([tab, dyn, fns])
            addr = [0 if f is None else _fn_address(f) for f in fns]
            return (
                addr,
                ctypes.addressof(tab),
                native.address(dyn),
                len(dyn) // 3,
                plan._numbers_address,
            )

        ctx["fh"] = table(self.ph, "forward", 0, variant=variants[0])
        ctx["fe"] = table(self.pe, "forward", 1, variant=variants[1])
        ctx["fe_acc"] = table(self.pe, "forward", 1, variant=variants[1], acc=True)
        # the E adjoint's stencil pass runs inside the H adjoint's elementwise pass (fused), so
        # the H adjoint reads the cotangents of the H components as the E adjoint leaves them
        # (no sum in memory): the H maps' cotangents stay on the chain ("both")
        ctx["ah"] = table(self.ph, "adjoint", 0, 2, "both", fuse=self.pe if _FUSE else None)
        fuse_h = self.ph if _FUSE else None  # and the H stencil pass inside the next E pass
        ctx["ae"] = table(self.pe, "adjoint", 1, 3, "both", fuse=fuse_h, write_g=True)
        # the chain without the E maps' cotangents, and those alone (a second thread's work)
        ctx["ah_chain"] = ctx["ah"]
        ctx["ae_chain"] = table(self.pe, "adjoint", 1, 3, "none", fuse=fuse_h, write_g=True)
        return ctx

    def _run_forward(
        self,
        ctx,
        s0,
        buf,
        nslots,
        k0,
        steps,
        values,
        t_addr,
        threads,
        save=None,
        final=None,
        acc=None,
    ):
        """``steps`` steps from the state ``s0`` (step index ``k0``); state ``k >= 1`` goes to
        ``buf[k % nslots]``, or with ``save = (array [n, carry], every)`` to ``array[k /
        every]`` when ``k`` is a multiple of ``every`` below ``n * every`` (``array[0]`` gets
        ``s0``); the last state is copied to ``final``; the probes' values go to the address
        ``t_addr``, ``n_probe`` numbers per step. ``acc``: an array ``[steps, E components x
        cells]`` for the E kernel's curl sums (``HalfStep.source(save_acc=True)``)."""
        args = self._forward_args(
            ctx, s0, buf, nslots, k0, steps, values, t_addr, threads, save, final, acc
        )
        ctx["fwd"](native.address(args))

    def _forward_args(
        self, ctx, s0, buf, nslots, k0, steps, values, t_addr, threads, save, final, acc,
        eold=None,
    ):  # fmt: skip
        """``fdtd_forward``'s argument array (see ``_run_forward``)."""
        fh, th, dh, ndh, nh = ctx["fh"]
        fe, te, de, nde, ne = ctx["fe" if acc is None else "fe_acc"]
        shape3 = self.ph.shape3
        v_addr = native.address(values) + k0 * self.n_inj * values.itemsize if self.n_inj else 0
        return np.array(
            [
                fh[0], th, dh, ndh, nh, fe[0], te, de, nde, ne,
                native.address(s0), native.address(buf), nslots, self.carry, self.size_h,
                steps, v_addr, self.n_inj, native.address(self.inj),
                native.address(self.probes), self.n_probe, t_addr,
                *shape3, threads,
                0 if save is None else native.address(save[0]),
                1 if save is None else save[1],
                0 if save is None else save[0].shape[0],
                0 if final is None else native.address(final),
                0 if acc is None else native.address(acc),
                0 if acc is None else acc.shape[1],
                0 if eold is None else native.address(eold),
            ],
            dtype=np.intp,
        )  # fmt: skip

    def _run_backward(
        self, ctx, s0, buf, k0, steps, bufs, p, gtraces, gvalues, threads, store=None
    ):
        """The adjoint of steps ``k0 .. k0 + steps - 1`` over their states ``s0``, ``buf[1 ..
        steps]``; ``bufs = (AE0, AE1, AH0, AH1)``, ``p``: the pair holding the cotangent of
        state ``k0 + steps`` (``(p + steps) % 2`` then holds that of state ``k0``). ``store``
        (an array ``[steps, E components x cells]`` or None): leave the E coefficient maps'
        cotangents to ``_run_coef``, which reads the E cotangents written there per step."""
        for x in ctx["scratch"]["h"]:  # nothing pending from the H adjoint yet
            x.fill(0)
        args = self._backward_args(
            ctx, s0, buf, k0, steps, bufs, p, gtraces, gvalues, threads, store
        )
        ctx["bwd"](native.address(args))

    def _backward_args(self, ctx, s0, buf, k0, steps, bufs, p, gtraces, gvalues, threads, store):
        """``fdtd_backward``'s argument array (see ``_run_backward``)."""
        chain = store is not None
        fe, te, de, nde, ne = ctx["ae_chain" if chain else "ae"]
        fh, th, dh, ndh, nh = ctx["ah_chain" if chain else "ah"]
        if chain:
            gout, stride = native.address(store), store.shape[1]
        else:
            gout, stride = native.address(ctx["g_row"]), 0
        off_e, off_h, src_e, src_h, _slots = self.plumbing
        shape3 = self.ph.shape3
        gv_addr = native.address(gvalues) + k0 * self.n_inj * gvalues.itemsize
        return np.array(
            [
                fe[0], fe[1], te, de, nde, ne, fh[0], fh[1], th, dh, ndh, nh,
                native.address(buf), self.carry, self.size_h, steps,
                *[native.address(b) for b in bufs], off_e, off_h, src_e, src_h, p,
                native.address(gtraces) + k0 * self.n_probe * gtraces.itemsize,
                native.address(self.probes), self.n_probe,
                gv_addr, native.address(self.inj), self.n_inj,
                *shape3, threads, gout, stride, int(_FUSE), 0, native.address(s0),
            ],
            dtype=np.intp,
        )  # fmt: skip

    def light_reverse(self):
        """True when the reverse pass needs nothing of a recomputed state but the E curl sums
        and E components: every H coefficient is a number, and every E coefficient a number
        or a map (at least one map). The adjoint chain then reads no state, and ``fdtd_coef``
        only ``g``, the curl sums (``gB += g * curl``) and, for ``Ca`` maps, the old E
        components (``gA += g * E_old``), which the recomputation saves as rows."""
        if any(kind != "number" for kind in self.ph.coef_kinds.values()):
            return False
        kinds = self.pe.coef_kinds.values()
        return all(k in ("number", "map") for k in kinds) and any(k == "map" for k in kinds)

    def reads_e_old(self):
        """True when a ``Ca`` map's cotangent needs the old E components (``fdtd_coef``)."""
        return any(kind == "map" and c.startswith("ca_") for c, kind in self.pe.coef_kinds.items())

    def store_shapes(self, steps):
        """Shapes of the cotangent stores of ``steps`` steps: ``(E or None, H or None)`` (a
        half step without coefficient maps stores nothing)."""
        maps = any(self.pe.coef_kinds[c] == "map" for c in self.pe.coef_names)
        # (the H maps' cotangents stay on the chain: see _new_context)
        return ((steps, len(self.pe.terms) * self.cells) if maps else None), None

    def _coef_layout(self):
        """Per E component ``(offset in the state, gA offset, gB offset)`` (-1: no map) in the
        E adjoint's result, for ``fdtd_coef``."""
        layout = self._adjoint_layout(self.pe)
        rows = []
        for name in self.pe.terms:
            row = [self.offset[name] - 0]
            for prefix, group in (("ca_", "gA"), ("cb_", "gB")):
                c = prefix + name
                row.append(layout[(group, name)] if self.pe.coef_kinds[c] == "map" else -1)
            rows.append(row)
        return _index_array(rows)

    def _run_coef(self, ctx, s0, buf, steps, store, acc, out):
        """The E coefficient maps' cotangents of a segment (states ``s0``, ``buf[1 ..
        steps]``; the cotangents ``store`` from ``_run_backward``, the curl sums ``acc``
        from the recomputation), summed into ``out`` (the E adjoint's layout)."""
        ctx["coef"](native.address(self._coef_args(s0, buf, steps, store, acc, out)))

    def _coef_args(self, s0, buf, steps, store, acc, out, eold=None):
        """``fdtd_coef``'s argument array (see ``_run_coef``)."""
        comps = self.__dict__.get("_coef_rows")
        if comps is None:
            comps = self._coef_rows = self._coef_layout()
        return np.array(
            [
                native.address(s0), native.address(buf), self.carry, steps,
                native.address(store), native.address(acc), store.shape[1],
                native.address(out), native.address(comps), len(self.pe.terms), self.cells,
                0 if eold is None else native.address(eold),
            ],
            dtype=np.intp,
        )  # fmt: skip

    def _run_leaves(self, rev, order, bufs, stores, accs, eolds, schedule, thread, light):
        """Recompute and reverse the leaf segments ``order`` (``[(start state, k0, steps)]``,
        last first) in one call of ``fdtd_leaves`` (``rev``: the ``_Reverse``, its
        cotangent buffers and parity; ``bufs``: the two segment buffers, or one (no
        ``thread``), or the ring of two states (``light``); ``stores``, ``accs``: per buffer
        the E cotangents and curl sums that ``fdtd_coef`` reads, or None, and the E_old rows
        (``light`` with ``Ca`` maps; else None); ``schedule``: the
        pipelined order, on a worker pthread with ``thread``, else in turn). The argument
        arrays of the three drivers are built once, for the first segment: the C loop rewrites
        what changes per segment. ``reverse_stats`` keeps the call's split of the work."""
        ctx, (start, k0, n) = rev.ctx, order[0]
        maps = stores[0] is not None
        traces = native.address(rev._traces(max(m for _s, _k, m in order)))
        tf = self._forward_args(
            ctx, start, bufs[0], n + 1, k0, n, rev.values, traces, rev.threads, None, None,
            accs[0], eolds[0],
        )  # fmt: skip
        common = (ctx, start, bufs[0], k0, n, rev.bufs, rev.p, rev.gtraces, rev.gvalues)
        tb_both = self._backward_args(*common, rev.threads, None)
        tb_chain = self._backward_args(*common, rev.threads, stores[0]) if maps else None
        tc = None
        if maps:
            tc = self._coef_args(start, bufs[0], n, stores[0], accs[0], rev.acc[0], eolds[0])
        starts = _index_array([native.address(s) for s, _k, _n in order])
        k0s = _index_array([k for _s, k, _n in order])
        lengths = _index_array([m for _s, _k, m in order])
        scratch = _index_array([native.address(x) for x in ctx["scratch"]["h"]])
        stats = np.zeros(4)
        on_worker = np.zeros(len(order), dtype=np.int8)
        keep = (tf, tb_both, tb_chain, tc, starts, k0s, lengths, scratch, stats, on_worker)

        def addr(x):
            return 0 if x is None else native.address(x)

        args = np.array(
            [
                *(_fn_address(ctx[f]) for f in ("fwd", "bwd", "coef")),
                addr(tf), addr(tb_chain), addr(tb_both), addr(tc),
                len(order), addr(starts), addr(k0s), addr(lengths),
                addr(bufs[0]), addr(bufs[-1]), addr(stores[0]), addr(stores[1]),
                addr(accs[0]), addr(accs[1]),
                rev.p, rev.dtype.itemsize, self.n_inj, self.n_probe,
                addr(rev.values) if self.n_inj else 0, addr(rev.gtraces), addr(rev.gvalues),
                addr(scratch), len(scratch), self.cells * rev.dtype.itemsize,
                int(schedule), addr(stats), addr(on_worker), _SHARE_COEF, int(light),
                int(thread), addr(eolds[0]), addr(eolds[1]),
            ],
            dtype=np.intp,
        )  # fmt: skip
        _leaves_driver()(native.address(args))
        del keep
        rev.p = (rev.p + int(lengths.sum())) % 2
        self.reverse_stats = {
            "adjoint_cpu_s": stats[0],
            "worker_cpu_s": stats[1],
            "waited_s": stats[2],
            "coef_on_worker": int(stats[3]),
            "segments": len(order),
            "light": light,
        }

    def _prepare(self, arrays):
        dtype = arrays[0].dtype
        if dtype not in _CTYPE or any(a.dtype != dtype for a in arrays):
            return None
        return [np.ascontiguousarray(a) for a in arrays]

    def _forward_kernel(self, steps, plan, save=None):
        """The value kernel: the flat ``[h, e, traces]`` and, with ``plan`` given or ``save``,
        the saved states (every state: no plan; else each segment start)."""
        saving = plan is not None or save
        seg = plan[0] if plan is not None else None

        def kernel(xp, *arrays):
            if xp is not np:
                return None
            arrays = self._prepare(arrays)
            if arrays is None:
                return None
            h0, e0, values, coefs, profiles = self._split_operands(arrays)
            dtype = h0.dtype
            ctx = self._context(dtype, coefs, profiles)
            _, threads = self._threads()
            size_out = self.carry + steps * self.n_probe
            n_saved = 0 if not saving else (steps + 1 if seg is None else math.ceil(steps / seg))
            out = np.empty(size_out + n_saved * self.carry, dtype=dtype)
            t_addr = native.address(out) + self.carry * out.itemsize
            if values is None:
                values = np.zeros((steps, 0), dtype=dtype)
            final = out[: self.carry]
            if saving and seg is None:  # every state kept: state k in row k
                buf = out[size_out:].reshape(steps + 1, self.carry)
                buf[0, : self.size_h], buf[0, self.size_h :] = h0, e0
                self._run_forward(
                    ctx, buf[0], buf, steps + 1, 0, steps, values, t_addr, threads, final=final
                )
                return out
            s0 = np.concatenate([h0, e0])
            buf = np.empty((2, self.carry), dtype=dtype)
            save = (out[size_out:].reshape(n_saved, self.carry), seg) if saving else None
            self._run_forward(
                ctx, s0, buf, 2, 0, steps, values, t_addr, threads, save=save, final=final
            )
            return out

        return kernel

    def _backward_kernel(self, steps, policy, plan):
        n_coef = len(self.coef_names)

        def kernel(xp, *arrays):
            if xp is not np:
                return None
            arrays = self._prepare(arrays)
            if arrays is None:
                return None
            n_ops = len(arrays) - 4
            operands, saved = arrays[:n_ops], arrays[n_ops]
            gh, ge, gt = arrays[n_ops + 1 :]
            h0, _e0, values, coefs, profiles = self._split_operands(operands)
            dtype = h0.dtype
            if values is None:
                values = np.zeros((steps, 0), dtype=dtype)
            ctx = self._context(dtype, coefs, profiles)
            pipeline, threads = self._threads()
            if (
                pipeline
                and policy.budget is not None
                and self.reverse_carries(steps, policy, True) > policy.budget
            ):
                pipeline = False  # the second segment buffer would break the budget
            out = np.empty(self.carry + steps * self.n_inj + n_coef * self.cells, dtype=dtype)
            gvalues = out[self.carry : self.carry + steps * self.n_inj]
            gt = np.ascontiguousarray(gt.reshape(-1))
            run = _Reverse(self, ctx, values, gt, gvalues, threads, pipeline, gh, ge)
            if plan is None:
                every_state = saved.reshape(steps + 1, self.carry)
                run.adjoint(every_state[0], every_state, 0, steps)
            else:
                seg, inner = plan
                saved = saved.reshape(-1, self.carry)
                segments = [
                    (saved[s], s * seg, min(seg, steps - s * seg)) for s in range(saved.shape[0])
                ]
                run.reverse(segments, inner)
            out[: self.carry] = run.state_cotangent()
            at = self.carry + steps * self.n_inj
            for m, part in enumerate(run.coefficient_cotangents()):
                out[at + m * self.cells : at + (m + 1) * self.cells] = part
            return out

        return kernel


class _Reverse:
    """One backward pass: the recursion over checkpointed segments (see the module docstring)
    and the adjoints' alternating result buffers (``fdtd_backward``)."""

    def __init__(self, run, ctx, values, gtraces, gvalues, threads, pipeline, gh, ge):
        self.run, self.ctx, self.values = run, ctx, values
        self.gtraces, self.gvalues = gtraces, gvalues
        self.threads, self.pipeline = threads, pipeline
        dtype = gh.dtype
        self.dtype = dtype
        off_e, off_h = run.plumbing[:2]
        # AE0, AE1, AH0, AH1: zeros, so the summed coefficient slots start at 0
        self.bufs = [np.zeros(run.pe.adjoint_size, dtype=dtype) for _ in range(2)]
        self.bufs += [np.zeros(run.ph.adjoint_size, dtype=dtype) for _ in range(2)]
        self.p = 0
        # the worker's sums of the coefficient maps' cotangents (E, H; adjoint layouts)
        self.acc = [np.zeros(run.pe.adjoint_size, dtype=dtype)]
        self.acc.append(np.zeros(run.ph.adjoint_size, dtype=dtype))
        self.bufs[2][off_h : off_h + run.size_h] = gh
        self.bufs[0][off_e : off_e + run.size_e] = ge
        self.scratch_traces = None
        self.buffers = []

    def state_cotangent(self):
        off_e, off_h = self.run.plumbing[:2]
        gh = self.bufs[2 + self.p][off_h : off_h + self.run.size_h]
        ge = self.bufs[self.p][off_e : off_e + self.run.size_e]
        return np.concatenate([gh, ge])

    def coefficient_cotangents(self):
        cells = self.run.cells
        for which, at in self.run.plumbing[4]:
            pair = self.bufs[2:] if which == "h" else self.bufs[:2]
            worker = self.acc[1] if which == "h" else self.acc[0]
            yield (pair[0][at : at + cells] + pair[1][at : at + cells]) + worker[at : at + cells]

    def _traces(self, steps):
        n = self.run.n_probe * steps
        if self.scratch_traces is None or self.scratch_traces.size < n:
            self.scratch_traces = np.empty(max(n, 1), dtype=self.dtype)
        return self.scratch_traces

    def recompute(self, start, k0, steps, buf, acc=None):
        """States ``k0 + 1 .. k0 + steps`` into ``buf[1 .. steps]`` from ``start`` (state
        ``k0``, which stays where it is); with ``acc``, the E curl sums of each step too."""
        # the probes' values are not needed again: they go to a scratch array
        traces = native.address(self._traces(steps))
        self.run._run_forward(
            self.ctx, start, buf, steps + 1, k0, steps, self.values, traces, self.threads,
            acc=acc,
        )  # fmt: skip

    def adjoint(self, start, buf, k0, steps, store=None):
        self.run._run_backward(
            self.ctx, start, buf, k0, steps, self.bufs, self.p, self.gtraces, self.gvalues,
            self.threads, store,
        )  # fmt: skip
        self.p = (self.p + steps) % 2

    def _buffer(self, which, steps):
        while len(self.buffers) <= which:
            self.buffers.append(None)
        buf = self.buffers[which]
        if buf is None or buf.shape[0] < steps + 1:
            buf = self.buffers[which] = np.empty((steps + 1, self.run.carry), dtype=self.dtype)
        return buf

    def reverse(self, segments, policy):
        """The segments ``[(start state, k0, steps)]``, last first, each under ``policy``."""
        plans = [policy.plan(n) for _s, _k, n in segments]
        if all(p is None for p in plans):
            self._leaves(segments)
            return
        for (start, k0, n), plan in zip(reversed(segments), reversed(plans), strict=True):
            if plan is None:
                self._leaves([(start, k0, n)])
                continue
            seg, inner = plan
            n_sub = math.ceil(n / seg)
            starts = np.empty((n_sub, self.run.carry), dtype=self.dtype)
            buf = np.empty((2, self.run.carry), dtype=self.dtype)
            traces = native.address(self._traces(n))
            # (the sub-segment starts only: the sweep stops before the last sub-segment)
            last = (n_sub - 1) * seg
            self.run._run_forward(
                self.ctx, start, buf, 2, k0, last, self.values, traces, self.threads,
                save=(starts, seg),
            )  # fmt: skip
            subs = [(starts[s], k0 + s * seg, min(seg, n - s * seg)) for s in range(n_sub)]
            self.reverse(subs, inner)

    def _leaves(self, segments):
        """Recompute each segment whole, then run its adjoint, last segment first: one
        ``fdtd_leaves`` call (``NativeRun._run_leaves``). With ``pipeline``, its worker thread
        recomputes segment ``s - 1`` into a second buffer while segment ``s``'s adjoint runs,
        and sums the coefficient maps' cotangents of segment ``s + 1`` from the E cotangents
        the adjoint stored and the curl sums the recomputation saved (``fdtd_coef``). With
        ``light_reverse``, the recomputation goes to a ring of two states (only its curl sums
        are read), on either thread count (one: the same schedule in turn)."""
        longest = max(n for _s, _k, n in segments)
        order = list(reversed(segments))
        if _leaves_driver() is None:  # (no pthreads: the same loop here)
            buf = self._buffer(0, longest)
            for start, k0, n in order:
                self.recompute(start, k0, n, buf)
                self.adjoint(start, buf, k0, n)
            return
        thread = self.pipeline and len(segments) > 1
        light = len(segments) > 1 and self.run.light_reverse()
        if light:  # (a ring of two states)
            bufs = [self._buffer(0, 1)]
        else:
            bufs = [self._buffer(b, longest) for b in range(1 + thread)]
        shape = self.run.store_shapes(longest)[0]
        stores = accs = eolds = [None, None]

        def rows():  # per buffer (one will do without the thread)
            return [np.empty(shape, dtype=self.dtype) for _ in range(1 + thread)] * (2 - thread)

        if (thread or light) and shape is not None:  # the adjoint's g, the curl sums
            stores, accs = rows(), rows()
        if light and self.run.reads_e_old():  # and E_old (a Ca map)
            eolds = rows()
        self.run._run_leaves(self, order, bufs, stores, accs, eolds, thread or light, thread, light)
