"""The thread pool of the native kernels: one per process, in its own small C library.

Why not OpenMP: numpy's OpenBLAS keeps its worker threads spinning for a long while after every
matmul (2^28 cycles by default). An OpenMP team started right after has to wait at its closing
barrier until the scheduler gives its worker a slice of the core that the spinning BLAS thread
holds: on a 2-core machine a 0.1 ms transpose became 5 ms after a matmul, and an FNO step 30x
slower. In this pool the calling thread takes chunks too and never waits for a worker that has
not started: it waits only for workers that joined and are finishing a chunk they claimed. A
pool whose workers cannot run degrades to the one-thread speed instead of stalling.

Workers and the caller spin briefly before they sleep (``SPIN_NS``, 100 us, with a pause
instruction and a ``sched_yield`` every few microseconds): a training step calls the pool every
few tens of microseconds, and a worker asleep on a condition variable takes 50-100 us to wake
on a virtual machine whose idle core was halted, which cost a third of the second thread's gain
on 1 ms kernels (an FNO step scaled 1.3x on 2 cores where PyTorch's spinning OpenMP team scales
1.9x). 100 us, not OpenBLAS's 0.1 s: a pool left idle gives its core back at once, and the
yields hand it to any other runnable thread (scipy's FFT workers) meanwhile.

Also fork-safe: ``pthread_atfork`` handlers hold the pool's locks across ``fork()`` and reset
the pool in the child, which then starts new workers on its first parallel call (libgomp
deadlocks there instead).

``run(fn, job, n, grain, align, threads)`` calls ``fn(job, lo, hi)`` over [0, n) in chunks
whose bounds are multiples of ``align``, with up to ``threads`` threads (the caller included)
and at least ``grain`` units per thread; kernels reach it through ``cc.parallel_header()``.
"""

