/*
 * The Prometheus text parser (telemetry/prom.c) on whatever an engine's
 * /metrics answers, and the engine signals read from what it kept
 * (telemetry/engine.c). A scrape is outside input: any server on the port
 * answers it, and a proxy or a crashed engine can answer anything.
 */
#include "fuzz.h"

#include "base/error.h"
#include "telemetry/engine.h"
#include "telemetry/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_engine_state st;
	char *text = fz_dup(data, size);
	int rc = pg_prom_parse(&p, text, size, &err);

	/* an error names its line; success leaves no line out */
	FZ_CHECK(rc == 0 ? p.n_errors == 0 : (p.n_errors > 0 && !strncmp(err.msg, "line ", 5)));
	for (size_t i = 0; i < p.n_samples; i++) {
		const struct pg_prom_sample *s = &p.samples[i];

		FZ_CHECK(s->name && s->family < p.n_families && s->line >= 1);
		for (size_t j = 0; j < s->n_labels; j++)
			FZ_CHECK(s->labels[j].name && s->labels[j].value);
		FZ_CHECK(pg_prom_family(&p, p.families[s->family].name) == &p.families[s->family]);
	}
	(void)pg_engine_state_read(&st, &p);
	pg_prom_release(&p);
	free(text);
	return 0;
}
