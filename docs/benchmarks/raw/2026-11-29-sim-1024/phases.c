#include <mpi.h>
#include <duct/duct.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
static double now(void){struct timespec t; syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t); return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc,char**argv){
  MPI_Init(&argc,&argv);
  int r; MPI_Comm_rank(MPI_COMM_WORLD,&r);
  double t0=now(); float x=1,y;
  MPI_Barrier(MPI_COMM_WORLD); double t1=now();
  MPI_Comm d; MPI_Comm_dup(MPI_COMM_WORLD,&d); double t2=now();
  MPI_Allreduce(&x,&y,1,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD); double t3=now();
  DUCT_Allreduce(&x,&y,1,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD); double t4=now();
  DUCT_Allreduce(&x,&y,1,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD); double t5=now();
  if(r==0) printf("barrier %.2f dup %.2f mpi_allreduce %.2f duct_first %.2f duct_second %.2f (s real)\n",t1-t0,t2-t1,t3-t2,t4-t3,t5-t4);
  MPI_Finalize(); return 0;}