SOURCE = r"""
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef void (*diffsci_range)(void* job, ptrdiff_t lo, ptrdiff_t hi);

#define MAX_WORKERS 255
/* small chunks: a thread that starts late or is preempted holds up little */
#define CHUNKS_PER_THREAD 16

static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;  /* one job at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;      /* everything below */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;        /* workers: a new job */
static pthread_cond_t left = PTHREAD_COND_INITIALIZER;        /* caller: a worker left */
static int n_workers;
static unsigned long generation;
static diffsci_range job_fn;  /* NULL: no job open to join */
static void* job_arg;
static ptrdiff_t job_n, job_align, job_chunks;
static int job_seats, job_active;  /* workers that may still join / that are inside */
static atomic_ptrdiff_t job_next;  /* the next chunk to claim */
/* copies of generation and job_active, written under `lock`, polled without it while spinning */
static atomic_ulong generation_seen;
static atomic_int active_seen;

#define SPIN_NS 100000LL /* how long a waiting thread spins before it sleeps */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}
static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
/* spin until the generation differs from `seen` (wait_generation) or no helper is inside a job
   (!wait_generation), for at most SPIN_NS; yields the core every 256 pauses */
static void spin_wait(int wait_generation, unsigned long seen) {
  long long start = now_ns();
  for (unsigned k = 1;; ++k) {
    if (wait_generation ? atomic_load(&generation_seen) != seen : atomic_load(&active_seen) == 0)
      return;
    cpu_relax();
    if (k % 256 == 0) {
      if (now_ns() - start > SPIN_NS) return;
      sched_yield();
    }
  }
}

static void run_chunks(diffsci_range fn, void* arg, ptrdiff_t n, ptrdiff_t align,
                       ptrdiff_t chunks) {
  ptrdiff_t blocks = (n + align - 1) / align;
  for (;;) {
    ptrdiff_t c = atomic_fetch_add(&job_next, 1);
    if (c >= chunks) return;
    ptrdiff_t lo = blocks * c / chunks * align, hi = blocks * (c + 1) / chunks * align;
    if (hi > n) hi = n;
    if (lo < hi) fn(arg, lo, hi);
  }
}

static void* worker(void* start) {
  unsigned long seen = (unsigned long)(uintptr_t)start;  /* the generation before its job */
  pthread_mutex_lock(&lock);
  for (;;) {
    if (generation == seen) {  /* spin a little before sleeping: the next job comes soon */
      pthread_mutex_unlock(&lock);
      spin_wait(1, seen);
      pthread_mutex_lock(&lock);
    }
    while (generation == seen) pthread_cond_wait(&wake, &lock);
    seen = generation;
    if (job_fn == NULL || job_seats == 0) continue;  /* finished already, or team full */
    job_seats--;
    job_active++;
    atomic_store(&active_seen, job_active);
    diffsci_range fn = job_fn;
    void* arg = job_arg;
    ptrdiff_t n = job_n, align = job_align, chunks = job_chunks;
    pthread_mutex_unlock(&lock);
    run_chunks(fn, arg, n, align, chunks);
    pthread_mutex_lock(&lock);
    atomic_store(&active_seen, job_active - 1);
    if (--job_active == 0) pthread_cond_signal(&left);
  }
  return NULL;
}

/* start workers until there are `want`; the number running */
static int grow(int want) {
  pthread_attr_t attr;
  sigset_t all, saved;
  if (n_workers >= want) return n_workers;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  sigfillset(&all);  /* workers block every signal: Python handles them on its own threads */
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  while (n_workers < want) {
    pthread_t t;
    if (pthread_create(&t, &attr, worker, (void*)(uintptr_t)generation) != 0) break;
    n_workers++;
  }
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  pthread_attr_destroy(&attr);
  return n_workers;
}

void diffsci_pool_run(diffsci_range fn, void* arg, ptrdiff_t n, ptrdiff_t grain,
                      ptrdiff_t align, ptrdiff_t threads) {
  ptrdiff_t team = n / (grain > 0 ? grain : 1);
  if (team > threads) team = threads;
  if (team > MAX_WORKERS + 1) team = MAX_WORKERS + 1;
  /* busy (another Python thread's kernel holds the pool): run on this thread */
  if (team <= 1 || pthread_mutex_trylock(&run_lock) != 0) {
    fn(arg, 0, n);
    return;
  }
  pthread_mutex_lock(&lock);
  int helpers = grow((int)team - 1);
  if (helpers > team - 1) helpers = (int)team - 1;
  ptrdiff_t chunks = (helpers + 1) * CHUNKS_PER_THREAD;
  if (chunks > n / grain) chunks = n / grain;
  job_fn = fn;
  job_arg = arg;
  job_n = n;
  job_align = align;
  job_chunks = chunks;
  job_seats = helpers;
  job_active = 0;
  atomic_store(&active_seen, 0);
  atomic_store(&job_next, 0);
  generation++;
  atomic_store(&generation_seen, generation);
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&lock);

  run_chunks(fn, arg, n, align, chunks);  /* returns once every chunk is claimed */

  pthread_mutex_lock(&lock);
  job_fn = NULL;  /* workers waking from now on skip this job */
  if (job_active > 0) {  /* spin a little while the helpers finish their last chunks */
    pthread_mutex_unlock(&lock);
    spin_wait(0, 0);
    pthread_mutex_lock(&lock);
  }
  while (job_active > 0) pthread_cond_wait(&left, &lock);
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&run_lock);
}

int diffsci_pool_workers(void) {
  pthread_mutex_lock(&lock);
  int n = n_workers;
  pthread_mutex_unlock(&lock);
  return n;
}

static void before_fork(void) {
  pthread_mutex_lock(&run_lock);
  pthread_mutex_lock(&lock);
}
static void after_fork_parent(void) {
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&run_lock);
}
static void after_fork_child(void) {  /* the workers did not survive the fork */
  pthread_cond_init(&wake, NULL);  /* forget the parent's waiters */
  pthread_cond_init(&left, NULL);
  n_workers = 0;
  job_fn = NULL;
  job_active = 0;
  atomic_store(&active_seen, 0);
  pthread_mutex_unlock(&lock);  /* this thread took both in before_fork */
  pthread_mutex_unlock(&run_lock);
}
__attribute__((constructor)) static void install_fork_handlers(void) {
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}
"""
