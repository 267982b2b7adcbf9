/* memcpy time against the distance of destination ahead of source, modulo a
   4 KiB page (docs/benchmarks/2026-11-24-shm-phases.md).
   gcc -O2 memcpy_distance.c -o memcpy_distance && ./memcpy_distance 32768 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
int main(int argc, char** argv) {
  size_t n = argc > 1 ? strtoul(argv[1], 0, 0) : 32768;
  char* a = aligned_alloc(4096, n + 16384);
  char* b = aligned_alloc(4096, n + 16384);
  memset(a, 1, n + 16384);
  memset(b, 2, n + 16384);
  const int ahead[] = {0, 1, 4, 8, 15, 16, 24, 32, 48, 63, 64, 72, 128, 4088, 4096 + 8};
  for (unsigned k = 0; k < sizeof ahead / sizeof *ahead; ++k) {
    char *s = a, *d = b + ahead[k];
    for (int w = 0; w < 50; ++w) memcpy(d, s, n);
    const int reps = 2000;
    double t0 = now_us();
    for (int r = 0; r < reps; ++r) {
      memcpy(d, s, n);
      __asm__ volatile("" ::"r"(d) : "memory");
    }
    printf("%zu B, destination %4d B ahead: %.2f us\n", n, ahead[k], (now_us() - t0) / reps);
  }
  return 0;
}
