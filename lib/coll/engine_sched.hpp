// duct coll: the device engine's schedules (coll/engine.hpp is the engine,
// which knows no context; these run it for a communicator's collective).
#pragma once

#include <cstdint>

#include "coll/collectives.hpp"
#include "coll/engine.hpp"

namespace duct::coll {

// Run `a` on the engine, or on `fallback` (the collective's algorithm
// without the engine) when not every rank qualifies. `seq` is the call's
// sequence number on the communicator (message tags of the fallback).
Sched engine_collective(Context& ctx, const CollArgs& a, std::uint32_t seq, AlgoFn fallback);

// `fn`, after the GPU has reached a stream-ordered call on its stream
// (a.stream; at once when null).
Sched after_stream(Context& ctx, const CollArgs& a, std::uint32_t seq, AlgoFn fn);

}  // namespace duct::coll
