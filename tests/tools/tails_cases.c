/*
 * tails-cases: results/tails.h on cases read from stdin, one per line, for
 * tests/py/test_tails_reference.py, which compares the answers with its own
 * reference (scipy's betainc and exact binomial sums):
 *
 *   B a b x      -> I_x(a, b)
 *   H t p c      -> h_min(t)
 *   R n p c      -> the rank of the certified p-quantile of n samples
 *   P n t p c    -> "passes fails" (0 or 1 each)
 *   T p df       -> the p-quantile of Student's t with df degrees of freedom
 *
 * Answers go to stdout, one line per case, doubles in "%.17g".
 */
#include "results/tails.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char line[256];

	while (fgets(line, sizeof(line), stdin)) {
		double a, b, x, p, c;
		long n, t;

		if (sscanf(line, "B %lf %lf %lf", &a, &b, &x) == 3)
			printf("%.17g\n", pg_tails_betai(a, b, x));
		else if (sscanf(line, "H %ld %lf %lf", &t, &p, &c) == 3)
			printf("%ld\n", pg_tails_h_min(t, p, c));
		else if (sscanf(line, "R %ld %lf %lf", &n, &p, &c) == 3)
			printf("%ld\n", pg_tails_rank(n, p, c));
		else if (sscanf(line, "T %lf %lf", &p, &x) == 2)
			printf("%.17g\n", pg_tails_t_quantile(p, x));
		else if (sscanf(line, "P %ld %ld %lf %lf", &n, &t, &p, &c) == 4)
			printf("%d %d\n", pg_tails_passes(n, t, p, c), pg_tails_fails(n, t, p, c));
		else {
			fprintf(stderr, "tails-cases: cannot read: %s", line);
			return 2;
		}
	}
	return 0;
}
