/* nb_lifetimes: nonblocking collectives where MPI programs take them and
 * duct's own tests did not (issue 29), checked against values computed
 * here and, by preload.sh-style comparison, against the MPI library alone.
 *
 * 1. Every nonblocking collective MPI defines on an intercommunicator
 *    (even world ranks against odd ones), the two groups arriving at
 *    different times (one group sleeps before calling, alternately), then
 *    the world split and freed: a request that is not really outstanding
 *    (MPI_REQUEST_NULL handed back) shows as a wrong or unwritten result,
 *    or an MPI_Ibarrier that returns before the other group has called.
 * 2. A nonblocking collective of every kind on an intracommunicator whose
 *    datatype (a derived one with gaps, and a duplicate of MPI_INT), user
 *    op, or communicator is freed between the start and MPI_Wait, as MPI
 *    allows (MPI-4.0 §2.5.1, §6.12: the operation completes as if the object
 *    were still there). Counts are large enough that the operation is still
 *    outstanding at the free.
 *
 * Built three ways (tests/interpose/nb_lifetimes.sh): plain (the MPI
 * library, or libduct-mpi by LD_PRELOAD), and with -DDUCT_DIRECT, where the
 * nonblocking calls are duct's own DUCT_I* entry points and DUCT_Wait.
 * Prints one line per check and a digest of every result; exit 0 when every
 * check passed on every rank. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DUCT_DIRECT
#include <duct/duct.h>
#define MPI_Ibarrier DUCT_Ibarrier
#define MPI_Ibcast DUCT_Ibcast
#define MPI_Ireduce DUCT_Ireduce
#define MPI_Iallreduce DUCT_Iallreduce
#define MPI_Iallgather DUCT_Iallgather
#define MPI_Iallgatherv DUCT_Iallgatherv
#define MPI_Ialltoall DUCT_Ialltoall
#define MPI_Ialltoallv DUCT_Ialltoallv
#define MPI_Igather DUCT_Igather
#define MPI_Igatherv DUCT_Igatherv
#define MPI_Iscatter DUCT_Iscatter
#define MPI_Iscatterv DUCT_Iscatterv
#define MPI_Ireduce_scatter_block DUCT_Ireduce_scatter_block
#define MPI_Ireduce_scatter DUCT_Ireduce_scatter
#define WAIT DUCT_Wait
#else
#define WAIT MPI_Wait
#endif

static int wrank, wsize, failures;
static unsigned long long digest = 1469598103934665603ull;
/* --duct: also the cases the MPI library alone fails (they are printed with
 * a "[duct]" mark and left out of the digest, which the runs compare). */
static int duct_mode, duct_only;

static void fold(const void* p, size_t n) {
  if (duct_only) return;
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) {
    digest ^= b[i];
    digest *= 1099511628211ull;
  }
}

/* A check agreed on by every rank of the world (with the MPI library's own
 * allreduce: the reference must not be duct). */
static void check(const char* what, int ok) {
  PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!ok) ++failures;
  if (wrank == 0) printf("%-64s %s%s\n", what, ok ? "ok" : "WRONG", duct_only ? " [duct]" : "");
  fflush(stdout);
}

static void nap(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static int value(int grank, int k) { return grank * 1000 + k + 1; }

/* The sum over ranks g0, g0 + step, ... (n of them) of value(g, k). */
static int sum_of(int g0, int step, int n, int k) {
  int want = 0;
  for (int j = 0; j < n; ++j) want += value(g0 + step * j, k);
  return want;
}

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  /* Elements are ints, possibly with gaps (the datatypes below): MPI hands
   * user functions the datatype; sum its ints with their extent. */
  MPI_Aint lb, extent;
  MPI_Type_get_extent(*dt, &lb, &extent);
  const size_t stride = (size_t)extent / sizeof(int);
  for (int i = 0; i < *len; ++i) ((int*)inout)[i * stride] += ((int*)in)[i * stride];
}

