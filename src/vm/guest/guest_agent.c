// SPDX-License-Identifier: MIT
/* swaplab guest agent: runs inside the vm tests' qemu guest, started by the
 * initramfs's /init. Static, no dependencies beyond libc.
 *
 *   swaplab_guest_agent hibernate PAGES SEED
 *       Fills PAGES pages of anonymous memory with the seeded pattern, mlocks
 *       them (so they are in the hibernation image, not in swap), sets
 *       /sys/power/disk to "shutdown" and writes "disk" to /sys/power/state.
 *       The guest powers off once the image is saved. When the write returns
 *       in a resumed guest, every pattern page is checked and the count
 *       printed. Then the guest powers off.
 *   swaplab_guest_agent layout LAYOUT SWAP_PAGES IMAGE_PAGES SEED TRACE_DEV
 *       Prepares one of seed 001's swap layouts on the active swap area with
 *       the running kernel (LAYOUT fresh | shuffled | holes, scaled to
 *       SWAP_PAGES, the area's size header included), as the RFC did and as
 *       src/workload/layouts.cc models it:
 *         shuffled  90% of the area swapped out as 2 MiB chunks of anonymous
 *                   memory (4 KiB pages, MADV_PAGEOUT page by page), then
 *                   every chunk unmapped, chunks in a seeded random order;
 *         holes     a third of the area swapped out as 4 KiB pages, then
 *                   every other 64 KiB of it freed (MADV_DONTNEED).
 *       Writes what it did as a swaplab trace (`alloc`, then `expect` with
 *       the slot read from /proc/self/pagemap, then `free`) to the block
 *       device TRACE_DEV, NUL-terminated, then fills memory with mlocked
 *       pattern pages until about IMAGE_PAGES pages are in use and
 *       hibernates as `hibernate` does.
 *   swaplab_guest_agent churn PROCESSES CONCURRENT GROWING MIN_PAGES MAX_PAGES
 *                             ZAP_PERMILLE SWAPPED_PAGES SEED MIX
 *       Seed 003's build-like load (churn.c), then the mTHP swap-out
 *       counters; the guest powers off after it.
 *   swaplab_guest_agent check-page PAGES SEED
 *       Prints the pattern pages to stdout (for testing the generator against
 *       the host's copy of it; no hibernation).
 *
 * Pattern page i (4096 bytes), all integers little-endian:
 *   0..15    "SWAPLAB-PATTERN\0"
 *   16..23   u64 seed
 *   24..31   u64 page index i
 *   32..4095 508 u64 words w[k] = splitmix64 output k+1 of the state seed ^ i
 *            (state += 0x9E3779B97F4A7C15; z = state; z = (z ^ z >> 30) *
 *            0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB;
 *            w = z ^ z >> 31)
 * tests/vm/vm_check.py regenerates the same pages on the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <time.h>
#include <unistd.h>

#include "churn.h"

enum { kPageSize = 4096, kWords = (kPageSize - 32) / 8 };
static const char kTag[16] = "SWAPLAB-PATTERN"; /* 15 chars + NUL */

