#include <mpi.h>
#include <stdio.h>
int main(int c, char** v) {
  MPI_Init(&c, &v);
  int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
  fprintf(stderr, "rank %d: before split_type\n", r);
  MPI_Comm node; MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node);
  int lr, ls; MPI_Comm_rank(node, &lr); MPI_Comm_size(node, &ls);
  fprintf(stderr, "rank %d: split_type done: %d of %d\n", r, lr, ls);
  MPI_Comm_free(&node); MPI_Finalize(); return 0;
}
