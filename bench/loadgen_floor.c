/*
 * The floor client (run by bench/loadgen): the least a client can do to
 * ingest the same SSE streams, so perfgate's CPU per token has a reference
 * measured on the same machine, against the same server, in the same run.
 *
 * One epoll thread, level-triggered, one recv per readiness into one
 * shared buffer; it counts `data: ` lines and notices the end of a chunked
 * response ("\r\n0\r\n\r\n") to send the next request on the connection.
 * No HTTP parsing, no timestamps, no allocation per event. Connections are
 * opened before measuring, as perfgate's driver does.
 *
 *   perfgate_bench_floor --url http://127.0.0.1:PORT --requests N
 *       [--output-len L] [--input-len I] [--max-concurrency C]
 *
 * Prints one JSON object: requests, data lines, tokens (data lines minus
 * the usage message and [DONE] of every request), duration and CPU time
 * (user + system) of the measured part.
 */
#include "bench_args.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* the longest pattern, minus one: what a pattern split over two reads can
 * leave in the previous one */
#define CARRY 6

struct conn {
	int fd;
	unsigned char carry_len;
	char carry[CARRY];
};

static const char DATA[] = "data: ";
static const char END[] = "\r\n0\r\n\r\n";

/* user and system CPU seconds */
static void cpu_s(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long num_arg(int argc, char **argv, const char *name, long def)
{
	const char *v = bench_arg(argc, argv, name, NULL);
	char *end;
	long n;

	if (!v)
		return def;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 0) {
		fprintf(stderr, "perfgate_bench_floor: %s: not a count: %s\n", name, v);
		exit(2);
	}
	return n;
}

/* Occurrences of pat in buf (no overlaps: neither pattern overlaps itself
 * at a proper suffix that matters here). */
static size_t count(const char *buf, size_t len, const char *pat, size_t plen)
{
	size_t n = 0;
	const char *p = buf, *end = buf + len;

	/* memchr for the first byte (vectorised), then a compare: cheaper
	 * than glibc's memmem for these short patterns */
	while ((size_t)(end - p) >= plen && (p = memchr(p, pat[0], (size_t)(end - p) - plen + 1))) {
		if (!memcmp(p, pat, plen)) {
			n++;
			p += plen;
		} else {
			p++;
		}
	}
	return n;
}

/* Matches of pat that start in the carry and end in the new bytes. */
static size_t straddling(const struct conn *c, const char *buf, size_t len, const char *pat,
			 size_t plen)
{
	char join[2 * CARRY];
	size_t head = len < plen - 1 ? len : plen - 1, n = 0;

	memcpy(join, c->carry, c->carry_len);
	memcpy(join + c->carry_len, buf, head);
	for (size_t i = 0; i < c->carry_len; i++)
		n += i + plen > c->carry_len && i + plen <= c->carry_len + head &&
		     !memcmp(join + i, pat, plen);
	return n;
}

static void keep_tail(struct conn *c, const char *buf, size_t len)
{
	if (len >= CARRY) {
		memcpy(c->carry, buf + len - CARRY, CARRY);
		c->carry_len = CARRY;
		return;
	}
	/* a short read: the old tail's end, then the new bytes */
	{
		size_t keep = CARRY - len < c->carry_len ? CARRY - len : c->carry_len;
		memmove(c->carry, c->carry + c->carry_len - keep, keep);
		memcpy(c->carry + keep, buf, len);
		c->carry_len = (unsigned char)(keep + len);
	}
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EAGAIN) {
			/* the request is small and the socket idle: never in practice */
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * The measured part: send the first requests, then read until n responses
 * ended, one recv per readiness. Its own function so that bench/loadgen
 * --instructions can count it alone (callgrind --toggle-collect=ingest).
 */
__attribute__((noinline)) static int ingest(int epfd, struct conn *conns, long nconn, long n,
					    const char *req, size_t req_len,
					    unsigned long long *lines_out)
{
	static char buf[65536];
	struct epoll_event evs[256];
	unsigned long long lines = 0;
	long sent = 0, done = 0;
	int idle = 0;

	for (long i = 0; i < nconn; i++, sent++)
		if (send_all(conns[i].fd, req, req_len)) {
			perror("perfgate_bench_floor: send");
			return -1;
		}
	while (done < n) {
		int nev = epoll_wait(epfd, evs, 256, 1000);

		if (nev < 0 && errno != EINTR) {
			perror("perfgate_bench_floor: epoll_wait");
			return -1;
		}
		if (nev <= 0) {
			if (nev == 0 && ++idle > 60) {
				fprintf(stderr, "perfgate_bench_floor: no data for 60 s\n");
				return -1;
			}
			continue;
		}
		for (int i = 0; i < nev; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
			size_t len, ends;

			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				fprintf(stderr,
					"perfgate_bench_floor: the server closed a connection\n");
				return -1;
			}
			len = (size_t)r;
			lines += count(buf, len, DATA, sizeof(DATA) - 1) +
				 straddling(c, buf, len, DATA, sizeof(DATA) - 1);
			ends = count(buf, len, END, sizeof(END) - 1) +
			       straddling(c, buf, len, END, sizeof(END) - 1);
			keep_tail(c, buf, len);
			for (size_t k = 0; k < ends; k++) {
				done++;
				c->carry_len = 0;
				if (sent < n) {
					sent++;
					if (send_all(c->fd, req, req_len)) {
						perror("perfgate_bench_floor: send");
						return -1;
					}
				}
			}
		}
		idle = 0;
	}
	*lines_out = lines;
	return 0;
}