static uint64_t NextSplitMix(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void PutLe64(unsigned char *p, uint64_t v) {
  for (int b = 0; b < 8; b++) p[b] = (unsigned char)(v >> (8 * b));
}

/* Writes pattern page `index` of `seed` into page[0..4095]. */
static void MakePage(unsigned char *page, uint64_t seed, uint64_t index) {
  memcpy(page, kTag, sizeof kTag);
  PutLe64(page + 16, seed);
  PutLe64(page + 24, index);
  uint64_t state = seed ^ index;
  for (int k = 0; k < kWords; k++) PutLe64(page + 32 + 8 * k, NextSplitMix(&state));
}

static double Uptime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes `value` to a sysfs file; returns 0 or the errno of the write. */
static int WriteSysfs(const char *path, const char *value) {
  int fd = open(path, O_WRONLY);
  if (fd < 0) return errno;
  ssize_t n = write(fd, value, strlen(value));
  int err = n < 0 ? errno : 0;
  close(fd);
  return err;
}

static void PowerOff(void) {
  fflush(stdout);
  sync();
  reboot(RB_POWER_OFF);
  /* Only reached when not allowed to power off (not PID 1's session). */
  perror("swaplab-agent: reboot(RB_POWER_OFF)");
  exit(1);
}

static int Hibernate(uint64_t pages, uint64_t seed) {
  size_t bytes = (size_t)pages * kPageSize;
  unsigned char *mem =
      mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    perror("swaplab-agent: mmap");
    return 1;
  }
  for (uint64_t i = 0; i < pages; i++) MakePage(mem + i * kPageSize, seed, i);
  if (mlock(mem, bytes) != 0) {
    perror("swaplab-agent: mlock");
    return 1;
  }
  printf("swaplab-agent: pattern %" PRIu64 " pages seed %" PRIu64 "\n", pages, seed);
  /* /init turned the swap disk's writeback throttling off for the layout
   * (see init.sh); the image is written with the kernel's default. */
  const char *wbt = getenv("SWAPLAB_WBT_LAT_USEC");
  if (wbt != NULL && *wbt != '\0') {
    int werr = WriteSysfs("/sys/block/vda/queue/wbt_lat_usec", wbt);
    printf("swaplab-agent: wbt_lat_usec %s%s%s\n", wbt, werr ? ": " : "",
           werr ? strerror(werr) : "");
  }
  int err = WriteSysfs("/sys/power/disk", "shutdown");
  if (err != 0) {
    printf("swaplab-agent: cannot set /sys/power/disk to shutdown: %s\n", strerror(err));
    return 1;
  }
  printf("swaplab-agent: hibernating at uptime %.2f s\n", Uptime());
  fflush(stdout);
  err = WriteSysfs("/sys/power/state", "disk");
  if (err != 0) {
    printf("swaplab-agent: hibernation failed: %s\n", strerror(err));
    return 1;
  }
  /* Here only in the resumed guest (with disk=shutdown the saving one powers off). */
  unsigned char want[kPageSize];
  uint64_t bad = 0;
  for (uint64_t i = 0; i < pages; i++) {
    MakePage(want, seed, i);
    if (memcmp(want, mem + i * kPageSize, kPageSize) != 0) bad++;
  }
  if (bad == 0)
    printf("swaplab-agent: resumed, %" PRIu64 " pattern pages intact\n", pages);
  else
    printf("swaplab-agent: resumed, %" PRIu64 " of %" PRIu64 " pattern pages differ\n", bad, pages);
  printf("swaplab-agent: resumed at uptime %.2f s\n", Uptime());
  return bad == 0 ? 0 : 1;
}

/* ---- layout mode ------------------------------------------------------ */

typedef struct {
  char *buf;
  size_t len, cap;
} Text;

static void Append(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void Append(Text *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = t->cap ? 2 * t->cap : 1 << 20;
    t->buf = realloc(t->buf, t->cap);
    if (!t->buf) {
      printf("swaplab-agent: out of memory for the trace\n");
      exit(1);
    }
  }
}

/* The swap slot of the page at `addr` (pagemap: bit 62 swapped, bits 0-4
 * type, bits 5-54 offset); 0 when the page is not in swap. */
static uint64_t SwapOffsetOf(int pagemap, const void *addr, int *type) {
  uint64_t e = 0;
  off_t at = (off_t)((uintptr_t)addr / kPageSize) * 8;
  if (pread(pagemap, &e, sizeof e, at) != (ssize_t)sizeof e) return 0;
  if (!(e & (1ull << 62))) return 0;
  *type = (int)(e & 0x1f);
  return (e >> 5) & ((1ull << 50) - 1);
}

static uint64_t MemInfoKb(const char *key) {
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  uint64_t v = 0;
  size_t kl = strlen(key);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, key, kl) == 0 && line[kl] == ':') v = strtoull(line + kl + 1, NULL, 10);
  if (f) fclose(f);
  return v;
}

/* Until swap writeback is done (so unmapping frees the slots at once, as
 * the trace's `free` says), at most 20 s. */
static void WaitWriteback(void) {
  for (int i = 0; i < 200 && MemInfoKb("Writeback") != 0; i++) usleep(100000);
}

/* Swaps out `n` fresh pages at `p` one by one (the order the trace's
 * `alloc` lines give) with folio ids first, first+1, ... */
static void PageOut(unsigned char *p, uint64_t n, uint64_t first, Text *t) {
  madvise(p, n * kPageSize, MADV_NOHUGEPAGE);
  for (uint64_t i = 0; i < n; i++) {
    p[i * kPageSize] = 1; /* non-zero: a zero-filled page is not written */
    memcpy(p + i * kPageSize + 8, &i, sizeof i);
  }
  for (uint64_t i = 0; i < n; i++) {
    madvise(p + i * kPageSize, kPageSize, MADV_PAGEOUT);
    Append(t, "alloc folio=%" PRIu64 " order=0 cpu=0\n", first + i);
  }
}