static int* ints(size_t n, int fill) {
  int* p = malloc(sizeof(int) * (n ? n : 1));
  for (size_t i = 0; i < n; ++i) p[i] = fill;
  return p;
}

/* ---- 1. intercommunicators ------------------------------------------------ */

enum { IC = 7 };  /* ints per block */

static void inter_part(void) {
  const int color = wrank % 2;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 29, &inter);
  int lrank, lsize, rsize;
  MPI_Comm_rank(inter, &lrank);
  MPI_Comm_size(inter, &lsize);
  MPI_Comm_remote_size(inter, &rsize);
  /* world rank of rank j of the other group */
#define REMOTE(j) ((1 - color) + 2 * (j))
  const int me = wrank;
  /* Rooted calls: root is rank 0 of group `rg` (alternating per call). */
  int step = 0;
  char name[128];
  MPI_Request rq;
  int ok;
  double t0, waited;
  const double delay = 0.2;

#define ARRIVE()                                                  \
  do {                                                            \
    if (color == step % 2) nap(delay);     \
    t0 = MPI_Wtime();                                             \
  } while (0)
#define FINISH()                                                  \
  do {                                                            \
    ok &= WAIT(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS;            \
    ok &= rq == MPI_REQUEST_NULL;                                 \
    waited = MPI_Wtime() - t0;                                    \
    (void)waited;                                                 \
    ++step;                                                       \
  } while (0)
#define ROOT_ARG(rg) (color == (rg) ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0)
#define IS_ROOT(rg) (color == (rg) && lrank == 0)
#define RECEIVES(rg) (color != (rg))

  /* Ibarrier: the early group must wait for the late one. */
  ok = 1;
  ARRIVE();
  ok &= MPI_Ibarrier(inter, &rq) == MPI_SUCCESS;
  const int late = color == step % 2;
  FINISH();
  if (!late) ok &= waited > delay / 2;
  check("inter MPI_Ibarrier waits for the other group", ok);

  for (int rg = 0; rg < 2; ++rg) {
    /* Ibcast from rank 0 of group rg */
    int* b = ints(IC, -1);
    if (IS_ROOT(rg))
      for (int k = 0; k < IC; ++k) b[k] = value(me, k);
    ok = 1;
    ARRIVE();
    ok &= MPI_Ibcast(b, IC, MPI_INT, ROOT_ARG(rg), inter, &rq) == MPI_SUCCESS;
    FINISH();
    if (RECEIVES(rg))
      for (int k = 0; k < IC; ++k) ok &= b[k] == value(REMOTE(0), k);
    fold(b, sizeof(int) * IC);
    snprintf(name, sizeof name, "inter MPI_Ibcast root in group %d", rg);
    check(name, ok);
    free(b);

    /* Ireduce to rank 0 of group rg */
    int *s = ints(IC, 0), *r = ints(IC, -1);
    for (int k = 0; k < IC; ++k) s[k] = value(me, k);
    ok = 1;
    ARRIVE();
    ok &= MPI_Ireduce(s, r, IC, MPI_INT, MPI_SUM, ROOT_ARG(rg), inter, &rq) == MPI_SUCCESS;
    FINISH();
    if (IS_ROOT(rg))
      for (int k = 0; k < IC; ++k) ok &= r[k] == sum_of(1 - color, 2, rsize, k);
    if (IS_ROOT(rg)) fold(r, sizeof(int) * IC);
    snprintf(name, sizeof name, "inter MPI_Ireduce root in group %d", rg);
    check(name, ok);

    /* Igather / Igatherv / Iscatter / Iscatterv with root in group rg */
    int* g = ints((size_t)rsize * IC * 2, -1);
    int *cnt = ints((size_t)rsize, 0), *dsp = ints((size_t)rsize, 0), total = 0;
    for (int j = rsize - 1; j >= 0; --j) {  /* reversed displacements */
      cnt[j] = j + 1;
      dsp[j] = total;
      total += cnt[j];
    }
    ok = 1;
    ARRIVE();
    ok &= MPI_Igather(s, IC, MPI_INT, g, IC, MPI_INT, ROOT_ARG(rg), inter, &rq) == MPI_SUCCESS;
    FINISH();
    if (IS_ROOT(rg)) {
      for (int j = 0; j < rsize; ++j)
        for (int k = 0; k < IC; ++k) ok &= g[j * IC + k] == value(REMOTE(j), k);
      fold(g, sizeof(int) * rsize * IC);
    }
    snprintf(name, sizeof name, "inter MPI_Igather root in group %d", rg);
    check(name, ok);

    ok = 1;
    for (int i = 0; i < rsize * IC * 2; ++i) g[i] = -1;
    ARRIVE();
    ok &= MPI_Igatherv(s, lrank + 1, MPI_INT, g, cnt, dsp, MPI_INT, ROOT_ARG(rg), inter, &rq) == MPI_SUCCESS;
    FINISH();
    if (IS_ROOT(rg)) {
      for (int j = 0; j < rsize; ++j)
        for (int k = 0; k < cnt[j]; ++k) ok &= g[dsp[j] + k] == value(REMOTE(j), k);
      fold(g, sizeof(int) * total);
    }
    snprintf(name, sizeof name, "inter MPI_Igatherv root in group %d", rg);
    check(name, ok);

    /* scatter: the root's block j is value(root, j * IC + k) */
    int* sc = ints((size_t)rsize * IC, 0);
    for (int i = 0; i < rsize * IC; ++i) sc[i] = value(me, i);
    for (int k = 0; k < IC; ++k) r[k] = -1;
    ok = 1;
    ARRIVE();
    ok &= MPI_Iscatter(sc, IC, MPI_INT, r, IC, MPI_INT, ROOT_ARG(rg), inter, &rq) == MPI_SUCCESS;
    FINISH();
    if (RECEIVES(rg)) {
      for (int k = 0; k < IC; ++k) ok &= r[k] == value(REMOTE(0), lrank * IC + k);
      fold(r, sizeof(int) * IC);
    }
    snprintf(name, sizeof name, "inter MPI_Iscatter root in group %d", rg);
    check(name, ok);

    for (int k = 0; k < IC; ++k) r[k] = -1;
    ok = 1;
    ARRIVE();
    ok &= MPI_Iscatterv(sc, cnt, dsp, MPI_INT, r, lrank + 1, MPI_INT, ROOT_ARG(rg), inter, &rq) == MPI_SUCCESS;
    FINISH();
    if (RECEIVES(rg)) {
      /* rank lrank of the receiving group gets lrank + 1 ints from the
       * root's displacement for it (the same formula as the root's). */
      int d = 0;
      for (int j = lsize - 1; j > lrank; --j) d += j + 1;  /* the root's remote group is this one */
      for (int k = 0; k <= lrank; ++k) ok &= r[k] == value(REMOTE(0), d + k);
      for (int k = lrank + 1; k < IC; ++k) ok &= r[k] == -1;
      fold(r, sizeof(int) * IC);
    }
    snprintf(name, sizeof name, "inter MPI_Iscatterv root in group %d", rg);
    check(name, ok);
    free(s);
    free(r);
    free(g);
    free(cnt);
    free(dsp);
    free(sc);
  }

  /* Iallreduce: each group gets the sum of the other group's vectors. */
  int *s = ints(IC, 0), *r = ints(IC, -1);
  for (int k = 0; k < IC; ++k) s[k] = value(me, k);
  ok = 1;
  ARRIVE();
  ok &= MPI_Iallreduce(s, r, IC, MPI_INT, MPI_SUM, inter, &rq) == MPI_SUCCESS;
  FINISH();
  for (int k = 0; k < IC; ++k) ok &= r[k] == sum_of(1 - color, 2, rsize, k);
  fold(r, sizeof(int) * IC);
  check("inter MPI_Iallreduce", ok);

  /* Iallgather / Iallgatherv */
  int* g = ints((size_t)rsize * IC, -1);
  ok = 1;
  ARRIVE();
  ok &= MPI_Iallgather(s, IC, MPI_INT, g, IC, MPI_INT, inter, &rq) == MPI_SUCCESS;
  FINISH();
  for (int j = 0; j < rsize; ++j)
    for (int k = 0; k < IC; ++k) ok &= g[j * IC + k] == value(REMOTE(j), k);
  fold(g, sizeof(int) * rsize * IC);
  check("inter MPI_Iallgather", ok);

  int *cnt = ints((size_t)rsize, 0), *dsp = ints((size_t)rsize, 0), total = 0;
  for (int j = rsize - 1; j >= 0; --j) {
    cnt[j] = j + 1;
    dsp[j] = total;
    total += cnt[j];
  }
  for (int i = 0; i < rsize * IC; ++i) g[i] = -1;
  ok = 1;
  ARRIVE();
  ok &= MPI_Iallgatherv(s, lrank + 1, MPI_INT, g, cnt, dsp, MPI_INT, inter, &rq) == MPI_SUCCESS;
  FINISH();
  for (int j = 0; j < rsize; ++j)
    for (int k = 0; k < cnt[j]; ++k) ok &= g[dsp[j] + k] == value(REMOTE(j), k);
  fold(g, sizeof(int) * total);
  check("inter MPI_Iallgatherv", ok);

  /* Ialltoall / Ialltoallv: block j goes to rank j of the other group. */
  int *a = ints((size_t)rsize * IC, 0), *b = ints((size_t)rsize * IC, -1);
  for (int j = 0; j < rsize; ++j)
    for (int k = 0; k < IC; ++k) a[j * IC + k] = value(me, j * IC + k);
  ok = 1;
  ARRIVE();
  ok &= MPI_Ialltoall(a, IC, MPI_INT, b, IC, MPI_INT, inter, &rq) == MPI_SUCCESS;
  FINISH();
  for (int j = 0; j < rsize; ++j)
    for (int k = 0; k < IC; ++k) ok &= b[j * IC + k] == value(REMOTE(j), lrank * IC + k);
  fold(b, sizeof(int) * rsize * IC);
  check("inter MPI_Ialltoall", ok);

  {
    /* one int to every remote rank, received in reversed order */
    int *sc = ints((size_t)rsize, 1), *sd = ints((size_t)rsize, 0), *rc = ints((size_t)rsize, 1),
        *rd = ints((size_t)rsize, 0);
    for (int j = 0; j < rsize; ++j) {
      sd[j] = j * IC;
      rd[j] = rsize - 1 - j;
    }
    for (int i = 0; i < rsize * IC; ++i) b[i] = -1;
    ok = 1;
    ARRIVE();
    ok &= MPI_Ialltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, inter, &rq) == MPI_SUCCESS;
    FINISH();
    for (int j = 0; j < rsize; ++j) ok &= b[rsize - 1 - j] == value(REMOTE(j), lrank * IC);
    fold(b, sizeof(int) * rsize);
    check("inter MPI_Ialltoallv", ok);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
  }

  /* Ireduce_scatter(_block): group A's vectors reduced, scattered over
   * group B. Run where the groups have the same size (the count rules of
   * the two groups then agree without interpretation). */
  if (lsize == rsize) {
    int* v = ints((size_t)lsize * IC, 0);
    for (int i = 0; i < lsize * IC; ++i) v[i] = value(me, i);
    for (int k = 0; k < IC; ++k) r[k] = -1;
    ok = 1;
    ARRIVE();
    ok &= MPI_Ireduce_scatter_block(v, r, IC, MPI_INT, MPI_SUM, inter, &rq) == MPI_SUCCESS;
    FINISH();
    for (int k = 0; k < IC; ++k) ok &= r[k] == sum_of(1 - color, 2, rsize, lrank * IC + k);
    fold(r, sizeof(int) * IC);
    check("inter MPI_Ireduce_scatter_block", ok);

    int* rcs = ints((size_t)lsize, IC);
    for (int k = 0; k < IC; ++k) r[k] = -1;
    ok = 1;
    ARRIVE();
    ok &= MPI_Ireduce_scatter(v, r, rcs, MPI_INT, MPI_SUM, inter, &rq) == MPI_SUCCESS;
    FINISH();
    for (int k = 0; k < IC; ++k) ok &= r[k] == sum_of(1 - color, 2, rsize, lrank * IC + k);
    fold(r, sizeof(int) * IC);
    check("inter MPI_Ireduce_scatter", ok);
    free(v);
    free(rcs);
  }

  /* Afterwards the world still works: split, a collective, free. */
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, wrank % 3, -wrank, &split);
  int one = 1, cnt_split = 0;
  MPI_Allreduce(&one, &cnt_split, 1, MPI_INT, MPI_SUM, split);
  int want_split = 0;
  for (int i = 0; i < wsize; ++i) want_split += i % 3 == wrank % 3;
  check("MPI_Comm_split, MPI_Allreduce and MPI_Comm_free after them", cnt_split == want_split);
  MPI_Comm_free(&split);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  free(s);
  free(r);
  free(g);
  free(cnt);
  free(dsp);
  free(a);
  free(b);