int main(int argc, char **argv)
{
	const char *url = bench_arg(argc, argv, "--url", NULL);
	long n = num_arg(argc, argv, "--requests", 100);
	long output_len = num_arg(argc, argv, "--output-len", 100);
	long input_len = num_arg(argc, argv, "--input-len", 32);
	long maxc = num_arg(argc, argv, "--max-concurrency", 0);
	char body[65536], req[70000];
	size_t body_len = 0, req_len;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct conn *conns;
	unsigned port;
	long nconn;
	unsigned long long lines = 0;
	double user0, sys0, user1, sys1, t0;
	int epfd;

	if (!url || sscanf(url, "http://127.0.0.1:%u", &port) != 1) {
		fprintf(stderr, "usage: perfgate_bench_floor --url http://127.0.0.1:PORT "
				"[--requests N] [--output-len L] [--max-concurrency C]\n");
		return 2;
	}
	/* the body perfgate_bench_loadgen sends */
	body_len += (size_t)snprintf(body, sizeof(body),
				     "{\"model\":\"perfgate-mock\",\"prompt\":[");
	for (long i = 0; i < input_len && body_len < sizeof(body) - 64; i++)
		body_len += (size_t)snprintf(body + body_len, sizeof(body) - body_len,
					     i ? ",%ld" : "%ld", 1000 + i);
	body_len += (size_t)snprintf(
		body + body_len, sizeof(body) - body_len,
		"],\"repetition_penalty\":1.0,\"max_tokens\":%ld,\"logprobs\":null,"
		"\"stream\":true,\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true}",
		output_len);
	req_len = (size_t)snprintf(req, sizeof(req),
				   "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
				   "Accept: */*\r\nContent-Type: application/json\r\n"
				   "Content-Length: %zu\r\n\r\n%s",
				   port, body_len, body);

	nconn = maxc && maxc < n ? maxc : n;
	conns = calloc((size_t)(nconn ? nconn : 1), sizeof(*conns));
	epfd = epoll_create1(0);
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	{
		struct rlimit rl;
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	for (long i = 0; i < nconn; i++) {
		int one = 1;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &conns[i] };

		conns[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (conns[i].fd < 0 || connect(conns[i].fd, (struct sockaddr *)&sa, sizeof(sa))) {
			perror("perfgate_bench_floor: connect");
			return 3;
		}
		setsockopt(conns[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		epoll_ctl(epfd, EPOLL_CTL_ADD, conns[i].fd, &ev);
	}

	bench_perf_ctl("enable");
	cpu_s(&user0, &sys0);
	t0 = now_s();
	if (ingest(epfd, conns, nconn, n, req, req_len, &lines))
		return 3;
	cpu_s(&user1, &sys1);
	bench_perf_ctl("disable");
	{
		double dur = now_s() - t0;
		unsigned long long tokens = lines > 2ULL * (unsigned long long)n
						    ? lines - 2ULL * (unsigned long long)n
						    : 0;
		printf("{\"requests\":%ld,\"data_lines\":%llu,\"tokens\":%llu,\"duration_s\":%.6f,"
		       "\"client_cpu_s\":%.6f,\"client_user_s\":%.6f,\"client_sys_s\":%.6f}\n",
		       n, lines, tokens, dur, user1 + sys1 - user0 - sys0, user1 - user0,
		       sys1 - sys0);
	}
	for (long i = 0; i < nconn; i++)
		close(conns[i].fd);
	free(conns);
	close(epfd);
	return 0;
}
