/*
 * duct: CUDA-aware collectives for MPI programs.
 *
 * Call DUCT_Allreduce(...) where you would call MPI_Allreduce(...), with the
 * same arguments, on any intracommunicator you already have. Buffers may be
 * host memory (pageable or pinned) or CUDA device memory; duct finds out
 * which itself. It works on top of an MPI and a UCX that are not
 * CUDA-aware. No initialization call is needed: duct sets itself up on the
 * first call on each communicator (a collective step, like the call itself)
 * and releases everything at MPI_Finalize.
 *
 * Memory kinds. A pointer argument documented as "host or device" may be
 *  - host memory: malloc/new, stack, pinned (cudaMallocHost,
 *    cudaHostRegister) or CUDA managed memory, or
 *  - CUDA device memory (cudaMalloc, cudaMallocAsync, ...) on the calling
 *    thread's current device.
 * Send and receive buffers may be of different kinds, and different ranks may
 * pass different kinds. Device data must be ready when the call starts
 * (synchronize the stream that wrote it), as with any CUDA-aware MPI; when
 * the call returns, the result is in the receive buffer.
 *
 * Errors. Every function returns MPI_SUCCESS or an MPI error code, after
 * invoking the communicator's error handler (MPI_Comm_call_errhandler), so
 * MPI_ERRORS_ARE_FATAL aborts with the message and MPI_ERRORS_RETURN returns
 * the code. The code's class is one of duct's classes (DUCT_Error_class) and
 * MPI_Error_string(code) names the rank, the call, the argument and the value,
 * e.g. "DUCT_Allreduce on rank 2: count = -1 is negative". Errors with
 * MPI_COMM_NULL are raised on MPI_COMM_WORLD (MPI-3.1 §8.3; MPI_COMM_SELF with
 * an MPI-4 library). When duct hands a call to the MPI library (below), MPI's
 * own error codes are returned unchanged. A refused call writes nothing.
 *
 * Every collective checks, before moving anything, and refuses with:
 *   DUCT_ERRCLASS_COMM         comm is MPI_COMM_NULL or not a communicator
 *   DUCT_ERRCLASS_COUNT        a negative count (or counts[i]); send and
 *                              receive sizes that differ on one rank
 *   DUCT_ERRCLASS_OVERFLOW     counts, totals or displacements whose bytes
 *                              exceed 2^60 (no address space holds them) or
 *                              overflow MPI_Count / MPI_Aint
 *   DUCT_ERRCLASS_TYPE         MPI_DATATYPE_NULL or an invalid datatype
 *   DUCT_ERRCLASS_UNCOMMITTED  a derived datatype not yet committed
 *   DUCT_ERRCLASS_OP           MPI_OP_NULL
 *   DUCT_ERRCLASS_OP_TYPE      an op MPI does not define for the datatype
 *                              (MPI_BAND on MPI_FLOAT, MPI_SUM on MPI_C_BOOL)
 *   DUCT_ERRCLASS_BUFFER       NULL where data is moved (NULL is MPI_BOTTOM,
 *                              and allowed, with datatypes whose data lies at
 *                              absolute addresses)
 *   DUCT_ERRCLASS_IN_PLACE     MPI_IN_PLACE where MPI does not allow it
 *   DUCT_ERRCLASS_OVERLAP      send and receive buffers that overlap
 *   DUCT_ERRCLASS_ROOT         a root outside 0..size-1
 *   DUCT_ERRCLASS_ARG          a NULL counts or displacements array
 *   DUCT_ERRCLASS_UNMAPPED     a pointer that is neither device memory of
 *                              this process nor mapped host memory, such as
 *                              another process's device pointer (checked
 *                              when a CUDA device is present, or always
 *                              under DUCT_CHECK=1)
 *   DUCT_ERRCLASS_NOT_SUPPORTED device memory of another than the current
 *                              device; device buffers on intercommunicators
 * and while running:
 *   DUCT_ERRCLASS_MISMATCH     ranks called with different arguments
 *                              (always checked under DUCT_CHECK=1, where
 *                              every rank gets the same message naming the
 *                              ranks that differ; otherwise found when a
 *                              message of the wrong size arrives)
 *   DUCT_ERRCLASS_TIMEOUT      no progress for DUCT_TIMEOUT seconds; the
 *                              message names what the call waits for (on
 *                              the first call on a communicator possibly
 *                              "creating duct's context ...: waiting for
 *                              ranks ... to arrive")
 *   DUCT_ERRCLASS_PEER_FAILED  a peer process died or closed its connection
 *   DUCT_ERRCLASS_REVOKED      (DUCT_FT=1) the communicator was revoked:
 *                              by DUCT_Comm_revoke on some rank, or because
 *                              a rank found a failure; see "fault
 *                              tolerance" below
 *   DUCT_ERRCLASS_CUDA / _UCX / _MPI / _HWLOC / _NO_MEMORY / _TRUNCATE
 *                              the named layer failed; the message says how
 * After an error while running (not after a refused argument or a
 * DUCT_CHECK mismatch: nothing has moved then), the communicator returns
 * that error at once from every later duct call: free it and use another
 * (under DUCT_FT=1: DUCT_Comm_shrink it).
 *
 * What duct does not serve natively (derived datatypes, MPI_WCHAR,
 * MPI_OFFSET, MPI_LONG_DOUBLE, complex and pair types, MPI_LOGICAL,
 * user-defined ops, MINLOC/MAXLOC, intercommunicators) is
 * still answered correctly: duct stages device buffers to host, calls the
 * PMPI_ collective, and copies the result back (logged once at info level).
 *
 * Environment: DUCT_* variables (docs/env.md, `duct-info -c`).
 */
