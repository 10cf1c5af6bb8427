/* Secrets: which names are secret (base/secret.h), which values a
 * redactor collects from commands, environments and URLs, and what
 * pg_redact hides (base/redact.h). Table-driven: one row per secret form. */
#include "testutil.h"

#include "base/buf.h"
#include "base/redact.h"
#include "base/secret.h"
#include "suite/suite.h"

#include <stdlib.h>
#include <string.h>

START_TEST(names_that_are_secret)
{
	static const char *const secret[] = {
		"HF_TOKEN",
		"OPENAI_API_KEY",
		"db_password",
		"Authorization",
		"DB_PASS",
		"MYSQL_PWD",
		"REDIS-PASS",
		"PGPASSWORD",
		"X-Amz-Signature",
		"GPG_PASSPHRASE",
		"X-Auth-Token",
		"session_cookie",
		/* a key that opens something, whatever comes before it */
		"SSH_KEY",
		"BUILDKITE_AGENT_ACCESS_TOKEN",
		"STEP_KEYRING",
		"STEPKEY",
		"STEP_KEY_TOKEN",
		"MY_STEP_SECRET_KEY",
		"KEY",
		"step_api_key",
	};
	static const char *const visible[] = {
		"VLLM_USAGE_SOURCE",
		"CUDA_VISIBLE_DEVICES",
		"BYPASS_CACHE",
		"PASSTHROUGH",
		"DATABASE_URL",
		"COMPASS_DIR",
		/* keys that name things: the step's key on every build page */
		"BUILDKITE_STEP_KEY",
		"step-key",
		"SORT_KEY",
		"KAFKA_PARTITION_KEY",
		"ROUTING_KEY",
		"CACHE_KEY",
	};

	for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		ck_assert_msg(pg_secret_name(secret[i]), "%s", secret[i]);
	for (size_t i = 0; i < sizeof(visible) / sizeof(visible[0]); i++)
		ck_assert_msg(!pg_secret_name(visible[i]), "%s", visible[i]);
	ck_assert(pg_secret_param("sig", 3));
	ck_assert(pg_secret_param("api_key", 7));
	ck_assert(!pg_secret_param("model", 5));
}
END_TEST

START_TEST(flags_that_take_secrets)
{
	static const char *const secret[] = {
		"--api-key", "--api-key=X", "--hf_token",    "--hf-token=x",    "--token=X",
		"--auth",    "--bearer",    "--db-password", "--apikey",        "--password",
		"-key",      "--db-pass",   "--auth_token",  "--authorization",
	};
	static const char *const visible[] = {
		"--tokenizer",
		"--max-num-batched-tokens",
		"--api-key-file",
		"--long-prefill-token-threshold",
		"--prefill-us-per-token",
		"--keyboard",
		"api-key",
		"--skip-tokenizer-init",
		"--password-file",
		"--step-key",
		"--cache-key=v1",
	};

	for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		ck_assert_msg(pg_secret_flag(secret[i]), "%s", secret[i]);
	for (size_t i = 0; i < sizeof(visible) / sizeof(visible[0]); i++)
		ck_assert_msg(!pg_secret_flag(visible[i]), "%s", visible[i]);
	ck_assert(pg_secret_header_flag("-H"));
	ck_assert(pg_secret_header_flag("--header"));
	ck_assert(pg_secret_header_flag("--extra-headers=x"));
	ck_assert(!pg_secret_header_flag("--header-file"));
	ck_assert(!pg_secret_header_flag("-h"));
	ck_assert(pg_secret_userpass_flag("-u"));
	ck_assert(pg_secret_userpass_flag("--user=a:b"));
	ck_assert(!pg_secret_userpass_flag("--username"));
}
END_TEST