/* `expect` lines for pages [0, n) at `p` (folios first...); counts misses. */
static uint64_t Expect(int pagemap, const unsigned char *p, uint64_t n, uint64_t first, Text *t) {
  uint64_t missing = 0;
  for (uint64_t i = 0; i < n; i++) {
    int type = 0;
    uint64_t off = SwapOffsetOf(pagemap, p + i * kPageSize, &type);
    if (off == 0) {
      missing++;
      continue;
    }
    Append(t, "expect folio=%" PRIu64 " dev=%d offset=%" PRIu64 "\n", first + i, type, off);
  }
  return missing;
}

static void Frees(uint64_t first, uint64_t n, Text *t) {
  for (uint64_t i = 0; i < n; i++) Append(t, "free folio=%" PRIu64 "\n", first + i);
}

/* Whether the swap disk is solid state as the kernel sees it (its
 * queue/rotational 0): the trace's swapon line says so, since 6.12 gives
 * only such devices clusters. Unreadable: solid state. */
static int SwapDiskSsd(void) {
  char buf[8] = {0};
  int fd = open("/sys/block/vda/queue/rotational", O_RDONLY);
  if (fd < 0) return 1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return !(n > 0 && buf[0] == '1');
}

/* A layout being made: the trace written so far, pagemap, and the pages
 * swapped out, not found in swap, and freed (PrepareLayout's steps). */
struct Layout {
  Text t;
  int pagemap;
  uint64_t swap_pages, seed, swapped, missing, freed;
};

/* Fills order[0..chunks) with the order in which the shuffled layout frees
 * its chunks: Fisher-Yates with the layout's seed. */
static void ShuffleOrder(uint64_t *order, uint64_t chunks, uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t c = 0; c < chunks; c++) order[c] = c;
  for (uint64_t c = chunks; c > 1; c--) { /* Fisher-Yates */
    uint64_t j = NextSplitMix(&state) % c, tmp = order[c - 1];
    order[c - 1] = order[j];
    order[j] = tmp;
  }
}

/* `shuffled`: 90% of the device swapped out in 2 MiB chunks, then every
 * chunk freed in a random order. 0, or 1 when a chunk cannot be mapped. */
static int LayoutShuffled(struct Layout *l) {
  enum { kChunk = 512 }; /* 2 MiB */
  uint64_t chunks = l->swap_pages * 9 / 10 / kChunk;
  unsigned char **mem = calloc(chunks ? chunks : 1, sizeof *mem);
  uint64_t *order = calloc(chunks ? chunks : 1, sizeof *order);
  for (uint64_t c = 0; c < chunks; c++) {
    mem[c] =
        mmap(NULL, kChunk * kPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem[c] == MAP_FAILED) {
      perror("swaplab-agent: mmap");
      return 1;
    }
    PageOut(mem[c], kChunk, 1 + c * kChunk, &l->t);
  }
  for (uint64_t c = 0; c < chunks; c++)
    l->missing += Expect(l->pagemap, mem[c], kChunk, 1 + c * kChunk, &l->t);
  l->swapped = chunks * kChunk - l->missing;
  WaitWriteback();
  ShuffleOrder(order, chunks, l->seed);
  for (uint64_t k = 0; k < chunks; k++) {
    uint64_t c = order[k];
    munmap(mem[c], kChunk * kPageSize);
    Frees(1 + c * kChunk, kChunk, &l->t);
    l->freed += kChunk;
  }
  return 0;
}

/* `holes`: a third of the device swapped out, then every other 64 KiB
 * piece freed. 0, or 1 when the memory cannot be mapped. */
static int LayoutHoles(struct Layout *l) {
  enum { kPiece = 16 }; /* 64 KiB */
  uint64_t n = l->swap_pages / 3 / (2 * kPiece) * (2 * kPiece);
  unsigned char *mem = mmap(NULL, (n ? n : 1) * kPageSize, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    perror("swaplab-agent: mmap");
    return 1;
  }
  PageOut(mem, n, 1, &l->t);
  l->missing = Expect(l->pagemap, mem, n, 1, &l->t);
  l->swapped = n - l->missing;
  WaitWriteback();
  for (uint64_t i = kPiece; i < n; i += 2 * kPiece) {
    madvise(mem + i * kPageSize, kPiece * kPageSize, MADV_DONTNEED);
    Frees(1 + i, kPiece, &l->t);
    l->freed += kPiece;
  }
  return 0;
}

/* Writes the trace, NUL-terminated and padded to whole pages, to
 * `trace_dev` and says what the layout did. 0, or 1 on a failed write. */
