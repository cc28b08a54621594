/* dwarfcheck's libdw location-list helper: which entries of the location
 * list of the variable `v` elfutils libdw selects at a program counter.
 *
 * Usage: libdw_loclist FILE PC (PC in hexadecimal or decimal), or
 * libdw_loclist --version (prints libdw's version).
 * Output, one line each:
 *   selected N          N = dwarf_getlocation_addr's count (-1: error)
 *   entry START END SEL one per entry dwarf_getlocations reports, in order;
 *                       SEL 1 when dwarf_getlocation_addr returned its
 *                       operations (compared by the operations' address)
 *   error TEXT          libdw's message, when a call fails
 * Exit status 0 when the variable was found, 2 otherwise. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SELECTED 64

/* The DW_TAG_variable named "v" among the children of `parent` and of
 * their children (the unit, then its subprograms). */
static int find_v(Dwarf_Die *parent, Dwarf_Die *out, int depth) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0)
        return 0;
    do {
        const char *name = dwarf_diename(&child);
        if (dwarf_tag(&child) == DW_TAG_variable && name != NULL && strcmp(name, "v") == 0) {
            *out = child;
            return 1;
        }
        if (depth > 0 && find_v(&child, out, depth - 1))
            return 1;
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("libdw %s\n", dwfl_version(NULL));
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: %s FILE PC\n", argv[0]);
        return 64;
    }
    Dwarf_Addr pc = strtoull(argv[2], NULL, 0);
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 66;
    }
    Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
    if (dw == NULL) {
        printf("error %s\n", dwarf_errmsg(-1));
        return 2;
    }
    Dwarf_Off off = 0, next;
    size_t header;
    Dwarf_Die v;
    int found = 0;
    while (!found && dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
        Dwarf_Die unit;
        if (dwarf_offdie(dw, off + header, &unit) != NULL)
            found = find_v(&unit, &v, 1);
        off = next;
    }
    if (!found) {
        printf("error no variable v\n");
        return 2;
    }
    Dwarf_Attribute attr;
    if (dwarf_attr(&v, DW_AT_location, &attr) == NULL) {
        printf("error no DW_AT_location\n");
        return 2;
    }
    Dwarf_Op *selected[MAX_SELECTED];
    size_t lengths[MAX_SELECTED];
    int n = dwarf_getlocation_addr(&attr, pc, selected, lengths, MAX_SELECTED);
    printf("selected %d\n", n);
    if (n < 0)
        printf("error %s\n", dwarf_errmsg(-1));
    ptrdiff_t at = 0;
    Dwarf_Addr base, start, end;
    Dwarf_Op *ops;
    size_t len;
    while ((at = dwarf_getlocations(&attr, at, &base, &start, &end, &ops, &len)) > 0) {
        int sel = 0;
        for (int i = 0; i < n && i < MAX_SELECTED; i++)
            sel |= selected[i] == ops;
        printf("entry %#" PRIx64 " %#" PRIx64 " %d\n", (uint64_t)start, (uint64_t)end, sel);
    }
    if (at < 0)
        printf("error %s\n", dwarf_errmsg(-1));
    dwarf_end(dw);
    close(fd);
    return 0;
}