#ifndef DUCT_DUCT_H
#define DUCT_DUCT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header belongs to (semantic versioning; the shared
 * library's soname is libduct.so.0.MINOR while MAJOR is 0, libduct.so.MAJOR
 * after). DUCT_VERSION orders versions: 10000 * MAJOR + 100 * MINOR + PATCH,
 * so `#if DUCT_VERSION >= 100` means 0.1.0 or later. DUCT_Get_version()
 * gives the library's at run time. */
#define DUCT_VERSION_MAJOR 0
#define DUCT_VERSION_MINOR 1
#define DUCT_VERSION_PATCH 0
#define DUCT_VERSION (DUCT_VERSION_MAJOR * 10000 + DUCT_VERSION_MINOR * 100 + DUCT_VERSION_PATCH)

/* ---- datatypes ---------------------------------------------------------- */

/*
 * IEEE 754 binary16 and bfloat16 elements, as committed MPI datatypes of two
 * bytes that duct exports. Valid with MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX;
 * duct computes in float and rounds to nearest even. The MPI library itself
 * knows them only as two bytes (it cannot reduce them). Defined after
 * MPI_Init; MPI_DATATYPE_NULL before MPI_Init or after MPI_Finalize. Do not
 * free them.
 */
MPI_Datatype DUCT_Type_float16(void);
MPI_Datatype DUCT_Type_bfloat16(void);
#define DUCT_FLOAT16 (DUCT_Type_float16())
#define DUCT_BFLOAT16 (DUCT_Type_bfloat16())

/* ---- errors -------------------------------------------------------------- */

/* duct's error classes. DUCT_Error_class turns one into the MPI error class
 * number the MPI library assigned to it (MPI_Add_error_class), to compare
 * with MPI_Error_class(code, &cls). */
