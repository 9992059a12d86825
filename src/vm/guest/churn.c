// SPDX-License-Identifier: MIT
/* swaplab guest agent, `churn` mode: seed 003's build-like load in a qemu
 * guest (include/swaplab/vm/vm_churn.h runs it; the model's generator of
 * the same name is src/workload/generators.cc BuildChurn).
 *
 * The agent runs inside a memory cgroup whose memory.max is small, with
 * swap on zram and some mTHP sizes enabled (src/vm/guest/init.sh sets them
 * up). It forks PROCESSES children, at most GROWING of them writing their
 * memory at a time and at most CONCURRENT alive. A child:
 *   - picks its size between MIN and MAX pages and writes it folio by
 *     folio, each folio's size drawn from MIX (pages:weight pairs): 4 KiB
 *     pages come from one MADV_NOHUGEPAGE mapping, a folio of N pages is an
 *     N-page mapping of its own at an N-page aligned address (a 4 KiB gap
 *     after it keeps neighbours from merging), so the fault gives it one
 *     folio of that size when that size is enabled. The memcg limit swaps
 *     out what it wrote, 32 pages at a time from the oldest (reclaim mixes
 *     the children's pages as make -j's jobs do);
 *   - then zaps ZAP_PERMILLE/1000 of its pages, one 4 KiB page at a time
 *     at random (MADV_DONTNEED): the holes that leave clusters nonfull;
 *   - tells the parent and sleeps until killed.
 * A child starts only when the sizes of the growing ones and its own fit
 * the swap device and half the memcg (growing children are never killed,
 * so more would end in the memcg's OOM killer).
 * The parent kills a random finished child whenever more than SWAPPED
 * pages of swap are in use, or less than 1/32 of the device is free (the memcg's share of a build
 * that keeps about the same amount swapped out whatever the device), and every one at the end. Each
 * child writes 8 nonzero bytes per page (the rest stays zero): not a zero-filled page, which 6.12
 * keeps out of swap I/O and out of the swpout counters, and cheap for zram to compress.
 *
 * Prints (every line "swaplab-churn: ..."): progress, then
 *   done processes P pages N zapped Z kills K died D held H max_used U seconds S
 *     (D: children the kernel killed, the memcg's OOM killer; H: children
 *     that waited to start because the growing ones would not fit)
 *   stat SIZEkB swpout N swpout_fallback M anon_fault_alloc A anon_fault_fallback F
 *     (each hugepages-SIZEkB; A and F: folios of the size the faults got,
 *     and those that fell back to a smaller one)
 *   vmstat pswpout N thp_swpout N thp_swpout_fallback N
 */
#define _GNU_SOURCE
#include "churn.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kPage = 4096, kMaxMix = 16, kMaxChildren = 1 << 16 };

struct MixEntry {
  uint64_t pages;
  double weight;
};

struct ChurnArgs {
  uint64_t processes, concurrent, growing, min_pages, max_pages, zap_permille, swapped, seed;
  struct MixEntry mix[kMaxMix];
  int mix_n;
  double mix_total;
};

static uint64_t Next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static uint64_t Below(uint64_t *state, uint64_t n) { return n ? Next(state) % n : 0; }
static double Unit(uint64_t *state) { return (double)(Next(state) >> 11) / 9007199254740992.0; }

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int ParseNumber(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') return -1;
  *out = v;
  return 0;
}

/* "1:4/16:1": folios of 1 page weight 4, of 16 pages weight 1. */
static int ParseMix(const char *s, struct ChurnArgs *a) {
  char buf[256];
  if (strlen(s) >= sizeof buf) return -1;
  strcpy(buf, s);
  a->mix_n = 0;
  a->mix_total = 0;
  for (char *save = NULL, *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
    char *colon = strchr(tok, ':');
    if (!colon || a->mix_n == kMaxMix) return -1;
    *colon = '\0';
    uint64_t pages;
    char *end;
    double w = strtod(colon + 1, &end);
    if (ParseNumber(tok, &pages) || *end != '\0' || !(w > 0) || pages == 0 || pages > 512 ||
        (pages & (pages - 1)))
      return -1;
    a->mix[a->mix_n].pages = pages;
    a->mix[a->mix_n].weight = w;
    a->mix_n++;
    a->mix_total += w;
  }
  return a->mix_n > 0 ? 0 : -1;
}

