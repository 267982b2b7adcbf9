/* Slot fill with memcpy (0) or non-temporal stores (1): 64 KiB pieces through 8 slots, written on core 0 and read on core 1, input rewritten each time (docs/benchmarks/2026-11-24-shm-phases.md, raw/.../phase_log_nt.txt). gcc -O2 -mavx2 -pthread slot_fill_nt.c -o slot_fill_nt && ./slot_fill_nt 1 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
enum{B=65536, NS=8, C=1500};
static _Atomic long seq __attribute__((aligned(64)));
static _Atomic long done __attribute__((aligned(64)));
static char *slots, *dst; static int mode;
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void nt_copy(char*d,const char*s,size_t n){for(size_t i=0;i<n;i+=64){__m256i a=_mm256_loadu_si256((const __m256i*)(s+i)),b=_mm256_loadu_si256((const __m256i*)(s+i+32));_mm256_stream_si256((__m256i*)(d+i),a);_mm256_stream_si256((__m256i*)(d+i+32),b);}_mm_sfence();}
static void* peer(void*a){pin(1);
  for(long i=1;i<=C;i++){while(atomic_load(&seq)<i);memcpy(dst+((i%16)*B),slots+(i%NS)*B,B);atomic_store(&done,i);}
  return 0;}
int main(int argc,char**argv){mode=atoi(argv[1]);pin(0);
  slots=aligned_alloc(4096,NS*B);dst=aligned_alloc(4096,16*B);char*src=aligned_alloc(4096,16*B);
  memset(src,1,16*B);memset(slots,0,NS*B);memset(dst,0,16*B);
  pthread_t t;pthread_create(&t,0,peer,0);
  double t0=now();
  for(long i=1;i<=C;i++){
    while(i-atomic_load(&done)>NS-1);  /* slot free */
    char*s=src+((i%16)*B);
    for(size_t k=0;k<B;k+=64) s[k]=s[k]; /* fresh input */
    if(mode==0)memcpy(slots+(i%NS)*B,s,B); else nt_copy(slots+(i%NS)*B,s,B);
    atomic_store(&seq,i);}
  while(atomic_load(&done)<C);
  double ct=(now()-t0)/C;
  pthread_join(t,0);
  printf("%s: %.2f us per 64 KiB\n",mode?"nt-store fill":"memcpy fill  ",ct);}