#undef REMOTE
}

/* ---- 2. objects freed while the operation is outstanding ------------------ */

/* What a case frees between its start and MPI_Wait. */
enum Freed { FREE_TYPE, FREE_OP, FREE_COMM };

/* The objects one call uses, made fresh for it. `stride` is the datatype's
 * extent in ints: 2 for the derived type with gaps (an int resized to two
 * ints), 1 for the duplicate of MPI_INT. */
struct Objs {
  MPI_Datatype t;
  MPI_Op op;
  MPI_Comm comm;
  int stride;
};

/* Open MPI applies predefined ops to predefined datatypes only: the
 * reductions take a user op (a sum) whatever is freed. */
static struct Objs make_objs(int gaps, enum Freed which) {
  struct Objs o;
  if (gaps) {
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &o.t);
    MPI_Type_commit(&o.t);
    o.stride = 2;
  } else if (which != FREE_TYPE) {
    o.t = MPI_INT;
    o.stride = 1;
  } else {
    MPI_Type_dup(MPI_INT, &o.t);
    MPI_Type_commit(&o.t);
    o.stride = 1;
  }
  if (which == FREE_COMM && !gaps)
    o.op = MPI_SUM;
  else
    MPI_Op_create(user_sum, 1, &o.op);
  MPI_Comm_dup(MPI_COMM_WORLD, &o.comm);
  return o;
}

