// Built instead of device.cu when duct is configured without CUDA.
#include "reduce/reduce.hpp"

namespace duct::reduce {

bool device_built() noexcept { return false; }

Status device(void*, const void*, const void*, size_t, Elem, RedOp, void*) noexcept {
  return make_error(Errc::not_supported, "duct was built without CUDA: no device reduction kernels");
}

Status device_multi(const MultiReduce&, Elem, RedOp, void*) noexcept {
  return make_error(Errc::not_supported, "duct was built without CUDA: no device engine kernels");
}

Status device_copies(const CopyList&, void*) noexcept {
  return make_error(Errc::not_supported, "duct was built without CUDA: no device engine kernels");
}

Status device_barrier(const Barrier&, int, void*) noexcept {
  return make_error(Errc::not_supported, "duct was built without CUDA: no device barrier");
}

Status device_multi_fenced(const MultiReduce&, const Barrier&, Elem, RedOp, void*) noexcept {
  return make_error(Errc::not_supported, "duct was built without CUDA: no device engine kernels");
}

}  // namespace duct::reduce
