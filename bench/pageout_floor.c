// SPDX-License-Identifier: MIT
/* The kernel's own cost of swapping out N pages, the floor that
 * bench/kernel_run_speed.sh sets beside `swaplab kernel run`: N 4 KiB
 * pages of one anonymous mapping (no huge pages), each written with 16
 * non-zero bytes as the run's worker writes its pages, then one
 * MADV_PAGEOUT of them all, on CPU 0. Prints
 *   fault_s F pageout_s P swapped S
 * (seconds of the writes, which fault the pages in, and of the page-out;
 * S pages the page-out sent to swap, from /proc/self/pagemap).
 * With CALLS (> 1): the kernel's cost when it must see each folio on its
 * own, as `kernel run` shows it its folios: the pages split into CALLS
 * mappings as even as can be, each mapped on its own into a PROT_NONE
 * reservation with a PROT_NONE page after it (no two merge into one VMA),
 * as the run's worker maps each folio, and per mapping its pages written
 * and one MADV_PAGEOUT of it, one mapping after the other; fault_s (the
 * mmap and the writes) and pageout_s are then sums over the mappings.
 * usage: pageout_floor PAGES [CALLS] */
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

static void PinCpu0(void) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  (void)sched_setaffinity(0, sizeof one, &one);
}

/* Writes 16 non-zero bytes to each page of [p, p + len). */
static void WritePages(unsigned char *p, size_t len) {
  for (size_t off = 0; off < len; off += 4096) {
    const uint64_t words[2] = {0x2162616c70617773ull, (uint64_t)(uintptr_t)(p + off)};
    memcpy(p + off, words, sizeof words);
  }
}

/* Pages of [p, p + pages pages) on swap, from /proc/self/pagemap. */
static unsigned long long Swapped(const unsigned char *p, size_t pages) {
  unsigned long long swapped = 0;
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  for (size_t i = 0; fd >= 0 && i < pages; ++i) {
    uint64_t e = 0;
    if (pread(fd, &e, 8, (off_t)(((uintptr_t)p / 4096 + i) * 8)) == 8) swapped += (e >> 62) & 1;
  }
  if (fd >= 0) close(fd);
  return swapped;
}

/* CALLS mappings, each written and paged out on its own (see above). */
static int PerCall(unsigned long long pages, unsigned long long calls) {
  PinCpu0();
  unsigned char **maps = calloc(calls, sizeof *maps);
  size_t *lens = calloc(calls, sizeof *lens);
  if (!maps || !lens) {
    perror("calloc");
    return 1;
  }
  const size_t reserve = (size_t)(pages + calls) * 4096;
  unsigned char *const base =
      mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  unsigned char *cursor = base;
  if (base == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  double fault_s = 0, pageout_s = 0;
  unsigned long long swapped = 0;
  for (unsigned long long c = 0; c < calls; ++c) {
    const unsigned long long n = pages / calls + (c < pages % calls);
    lens[c] = (size_t)n * 4096;
    const double t0 = Now();
    maps[c] = mmap(cursor, lens[c], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                   -1, 0);
    cursor += lens[c] + 4096;
    if (maps[c] == MAP_FAILED) {
      perror("mmap");
      return 1;
    }
    (void)madvise(maps[c], lens[c], MADV_NOHUGEPAGE);
    WritePages(maps[c], lens[c]);
    const double t1 = Now();
    if (madvise(maps[c], lens[c], MADV_PAGEOUT) != 0) {
      perror("madvise(MADV_PAGEOUT)");
      return 1;
    }
    fault_s += t1 - t0;
    pageout_s += Now() - t1;
  }
  for (unsigned long long c = 0; c < calls; ++c) swapped += Swapped(maps[c], lens[c] / 4096);
  munmap(base, reserve);
  printf("fault_s %.6f pageout_s %.6f swapped %llu\n", fault_s, pageout_s, swapped);
  free(maps);
  free(lens);
  return 0;
}

int main(int argc, char **argv) {
  char *end;
  errno = 0;
  const unsigned long long pages = argc >= 2 ? strtoull(argv[1], &end, 10) : 0;
  int bad = argc < 2 || argc > 3 || errno || *end || pages == 0 || pages > (1ull << 24);
  unsigned long long calls = 1;
  if (!bad && argc == 3) {
    errno = 0;
    calls = strtoull(argv[2], &end, 10);
    bad = errno || *end || calls == 0 || calls > pages;
  }
  if (bad) {
    fprintf(stderr, "usage: %s PAGES (1..2^24) [CALLS (1..PAGES)]\n", argv[0]);
    return 2;
  }
  if (calls > 1) return PerCall(pages, calls);
  const size_t len = (size_t)pages * 4096;
  PinCpu0();
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  (void)madvise(p, len, MADV_NOHUGEPAGE);
  const double t0 = Now();
  WritePages(p, len);
  const double t1 = Now();
  if (madvise(p, len, MADV_PAGEOUT) != 0) {
    perror("madvise(MADV_PAGEOUT)");
    return 1;
  }
  const double t2 = Now();
  const unsigned long long swapped = Swapped(p, pages);
  printf("fault_s %.6f pageout_s %.6f swapped %llu\n", t1 - t0, t2 - t1, swapped);
  return 0;
}