static void free_objs(struct Objs* o, enum Freed which) {
  if (which == FREE_TYPE && o->t != MPI_DATATYPE_NULL && o->t != MPI_INT) MPI_Type_free(&o->t);
  if (which == FREE_OP && o->op != MPI_OP_NULL && o->op != MPI_SUM) MPI_Op_free(&o->op);
  if (which == FREE_COMM && o->comm != MPI_COMM_NULL) MPI_Comm_free(&o->comm);
}

static void free_rest(struct Objs* o) {
  free_objs(o, FREE_TYPE);
  free_objs(o, FREE_OP);
  free_objs(o, FREE_COMM);
}

/* Element k of a strided int buffer. */
#define EL(buf, k) ((buf)[(size_t)(k) * (size_t)o.stride])
/* Every gap of a strided receive buffer of n elements still holds -7. */
static int gaps_kept(const int* buf, size_t n, int stride) {
  for (size_t k = 0; k < n; ++k)
    for (int g = 1; g < stride; ++g)
      if (buf[k * (size_t)stride + (size_t)g] != -7) return 0;
  return 1;
}

enum { FC = 20011 };  /* elements per block: large enough to be outstanding at the free */

static void freed_part(enum Freed which, int gaps) {
  const int n = wsize, me = wrank;
  const char* what = which == FREE_TYPE ? (gaps ? "derived datatype freed" : "MPI_Type_dup(MPI_INT) freed")
                     : which == FREE_OP  ? (gaps ? "user op freed (derived datatype)" : "user op freed (MPI_INT)")
                                         : (gaps ? "communicator freed (derived datatype, user op)" : "communicator freed (MPI_INT, MPI_SUM)");
  char name[160];
  MPI_Request rq;
  int ok;
  const size_t blk = FC;
  const size_t nn = (size_t)n;
  /* Every case: fresh objects, start, free, wait, check. */
#define BEGIN(label)                                    \
  do {                                                  \
    o = make_objs(gaps, which);                         \
    snprintf(name, sizeof name, "%s: %s", label, what); \
    ok = 1;                                             \
  } while (0)
#define END(rc)                                                           \
  do {                                                                    \
    ok &= (rc) == MPI_SUCCESS;                                            \
    free_objs(&o, which);                                                 \
    ok &= WAIT(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS;                    \
  } while (0)
  struct Objs o;
  const int st = gaps ? 2 : 1;
  int* s = ints(nn * blk * (size_t)st, -7);
  int* r = ints(nn * blk * (size_t)st, -7);
  int* cnt = ints(nn, 0);
  int* dsp = ints(nn, 0);
  int total = 0;
  for (int j = n - 1; j >= 0; --j) {  /* uneven counts, reversed displacements */
    cnt[j] = FC - j;
    dsp[j] = total;
    total += cnt[j];
  }
#define RESET(buf, elems)                                                   \
  do {                                                                      \
    for (size_t i_ = 0; i_ < (size_t)(elems) * (size_t)st; ++i_) (buf)[i_] = -7; \
  } while (0)
#define FILL(buf, elems, base)                                              \
  do {                                                                      \
    RESET(buf, elems);                                                      \
    for (size_t k_ = 0; k_ < (size_t)(elems); ++k_) (buf)[k_ * (size_t)st] = value(me, (int)((base) + k_)); \
  } while (0)

  const int root = n - 1;
  if (which != FREE_OP) {
    /* Ibcast */
    RESET(r, blk);
    if (me == root) FILL(r, blk, 0);
    BEGIN("MPI_Ibcast");
    END(MPI_Ibcast(r, FC, o.t, root, o.comm, &rq));
    for (size_t k = 0; k < blk; ++k) ok &= EL(r, k) == value(root, (int)k);
    ok &= gaps_kept(r, blk, st);
    fold(r, blk * (size_t)st * sizeof(int));
    free_rest(&o);
    check(name, ok);

    /* Iallgather / Iallgatherv / Ialltoall / Ialltoallv / Igather(v) / Iscatter(v) */
    FILL(s, blk, 0);
    RESET(r, nn * blk);
    BEGIN("MPI_Iallgather");
    END(MPI_Iallgather(s, FC, o.t, r, FC, o.t, o.comm, &rq));
    for (int j = 0; j < n; ++j)
      for (size_t k = 0; k < blk; ++k) ok &= EL(r, (size_t)j * blk + k) == value(j, (int)k);
    ok &= gaps_kept(r, nn * blk, st);
    fold(r, nn * blk * (size_t)st * sizeof(int));
    free_rest(&o);
    check(name, ok);

    RESET(r, nn * blk);
    BEGIN("MPI_Iallgatherv");
    END(MPI_Iallgatherv(s, cnt[me], o.t, r, cnt, dsp, o.t, o.comm, &rq));
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < cnt[j]; ++k) ok &= EL(r, dsp[j] + k) == value(j, k);
    ok &= gaps_kept(r, (size_t)total, st);
    fold(r, (size_t)total * (size_t)st * sizeof(int));
    free_rest(&o);
    check(name, ok);

    FILL(s, nn * blk, 0);
    RESET(r, nn * blk);
    BEGIN("MPI_Ialltoall");
    END(MPI_Ialltoall(s, FC, o.t, r, FC, o.t, o.comm, &rq));
    for (int j = 0; j < n; ++j)
      for (size_t k = 0; k < blk; ++k) ok &= EL(r, (size_t)j * blk + k) == value(j, (int)((size_t)me * blk + k));
    ok &= gaps_kept(r, nn * blk, st);
    fold(r, nn * blk * (size_t)st * sizeof(int));
    free_rest(&o);
    check(name, ok);

    {
      /* rank me sends cnt[j] elements from j * blk to j, received at dsp[j] */
      int *sc = ints(nn, 0), *sd = ints(nn, 0), *rc = ints(nn, 0);
      for (int j = 0; j < n; ++j) {
        sc[j] = cnt[me];
        sd[j] = j * FC;
        rc[j] = cnt[j];
      }
      RESET(r, nn * blk);
      BEGIN("MPI_Ialltoallv");
      END(MPI_Ialltoallv(s, sc, sd, o.t, r, rc, dsp, o.t, o.comm, &rq));
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < cnt[j]; ++k) ok &= EL(r, dsp[j] + k) == value(j, me * FC + k);
      ok &= gaps_kept(r, (size_t)total, st);
      fold(r, (size_t)total * (size_t)st * sizeof(int));
      free_rest(&o);
      check(name, ok);
      free(sc);
      free(sd);
      free(rc);
    }

    FILL(s, blk, 0);
    RESET(r, nn * blk);
    BEGIN("MPI_Igather");
    END(MPI_Igather(s, FC, o.t, r, FC, o.t, root, o.comm, &rq));
    if (me == root) {
      for (int j = 0; j < n; ++j)
        for (size_t k = 0; k < blk; ++k) ok &= EL(r, (size_t)j * blk + k) == value(j, (int)k);
      ok &= gaps_kept(r, nn * blk, st);
      fold(r, nn * blk * (size_t)st * sizeof(int));
    }
    free_rest(&o);
    check(name, ok);

    RESET(r, nn * blk);
    BEGIN("MPI_Igatherv");
    END(MPI_Igatherv(s, cnt[me], o.t, r, cnt, dsp, o.t, root, o.comm, &rq));
    if (me == root) {
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < cnt[j]; ++k) ok &= EL(r, dsp[j] + k) == value(j, k);
      ok &= gaps_kept(r, (size_t)total, st);
      fold(r, (size_t)total * (size_t)st * sizeof(int));
    }
    free_rest(&o);
    check(name, ok);

    FILL(s, nn * blk, 0);
    RESET(r, blk);
    BEGIN("MPI_Iscatter");
    END(MPI_Iscatter(s, FC, o.t, r, FC, o.t, root, o.comm, &rq));
    for (size_t k = 0; k < blk; ++k) ok &= EL(r, k) == value(root, (int)((size_t)me * blk + k));
    ok &= gaps_kept(r, blk, st);
    fold(r, blk * (size_t)st * sizeof(int));
    free_rest(&o);
    check(name, ok);

    RESET(r, blk);
    BEGIN("MPI_Iscatterv");
    END(MPI_Iscatterv(s, cnt, dsp, o.t, r, cnt[me], o.t, root, o.comm, &rq));
    for (int k = 0; k < cnt[me]; ++k) ok &= EL(r, k) == value(root, dsp[me] + k);
    ok &= gaps_kept(r, (size_t)cnt[me], st);
    fold(r, (size_t)cnt[me] * (size_t)st * sizeof(int));
    free_rest(&o);
    check(name, ok);
  }

  /* Reductions (the op is freed in FREE_OP). */
  FILL(s, nn * blk, 0);
  RESET(r, nn * blk);
  BEGIN("MPI_Iallreduce");
  END(MPI_Iallreduce(s, r, FC, o.t, o.op, o.comm, &rq));
  for (size_t k = 0; k < blk; ++k) ok &= EL(r, k) == sum_of(0, 1, n, (int)k);
  ok &= gaps_kept(r, blk, st);
  fold(r, blk * (size_t)st * sizeof(int));
  free_rest(&o);
  check(name, ok);

  RESET(r, blk);
  BEGIN("MPI_Ireduce");
  END(MPI_Ireduce(s, r, FC, o.t, o.op, root, o.comm, &rq));
  if (me == root) {
    for (size_t k = 0; k < blk; ++k) ok &= EL(r, k) == sum_of(0, 1, n, (int)k);
    ok &= gaps_kept(r, blk, st);
    fold(r, blk * (size_t)st * sizeof(int));
  }
  free_rest(&o);
  check(name, ok);

  RESET(r, blk);
  BEGIN("MPI_Ireduce_scatter_block");
  END(MPI_Ireduce_scatter_block(s, r, FC, o.t, o.op, o.comm, &rq));
  for (size_t k = 0; k < blk; ++k) ok &= EL(r, k) == sum_of(0, 1, n, (int)((size_t)me * blk + k));
  ok &= gaps_kept(r, blk, st);
  fold(r, blk * (size_t)st * sizeof(int));
  free_rest(&o);
  check(name, ok);

  {
    /* rank j gets cnt[j] elements, in rank order from the vector's start */
    int before = 0;
    for (int j = 0; j < me; ++j) before += cnt[j];
    RESET(r, blk);
    BEGIN("MPI_Ireduce_scatter");
    END(MPI_Ireduce_scatter(s, r, cnt, o.t, o.op, o.comm, &rq));
    for (int k = 0; k < cnt[me]; ++k) ok &= EL(r, k) == sum_of(0, 1, n, before + k);
    ok &= gaps_kept(r, (size_t)cnt[me], st);
    fold(r, (size_t)cnt[me] * (size_t)st * sizeof(int));
    free_rest(&o);
    check(name, ok);
  }

  if (which == FREE_COMM) {
    BEGIN("MPI_Ibarrier");
    END(MPI_Ibarrier(o.comm, &rq));
    free_rest(&o);
    check(name, ok);
  }
  free(s);
  free(r);
  free(cnt);
  free(dsp);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  duct_mode = argc > 1 && strcmp(argv[1], "--duct") == 0;
  if (wsize >= 2) inter_part();
  freed_part(FREE_TYPE, 1);
  freed_part(FREE_TYPE, 0);
  freed_part(FREE_OP, 0);
  freed_part(FREE_OP, 1);
  /* Open MPI 4.1.4 alone crashes (SIGSEGV in mca_pml_ob1_isend from
   * NBC_Progress) when the communicator of its own pending MPI_Iallreduce or
   * MPI_Ibarrier is freed before MPI_Wait: these cases run under duct only
   * (duct finishes such calls inside MPI_Comm_free, which every rank calls). */
  if (duct_mode) {
    duct_only = 1;
    freed_part(FREE_COMM, 0);
    freed_part(FREE_COMM, 1);
    duct_only = 0;
  }
  unsigned long long* all = malloc(sizeof(unsigned long long) * (size_t)wsize);
  PMPI_Gather(&digest, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (wrank == 0) {
    unsigned long long d = 1469598103934665603ull;
    for (int i = 0; i < wsize; ++i) d = (d ^ all[i]) * 1099511628211ull;
    printf("digest %016llx\n", d);
    printf(failures ? "FAILED\n" : "PASS\n");
  }
  free(all);
  MPI_Finalize();
  return failures ? 1 : 0;
}