/* What a command line shows: one row per form. */
START_TEST(commands_show_no_secret)
{
	static const struct {
		const char *argv[8];
		const char *shown;
	} rows[] = {
		{ { "vllm", "serve", "m", "--api-key", "sk-1", NULL },
		  "vllm serve m --api-key ***" },
		{ { "vllm", "serve", "--api-key=sk-1", NULL }, "vllm serve --api-key=***" },
		{ { "x", "--hf_token", "hf_1", "--token=t", NULL },
		  "x --hf_token *** --token=***" },
		{ { "x", "--auth", "a", "--bearer", "b", NULL }, "x --auth *** --bearer ***" },
		{ { "curl", "-H", "Authorization: Bearer t0k", NULL },
		  "curl -H 'Authorization: Bearer ***'" },
		{ { "bench", "--header", "X-Api-Key=k", "--header", "Accept: json", NULL },
		  "bench --header X-Api-Key=*** --header 'Accept: json'" },
		{ { "bench", "--header=Authorization=Basic dTpw", NULL },
		  "bench '--header=Authorization=Basic ***'" },
		{ { "curl", "-u", "me:pw", "-u", "justme", NULL }, "curl -u me:*** -u justme" },
		{ { "env", "HF_TOKEN=hf_1", "max_tokens=100", "vllm", NULL },
		  "env HF_TOKEN=*** max_tokens=100 vllm" },
		{ { "x", "http://u:pw@h:1/p?api_key=k&model=m", NULL },
		  "x 'http://u:***@h:1/p?api_key=***&model=m'" },
		{ { "x", "https://ghp_tok@github.com/a", "ssh://git@host/a", NULL },
		  "x https://***@github.com/a ssh://git@host/a" },
		{ { "x", "--max-num-batched-tokens", "8192", "--tokenizer", "t", NULL },
		  "x --max-num-batched-tokens 8192 --tokenizer t" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pg_redactor r = PG_REDACTOR_INIT;
		struct pg_buf out = PG_BUF_INIT;
		pg_redact_command(&r, &out, NULL, (char *const *)rows[i].argv);
		ck_assert_msg(!strcmp(out.ptr, rows[i].shown), "row %zu: %s", i, out.ptr);
		pg_buf_release(&out);
	}
}
END_TEST

START_TEST(shell_commands_show_no_secret)
{
	struct pg_redactor r = PG_REDACTOR_INIT;
	struct pg_buf out = PG_BUF_INIT;

	pg_redact_shell_command(&r, &out, NULL,
				"HF_TOKEN=abc vllm serve --api-key 'k1' --token=k2 -u 'me:pw' "
				"--hf-token \"$HF\" && curl -H 'Authorization: Bearer t' "
				"http://u:p@h/x # --api-key zz");
	ck_assert_str_eq(out.ptr, "HF_TOKEN=*** vllm serve --api-key *** --token=*** -u 'me:***' "
				  "--hf-token \"$HF\" && curl -H 'Authorization: Bearer ***' "
				  "http://u:***@h/x # --api-key zz");
	pg_buf_release(&out);
}
END_TEST

/* Free text: the patterns hidden whatever the value. */
START_TEST(patterns_in_text)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{ "GET http://ci:hunter2@h:80/v1/models?api_key=sk-abc&x=1: Failed",
		  "GET http://ci:***@h:80/v1/models?api_key=***&x=1: Failed" },
		{ "postgres://u:p@ss@db/x", "postgres://u:***@db/x" },
		{ "redis://:pw@h:6379", "redis://:***@h:6379" },
		{ "https://x-access-token:ghs_1@github.com",
		  "https://x-access-token:***@github.com" },
		{ "git ssh://git@github.com/a and mailto:me@x",
		  "git ssh://git@github.com/a and mailto:me@x" },
		{ "https://b/x?sv=2020&sig=abc%2Bdef&se=1", "https://b/x?sv=2020&sig=***&se=1" },
		{ "https://s3/x?X-Amz-Credential=AK/1&X-Amz-Signature=ff",
		  "https://s3/x?X-Amz-Credential=***&X-Amz-Signature=***" },
		{ "Authorization: Bearer abc.def\nnext", "Authorization: Bearer ***\nnext" },
		{ "authorization=Basic dTpw", "authorization=Basic ***" },
		{ "{\"Authorization\": \"Bearer abc\", \"x\": 1}",
		  "{\"Authorization\": \"Bearer ***\", \"x\": 1}" },
		{ "X-Api-Key: k1, Content-Type: json", "X-Api-Key: ***, Content-Type: json" },
		{ "Cookie: a=1; b=2\n", "Cookie: ***\n" },
		{ "got Bearer eyJhbGciOiJI.x", "got Bearer ***" },
		{ "the bearer of news", "the bearer of news" },
		{ "--max-num-batched-tokens=8192 --api-key=abc",
		  "--max-num-batched-tokens=8192 --api-key=***" },
		{ "unknown key: 'foo'; max_tokens: 100; api_key: x",
		  "unknown key: 'foo'; max_tokens: 100; api_key: x" },
		{ "Content-Type: application/json", "Content-Type: application/json" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pg_buf out = PG_BUF_INIT;
		pg_redact(NULL, &out, rows[i].in);
		ck_assert_msg(!strcmp(out.ptr, rows[i].out), "row %zu: %s", i, out.ptr);
		pg_buf_release(&out);
	}
}
END_TEST

static bool has_value(const struct pg_redactor *r, const char *v)
{
	for (size_t i = 0; i < r->values.n; i++)
		if (!strcmp(r->values.v[i], v))
			return true;
	return false;
}

static const char *lookup(void *ctx, const char *name)
{
	(void)ctx;
	return !strcmp(name, "MYKEY") ? "val-from-env-1" : NULL;
}