static uint64_t PickFolio(const struct ChurnArgs *a, uint64_t *state) {
  double x = Unit(state) * a->mix_total;
  for (int i = 0; i < a->mix_n; i++) {
    if (x < a->mix[i].weight) return a->mix[i].pages;
    x -= a->mix[i].weight;
  }
  return a->mix[a->mix_n - 1].pages;
}

struct Folio {
  unsigned char *addr;
  uint64_t pages;
};

/* One child: write, zap, report, sleep. Never returns. */
/* Child INDEX's random state and size in pages (the parent draws the same
 * size to decide whether the child fits, StartChildren). */
static uint64_t ChildTarget(const struct ChurnArgs *a, uint64_t index, uint64_t *state) {
  *state = a->seed ^ (index * 0xD1B54A32D192ED03ull);
  return a->min_pages + Below(state, a->max_pages - a->min_pages + 1);
}

static void Child(const struct ChurnArgs *a, uint64_t index, int report_fd) {
  uint64_t state;
  const uint64_t target = ChildTarget(a, index, &state);
  /* Below the parent, so that its polls keep up with the writing. */
  (void)setpriority(PRIO_PROCESS, 0, 5);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu > 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)(index % (uint64_t)ncpu), &set);
    (void)sched_setaffinity(0, sizeof set, &set);
  }
  /* Address space: 4 KiB pages in their own mapping; each larger folio at
   * most 2N+1 pages of the reservation (alignment, itself, the gap). */
  unsigned char *small = mmap(NULL, target * kPage, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  const uint64_t reserve_pages = 3 * target + 1024;
  unsigned char *big = mmap(NULL, reserve_pages * kPage, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  struct Folio *folios = calloc(target, sizeof *folios);
  if (small == MAP_FAILED || big == MAP_FAILED || !folios) {
    printf("swaplab-churn: child %" PRIu64 ": out of memory\n", index);
    fflush(stdout);
    _exit(1);
  }
  (void)madvise(small, target * kPage, MADV_NOHUGEPAGE);
  uint64_t small_used = 0, nfolios = 0, pages = 0;
  uintptr_t cursor = (uintptr_t)big;
  const uintptr_t big_end = (uintptr_t)big + reserve_pages * kPage;
  while (pages < target) {
    uint64_t n = PickFolio(a, &state);
    unsigned char *p;
    if (n == 1) {
      p = small + small_used * kPage;
      small_used++;
    } else {
      const uintptr_t bytes = n * kPage;
      const uintptr_t at = (cursor + bytes - 1) & ~(bytes - 1);
      if (at + bytes + kPage > big_end) break; /* cannot happen: 3 * target */
      p = (unsigned char *)at;
      if (mprotect(p, bytes, PROT_READ | PROT_WRITE) != 0) break;
      cursor = at + bytes + kPage;
    }
    for (uint64_t i = 0; i < n; i++) {
      uint64_t tag = (index << 32) | (pages + i) | 1;
      memcpy(p + i * kPage, &tag, sizeof tag);
    }
    folios[nfolios].addr = p;
    folios[nfolios].pages = n;
    nfolios++;
    pages += n;
  }
  const uint64_t zaps = pages * a->zap_permille / 1000;
  for (uint64_t z = 0; z < zaps && nfolios; z++) {
    const struct Folio *f = &folios[Below(&state, nfolios)];
    (void)madvise(f->addr + Below(&state, f->pages) * kPage, kPage, MADV_DONTNEED);
  }
  uint64_t msg[3] = {(uint64_t)getpid(), pages, zaps};
  if (write(report_fd, msg, sizeof msg) != (ssize_t)sizeof msg) _exit(1);
  for (;;) pause();
}

static uint64_t SwapUsedPages(void) {
  struct sysinfo si;
  if (sysinfo(&si) != 0) return 0;
  return (uint64_t)(si.totalswap - si.freeswap) * si.mem_unit / kPage;
}

static uint64_t ReadNumber(const char *path) {
  FILE *f = fopen(path, "r");
  unsigned long long v = 0;
  if (!f) return UINT64_MAX;
  if (fscanf(f, "%llu", &v) != 1) v = UINT64_MAX;
  fclose(f);
  return v;
}

static void PrintStats(void) {
  const char *root = "/sys/kernel/mm/transparent_hugepage";
  DIR *d = opendir(root);
  unsigned kbs[32];
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
    unsigned kb;
    if (sscanf(e->d_name, "hugepages-%ukB", &kb) == 1 && n < 32) kbs[n++] = kb;
  }
  if (d) closedir(d);
  for (int i = 1; i < n; i++) /* ascending, for the reader's eye */
    for (int j = i; j > 0 && kbs[j - 1] > kbs[j]; j--) {
      unsigned t = kbs[j];
      kbs[j] = kbs[j - 1];
      kbs[j - 1] = t;
    }
  for (int i = 0; i < n; i++) {
    char path[160];
    snprintf(path, sizeof path, "%s/hugepages-%ukB/stats/swpout", root, kbs[i]);
    uint64_t out = ReadNumber(path);
    snprintf(path, sizeof path, "%s/hugepages-%ukB/stats/swpout_fallback", root, kbs[i]);
    uint64_t fb = ReadNumber(path);
    snprintf(path, sizeof path, "%s/hugepages-%ukB/stats/anon_fault_alloc", root, kbs[i]);
    uint64_t fa = ReadNumber(path);
    snprintf(path, sizeof path, "%s/hugepages-%ukB/stats/anon_fault_fallback", root, kbs[i]);
    uint64_t ff = ReadNumber(path);
    if (out == UINT64_MAX || fb == UINT64_MAX) continue;
    printf("swaplab-churn: stat %ukB swpout %" PRIu64 " swpout_fallback %" PRIu64, kbs[i], out, fb);
    if (fa != UINT64_MAX && ff != UINT64_MAX)
      printf(" anon_fault_alloc %" PRIu64 " anon_fault_fallback %" PRIu64, fa, ff);
    printf("\n");
  }
  FILE *v = fopen("/proc/vmstat", "r");
  uint64_t pswpout = 0, thp = 0, thp_fb = 0;
  char key[64];
  unsigned long long val;
  while (v && fscanf(v, "%63s %llu", key, &val) == 2) {
    if (strcmp(key, "pswpout") == 0) pswpout = val;
    if (strcmp(key, "thp_swpout") == 0) thp = val;
    if (strcmp(key, "thp_swpout_fallback") == 0) thp_fb = val;
  }
  if (v) fclose(v);
  printf("swaplab-churn: vmstat pswpout %" PRIu64 " thp_swpout %" PRIu64
         " thp_swpout_fallback %" PRIu64 "\n",
         pswpout, thp, thp_fb);
}

