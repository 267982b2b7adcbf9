#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
int main(int c,char**v){MPI_Init(&c,&v);double t=MPI_Wtime();smpi_execute(1e-3);double t2=MPI_Wtime();smpi_execute(5e-7);double t3=MPI_Wtime();printf("1ms->%g  0.5us->%g\n",t2-t,t3-t2);MPI_Finalize();}
