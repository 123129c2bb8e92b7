// The soak's item (scripts/chaos.sh, sc_soak): appends its start and end records to the
// events file (the format of item.sh: "S|E JOB ITEM PARENT PID EPOCH_NS"), one write each,
// and exits. A static program rather than a script: on the 2-core development VM a bash
// start costs about 14 ms of CPU (perf: the kernel's exec and mmap work and the dynamic
// loader), so a hundred a second took 1.4 cores and left the scheduler under test none.
//
//   soak_item EVENTS_FILE JOB [ignored...]   (the SCRIPT job appends its context as JSON)
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void record(int fd, char kind, const char* job) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char line[256];
  int n = snprintf(line, sizeof line, "%c %s 0 %d %d %lld%09ld\n", kind, job, (int)getppid(),
                   (int)getpid(), (long long)ts.tv_sec, ts.tv_nsec);
  if (n > 0 && n < (int)sizeof line) (void)!write(fd, line, (size_t)n);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: soak_item EVENTS_FILE JOB\n");
    return 2;
  }
  int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  record(fd, 'S', argv[2]);
  record(fd, 'E', argv[2]);
  return 0;
}