static uint64_t SwapTotalPages(void) {
  struct sysinfo si;
  if (sysinfo(&si) != 0) return 0;
  return (uint64_t)si.totalswap * si.mem_unit / kPage;
}

/* memory.max of our own cgroup (v2) in pages; 0 when there is none. */
static uint64_t MemcgMaxPages(void) {
  char line[256], path[320];
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f) return 0;
  const int ok = fgets(line, sizeof line, f) != NULL && strncmp(line, "0::", 3) == 0;
  fclose(f);
  if (!ok) return 0;
  line[strcspn(line, "\n")] = '\0';
  snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
  const uint64_t bytes = ReadNumber(path); /* "max" reads as UINT64_MAX */
  return bytes == UINT64_MAX ? 0 : bytes / kPage;
}

struct Live {
  pid_t pid;
  int finished;
  uint64_t target; /* pages it writes (ChildTarget) */
};

static void KillOne(struct Live *kids, uint64_t *n, uint64_t k) {
  pid_t pid = kids[k].pid;
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
  kids[k] = kids[--*n];
}

/* Kills one of the *finished children that have reported, at random. */
static void KillRandomFinished(struct Live *kids, uint64_t *alive, uint64_t *finished,
                               uint64_t *rng) {
  uint64_t pick = Below(rng, *finished), seen = 0;
  for (uint64_t k = 0; k < *alive; k++)
    if (kids[k].finished && seen++ == pick) {
      KillOne(kids, alive, k);
      --*finished;
      return;
    }
}