typedef enum {
  DUCT_ERRCLASS_ARG = 1,      /* an argument that fits no narrower class */
  DUCT_ERRCLASS_BUFFER,       /* null or unusable buffer pointer */
  DUCT_ERRCLASS_COUNT,        /* negative count, or send and receive sizes that disagree */
  DUCT_ERRCLASS_TYPE,         /* MPI_DATATYPE_NULL or an invalid datatype handle */
  DUCT_ERRCLASS_OP,           /* MPI_OP_NULL */
  DUCT_ERRCLASS_COMM,         /* MPI_COMM_NULL or unusable communicator */
  DUCT_ERRCLASS_ROOT,         /* root out of range */
  DUCT_ERRCLASS_IN_PLACE,     /* MPI_IN_PLACE where MPI forbids it */
  DUCT_ERRCLASS_OVERLAP,      /* send and receive buffers overlap (use MPI_IN_PLACE) */
  DUCT_ERRCLASS_OVERFLOW,     /* counts or displacements whose bytes overflow the address space */
  DUCT_ERRCLASS_OP_TYPE,      /* an op MPI does not define for the datatype (MPI_BAND on MPI_FLOAT) */
  DUCT_ERRCLASS_UNCOMMITTED,  /* a derived datatype that was never committed (MPI_Type_commit) */
  DUCT_ERRCLASS_UNMAPPED,     /* a pointer that is not memory of this process, e.g. another process's
                                 device pointer (checked when a CUDA device is present or DUCT_CHECK=1) */
  DUCT_ERRCLASS_CONFIG,       /* invalid or inconsistent DUCT_* environment variable */
  DUCT_ERRCLASS_NOT_SUPPORTED,/* valid MPI that duct cannot serve; the message says why */
  DUCT_ERRCLASS_CUDA,         /* a CUDA call failed */
  DUCT_ERRCLASS_UCX,          /* a UCX call failed */
  DUCT_ERRCLASS_MPI,          /* an MPI call made by duct failed */
  DUCT_ERRCLASS_HWLOC,        /* an hwloc call failed */
  DUCT_ERRCLASS_NO_MEMORY,    /* an allocation failed */
  DUCT_ERRCLASS_TRUNCATE,     /* a message longer than expected arrived */
  DUCT_ERRCLASS_TIMEOUT,      /* no progress within DUCT_TIMEOUT */
  DUCT_ERRCLASS_MISMATCH,     /* ranks called with different arguments */
  DUCT_ERRCLASS_PEER_FAILED,  /* a peer process failed */
  DUCT_ERRCLASS_INTERNAL,     /* a bug in duct: please report it */
  DUCT_ERRCLASS_REVOKED       /* the communicator was revoked (DUCT_Comm_revoke, or a failure found by
                                 another rank under DUCT_FT=1): shrink it */
} DUCT_Errclass;

/* The MPI error class number of `which`, or MPI_ERR_UNKNOWN when MPI is not
 * initialized. */
int DUCT_Error_class(DUCT_Errclass which);

/* Reports a count error that a caller's wrapper found before calling duct,
 * as the C++ layer (duct.hpp) does for a send and a receive span of
 * different lengths: raises DUCT_ERRCLASS_COUNT through `comm`'s error
 * handler (on MPI_COMM_NULL as the other calls do: see the top), with the message
 * "CALL on rank R: send has SEND elements but recv has RECV (they must be
 * equal)", and returns the error code (MPI_Error_string gives the message).
 * `call` names the caller's function (NULL reads "duct"); counts are in
 * elements. Communicates nothing; returns MPI_SUCCESS when the counts are
 * equal. */
int DUCT_Report_count_mismatch(const char *call, MPI_Count sendcount, MPI_Count recvcount, MPI_Comm comm);

/* ---- collectives --------------------------------------------------------- */

