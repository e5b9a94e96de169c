// crosscheck reads "hex<TAB>input" lines (node generate.js --hash-inputs) and checks every
// hash against a third MurmurHash3 x86_32 implementation, Debian's libmurmurhash.
// Build: apt-get install libmurmurhash-dev && cc crosscheck.c -o /tmp/crosscheck -lmurmurhash
#include <murmurhash.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long checked = 0, failed = 0;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n') line[--n] = '\0';
		char *tab = strchr(line, '\t');
		if (tab == NULL) continue;
		*tab = '\0';
		unsigned long want = strtoul(line, NULL, 16);
		const char *input = tab + 1;
		uint32_t got;
		lmmh_x86_32(input, (unsigned int)strlen(input), 0, &got);
		checked++;
		if (got != (uint32_t)want) {
			failed++;
			fprintf(stderr, "mismatch for %s: node %08lx, libmurmurhash %08x\n", input, want, got);
		}
	}
	printf("%ld hashes checked, %ld mismatches\n", checked, failed);
	return failed != 0;
}
