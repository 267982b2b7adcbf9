#include "coll/common.hpp"

#include <cstring>

#include "reduce/reduce.hpp"

namespace duct::coll {

Status reduce_local(void* dst, const void* a, const void* b, std::size_t count, const DType& dt, RedOp op,
                    MemKind kind, memory::Fence* fence, reduce::Store store) {
  if (kind == MemKind::host) return reduce::host(dst, a, b, count, dt.elem, op, store);
  void* stream = nullptr;
  DUCT_TRY(memory::cuda::stream(&stream));
  DUCT_TRY(reduce::device(dst, a, b, count, dt.elem, op, stream));
  return fence->record(stream);
}

Status copy_local(void* dst, MemKind dst_kind, const void* src, MemKind src_kind, std::size_t bytes) {
  if (bytes == 0 || dst == src) return Status::ok();
  if (dst_kind == MemKind::host && src_kind == MemKind::host) {
    std::memmove(dst, src, bytes);
    return Status::ok();
  }
  return memory::cuda::copy(dst, src, bytes);
}

}  // namespace duct::coll