/* RunChurn's arguments, checked; 0 or 2 (usage, said on stderr). */
static int ParseChurnArgs(int argc, char **argv, struct ChurnArgs *a) {
  memset(a, 0, sizeof *a);
  uint64_t *nums[] = {&a->processes, &a->concurrent,   &a->growing, &a->min_pages,
                      &a->max_pages, &a->zap_permille, &a->swapped, &a->seed};
  const char *names[] = {"PROCESSES", "CONCURRENT",   "GROWING",       "MIN_PAGES",
                         "MAX_PAGES", "ZAP_PERMILLE", "SWAPPED_PAGES", "SEED"};
  if (argc != 11) {
    fprintf(stderr,
            "usage: %s churn PROCESSES CONCURRENT GROWING MIN_PAGES MAX_PAGES ZAP_PERMILLE "
            "SWAPPED_PAGES SEED MIX\n",
            argv[0]);
    return 2;
  }
  for (int i = 0; i < 8; i++)
    if (ParseNumber(argv[2 + i], nums[i])) {
      fprintf(stderr, "swaplab-churn: bad %s '%s'\n", names[i], argv[2 + i]);
      return 2;
    }
  if (ParseMix(argv[10], a)) {
    fprintf(stderr, "swaplab-churn: bad MIX '%s' (PAGES:WEIGHT/..., PAGES a power of 2 <= 512)\n",
            argv[10]);
    return 2;
  }
  if (a->processes == 0 || a->processes > kMaxChildren || a->concurrent == 0 || a->growing == 0 ||
      a->min_pages == 0 || a->max_pages < a->min_pages || a->max_pages > (1u << 20) ||
      a->zap_permille > 1000) {
    fprintf(stderr,
            "swaplab-churn: PROCESSES 1..%d, CONCURRENT and GROWING >= 1, "
            "1 <= MIN_PAGES <= MAX_PAGES <= 2^20, ZAP_PERMILLE <= 1000\n",
            kMaxChildren);
    return 2;
  }
  return 0;
}

/* The parent's state while the children run: the steps of RunChurn. */
struct Churn {
  struct ChurnArgs a;
  int fds[2]; /* the children report on fds[1] */
  struct Live *kids;
  uint64_t alive, started, growing, finished, pages, zapped, kills, died, reported, max_used,
      growing_pages, held, held_job;
  uint64_t total_swap, room, margin, rng;
  double t0;
};

/* The report pipe, the table of children, the bounds; prints the start
 * line. 0, or 1 when the pipe or the table cannot be made. */
static int StartChurn(struct Churn *c, const char *mix) {
  if (pipe(c->fds) != 0) {
    perror("swaplab-churn: pipe");
    return 1;
  }
  c->kids = calloc(c->a.processes, sizeof *c->kids);
  if (!c->kids) return 1;
  c->held_job = UINT64_MAX;
  c->total_swap = SwapTotalPages();
  c->room = c->total_swap + MemcgMaxPages() / 2;
  /* Finished jobs also exit when free swap falls under 1/32 of the device,
   * whatever SWAPPED_PAGES says: headroom for what the growing ones write
   * between two polls. */
  c->margin = c->total_swap / 32;
  c->rng = c->a.seed ^ 0x5eed0003ull;
  c->t0 = Now();
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("swaplab-churn: start processes %" PRIu64 " concurrent %" PRIu64 " growing %" PRIu64
         " pages %" PRIu64 "..%" PRIu64 " zap %" PRIu64 "/1000 swapped %" PRIu64 " mix %s\n",
         c->a.processes, c->a.concurrent, c->a.growing, c->a.min_pages, c->a.max_pages,
         c->a.zap_permille, c->a.swapped, mix);
  return 0;
}

/* Starts children while fewer than GROWING grow and some are left to
 * start. 0, or 1 when fork fails. */
