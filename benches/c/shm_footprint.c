/* Shared-memory footprint: run with hympiexec -n N; rank 0 reports the size of the node segment
 * mapping (memfd "hympi-shm") divided by the number of local ranks. hympi only. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
/* Prints the size of the node's shared segment mapping (the memfd "hympi-shm") per local rank. */
int main(int c,char**v){MPI_Init(&c,&v);int r,s;MPI_Comm_rank(MPI_COMM_WORLD,&r);MPI_Comm_size(MPI_COMM_WORLD,&s);
 int x=r,y; MPI_Sendrecv(&x,1,MPI_INT,(r+1)%s,0,&y,1,MPI_INT,(r+s-1)%s,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);
 if(r==0){FILE*f=fopen("/proc/self/maps","r");char line[512];unsigned long tot=0;while(fgets(line,sizeof line,f)){ if(strstr(line,"hympi-shm")){unsigned long a,b;sscanf(line,"%lx-%lx",&a,&b);tot+=b-a;}} fclose(f);
 printf("ranks %d segment %.2f MiB = %.3f MiB per local rank\n",s,tot/1048576.0,tot/1048576.0/s);}
 MPI_Finalize();}
