/* Prints the row tables elfutils libdw gives for the FDEs listed in a file,
   in dwarfcheck's row text (docs/consumers.md, "Row text").

   Usage: libdw_rows ELF FDES NREGS
     ELF    an ELF file holding one frame section (.eh_frame or .debug_frame)
     FDES   lines "OFFSET BEGIN END" (hex): the FDEs to print, by their
            section offset and code range
     NREGS  register numbers 0..NREGS-1 are asked for

   For each FDE the rows are libdw's frames from BEGIN on: each frame's
   [start, end) from dwarf_frame_info, its CFA (dwarf_frame_cfa) and every
   register rule but "undefined" (dwarf_frame_register). libdw answers with
   operation lists;
   the shapes it uses for the DWARF rules are turned back into rules, and
   anything else is printed "opaque". Built by dwarfcheck at first use
   against Debian's libdw-dev (cc ... -ldw -lelf). */

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_cfa(Dwarf_Frame *frame)
{
  Dwarf_Op *ops;
  size_t nops;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0)
    printf(" cfa=none");
  else if (nops == 1 && ops[0].atom == DW_OP_bregx)
    printf(" cfa=reg:%" PRIu64 ":%" PRId64, ops[0].number, (int64_t)ops[0].number2);
  else
    printf(" cfa=opaque");
}

static void print_rule(Dwarf_Frame *frame, int regno)
{
  Dwarf_Op mem[3];
  Dwarf_Op *ops = NULL;
  size_t nops = 0;
  if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
    return; /* no such register for the ABI */
  if (nops == 0) {
    /* "undefined" is what libdw reports for every register the ABI and
       the entry leave alone, so it is not printed (docs/consumers.md). */
    if (ops == NULL)
      printf(" %d=same", regno);
    return;
  }
  int value = ops[nops - 1].atom == DW_OP_stack_value;
  size_t n = value ? nops - 1 : nops;
  if (n >= 1 && ops[0].atom == DW_OP_call_frame_cfa) {
    if (n == 1) {
      printf(" %d=%s:0", regno, value ? "valoff" : "off");
      return;
    }
    if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
      printf(" %d=%s:%" PRId64, regno, value ? "valoff" : "off", (int64_t)ops[1].number);
      return;
    }
  }
  if (!value && n == 1 && ops[0].atom == DW_OP_regx) {
    printf(" %d=reg:%" PRIu64, regno, ops[0].number);
    return;
  }
  printf(" %d=opaque", regno);
}

int main(int argc, char **argv)
{
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("libdw %s\n", dwfl_version(NULL));
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, "usage: libdw_rows ELF FDES NREGS\n");
    return 2;
  }
  int nregs = atoi(argv[3]);
  elf_version(EV_CURRENT);
  int fd = open(argv[1], O_RDONLY);
  Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
  if (elf == NULL) {
    printf("ERR section cannot open the ELF file\n");
    return 0;
  }
  /* .eh_frame through dwarf_getcfi_elf; .debug_frame through a Dwarf. */
  Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
  Dwarf *dw = NULL;
  if (cfi == NULL) {
    dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    cfi = dw == NULL ? NULL : dwarf_getcfi(dw);
  }
  if (cfi == NULL) {
    printf("ERR section no call frame information: %s\n", dwarf_errmsg(-1));
    return 0;
  }
  FILE *list = fopen(argv[2], "r");
  if (list == NULL) {
    printf("ERR section cannot read the FDE list\n");
    return 0;
  }
  uint64_t off, begin, end;
  while (fscanf(list, "%" SCNx64 " %" SCNx64 " %" SCNx64, &off, &begin, &end) == 3) {
    printf("FDE %#" PRIx64 " cie=0x0 pc=%#" PRIx64 "..%#" PRIx64 "\n", off, begin, end);
    uint64_t pc = begin;
    /* At most one row per address: a bound on a frame that does not advance. */
    for (uint64_t rows = 0; pc < end && rows <= end - begin; rows++) {
      Dwarf_Frame *frame;
      if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0) {
        printf("ERR %#" PRIx64 " at %#" PRIx64 ": %s\n", off, pc, dwarf_errmsg(-1));
        break;
      }
      Dwarf_Addr start, stop;
      bool signalp;
      dwarf_frame_info(frame, &start, &stop, &signalp);
      printf("ROW %#" PRIx64, pc);
      print_cfa(frame);
      for (int r = 0; r < nregs; r++)
        print_rule(frame, r);
      printf("\n");
      free(frame);
      if (stop <= pc)
        break;
      pc = stop;
    }
  }
  fclose(list);
  if (dw != NULL)
    dwarf_end(dw);
  else
    dwarf_cfi_end(cfi);
  elf_end(elf);
  close(fd);
  return 0;
}