static int WriteLayoutTrace(struct Layout *l, const char *layout, const char *trace_dev) {
  int fd = open(trace_dev, O_WRONLY);
  if (fd < 0) {
    printf("swaplab-agent: cannot open %s: %s\n", trace_dev, strerror(errno));
    return 1;
  }
  size_t total = l->t.len + 1; /* with the NUL */
  size_t padded = (total + 4095) / 4096 * 4096;
  char *out = calloc(1, padded);
  memcpy(out, l->t.buf, l->t.len);
  if (write(fd, out, padded) != (ssize_t)padded || fsync(fd) != 0) {
    printf("swaplab-agent: writing the trace to %s failed: %s\n", trace_dev, strerror(errno));
    return 1;
  }
  close(fd);
  free(out);
  printf("swaplab-agent: layout %s: %" PRIu64 " pages swapped out, %" PRIu64
         " not in swap, %" PRIu64 " freed; trace %zu bytes on %s\n",
         layout, l->swapped, l->missing, l->freed, l->t.len, trace_dev);
  return 0;
}

static int PrepareLayout(const char *layout, uint64_t swap_pages, uint64_t seed,
                         const char *trace_dev) {
  struct Layout l = {.swap_pages = swap_pages, .seed = seed};
  Append(&l.t,
         "swaplab-trace 1\n# swaplab guest agent: layout %s, seed %" PRIu64
         ", kernel's placements as expect\n",
         layout, seed);
  Append(&l.t, "swapon dev=0 pages=%" PRIu64 " ssd=%d blkdev=1\n", swap_pages, SwapDiskSsd());
  l.pagemap = open("/proc/self/pagemap", O_RDONLY);
  if (l.pagemap < 0) {
    perror("swaplab-agent: /proc/self/pagemap");
    return 1;
  }
  int rc = 0;
  if (strcmp(layout, "shuffled") == 0) {
    rc = LayoutShuffled(&l);
  } else if (strcmp(layout, "holes") == 0) {
    rc = LayoutHoles(&l);
  } else if (strcmp(layout, "fresh") != 0) {
    printf("swaplab-agent: unknown layout '%s'\n", layout);
    return 2;
  }
  if (rc) return rc;
  close(l.pagemap);
  Append(&l.t, "# end\n");
  rc = WriteLayoutTrace(&l, layout, trace_dev);
  if (rc == 0) free(l.t.buf);
  return rc;
}

/* Pattern pages that bring the memory in use to about `image_pages`. */
static uint64_t FillPages(uint64_t image_pages) {
  uint64_t used_kb = MemInfoKb("MemTotal") - MemInfoKb("MemFree");
  uint64_t used = used_kb / 4;
  printf("swaplab-agent: %" PRIu64 " pages in use before the fill\n", used);
  return image_pages > used + 1 ? image_pages - used : 1;
}

static uint64_t ParseU64(const char *s, const char *what) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno != 0 || *end != '\0' || end == s) {
    fprintf(stderr, "swaplab-agent: bad %s '%s'\n", what, s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "churn") == 0) {
    int rc = RunChurn(argc, argv);
    if (getpid() == 1 || getenv("SWAPLAB_AGENT_POWEROFF")) PowerOff();
    return rc;
  }
  if (argc == 7 && strcmp(argv[1], "layout") == 0) {
    uint64_t swap_pages = ParseU64(argv[3], "SWAP_PAGES");
    uint64_t image_pages = ParseU64(argv[4], "IMAGE_PAGES");
    uint64_t seed = ParseU64(argv[5], "SEED");
    int rc = PrepareLayout(argv[2], swap_pages, seed, argv[6]);
    if (rc == 0) rc = Hibernate(FillPages(image_pages), seed);
    if (getpid() == 1 || getenv("SWAPLAB_AGENT_POWEROFF")) PowerOff();
    return rc;
  }
  if (argc != 4) {
    fprintf(stderr,
            "usage: %s hibernate|check-page PAGES SEED | layout LAYOUT SWAP_PAGES IMAGE_PAGES SEED "
            "TRACE_DEV | churn ...\n",
            argv[0]);
    return 2;
  }
  uint64_t pages = ParseU64(argv[2], "PAGES");
  uint64_t seed = ParseU64(argv[3], "SEED");
  if (strcmp(argv[1], "check-page") == 0) {
    unsigned char page[kPageSize];
    for (uint64_t i = 0; i < pages; i++) {
      MakePage(page, seed, i);
      fwrite(page, 1, sizeof page, stdout);
    }
    return 0;
  }
  if (strcmp(argv[1], "hibernate") != 0) {
    fprintf(stderr, "swaplab-agent: unknown mode '%s'\n", argv[1]);
    return 2;
  }
  int rc = Hibernate(pages, seed);
  if (getpid() == 1 || getenv("SWAPLAB_AGENT_POWEROFF")) PowerOff();
  return rc;
}