/*
 * DUCT_Allreduce: combine `count` elements from every rank of `comm` with
 * `op` and leave the result in `recvbuf` on every rank (MPI-4.0 §6.9.6).
 *
 *   sendbuf   host or device; `count` elements of `datatype`, or MPI_IN_PLACE
 *             to take the input from `recvbuf`.
 *   recvbuf   host or device; `count` elements of `datatype`; receives the
 *             result. Must not overlap `sendbuf`.
 *   count     number of elements (not bytes), >= 0. Equal on every rank.
 *             0 returns at once without communicating.
 *   datatype  natively: MPI_INT8_T..MPI_UINT64_T and the C integer types
 *             (MPI_INT, MPI_LONG, MPI_UNSIGNED, MPI_SIGNED_CHAR, ...),
 *             MPI_CHAR, MPI_AINT, MPI_COUNT (as the integer of their size,
 *             as Open MPI and MPICH reduce them), MPI_FLOAT, MPI_DOUBLE,
 *             MPI_LONG_DOUBLE, DUCT_FLOAT16, DUCT_BFLOAT16, MPI_C_BOOL,
 *             MPI_CXX_BOOL, MPI_BYTE; the complex types MPI_C_FLOAT_COMPLEX
 *             (= MPI_C_COMPLEX), MPI_C_DOUBLE_COMPLEX,
 *             MPI_C_LONG_DOUBLE_COMPLEX and their MPI_CXX_ twins; the pair
 *             types MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT,
 *             MPI_SHORT_INT, MPI_LONG_DOUBLE_INT; and the Fortran MPI_REAL,
 *             MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_REALn, MPI_INTEGERn,
 *             MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_COMPLEXn, MPI_LOGICAL,
 *             MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER (by the sizes
 *             and layouts the MPI library reports; no logical ops on Fortran
 *             integers). Long double types have no device kernel: on device
 *             buffers duct reduces them on host copies. `duct-info -t` lists
 *             every datatype x op. Any other committed datatype (derived
 *             types, MPI_WCHAR, MPI_OFFSET) goes through the MPI library.
 *             The padding bytes inside pair elements (4 in MPI_DOUBLE_INT)
 *             of recvbuf are not preserved: they receive an input's padding.
 *   op        natively: MPI_SUM, MPI_PROD (integers, floats, complex),
 *             MPI_MIN, MPI_MAX (integers and floats), MPI_LAND, MPI_LOR,
 *             MPI_LXOR (C integers, MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL),
 *             MPI_BAND, MPI_BOR, MPI_BXOR (integers, MPI_BYTE), MPI_MINLOC,
 *             MPI_MAXLOC (pair types; equal values keep the smaller index,
 *             MPI-4.0 §6.9.4); any other op through the MPI library. Complex
 *             products follow C11 Annex G (as the MPI library, compiled C,
 *             computes them). MPI does not define MIN, MAX, MINLOC or MAXLOC
 *             on NaN; in duct a NaN wins (for pairs, the smaller index among
 *             NaN values), the same on every rank.
 *   comm      any intracommunicator (MPI_COMM_WORLD, splits, dups, any size).
 *
 * Algorithms: recursive doubling for small vectors (Thakur, Rabenseifner,
 * Gropp, IJHPCA 2005) and a pipelined ring reduce-scatter + allgather for
 * large ones (Patarasuk, Yuan, JPDC 2009); DUCT_TUNE overrides the choice.
 * The reduction order depends only on the communicator size, the count and
 * the algorithm, so results are the same bits on every rank and every run.
 * Integer sums and products wrap around.
 *
 * Errors (see the list at the top): COMM, COUNT (count < 0), OVERFLOW,
 * TYPE, UNCOMMITTED, OP (MPI_OP_NULL), OP_TYPE, BUFFER (NULL buffer with
 * count > 0), IN_PLACE (recvbuf == MPI_IN_PLACE), OVERLAP, UNMAPPED,
 * NOT_SUPPORTED, and while running MISMATCH, TIMEOUT, PEER_FAILED and the
 * transport classes.
 */
int DUCT_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm);

/* DUCT_Allreduce with a large count (MPI-4 "_c" convention): `count` may
 * exceed INT_MAX. Otherwise identical. */
int DUCT_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm);

/*
 * The other collectives. Each has MPI's signature and semantics (MPI-4.0
 * chapter 6), so swapping the MPI_ prefix for DUCT_ is enough, and a large
 * count form (suffix _c, MPI_Count counts and MPI_Aint displacements, as in
 * MPI-4). All of them:
 *
 *  - take host or device memory for every buffer (see the top of this file);
 *    send and receive buffers may be of different kinds, and so may ranks;
 *  - count in elements of the datatype, displacements in extents of it;
 *  - accept any intracommunicator and any number of ranks; intercommunicators
 *    go to the MPI library;
 *  - move the data of any datatype natively: contiguous ones (MPI_CHAR,
 *    pair types, ...) as the bytes they are, derived ones packed with
 *    MPI_Pack into host memory and unpacked at the receiver (MPI only asks
 *    that type signatures match, so ranks may mix datatypes). Reductions
 *    take the datatypes and ops listed for DUCT_Allreduce natively, others
 *    through the MPI library;
 *  - allow MPI_IN_PLACE exactly where MPI does (each function says where);
 *  - check their arguments as listed at the top of this file (root-only
 *    arguments at the root only, as MPI defines them).
 *
 * Algorithms (each in lib/coll/<collective>/<algorithm>.cpp, chosen by size,
 * communicator size and node count; DUCT_TUNE or DUCT_Tune overrides; see
 * `duct-info -a`): flat shared memory on one node for small messages;
 * binomial trees, recursive doubling/halving and Bruck's algorithms for small
 * messages; rings, scatter + allgather and pairwise exchange for large ones
 * (Thakur, Rabenseifner, Gropp, IJHPCA 2005; Bruck et al., IEEE TPDS 1997;
 * Patarasuk, Yuan, JPDC 2009).
 */

/* Broadcast `count` elements of `buffer` from `root` to every rank.
 * buffer: host or device. */
int DUCT_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int DUCT_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm);

