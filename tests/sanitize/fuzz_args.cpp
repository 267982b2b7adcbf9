// duct-fuzz: libFuzzer over the argument validation of every DUCT_* call.
//
// Each input is one call: which collective (and whether the large-count
// "_c" form), which buffer each pointer argument is (a valid buffer, NULL,
// MPI_IN_PLACE, an unmapped page, one overlapping the other), datatypes,
// op, communicator (a duplicate of MPI_COMM_WORLD, MPI_COMM_SELF's, or
// MPI_COMM_NULL), root, counts and displacements. It runs in a singleton
// MPI job (one rank: everyone is the root), with MPI_ERRORS_RETURN.
//
// Counts and displacements are either small (the 64 KiB buffers hold any
// call made of them, so a valid call really runs) or beyond 2^60 (which
// duct must refuse: nothing larger fits an address space). So any call duct
// accepts is a correct call, and AddressSanitizer stops on any access
// outside the buffers. Each call must return MPI_SUCCESS or an error code
// whose MPI_Error_string names the call and the rank, and a refused call
// must leave the receive buffer as it was.
//
//   duct-fuzz [libFuzzer options] CORPUS...   fuzz (CI: -max_total_time=60)
//   duct-fuzz --check FILE...                 run the seeds of tests/fuzz/
//                                             corpus, each naming the duct
//                                             error class it must get
//   duct-fuzz --write-corpus DIR              write those seeds (used once to
//                                             make tests/fuzz/corpus)
#include <mpi.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "duct/duct.h"

