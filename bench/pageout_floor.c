// SPDX-License-Identifier: MIT
/* The kernel's own cost of swapping out N pages, the floor that
 * bench/kernel_run_speed.sh sets beside `swaplab kernel run`: N 4 KiB
 * pages of one anonymous mapping (no huge pages), each written with 16
 * non-zero bytes as the run's worker writes its pages, then one
 * MADV_PAGEOUT of them all, on CPU 0. Prints
 *   fault_s F pageout_s P swapped S
 * (seconds of the writes, which fault the pages in, and of the page-out;
 * S pages the page-out sent to swap, from /proc/self/pagemap).
 * With FOLIOS (> 1): the kernel's cost when it is shown the pages as
 * `kernel run` shows it its folios: FOLIOS mappings as even as can be,
 * each mapped on its own into a PROT_NONE reservation with a PROT_NONE
 * page after it (its own VMA, as the run's worker maps each folio), in
 * CALLS groups of consecutive mappings (default: one per mapping), each
 * group's pages written and one MADV_PAGEOUT over the group, one group
 * after the other; fault_s (the mmaps and the writes) and pageout_s are
 * then sums over the groups.
 * usage: pageout_floor PAGES [FOLIOS [CALLS]] */
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

/* FOLIOS mappings in CALLS groups, each group paged out by one call. */
static int PerFolio(unsigned long long pages, unsigned long long folios, unsigned long long calls) {
  PinCpu0();
  unsigned char **maps = calloc(folios, sizeof *maps);
  size_t *lens = calloc(folios, sizeof *lens);
  if (!maps || !lens) {
    perror("calloc");
    return 1;
  }
  const size_t reserve = (size_t)(pages + folios) * 4096;
  unsigned char *const base =
      mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  unsigned char *cursor = base;
  double fault_s = 0, pageout_s = 0;
  unsigned long long swapped = 0, f = 0;
  for (unsigned long long g = 0; g < calls; ++g) {
    unsigned char *const group = cursor;
    const double t0 = Now();
    for (unsigned long long end = f + folios / calls + (g < folios % calls); f < end; ++f) {
      lens[f] = (size_t)(pages / folios + (f < pages % folios)) * 4096;
      maps[f] = mmap(cursor, lens[f], PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (maps[f] == MAP_FAILED) {
        perror("mmap");
        return 1;
      }
      (void)madvise(maps[f], lens[f], MADV_NOHUGEPAGE);
      WritePages(maps[f], lens[f]);
      cursor += lens[f] + 4096;
    }
    const double t1 = Now();
    if (madvise(group, (size_t)(cursor - group) - 4096, MADV_PAGEOUT) != 0) {
      perror("madvise(MADV_PAGEOUT)");
      return 1;
    }
    fault_s += t1 - t0;
    pageout_s += Now() - t1;
  }
  for (f = 0; f < folios; ++f) swapped += Swapped(maps[f], lens[f] / 4096);
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
  int bad = argc < 2 || argc > 4 || errno || *end || pages == 0 || pages > (1ull << 24);
  unsigned long long folios = 1, calls = 0;
  if (!bad && argc >= 3) {
    errno = 0;
    folios = strtoull(argv[2], &end, 10);
    bad = errno || *end || folios == 0 || folios > pages;
  }
  if (!bad && argc == 4) {
    errno = 0;
    calls = strtoull(argv[3], &end, 10);
    bad = errno || *end || calls == 0 || calls > folios;
  }
  if (bad) {
    fprintf(stderr, "usage: %s PAGES (1..2^24) [FOLIOS (1..PAGES) [CALLS (1..FOLIOS)]]\n", argv[0]);
    return 2;
  }
  if (folios > 1) return PerFolio(pages, folios, calls ? calls : folios);
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
