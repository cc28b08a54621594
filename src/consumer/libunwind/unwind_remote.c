/* Unwinds machine states through an x86-64 .eh_frame section with the
   nongnu libunwind's remote API, and prints every step it makes
   (docs/consumers.md, "libunwind").

   Usage: unwind_remote INPUT      (INPUT: a file; "-" for stdin)
          unwind_remote --version

   INPUT is a list of whitespace-separated records, every number in hex:

     S KIND ADDR LEN SEGBASE TABLE N
       BYTES                       a frame section: LEN bytes at ADDR, then
       START FDE  (N times)        the bytes (two hex digits each, one
                                   token), then a search table of N
                                   entries (32-bit two's-complement
                                   offsets: an FDE's initial location from
                                   SEGBASE, and the FDE's address from
                                   SEGBASE for .eh_frame or from the
                                   section's start for .debug_frame),
                                   sorted by START. Applies to the cases
                                   after it.
                                   KIND "e", .eh_frame: the address space
                                   serves the section at ADDR and the table
                                   at TABLE (an .eh_frame_hdr table), and
                                   libunwind searches it as a remote table
                                   (UNW_INFO_FORMAT_REMOTE_TABLE).
                                   KIND "d", .debug_frame: libunwind reads
                                   the section and table from this
                                   process's memory (UNW_INFO_FORMAT_TABLE,
                                   as it does for a .debug_frame it loads
                                   itself); SEGBASE is 0 and TABLE unused.
     C ID STEPS PC SEED NREG NMEM  one unwinding: at most STEPS steps from
       REGNO VALUE  (NREG times)   the top frame at PC with these registers
       ADDR LEN BYTES (NMEM times) (libunwind's x86-64 numbers, which are
                                   the DWARF numbers 0-16) and memory.
                                   SEED "-": memory nothing gives cannot be
                                   read; else such a byte is the synthetic
                                   byte of the seed (below).

   Output, per case:

     CASE ID
     STEP RET PC CFA IP R0 ... R16 one per unw_step that returned >= 0
                                   without falling back to heuristics:
                                   its return code (decimal), the frame's
                                   pc, the frame's CFA (UNW_X86_64_CFA
                                   after the step), the caller's pc, and
                                   the caller's registers 0-16 ("-" where
                                   unw_get_reg fails)
     END KIND CODE                 how it ended: base (unw_step returned
                                   0), limit (STEPS made), error (a
                                   negative return code CODE), noinfo (the
                                   step found no FDE and libunwind fell back
                                   to its frame-chain heuristics; that step
                                   is not printed), init (unw_init_remote
                                   failed with CODE)

   Each case gets an address space of its own with caching off, so that no
   answer depends on the cases before it. Built by dwarfcheck at first use
   against Debian's libunwind-dev (cc ... -lunwind-x86_64 -lunwind). */

#include <inttypes.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table search libunwind exports but does not declare. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

#define NREGS 17

struct range {
  uint64_t addr;
  uint64_t len;
  unsigned char *bytes;
};

/* libunwind 1.6.2's descriptor of a .debug_frame held in local memory
   (struct unw_debug_frame_list of its include/dwarf.h), which
   UNW_INFO_FORMAT_TABLE's table_data points to. */
struct debug_frame_list {
  unw_word_t start;
  unw_word_t end;
  unw_word_t load_offset;
  char *debug_frame;
  size_t debug_frame_size;
  void *index;
  size_t index_size;
  struct debug_frame_list *next;
};

#if UNW_VERSION_MAJOR != 1 || UNW_VERSION_MINOR != 6
#error "the .debug_frame descriptor above is libunwind 1.6's"
#endif

struct section {
  int debug_frame;     /* 1: .debug_frame, 0: .eh_frame */
  struct range frames; /* the section's bytes */
  struct range table;  /* the search table */
  uint64_t segbase;
  uint64_t nentries;
  uint64_t lo, hi; /* [lo, hi): the code the table can answer for */
};

struct state {
  const struct section *sec;
  int has_reg[NREGS];
  uint64_t reg[NREGS];
  struct range *mem;
  uint64_t nmem;
  int synthetic;
  uint64_t seed;
  int noinfo; /* set when find_proc_info finds no FDE */
};

/* The synthetic machine state's memory (dwarfcheck_core::context::synthetic:
   a SplitMix64 finaliser over the seed, address space 0 and the word). */