namespace {

// ---- the input ------------------------------------------------------------------

enum Call : std::uint8_t {
  kAllreduce, kReduce, kBcast, kAllgather, kAllgatherv, kReduceScatterBlock, kReduceScatter, kAlltoall,
  kAlltoallv, kGather, kGatherv, kScatter, kScatterv, kBarrier, kCalls
};
enum Ptr : std::uint8_t { kValid, kNull, kInPlace, kUnmapped, kOverlap, kSame, kPtrs };

struct Input {
  std::uint8_t call, large, send, recv, type, rtype, op, comm;
  std::int32_t root;
  std::int8_t expect;  // seeds: the DUCT_Errclass expected (0: success); ignored when fuzzing
  std::uint8_t counts_null, displs_null, pad;
  std::int64_t count, rcount;
  std::int64_t counts, displs;  // the one entry of each count / displacement array (1 rank)
};
static_assert(sizeof(Input) == 48);

constexpr std::size_t kBuf = 64 << 10;  // usable bytes on either side of a buffer pointer
constexpr std::int64_t kSmall = 64;

// Counts and displacements: small values stay (every buffer holds what
// they describe, displacements may be negative: buffers start 64 KiB into
// their allocation). Others must be refused, so they become values no
// address space holds: beyond +-2^60 in the large-count forms; negative
// counts in the int forms (whose INT_MAX is a legal count of a 2 GiB
// buffer) and small displacements there.
std::int64_t shape_large(std::int64_t v) {
  if (v >= -8 && v <= kSmall) return v;
  const std::int64_t huge = (std::int64_t{1} << 60) + ((v < 0 ? -(v + 1) : v) & ((std::int64_t{1} << 62) - 1));
  return v < 0 ? -huge : huge;
}
int shape_int_count(std::int64_t v) {
  if (v >= -8 && v <= kSmall) return static_cast<int>(v);
  return -1 - static_cast<int>(v & 0x7fffffff);
}
int shape_int_displ(std::int64_t v) {
  if (v >= -8 && v <= kSmall) return static_cast<int>(v);
  return static_cast<int>(v % (kSmall + 9)) - 8 + (v < 0 ? static_cast<int>(kSmall) + 8 : 0);
}

// ---- what calls are made of -----------------------------------------------------

struct World {
  MPI_Comm dup = MPI_COMM_NULL, self = MPI_COMM_NULL;
  std::vector<MPI_Datatype> types;
  std::vector<MPI_Op> ops;
  char* send = nullptr;
  char* recv = nullptr;
  void* unmapped = nullptr;
};
World g;

void noop_op(void*, void*, int*, MPI_Datatype*) {}

void setup() {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // MPI_COMM_NULL errors land here
  MPI_Comm_dup(MPI_COMM_WORLD, &g.dup);
  MPI_Comm_set_errhandler(g.dup, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_SELF, &g.self);
  MPI_Comm_set_errhandler(g.self, MPI_ERRORS_RETURN);
  MPI_Datatype vec, contig, uncommitted;
  MPI_Type_vector(2, 1, 3, MPI_FLOAT, &vec);  // holes: packed paths
  MPI_Type_commit(&vec);
  MPI_Type_contiguous(3, MPI_INT, &contig);
  MPI_Type_commit(&contig);
  MPI_Type_contiguous(2, MPI_DOUBLE, &uncommitted);  // never committed
  g.types = {MPI_DATATYPE_NULL, MPI_FLOAT, MPI_DOUBLE, MPI_INT, MPI_BYTE, MPI_C_BOOL, MPI_INT8_T, MPI_UINT64_T,
             DUCT_FLOAT16, DUCT_BFLOAT16, MPI_CHAR, MPI_2INT, vec, contig, uncommitted, MPI_UINT16_T};
  MPI_Op user;
  MPI_Op_create(&noop_op, 1, &user);
  g.ops = {MPI_OP_NULL, MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, MPI_LXOR,
           MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_REPLACE, user};
  g.send = static_cast<char*>(std::malloc(2 * kBuf)) + kBuf;
  g.recv = static_cast<char*>(std::malloc(2 * kBuf)) + kBuf;
  g.unmapped = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

void* pointer(std::uint8_t sel, bool is_send) {
  char* own = is_send ? g.send : g.recv;
  char* other = is_send ? g.recv : g.send;
  switch (sel % kPtrs) {
    case kValid: return own;
    case kNull: return nullptr;
    case kInPlace: return MPI_IN_PLACE;
    case kUnmapped: return g.unmapped;
    case kOverlap: return other + 8;
    case kSame: return other;
  }
  return own;
}

MPI_Comm comm_of(std::uint8_t sel) {
  switch (sel % 3) {
    case 0: return g.dup;
    case 1: return g.self;
    default: return MPI_COMM_NULL;
  }
}

// ---- one call -------------------------------------------------------------------------

const char* call_name(std::uint8_t c, bool large) {
  static const char* const names[] = {"DUCT_Allreduce", "DUCT_Reduce", "DUCT_Bcast", "DUCT_Allgather",
                                      "DUCT_Allgatherv", "DUCT_Reduce_scatter_block", "DUCT_Reduce_scatter",
                                      "DUCT_Alltoall", "DUCT_Alltoallv", "DUCT_Gather", "DUCT_Gatherv",
                                      "DUCT_Scatter", "DUCT_Scatterv", "DUCT_Barrier"};
  static std::string buf;
  buf = names[c % kCalls];
  if (large && c % kCalls != kBarrier) buf += "_c";
  return buf.c_str();
}

int invoke(const Input& in) {
  const bool large = in.large & 1;
  void* s = pointer(in.send, true);
  void* r = pointer(in.recv, false);
  MPI_Datatype t = g.types[in.type % g.types.size()];
  MPI_Datatype rt = g.types[in.rtype % g.types.size()];
  MPI_Op op = g.ops[in.op % g.ops.size()];
  MPI_Comm c = comm_of(in.comm);
  const std::int64_t n = shape_large(in.count), rn = shape_large(in.rcount);
  // The int forms.
  const int ni = shape_int_count(in.count), rni = shape_int_count(in.rcount);
  int ci = shape_int_count(in.counts), di = shape_int_displ(in.displs);
  MPI_Count cc = shape_large(in.counts);
  MPI_Aint dc = static_cast<MPI_Aint>(shape_large(in.displs));
  const int* counts = in.counts_null & 1 ? nullptr : &ci;
  const int* displs = in.displs_null & 1 ? nullptr : &di;
  const MPI_Count* counts_c = in.counts_null & 1 ? nullptr : &cc;
  const MPI_Aint* displs_c = in.displs_null & 1 ? nullptr : &dc;
  const int root = in.root;
  switch (in.call % kCalls) {
    case kAllreduce:
      return large ? DUCT_Allreduce_c(s, r, n, t, op, c) : DUCT_Allreduce(s, r, ni, t, op, c);
    case kReduce:
      return large ? DUCT_Reduce_c(s, r, n, t, op, root, c) : DUCT_Reduce(s, r, ni, t, op, root, c);
    case kBcast:
      return large ? DUCT_Bcast_c(r, n, t, root, c) : DUCT_Bcast(r, ni, t, root, c);
    case kAllgather:
      return large ? DUCT_Allgather_c(s, n, t, r, rn, rt, c) : DUCT_Allgather(s, ni, t, r, rni, rt, c);
    case kAllgatherv:
      return large ? DUCT_Allgatherv_c(s, n, t, r, counts_c, displs_c, rt, c)
                   : DUCT_Allgatherv(s, ni, t, r, counts, displs, rt, c);
    case kReduceScatterBlock:
      return large ? DUCT_Reduce_scatter_block_c(s, r, n, t, op, c) : DUCT_Reduce_scatter_block(s, r, ni, t, op, c);
    case kReduceScatter:
      return large ? DUCT_Reduce_scatter_c(s, r, counts_c, t, op, c) : DUCT_Reduce_scatter(s, r, counts, t, op, c);
    case kAlltoall:
      return large ? DUCT_Alltoall_c(s, n, t, r, rn, rt, c) : DUCT_Alltoall(s, ni, t, r, rni, rt, c);
    case kAlltoallv:
      return large ? DUCT_Alltoallv_c(s, counts_c, displs_c, t, r, counts_c, displs_c, rt, c)
                   : DUCT_Alltoallv(s, counts, displs, t, r, counts, displs, rt, c);
    case kGather:
      return large ? DUCT_Gather_c(s, n, t, r, rn, rt, root, c) : DUCT_Gather(s, ni, t, r, rni, rt, root, c);
    case kGatherv:
      return large ? DUCT_Gatherv_c(s, n, t, r, counts_c, displs_c, rt, root, c)
                   : DUCT_Gatherv(s, ni, t, r, counts, displs, rt, root, c);
    case kScatter:
      return large ? DUCT_Scatter_c(s, n, t, r, rn, rt, root, c) : DUCT_Scatter(s, ni, t, r, rni, rt, root, c);
    case kScatterv:
      return large ? DUCT_Scatterv_c(s, counts_c, displs_c, t, r, rn, rt, root, c)
                   : DUCT_Scatterv(s, counts, displs, t, r, rni, rt, root, c);
    case kBarrier:
      return DUCT_Barrier(c);
  }
  return MPI_SUCCESS;
}

bool is_duct_class(int cls, int* which) {
  for (int e = DUCT_ERRCLASS_ARG; e <= DUCT_ERRCLASS_REVOKED; ++e)
    if (DUCT_Error_class(static_cast<DUCT_Errclass>(e)) == cls) {
      *which = e;
      return true;
    }
  return false;
}

[[noreturn]] void fail(const Input& in, const char* why, const std::string& text) {
  std::fprintf(stderr, "duct-fuzz: %s: %s (call %s, send %d recv %d type %d rtype %d op %d comm %d root %d count %lld "
               "rcount %lld counts %lld displs %lld, before shaping)\n", why, text.c_str(), call_name(in.call, in.large & 1), in.send,
               in.recv, in.type, in.rtype, in.op, in.comm, in.root, static_cast<long long>(in.count),
               static_cast<long long>(in.rcount), static_cast<long long>(in.counts), static_cast<long long>(in.displs));
  std::abort();
}

// Run one call and check the invariants. Returns the duct class (0 on
// success, -1 for an MPI library class).
int run_one(const Input& in) {
  std::memset(g.send - kBuf, 0x5a, 2 * kBuf);
  std::memset(g.recv - kBuf, 0xa5, 2 * kBuf);
  const int rc = invoke(in);
  if (rc == MPI_SUCCESS) return 0;
  int cls = 0, which = 0;
  MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  const std::string msg(text, static_cast<std::size_t>(len));
  if (!is_duct_class(cls, &which)) {
    // The MPI library answered (a call duct hands to it): its own class.
    if (cls <= MPI_SUCCESS || cls > MPI_ERR_LASTCODE) fail(in, "an error of no known class", msg);
    return -1;
  }
  const std::string head = std::string(call_name(in.call, in.large & 1)) + " on rank ";
  if (msg.rfind(head, 0) != 0) fail(in, "the message does not name the call and rank", msg);
  if (which == DUCT_ERRCLASS_INTERNAL) fail(in, "an internal error", msg);
  // A refused call must not have written into the receive buffer.
  for (std::size_t i = 0; i < 2 * kBuf; ++i)
    if (static_cast<unsigned char>((g.recv - kBuf)[i]) != 0xa5) fail(in, "a refused call wrote into recvbuf", msg);
  return which;
}

// ---- seeds ---------------------------------------------------------------------------

struct Seed {
  std::string name;
  Input in;
};

Input make(Call c, DUCT_Errclass expect) {
  Input in{};
  in.call = c;
  in.type = in.rtype = 1;  // MPI_FLOAT
  in.op = 1;               // MPI_SUM
  in.count = in.rcount = in.counts = 4;
  in.displs = 0;
  in.expect = static_cast<std::int8_t>(expect);
  return in;
}

std::vector<Seed> seeds() {
  std::vector<Seed> s;
  auto add = [&](std::string name, Input in) { s.push_back({std::move(name), in}); };
  Input i;
  // Valid calls (expect 0) of every collective.
  for (std::uint8_t c = 0; c < kCalls; ++c) {
    i = make(static_cast<Call>(c), static_cast<DUCT_Errclass>(0));
    add(std::string("ok-") + call_name(c, false), i);
  }
  i = make(kAllreduce, DUCT_ERRCLASS_BUFFER), i.send = kNull, add("buffer-null-sendbuf", i);
  i = make(kBcast, DUCT_ERRCLASS_BUFFER), i.recv = kNull, add("buffer-null-bcast", i);
  i = make(kAllreduce, DUCT_ERRCLASS_COUNT), i.count = -1, add("count-negative", i);
  i = make(kAllgatherv, DUCT_ERRCLASS_COUNT), i.counts = -2, add("count-negative-recvcounts", i);
  i = make(kAllreduce, DUCT_ERRCLASS_OVERFLOW), i.large = 1, i.count = INT64_MAX, add("overflow-count", i);
  i = make(kAllgatherv, DUCT_ERRCLASS_OVERFLOW), i.large = 1, i.displs = INT64_MAX, add("overflow-displs", i);
  i = make(kAlltoall, DUCT_ERRCLASS_OVERFLOW), i.large = 1, i.count = i.rcount = INT64_MAX / 2, add("overflow-blocks", i);
  i = make(kAllreduce, DUCT_ERRCLASS_TYPE), i.type = 0, add("type-null", i);
  i = make(kBcast, DUCT_ERRCLASS_UNCOMMITTED), i.type = 14, add("type-uncommitted", i);
  i = make(kAllreduce, DUCT_ERRCLASS_OP), i.op = 0, add("op-null", i);
  i = make(kAllreduce, DUCT_ERRCLASS_OP_TYPE), i.op = 8, add("op-band-on-float", i);
  i = make(kAllreduce, DUCT_ERRCLASS_COMM), i.comm = 2, add("comm-null", i);
  i = make(kReduce, DUCT_ERRCLASS_ROOT), i.root = 5, add("root-out-of-range", i);
  i = make(kScatter, DUCT_ERRCLASS_ROOT), i.root = -3, add("root-negative", i);
  i = make(kAllreduce, DUCT_ERRCLASS_IN_PLACE), i.recv = kInPlace, add("in-place-recvbuf", i);
  i = make(kAllreduce, DUCT_ERRCLASS_OVERLAP), i.send = kOverlap, add("overlap", i);
  i = make(kAllreduce, DUCT_ERRCLASS_UNMAPPED), i.send = kUnmapped, add("unmapped-sendbuf", i);
  i = make(kAllgatherv, DUCT_ERRCLASS_ARG), i.counts_null = 1, add("arg-null-recvcounts", i);
  return s;
}

int check_files(int argc, char** argv, int first) {
  int bad = 0;
  for (int a = first; a < argc; ++a) {
    std::ifstream f(argv[a], std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (bytes.size() != sizeof(Input)) {
      std::printf("%s: %zu bytes, not an input\n", argv[a], bytes.size());
      ++bad;
      continue;
    }
    Input in;
    std::memcpy(&in, bytes.data(), sizeof in);
    const int got = run_one(in);
    const bool ok = got == in.expect;
    std::printf("%-40s %s (expected class %d, got %d)\n", argv[a], ok ? "ok" : "WRONG", in.expect, got);
    bad += !ok;
  }
  return bad;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  setenv("DUCT_CHECK", "1", 1);  // pointer checks without a GPU
  MPI_Init(argc, argv);
  setup();
  for (int a = 1; a < *argc; ++a) {
    if (!std::strcmp((*argv)[a], "--check")) {
      int bad = check_files(*argc, *argv, a + 1);
      MPI_Finalize();
      std::exit(bad == 0 ? 0 : 1);
    }
    if (!std::strcmp((*argv)[a], "--write-corpus") && a + 1 < *argc) {
      for (const Seed& s : seeds()) {
        std::string path = std::string((*argv)[a + 1]) + "/" + s.name;  // NOLINT
        std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(&s.in), sizeof s.in);
      }
      MPI_Finalize();
      std::exit(0);
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in{};  // short inputs are zero-padded
  std::memcpy(&in, data, size < sizeof in ? size : sizeof in);
  run_one(in);
  return 0;
}
