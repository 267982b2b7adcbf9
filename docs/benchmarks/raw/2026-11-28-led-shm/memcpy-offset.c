#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(){ size_t N=65536; char*src=aligned_alloc(4096,1<<20),*dst=aligned_alloc(4096,1<<20); memset(src,1,1<<20);memset(dst,0,1<<20);
 for(int off=0;off<=64;off+=8){ double best=1e18; for(int rep=0;rep<5;rep++){double t=now(); for(int i=0;i<2000;i++){memcpy(dst+off,src,N); __asm__ volatile(""::"r"(dst):"memory");} double e=(now()-t)/2000; if(e<best)best=e;} printf("dst off %d: %.0f ns per 64K (%.1f GB/s)\n",off,best,N/best);} }
