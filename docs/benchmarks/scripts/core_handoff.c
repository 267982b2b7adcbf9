/* Cost of moving cache lines between two cores, as a shared-memory
   collective does (docs/benchmarks/2026-11-24-shm-phases.md): a flag's round
   trip, and 64 KiB written on core 0 then read on core 1. Run it every few
   seconds to see the phases of a VM.
   gcc -O2 -pthread core_handoff.c -o core_handoff && ./core_handoff */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
enum { kTrips = 20000, kBytes = 65536, kCopies = 2000 };
static _Atomic long flag __attribute__((aligned(64)));
static _Atomic long copied __attribute__((aligned(64)));
static char *slot, *out;
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static void pin(int c) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(c, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
static void* peer(void* arg) {
  (void)arg;
  pin(1);
  for (long i = 1; i <= kTrips; ++i) {
    while (atomic_load(&flag) != 2 * i - 1) {}
    atomic_store(&flag, 2 * i);
  }
  for (long i = 1; i <= kCopies; ++i) {
    while (atomic_load(&copied) != 2 * i - 1) {}
    memcpy(out, slot, kBytes);
    atomic_store(&copied, 2 * i);
  }
  return 0;
}
int main(void) {
  pin(0);
  slot = aligned_alloc(4096, kBytes);
  out = aligned_alloc(4096, kBytes + 4096) + 64;
  char* in = aligned_alloc(4096, kBytes);
  memset(in, 1, kBytes);
  memset(slot, 0, kBytes);
  memset(out, 0, kBytes);
  pthread_t t;
  pthread_create(&t, 0, peer, 0);
  double t0 = now_us();
  for (long i = 1; i <= kTrips; ++i) {
    atomic_store(&flag, 2 * i - 1);
    while (atomic_load(&flag) != 2 * i) {}
  }
  const double trip = (now_us() - t0) / kTrips;
  t0 = now_us();
  for (long i = 1; i <= kCopies; ++i) {
    memcpy(slot, in, kBytes);
    atomic_store(&copied, 2 * i - 1);
    while (atomic_load(&copied) != 2 * i) {}
  }
  const double copy = (now_us() - t0) / kCopies;
  pthread_join(t, 0);
  printf("round trip %.3f us, 64 KiB written on core 0 and read on core 1: %.2f us\n", trip, copy);
  return 0;
}
