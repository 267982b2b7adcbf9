#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
static double now(void){struct timespec t; syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t); return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc,char**argv){
  MPI_Init(&argc,&argv);
  int r; MPI_Comm_rank(MPI_COMM_WORLD,&r);
  float x=1,y; double t[10]; int k=0;
  t[k++]=now();
  MPI_Barrier(MPI_COMM_WORLD); t[k++]=now();
  MPI_Barrier(MPI_COMM_WORLD); t[k++]=now();
  MPI_Allreduce(&x,&y,1,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD); t[k++]=now();
  MPI_Allreduce(&x,&y,1,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD); t[k++]=now();
  MPI_Bcast(&x,1,MPI_FLOAT,0,MPI_COMM_WORLD); t[k++]=now();
  MPI_Bcast(&x,1,MPI_FLOAT,0,MPI_COMM_WORLD); t[k++]=now();
  MPI_Comm d; MPI_Comm_dup(MPI_COMM_WORLD,&d); t[k++]=now();
  MPI_Comm_dup(MPI_COMM_WORLD,&d); t[k++]=now();
  const char* nm[]={"barrier","barrier2","allreduce","allreduce2","bcast","bcast2","dup","dup2"};
  if(r==0){for(int i=1;i<k;i++) printf("%s %.2f  ",nm[i-1],t[i]-t[i-1]); printf("\n");}
  MPI_Finalize(); return 0;}