/* Combine `count` elements from every rank with `op`; the result lands in
 * `recvbuf` at `root` (recvbuf is ignored elsewhere and may be NULL there).
 * MPI_IN_PLACE as sendbuf at the root only. */
int DUCT_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm);
int DUCT_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                  MPI_Comm comm);

/* Every rank's `sendcount` elements, gathered in rank order into every
 * rank's `recvbuf` (blocks of `recvcount` elements). MPI_IN_PLACE as sendbuf:
 * this rank's block is already at its place in recvbuf. */
int DUCT_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm);
int DUCT_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/* Allgather with `recvcounts[i]` elements from rank i placed at
 * `displs[i]` extents into recvbuf (any order). MPI_IN_PLACE as sendbuf. */
int DUCT_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int DUCT_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm);

/* Reduce n blocks of `recvcount` elements (n = communicator size) and leave
 * block i on rank i. MPI_IN_PLACE as sendbuf: the input is in recvbuf
 * (n * recvcount elements), the result at its start. */
int DUCT_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm);
int DUCT_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm);

/* Reduce-scatter with blocks of `recvcounts[i]` elements, consecutive in the
 * input; rank i gets block i. MPI_IN_PLACE as sendbuf (input in recvbuf). */
int DUCT_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm);
int DUCT_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm);

/* Block j of every rank's sendbuf (`sendcount` elements) goes to rank j,
 * landing at block i of its recvbuf for sender i. MPI_IN_PLACE as sendbuf:
 * the data is taken from recvbuf and replaced (sendcount/sendtype ignored). */
int DUCT_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm);
int DUCT_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/* Alltoall with per-peer counts and displacements (in extents). MPI_IN_PLACE
 * as sendbuf: the data is taken from recvbuf per recvcounts/rdispls. */
int DUCT_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int DUCT_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     MPI_Datatype recvtype, MPI_Comm comm);

/* Every rank's `sendcount` elements gathered in rank order at `root`
 * (recv arguments are significant at the root only). MPI_IN_PLACE as sendbuf
 * at the root only: its block is already in place. */
int DUCT_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm);
int DUCT_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);

/* Gather with per-rank counts and displacements at the root. */
int DUCT_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int DUCT_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm);

/* Block i of the root's sendbuf (`sendcount` elements) goes to rank i (send
 * arguments are significant at the root only). MPI_IN_PLACE as recvbuf at
 * the root only: its own block stays in sendbuf. */
int DUCT_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm);
int DUCT_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);

/* Scatter with per-rank counts and displacements at the root. */
int DUCT_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int DUCT_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                    MPI_Comm comm);

/* Return once every rank of `comm` has called it. */
int DUCT_Barrier(MPI_Comm comm);

/* ---- nonblocking collectives ------------------------------------------------ */

/* DUCT_Iallreduce, DUCT_Ibcast, ... take the arguments of the blocking call
 * plus `request` (where the request is stored; not NULL) and return at once
 * with the collective started: MPI-3 nonblocking collectives (MPI-4.0
 * §6.12). Any number may be outstanding on a communicator; every rank must
 * start a communicator's collectives (blocking and nonblocking) in the same
 * order; they may be completed in any order. Buffers are those of the
 * blocking call (host or device, same memory kinds); the send buffer must not
 * be written and the receive buffer not read until the request completes.
 *
 * The request is an MPI request (a generalized request, MPI-4.0 §13.2):
 * complete it with MPI_Wait, MPI_Test, MPI_Waitall (mixed with other
 * requests), ... or MPI_Request_free, or with DUCT_Wait/DUCT_Test/
 * DUCT_Waitall/DUCT_Testall below. Completion status: MPI_SOURCE and MPI_TAG
 * are MPI_UNDEFINED, no elements.
 *
 * Progress. A collective advances whenever duct runs: in DUCT_Wait & co.,
 * in any blocking duct collective, and, with Open MPI, inside MPI_Wait/
 * MPI_Test and every other MPI call that polls (duct registers with Open
 * MPI's progress loop). While the application computes without calling MPI
 * or duct, nothing advances unless a message fits the eager size; call
 * MPI_Test/DUCT_Test now and then in long computations (duct-bench's overlap
 * mode measures how often is enough). A communicator's collectives run one
 * after another in the order they were started; collectives of different
 * communicators advance together.
 *
 * Errors. Argument errors are raised by the starting call, as by the
 * blocking one (no request is made). Errors while running are reported by
 * the call that completes the request: DUCT_Wait/DUCT_Test raise them on the
 * collective's communicator; MPI_Wait returns duct's error code (same
 * class and message) through the error handler MPI uses for generalized
 * requests (MPI_COMM_WORLD's with Open MPI). Limits: the first duct call on
 * a communicator sets up its context collectively and waits for every rank
 * to make a duct call on it (DUCT_TIMEOUT applies); under DUCT_CHECK=1 the
 * start of each call waits for every rank's comparison. Reductions and
 * intercommunicators duct hands to the MPI library (see above) use its
 * nonblocking collective. */
