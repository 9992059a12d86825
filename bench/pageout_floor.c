// SPDX-License-Identifier: MIT
/* The kernel's own cost of swapping out N pages, the floor that
 * bench/kernel_run_speed.sh sets beside `swaplab kernel run`: N 4 KiB
 * pages of one anonymous mapping (no huge pages), each written with 16
 * non-zero bytes as the run's worker writes its pages, then one
 * MADV_PAGEOUT of them all, on CPU 0. Prints
 *   fault_s F pageout_s P swapped S
 * (seconds of the writes, which fault the pages in, and of the page-out;
 * S pages the page-out sent to swap, from /proc/self/pagemap).
 * usage: pageout_floor PAGES */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  char *end;
  errno = 0;
  const unsigned long long pages = argc == 2 ? strtoull(argv[1], &end, 10) : 0;
  if (argc != 2 || errno || *end || pages == 0 || pages > (1ull << 24)) {
    fprintf(stderr, "usage: %s PAGES (1..2^24)\n", argv[0]);
    return 2;
  }
  const size_t len = (size_t)pages * 4096;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  (void)sched_setaffinity(0, sizeof one, &one);
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  (void)madvise(p, len, MADV_NOHUGEPAGE);
  const double t0 = Now();
  for (size_t off = 0; off < len; off += 4096) {
    const uint64_t words[2] = {0x2162616c70617773ull, (uint64_t)(uintptr_t)(p + off)};
    memcpy(p + off, words, sizeof words);
  }
  const double t1 = Now();
  if (madvise(p, len, MADV_PAGEOUT) != 0) {
    perror("madvise(MADV_PAGEOUT)");
    return 1;
  }
  const double t2 = Now();
  unsigned long long swapped = 0;
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  for (size_t i = 0; fd >= 0 && i < pages; ++i) {
    uint64_t e = 0;
    if (pread(fd, &e, 8, (off_t)(((uintptr_t)p / 4096 + i) * 8)) == 8) swapped += (e >> 62) & 1;
  }
  printf("fault_s %.6f pageout_s %.6f swapped %llu\n", t1 - t0, t2 - t1, swapped);
  return 0;
}