static int StartChildren(struct Churn *c) {
  while (c->growing < c->a.growing && c->started < c->a.processes) {
    /* make -j: a finished job makes room for the next one; with none
     * finished yet, wait for one. */
    if (c->alive >= c->a.concurrent) {
      if (c->finished == 0) break;
      KillRandomFinished(c->kids, &c->alive, &c->finished, &c->rng);
      c->kills++;
    }
    /* Jobs that cannot all fit wait for one to finish: growing ones are
     * never killed, so their sizes together must fit the swap device and
     * half the memcg (the other half for reclaim to work in), or the
     * memcg's OOM killer takes one. Binds only when a few big jobs
     * meet a small device (vm_patched's 1/128). */
    uint64_t unused;
    const uint64_t target = ChildTarget(&c->a, c->started, &unused);
    if (c->growing > 0 && c->growing_pages + target > c->room) {
      if (c->held_job != c->started) c->held++;
      c->held_job = c->started;
      break;
    }
    pid_t pid = fork();
    if (pid < 0) {
      perror("swaplab-churn: fork");
      return 1;
    }
    if (pid == 0) {
      close(c->fds[0]);
      Child(&c->a, c->started, c->fds[1]);
    }
    c->kids[c->alive].pid = pid;
    c->kids[c->alive].finished = 0;
    c->kids[c->alive].target = target;
    c->growing_pages += target;
    c->alive++;
    c->started++;
    c->growing++;
  }
  return 0;
}

/* Waits up to 2 ms for a child's report (pid, pages, zaps) and counts it;
 * prints progress every 8 reports and at the last. */
static void ReadReport(struct Churn *c) {
  struct pollfd pfd = {c->fds[0], POLLIN, 0};
  if (poll(&pfd, 1, 2) <= 0) return;
  uint64_t msg[3];
  if (read(c->fds[0], msg, sizeof msg) != (ssize_t)sizeof msg) return;
  for (uint64_t k = 0; k < c->alive; k++)
    if (!c->kids[k].finished && (uint64_t)c->kids[k].pid == msg[0]) {
      c->kids[k].finished = 1;
      c->growing--;
      c->growing_pages -= c->kids[k].target;
      c->finished++;
      c->pages += msg[1];
      c->zapped += msg[2];
      c->reported++;
      break;
    }
  if (c->reported % 8 == 0 || c->reported == c->a.processes)
    printf("swaplab-churn: %" PRIu64 "/%" PRIu64 " processes, swap used %" PRIu64
           " pages, %.1f s\n",
           c->reported, c->a.processes, SwapUsedPages(), Now() - c->t0);
}

/* A child the kernel killed (the memcg's OOM killer) never reports:
 * reap it so the loop does not wait for it. */
static void ReapDied(struct Churn *c) {
  for (pid_t pid; (pid = waitpid(-1, NULL, WNOHANG)) > 0;)
    for (uint64_t k = 0; k < c->alive; k++)
      if (c->kids[k].pid == pid) {
        if (c->kids[k].finished) {
          c->finished--;
        } else {
          c->growing--;
          c->growing_pages -= c->kids[k].target;
        }
        c->kids[k] = c->kids[--c->alive];
        c->died++;
        break;
      }
}

/* Kills finished children, at random, while swap holds more than SWAPPED
 * pages or less than the margin is free; records the most swap used. */
static void KillForSwap(struct Churn *c) {
  uint64_t used = SwapUsedPages();
  if (used > c->max_used) c->max_used = used;
  while (c->finished > 0 &&
         ((c->a.swapped > 0 && used > c->a.swapped) || used + c->margin > c->total_swap)) {
    KillRandomFinished(c->kids, &c->alive, &c->finished, &c->rng);
    c->kills++;
    used = SwapUsedPages();
  }
}

/* Kills every child left; prints the done line and the kernel's counters. */
static void FinishChurn(struct Churn *c) {
  while (c->alive > 0) KillOne(c->kids, &c->alive, 0);
  printf("swaplab-churn: done processes %" PRIu64 " pages %" PRIu64 " zapped %" PRIu64
         " kills %" PRIu64 " died %" PRIu64 " held %" PRIu64 " max_used %" PRIu64 " seconds %.2f\n",
         c->started, c->pages, c->zapped, c->kills, c->died, c->held, c->max_used, Now() - c->t0);
  PrintStats();
  free(c->kids);
}

int RunChurn(int argc, char **argv) {
  struct Churn c;
  memset(&c, 0, sizeof c);
  const int bad = ParseChurnArgs(argc, argv, &c.a);
  if (bad) return bad;
  if (StartChurn(&c, argv[10])) return 1;
  while (c.started < c.a.processes || c.growing > 0) {
    if (StartChildren(&c)) return 1;
    ReadReport(&c);
    ReapDied(&c);
    KillForSwap(&c);
  }
  FinishChurn(&c);
  return 0;
}
