/*
 * mock_load: a purpose-built load client for bench/mock-server (not part of
 * perfgate). Holds N keep-alive connections to the mock server, each
 * running streaming completions back to back, over raw non-blocking
 * sockets and one epoll loop, so the client costs as little as possible.
 *
 * usage: mock_load PORT CONNECTIONS SECONDS MAX_TOKENS [RAMP_SECONDS]
 * Connections open evenly over RAMP_SECONDS (default 2), so the streams'
 * token deadlines are spread in time as independent users' would be, not
 * all due in the same instant. Prints one line of key=value figures.
 */
#define _GNU_SOURCE
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

struct conn {
	int fd;
	int connected;
	char tail[8]; /* last 6 bytes of the previous read, for matches across reads */
	size_t tail_len;
	long messages; /* in the current response */
};

static long total_messages, completed, errors, open_now, peak_open;
static char request[512];
static size_t request_len;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int send_request(struct conn *c)
{
	ssize_t n = send(c->fd, request, request_len, MSG_NOSIGNAL);
	c->messages = 0;
	return n == (ssize_t)request_len ? 0 : -1;
}

/* Count "data: {" (a token message) and find "[DONE]" across reads. */
static int scan(struct conn *c, const char *buf, size_t len, int *done)
{
	char joined[65536 + 8];
	size_t n = c->tail_len + len;

	memcpy(joined, c->tail, c->tail_len);
	memcpy(joined + c->tail_len, buf, len);
	for (size_t i = 0; i + 7 <= n; i++) {
		if (joined[i] != 'd' && joined[i] != '[')
			continue;
		if (!memcmp(joined + i, "data: {", 7)) {
			c->messages++;
			total_messages++;
		} else if (i + 6 <= n && !memcmp(joined + i, "[DONE]", 6)) {
			*done = 1;
		}
	}
	c->tail_len = n < 6 ? n : 6;
	memcpy(c->tail, joined + n - c->tail_len, c->tail_len);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct rlimit rl;
	struct epoll_event events[1024];
	struct conn *conns;
	int ep, port, nconn, started = 0;
	double seconds, t0, end, ramp;
	long max_tokens;
	char body[256];

	if (argc != 5 && argc != 6) {
		fprintf(stderr,
			"usage: mock_load PORT CONNECTIONS SECONDS MAX_TOKENS [RAMP_SECONDS]\n");
		return 2;
	}
	port = (int)strtol(argv[1], NULL, 10);
	nconn = (int)strtol(argv[2], NULL, 10);
	seconds = strtod(argv[3], NULL);
	max_tokens = strtol(argv[4], NULL, 10);
	ramp = argc == 6 ? strtod(argv[5], NULL) : 2.0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	snprintf(body, sizeof(body),
		 "{\"prompt\":[1,2,3,4,5,6,7,8],\"max_tokens\":%ld,\"stream\":true,"
		 "\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true}",
		 max_tokens);
	request_len = (size_t)snprintf(
		request, sizeof(request),
		"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		"Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		strlen(body), body);
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	conns = calloc((size_t)nconn, sizeof(*conns));
	ep = epoll_create1(0);
	t0 = now_s();
	end = t0 + seconds;

	while (now_s() < end) {
		double due = ramp > 0 ? (now_s() - t0) / ramp * nconn : nconn;
		for (; started < nconn && started < due; started++) {
			struct conn *c = &conns[started];
			struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET,
						  .data.ptr = c };
			int one = 1;
			c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (c->fd < 0) {
				errors++;
				continue;
			}
			setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			if (connect(c->fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 &&
			    errno != EINPROGRESS) {
				errors++;
				close(c->fd);
				c->fd = -1;
				continue;
			}
			epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
		}
		int n = epoll_wait(ep, events, 1024, started < nconn ? 1 : 10);
		for (int i = 0; i < n; i++) {
			struct conn *c = events[i].data.ptr;
			if (c->fd < 0)
				continue;
			if (events[i].events & (EPOLLERR | EPOLLHUP)) {
				errors++;
				close(c->fd);
				c->fd = -1;
				if (c->connected)
					open_now--;
				continue;
			}
			if (!c->connected && (events[i].events & EPOLLOUT)) {
				c->connected = 1;
				if (++open_now > peak_open)
					peak_open = open_now;
				if (send_request(c))
					errors++;
			}
			if (events[i].events & EPOLLIN) {
				char buf[65536];
				for (;;) {
					ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
					int done = 0;
					if (r <= 0) {
						if (r < 0 && (errno == EAGAIN || errno == EINTR))
							break;
						errors++;
						close(c->fd);
						c->fd = -1;
						open_now--;
						break;
					}
					scan(c, buf, (size_t)r, &done);
					if (done) {
						completed++;
						c->tail_len = 0;
						if (now_s() < end && send_request(c))
							errors++;
					}
				}
			}
		}
	}
	{
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("client_connections_peak=%ld client_open_at_end=%ld streams_completed=%ld "
		       "messages_received=%ld errors=%ld seconds=%.3f client_cpu_s=%.2f\n",
		       peak_open, open_now, completed, total_messages, errors, now_s() - t0,
		       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	}
	for (int i = 0; i < started; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
	free(conns);
	return 0;
}