static uint64_t mix(uint64_t z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int in_range(const struct range *r, uint64_t a, unsigned char *out)
{
  if (r->bytes != NULL && a >= r->addr && a - r->addr < r->len) {
    *out = r->bytes[a - r->addr];
    return 1;
  }
  return 0;
}

/* One byte of the address space: the search table, the section, the
   case's memory, then the synthetic state, in that order. */
static int byte_at(const struct state *s, uint64_t a, unsigned char *out)
{
  if (!s->sec->debug_frame && (in_range(&s->sec->table, a, out) || in_range(&s->sec->frames, a, out)))
    return 1;
  for (uint64_t i = 0; i < s->nmem; i++)
    if (in_range(&s->mem[i], a, out))
      return 1;
  if (s->synthetic) {
    uint64_t word = mix(s->seed ^ mix(0x100) ^ (a & ~7ULL));
    *out = (unsigned char)(word >> ((a & 7) * 8));
    return 1;
  }
  return 0;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
  (void)as;
  const struct state *s = arg;
  if (write)
    return -UNW_EINVAL;
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) {
    unsigned char b;
    if (!byte_at(s, addr + (uint64_t)i, &b))
      return -UNW_EINVAL;
    v |= (uint64_t)b << (8 * i);
  }
  *val = v;
  return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
  (void)as;
  const struct state *s = arg;
  if (write || reg < 0 || reg >= NREGS || !s->has_reg[reg])
    return -UNW_EBADREG;
  *val = s->reg[reg];
  return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
  (void)as, (void)reg, (void)val, (void)write, (void)arg;
  return -UNW_EBADREG;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
  struct state *s = arg;
  const struct section *sec = s->sec;
  int ret = -UNW_ENOINFO;
  if (sec->nentries > 0 && ip >= sec->lo && ip < sec->hi) {
    unw_dyn_info_t di;
    struct debug_frame_list list;
    memset(&di, 0, sizeof di);
    di.start_ip = sec->lo;
    di.end_ip = sec->hi;
    if (sec->debug_frame) {
      memset(&list, 0, sizeof list);
      list.start = sec->lo;
      list.end = sec->hi;
      list.debug_frame = (char *)sec->frames.bytes;
      list.debug_frame_size = sec->frames.len;
      list.index = sec->table.bytes;
      list.index_size = sec->table.len; /* in bytes */
      di.format = UNW_INFO_FORMAT_TABLE;
      di.u.ti.segbase = sec->segbase;
      di.u.ti.table_len = sec->nentries;
      di.u.ti.table_data = (unw_word_t *)&list;
    } else {
      di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
      di.u.rti.segbase = sec->segbase;
      di.u.rti.table_len = sec->nentries; /* in words: one 8-byte entry each */
      di.u.rti.table_data = sec->table.addr;
    }
    ret = _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need, arg);
  }
  if (ret == -UNW_ENOINFO)
    s->noinfo = 1;
  return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
  /* libunwind's table search takes the unwind info from a pool of its
     own; there is nothing to free here. */
  (void)as, (void)pi, (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
  (void)as, (void)addr, (void)arg;
  return -UNW_ENOINFO;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
  (void)as, (void)c, (void)arg;
  return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t ip, char *buf, size_t len, unw_word_t *off, void *arg)
{
  (void)as, (void)ip, (void)buf, (void)len, (void)off, (void)arg;
  return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
  .find_proc_info = find_proc_info,
  .put_unwind_info = put_unwind_info,
  .get_dyn_info_list_addr = get_dyn_info_list_addr,
  .access_mem = access_mem,
  .access_reg = access_reg,
  .access_fpreg = access_fpreg,
  .resume = resume,
  .get_proc_name = get_proc_name,
};

static int read_hex(FILE *in, uint64_t *v)
{
  return fscanf(in, "%" SCNx64, v) == 1;
}

/* LEN bytes written as one token of hex digit pairs. */
static unsigned char *read_bytes(FILE *in, uint64_t len)
{
  unsigned char *b = malloc(len ? len : 1);
  if (b == NULL)
    return NULL;
  if (fscanf(in, " ") < 0 && len > 0) {
    free(b);
    return NULL;
  }
  for (uint64_t i = 0; i < len; i++) {
    unsigned int x;
    if (fscanf(in, "%2x", &x) != 1) {
      free(b);
      return NULL;
    }
    b[i] = (unsigned char)x;
  }
  return b;
}

static void free_section(struct section *sec)
{
  free(sec->frames.bytes);
  free(sec->table.bytes);
  memset(sec, 0, sizeof *sec);
}

static int read_section(FILE *in, struct section *sec)
{
  uint64_t table_addr;
  char kind[2];
  free_section(sec);
  if (fscanf(in, "%1s", kind) != 1 || (kind[0] != 'e' && kind[0] != 'd'))
    return 0;
  sec->debug_frame = kind[0] == 'd';
  if (!read_hex(in, &sec->frames.addr) || !read_hex(in, &sec->frames.len) || !read_hex(in, &sec->segbase)
      || !read_hex(in, &table_addr) || !read_hex(in, &sec->nentries))
    return 0;
  sec->frames.bytes = read_bytes(in, sec->frames.len);
  if (sec->frames.bytes == NULL)
    return 0;
  sec->table.addr = table_addr;
  sec->table.len = sec->nentries * 8;
  /* Zeroed, and eight times the table's size: libunwind 1.6.2's local
     table search compares the entry after the one found against the
     table's size in bytes as if it were a count of entries, and reads
     it. */
  sec->table.bytes = calloc(sec->table.len * 8 + 8, 1);
  if (sec->table.bytes == NULL)
    return 0;
  sec->lo = UINT64_MAX;
  sec->hi = 0;
  for (uint64_t i = 0; i < sec->nentries; i++) {
    uint64_t start, fde;
    if (!read_hex(in, &start) || !read_hex(in, &fde))
      return 0;
    uint32_t w[2] = { (uint32_t)start, (uint32_t)fde };
    memcpy(sec->table.bytes + 8 * i, w, 8);
    uint64_t at = sec->segbase + (uint64_t)(int64_t)(int32_t)w[0];
    if (at < sec->lo)
      sec->lo = at;
  }
  /* The table says where FDEs start, not where they end: libunwind checks
     the FDE's own range. Ask it for anything from the first start on. */
  if (sec->nentries > 0)
    sec->hi = UINT64_MAX;
  return 1;
}