int DUCT_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request *request);
int DUCT_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                      MPI_Comm comm, MPI_Request *request);
int DUCT_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *request);
int DUCT_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                   MPI_Comm comm, MPI_Request *request);
int DUCT_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request);
int DUCT_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Request *request);
int DUCT_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, MPI_Request *request);
int DUCT_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request);
int DUCT_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request);
int DUCT_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request *request);
int DUCT_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int DUCT_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int DUCT_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int DUCT_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request);
int DUCT_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int DUCT_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int DUCT_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request);
int DUCT_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int DUCT_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int DUCT_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int DUCT_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int DUCT_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                    MPI_Comm comm, MPI_Request *request);
int DUCT_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int DUCT_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int DUCT_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request);
int DUCT_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Request *request);
int DUCT_Ibarrier(MPI_Comm comm, MPI_Request *request);

/* Complete requests as MPI_Wait, MPI_Test, MPI_Waitall and MPI_Testall do
 * (same arguments; MPI_STATUS(ES)_IGNORE allowed), advancing duct's
 * collectives while they wait, for requests of DUCT_I* calls and any other
 * MPI request. A failed duct collective is raised on its communicator with
 * duct's message (DUCT_Wait under DUCT_TIMEOUT: DUCT_ERRCLASS_TIMEOUT naming
 * what it waits for); SIGUSR1 prints what DUCT_Wait waits for. Errors:
 * DUCT_ERRCLASS_ARG for NULL arguments or a negative count (raised on
 * MPI_COMM_WORLD / MPI_COMM_SELF); MPI's own codes for other requests. */
int DUCT_Wait(MPI_Request *request, MPI_Status *status);
int DUCT_Test(MPI_Request *request, int *flag, MPI_Status *status);
int DUCT_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int DUCT_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);

/* ---- selection ------------------------------------------------------------- */

/* Replace the algorithm selection rules for the collectives named in `rules`
 * (the DUCT_TUNE format, e.g. "bcast:0-inf:pipelined_chain"; "" restores
 * the rules of the start: the rules file's (DUCT_TUNE_FILE, duct-tune)
 * before the built-in ones, without DUCT_TUNE's). Every rank must pick the same algorithm, so call it
 * with the same string on every rank, between collectives (like a
 * collective, though it does not communicate). Errors: DUCT_ERRCLASS_CONFIG
 * with the reason; raised on MPI_COMM_WORLD. */
int DUCT_Tune(const char *rules);

/* ---- fault tolerance (DUCT_FT=1) ------------------------------------------ */

/*
 * Surviving a failed rank, modelled on MPI's ULFM chapter (MPIX_Comm_revoke,
 * MPIX_Comm_agree, MPIX_Comm_shrink; Bland et al., IJHPCA 2013) and built on
 * the MPI library the site has. Opt-in: set DUCT_FT=1 on every rank before
 * its first duct call on a communicator, and launch so that the MPI keeps
 * the survivors running (duct-run --ft: Open MPI's `mpirun
 * --enable-recovery`; under SLURM `srun --no-kill --kill-on-bad-exit=0`).
 * Set MPI_ERRORS_RETURN on the communicators (or handle the errors): with
 * the default MPI_ERRORS_ARE_FATAL the first failure ends the process.
 *
 * Under DUCT_FT=1 a collective that finds a dead or silent rank returns
 * DUCT_ERRCLASS_PEER_FAILED (or _TIMEOUT) and revokes the communicator: every
 * other survivor's pending duct call on it returns DUCT_ERRCLASS_REVOKED
 * within a few hundred polls of its wait, and every later call at once.
 * Detection: a rank on the same machine is found dead by its pid within
 * 10 ms of a wait; a rank on another machine when the transport says so
 * (UCX) or after DUCT_TIMEOUT (DUCT_FT_TIMEOUT when DUCT_TIMEOUT is 0) of
 * silence. Cost when nothing fails: one MPI_Comm_idup per communicator, and
 * one MPI_Test of the control receives per collective and per 256 polls of
 * a wait.
 *
 * Limits: host buffers over the shm, ucx and mpi channels (the device
 * engine and cuda_ipc paths are not yet covered); nonblocking and
 * stream-ordered collectives end with the error but do not look for
 * revocations; a rank that dies inside the MPI_Comm_create_group of
 * DUCT_Comm_shrink (after the agreement) makes the shrink hang in the MPI
 * library (Open MPI 4.1 cannot abandon it).
 */