/* Every form a secret reaches perfgate in ends up in the redactor. */
START_TEST(values_are_collected_from_every_edge)
{
	struct pg_redactor r = PG_REDACTOR_INIT;
	struct pg_kvlist env = { 0 };
	char *environ_v[] = { "HOME=/root",
			      "DATABASE_URL=postgres://u:pa55word1@db/x",
			      "DB_PASS=hunter22",
			      "PGDSN=host=db password=s3cretpw1 dbname=x",
			      "http_proxy=http://p:proxypw1@proxy:3128",
			      NULL };
	char *argv[] = { "vllm",
			 "serve",
			 "--api-key",
			 "sk-flag-sep1",
			 "--hf_token=hf_flag_eq1",
			 "--header",
			 "Authorization: Bearer tok-header1",
			 "-u",
			 "me:pw-userpass1",
			 "http://x:pw-url-1@h/p?token=tok-query1",
			 "HF_X_TOKEN=assigned-1",
			 "--max-num-batched-tokens",
			 "8192",
			 NULL };
	static const char *const want[] = {
		"pa55word1",    "hunter22",    "s3cretpw1",   "proxypw1",
		"sk-flag-sep1", "hf_flag_eq1", "tok-header1", "pw-userpass1",
		"pw-url-1",     "tok-query1",  "assigned-1",  "val-from-env-1",
		"lit-shell-1",  "remote-pw-1", "rq-1234567",  "env-secret-1",
	};

	pg_redactor_add_environ(&r, environ_v);
	pg_redactor_add_argv(&r, argv, NULL, NULL);
	pg_redactor_add_shell(&r, "vllm serve m --api-key $MYKEY --token='lit-shell-1'", lookup,
			      NULL);
	pg_redactor_add_text(&r, "https://user:remote-pw-1@gpu-box:8000/v1?api_key=rq-1234567");
	pg_kvlist_set(&env, "MY_SECRET", "env-secret-1");
	pg_kvlist_set(&env, "MAX_LEN", "8192");
	pg_redactor_add_env(&r, &env);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(has_value(&r, want[i]), "%s not collected", want[i]);
	ck_assert(!has_value(&r, "8192"));
	ck_assert(!has_value(&r, "/root"));
	ck_assert(!has_value(&r, "$MYKEY"));
	/* longest first */
	for (size_t i = 1; i < r.values.n; i++)
		ck_assert_uint_ge(strlen(r.values.v[i - 1]), strlen(r.values.v[i]));
	pg_kvlist_release(&env);
	pg_redactor_release(&r);
}
END_TEST

START_TEST(percent_encoded_and_multiline_values)
{
	struct pg_redactor r = PG_REDACTOR_INIT;
	struct pg_buf out = PG_BUF_INIT;

	pg_redactor_add_text(&r, "postgres://u:p%40ss-word@db/x");
	ck_assert(has_value(&r, "p%40ss-word"));
	ck_assert(has_value(&r, "p@ss-word"));
	pg_redactor_add(&r,
			"-----BEGIN KEY-----\r\nAAAABBBBCCCC\n  DDDDEEEEFFFF\n-----END KEY-----\n");
	ck_assert(has_value(&r, "AAAABBBBCCCC"));
	ck_assert(has_value(&r, "DDDDEEEEFFFF"));
	/* printed one line at a time, or as repr() */
	pg_redact(&r, &out,
		  "key='-----BEGIN KEY-----\\r\\nAAAABBBBCCCC\\n  DDDDEEEEFFFF' p@ss-word");
	ck_assert_str_eq(out.ptr, "key='***\\r\\n***\\n  ***' ***");
	pg_buf_release(&out);
	pg_redactor_release(&r);
}
END_TEST

START_TEST(json_strings_are_redacted)
{
	struct pg_redactor r = PG_REDACTOR_INIT;
	json_t *v = json_pack("{s:s, s:[s, i], s:{s:s}}", "cmd", "x --api-key sk-123456789", "list",
			      "http://u:pw@h", 3, "nested", "k", "sk-123456789 again");

	pg_redactor_add(&r, "sk-123456789");
	pg_redact_json(&r, v);
	ck_assert_str_eq(json_string_value(json_object_get(v, "cmd")), "x --api-key ***");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(v, "list"), 0)),
			 "http://u:***@h");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(v, "nested"), "k")),
			 "*** again");
	json_decref(v);
	pg_redactor_release(&r);
}
END_TEST

/* The log writer's core: known values and patterns marked, runs emitted
 * as one mask each, no secret byte left. */
START_TEST(mark_and_emit)
{
	const char *text = "a sk-abcdefgh b sk-abcdefghij http://u:x@h c";
	struct pg_secret_span v[] = { { "sk-abcdefghij", 13 }, { "sk-abcdefgh", 11 }, { "ab", 2 } };
	size_t n = strlen(text);
	unsigned char *mask = calloc(n, 1);
	struct pg_buf out = PG_BUF_INIT;

	pg_redact_mark_values(text, n, v, 3, mask);
	pg_redact_mark_patterns(text, n, mask);
	pg_redact_emit(&out, text, n, mask);
	ck_assert_str_eq(out.ptr, "a *** b *** http://u:***@h c");
	free(mask);
	pg_buf_release(&out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("secret");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, names_that_are_secret);
	tcase_add_test(tc, flags_that_take_secrets);
	suite_add_tcase(s, tc);
	tc = tcase_create("redact");
	tcase_add_test(tc, commands_show_no_secret);
	tcase_add_test(tc, shell_commands_show_no_secret);
	tcase_add_test(tc, patterns_in_text);
	tcase_add_test(tc, values_are_collected_from_every_edge);
	tcase_add_test(tc, percent_encoded_and_multiline_values);
	tcase_add_test(tc, json_strings_are_redacted);
	tcase_add_test(tc, mark_and_emit);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