static void unwind_case(FILE *in, const struct section *sec)
{
  uint64_t id, steps, pc, nreg, nmem;
  char seed[32];
  struct state s;
  memset(&s, 0, sizeof s);
  s.sec = sec;
  if (!read_hex(in, &id) || !read_hex(in, &steps) || !read_hex(in, &pc) || fscanf(in, "%31s", seed) != 1
      || !read_hex(in, &nreg) || !read_hex(in, &nmem)) {
    printf("ERR bad case record\n");
    exit(0);
  }
  if (strcmp(seed, "-") != 0) {
    s.synthetic = 1;
    s.seed = strtoull(seed, NULL, 16);
  }
  for (uint64_t i = 0; i < nreg; i++) {
    uint64_t r, v;
    if (!read_hex(in, &r) || !read_hex(in, &v)) {
      printf("ERR bad register record\n");
      exit(0);
    }
    if (r < NREGS) {
      s.has_reg[r] = 1;
      s.reg[r] = v;
    }
  }
  s.has_reg[UNW_X86_64_RIP] = 1;
  s.reg[UNW_X86_64_RIP] = pc;
  s.nmem = nmem;
  s.mem = calloc(nmem ? nmem : 1, sizeof *s.mem);
  for (uint64_t i = 0; i < nmem; i++) {
    if (s.mem == NULL || !read_hex(in, &s.mem[i].addr) || !read_hex(in, &s.mem[i].len)
        || (s.mem[i].bytes = read_bytes(in, s.mem[i].len)) == NULL) {
      printf("ERR bad memory record\n");
      exit(0);
    }
  }
  printf("CASE %" PRIx64 "\n", id);
  fflush(stdout);

  unw_addr_space_t as = unw_create_addr_space(&accessors, 0);
  unw_set_caching_policy(as, UNW_CACHE_NONE);
  unw_cursor_t cursor;
  int ret = unw_init_remote(&cursor, as, &s);
  if (ret < 0) {
    printf("END init %d\n", ret);
  } else {
    for (uint64_t n = 0;; n++) {
      if (n >= steps) {
        printf("END limit 0\n");
        break;
      }
      unw_word_t frame_pc = 0, cfa = 0, ip = 0;
      unw_get_reg(&cursor, UNW_REG_IP, &frame_pc);
      s.noinfo = 0;
      ret = unw_step(&cursor);
      if (s.noinfo) {
        printf("END noinfo %d\n", ret);
        break;
      }
      if (ret < 0) {
        printf("END error %d\n", ret);
        break;
      }
      unw_get_reg(&cursor, UNW_X86_64_CFA, &cfa);
      unw_get_reg(&cursor, UNW_REG_IP, &ip);
      printf("STEP %d %" PRIx64 " %" PRIx64 " %" PRIx64, ret, (uint64_t)frame_pc, (uint64_t)cfa, (uint64_t)ip);
      for (int r = 0; r < NREGS; r++) {
        unw_word_t v;
        if (unw_get_reg(&cursor, r, &v) == 0)
          printf(" %" PRIx64, (uint64_t)v);
        else
          printf(" -");
      }
      printf("\n");
      if (ret == 0) {
        printf("END base 0\n");
        break;
      }
    }
  }
  fflush(stdout);
  unw_destroy_addr_space(as);
  for (uint64_t i = 0; i < nmem; i++)
    free(s.mem[i].bytes);
  free(s.mem);
}

int main(int argc, char **argv)
{
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("libunwind %d.%d.%d (remote x86-64)\n", UNW_VERSION_MAJOR, UNW_VERSION_MINOR, UNW_VERSION_EXTRA);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: unwind_remote INPUT\n");
    return 2;
  }
  FILE *in = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "r");
  if (in == NULL) {
    printf("ERR cannot read the input\n");
    return 0;
  }
  struct section sec;
  memset(&sec, 0, sizeof sec);
  char kind[4];
  while (fscanf(in, "%3s", kind) == 1) {
    if (strcmp(kind, "S") == 0) {
      if (!read_section(in, &sec)) {
        printf("ERR bad section record\n");
        return 0;
      }
    } else if (strcmp(kind, "C") == 0) {
      unwind_case(in, &sec);
    } else {
      printf("ERR unknown record %s\n", kind);
      return 0;
    }
  }
  free_section(&sec);
  return 0;
}
