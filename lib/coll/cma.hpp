// duct coll: single-copy collectives on one node by cross-memory attach.
//
// The shm algorithms (coll/shm_rounds.hpp) copy every byte twice: into the
// writer's slot and out of it, and a message through a channel pays a
// header and an answer (channel/cuda_ipc.cpp's cma protocol: a UCX message
// each way around one process_vm_readv). From a few hundred KiB one copy by
// the reader can beat both; where shm's copies pipeline (a root or every
// rank filling slots ahead of the reads) they beat one process_vm_readv,
// which pins every page it copies. The rules say which, per collective,
// rank count and size (select/select.cpp).
//
// Here a rank publishes the address of its own buffer in its shared-memory
// slot of the call's sequence number k, and its readers copy straight out
// of that buffer into theirs with process_vm_readv(2): one copy, by the
// reader, and no message. A rank
// whose memory others read returns only when each of them has published
// that it finished k (its done word, ShmArea::finish), since the caller may
// reuse the buffer after the call. This is the single-copy, kernel-assisted
// form of MPI's intra-node collectives (Ma, Bosilca et al., "Kernel
// assisted collective intra-node MPI communication among multi-core and
// many-core CPUs", ICPP 2011 (KNEM); Open MPI's vader BTL reads messages
// with CMA the same way).
//
// A call of sequence k (one slot, whatever its size):
//   1. every rank claims its slot (every rank is done with its previous use),
//      writes the address of the bytes it offers (Spec::source; 0: none)
//      and publishes k;
//   2. it copies its own block locally (Spec::local);
//   3. for each rank q it reads from (Spec::reads), nearest after it first
//      so that the readers spread over the ranks, it waits for q's slot of
//      k and copies what it needs (Spec::read);
//   4. it publishes that it finished k, then waits until every rank that
//      reads its memory (Spec::read_by) has finished k;
//   5. Spec::after: what may change the bytes it offered (an in-place
//      all-to-all's result).
// A device buffer is staged through host scratch on either side (a peer
// cannot attach to GPU memory), so ranks with different memory kinds still
// run the same algorithm. The algorithms exist only where ShmArea::cma() is
// true: every rank of the communicator could attach to every other.
#pragma once

#include <cstring>

#include "coll/collectives.hpp"
#include "coll/shm.hpp"
#include "coll/wait.hpp"

namespace duct::coll {

// Copy `bytes` from address `src` of rank q's process into `dst`, host
// memory of this process (process_vm_readv, as often as the kernel asks).
// Errc::peer_failed when q's process is gone.
Status cma_read(const ShmArea& s, int q, void* dst, std::uint64_t src, std::size_t bytes);
// The host bytes this rank offers its readers for `bytes` at `buf` of
// memory kind `kind`: buf itself for host memory, else a copy in the
// context's host scratch slot 0, valid until the call returns.
Status cma_source(Context& ctx, const void* buf, MemKind kind, std::size_t bytes, const void** out);
// cma_read into `dst` of memory kind `kind` (device: through host scratch
// slot 1).
Status cma_read_into(Context& ctx, int q, std::uint64_t src, void* dst, MemKind kind, std::size_t bytes);

// The call of one Spec (above):
//   Status source(const void** out);        // the bytes others read (null: none)
//   Status local();                         // this rank's own block
//   bool reads(int q) const;                // this rank reads from q
//   Status read(int q, std::uint64_t at);   // q published `at`: copy what it needs
//   bool read_by(int q) const;              // q reads this rank's bytes
//   Status after();                         // once no rank reads this rank's bytes any more
template <class Spec>
Sched cma_call(Context& ctx, const CollArgs& a, Spec spec) {
  ShmArea& s = *ctx.shm;
  const std::uint32_t tag = shm_tag(a);
  const int n = ctx.size(), me = ctx.rank();
  const std::uint64_t k = s.next_seq();
  const int p = ShmArea::slot_of(k);
  const void* src = nullptr;
  DUCT_CO_TRY(spec.source(&src));
  SHM_CLAIM(s, k, false, me, n);
  const auto addr = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(src));
  std::memcpy(s.slot(me, p, sizeof addr), &addr, sizeof addr);
  shm_publish(s, k, tag, p, me);
  // From here a failure still finishes k and waits for this rank's readers:
  // a rank whose readers wait for it, or that returned while they read its
  // buffer, would turn one rank's error into another's hang or fault.
  Status st = spec.local();
  for (int i = 1; i < n && st.is_ok(); ++i) {
    const int q = (me + i) % n;
    if (!spec.reads(q)) continue;
    st = co_await shm_wait_rank(s, k, tag, p, q);
    if (!st) break;
    std::uint64_t at = 0;
    std::memcpy(&at, s.slot(q, p, sizeof at), sizeof at);
    st = spec.read(q, at);
  }
  s.finish(me, k);
  if (src) {
    for (int i = 1; i < n; ++i) {
      const int q = (me + i) % n;
      if (spec.read_by(q)) DUCT_CO_TRY(co_await shm_wait_done(s, q, k));
    }
  }
  if (!st) co_return st;
  co_return spec.after();
}

}  // namespace duct::coll