/* Revoke `comm` for every rank: every pending and later duct call on it, on
 * every survivor, returns DUCT_ERRCLASS_REVOKED. Local and nonblocking: the
 * revocation goes to every rank as a message and is forwarded once by each
 * rank that receives it (n-1 small messages per rank), so it arrives even
 * if this rank dies right after. A rank learns of it in its next duct call
 * on `comm` (or DUCT_Comm_is_revoked). Errors: COMM (not a communicator,
 * or no duct call has run on it yet), NOT_SUPPORTED (DUCT_FT is off). */
int DUCT_Comm_revoke(MPI_Comm comm);

/* *flag = 1 when `comm` is revoked as far as this rank knows (it looks at
 * the revocations that arrived), else 0. Errors: ARG (flag NULL), COMM,
 * NOT_SUPPORTED (DUCT_FT is off). */
int DUCT_Comm_is_revoked(MPI_Comm comm, int *flag);

/* *failed = a new group (free it with MPI_Group_free) of the ranks of `comm`
 * this process knows to have failed, in rank order (MPI_GROUP_EMPTY, not to
 * be freed, when none). Right after DUCT_Comm_agree it is the agreed set on
 * every survivor, until a later wait finds another failure. Errors: ARG,
 * COMM, NOT_SUPPORTED (DUCT_FT is off), MPI. */
int DUCT_Comm_get_failed(MPI_Comm comm, MPI_Group *failed);

/* Fault-tolerant agreement, collective over the survivors of `comm` (also
 * when it is revoked). `flag`: in, this rank's value; out, the bitwise AND
 * of the survivors' values, the same on every survivor, as is the failed
 * set it agrees on (DUCT_Comm_get_failed), even when ranks fail during it.
 * Algorithm: a rotating-coordinator consensus with the decision flooded to
 * every survivor (Chandra, Toueg, JACM 1996): the lowest live rank gathers
 * every live rank's value and failed set, decides and sends the decision,
 * which each survivor forwards before returning; 2(n-1) messages when
 * nothing fails, n(n-1) with the forwarding. A rank on another machine
 * silent for DUCT_FT_TIMEOUT (twice that for the coordinator) is taken as
 * failed. Errors: ARG, COMM, NOT_SUPPORTED (DUCT_FT is off). */
int DUCT_Comm_agree(MPI_Comm comm, int *flag);

/* A new communicator of the survivors of `comm`, in rank order, with
 * `comm`'s error handler and duct's context already set up on it;
 * collective over the survivors (also when `comm` is revoked). It agrees on
 * the failed set (DUCT_Comm_agree), then MPI_Comm_create_group over the
 * survivors' group. `comm` stays revoked: free it. *newcomm is
 * MPI_COMM_NULL on error. Errors: ARG (newcomm NULL), COMM, NOT_SUPPORTED
 * (DUCT_FT is off), REVOKED (the others took this rank as failed), MPI,
 * and the errors of setting duct up on the new communicator. */
int DUCT_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);

/* ---- queries ------------------------------------------------------------- */

/* 1 when this process can use a CUDA device (driver, device, and duct built
 * with CUDA), else 0. Does not create a CUDA context. */
int DUCT_Query_cuda_support(void);

/* duct's version as "major.minor.patch (cuda yes|no)"; static storage. */
const char *DUCT_Version_string(void);

/* The version of the libduct this process runs (which may differ from the
 * DUCT_VERSION_* it was compiled with, if another libduct is found at run
 * time). major, minor, patch: where to store the numbers; any may be NULL.
 * Callable at any time, before MPI_Init and after MPI_Finalize (like
 * MPI_Get_version). Returns MPI_SUCCESS. */
int DUCT_Get_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif /* DUCT_DUCT_H */
