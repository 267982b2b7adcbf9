/* A two-thread model of the shm slots protocol of duct's eager rooted calls (docs/benchmarks/2026-11-24-shm-phases.md): 8 slots whose first line holds the sequence word and 8 bytes of data, the writer up to 8 slots ahead, waiting on the reader's done word; argument: the distance between slots (65600 as in duct, or 64). gcc -O2 -pthread slot_protocol.c -o slot_protocol && ./slot_protocol 65600 */
/* Knobs (docs/benchmarks/2026-11-26-small-2rank.md): -DNSLOTS=N slots in the ring (8), -DHALF=H a blocked
   writer waits until H more slots are free (0), -DPAUSES=P pause instructions between its polls of the
   reader's done word (0); second argument: prefetchw that many slots ahead after each write (0). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
#ifndef HALF
#define HALF 0
#endif
#ifndef PAUSES
#define PAUSES 0
#endif
#ifndef NSLOTS
#define NSLOTS 8
#endif
enum{NS=NSLOTS, C=400000};
static size_t stride; static char* area;
static _Atomic unsigned long done __attribute__((aligned(64)));  /* reader's done seq (own line) */
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static _Atomic unsigned long* flag(long k){return (_Atomic unsigned long*)(area+(k%NS)*stride);}
static void* reader(void*a){pin(1);double sum=0;
  for(long k=1;k<=C;k++){while(atomic_load_explicit(flag(k),memory_order_acquire)!=(unsigned long)k);
    double v; memcpy(&v,(char*)flag(k)+8,8); sum+=v; for(volatile int w=0;w<40;w++); atomic_store_explicit(&done,k,memory_order_release);}
  return (void*)(long)sum;}
static int ahead; int main(int argc,char**argv){stride=atol(argv[1]); ahead=argc>2?atoi(argv[2]):0;area=aligned_alloc(4096,NS*stride+4096);memset(area,0,NS*stride+4096);pin(0);
  pthread_t t;pthread_create(&t,0,reader,0);
  unsigned long writable=NS; double t0=now();
  for(long k=1;k<=C;k++){ for(volatile int w=0;w<40;w++);
    if((unsigned long)k>writable){ while(atomic_load_explicit(&done,memory_order_acquire)+NS<(unsigned long)k+HALF) for(int p=0;p<PAUSES;p++) __builtin_ia32_pause(); writable=atomic_load(&done)+NS; }
    double v=1.0; memcpy((char*)flag(k)+8,&v,8); atomic_store_explicit(flag(k),k,memory_order_release); if(ahead) __asm__ volatile("prefetchw %0"::"m"(*(char*)flag(k+ahead)));}
  pthread_join(t,0);
  printf("stride %6zu ahead %d: %.3f us per message\n",stride,ahead,(now()-t0)/C);}
