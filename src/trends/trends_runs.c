/* A point page's runs for its script (pg_trends_runs_script): every run's
 * number, commit, date, build and charted values, shown on hover over a
 * chart, a build linked on click. */
#include "trends/trends.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/strutil.h"

#include <stdlib.h>
#include <string.h>

/*
 * The script. Data D, one R per point: D[0] on a point's page, D[k] for
 * the one page's section data-r="k". R: n (run number per record, 0: not used), c and d
 * (commit, date: one string each, a space between records), b and u (a
 * build's URL as b + u, u null: none), v (per column: D, then per record
 * the value times 10^D, or a hole). A chart with data-m (its
 * column) and data-f (its frame: left, right, first and last run, bottom,
 * top, lowest and highest value), its data the R of the section around
 * it (D[0] outside one), marks the run nearest the pointer and
 * shows it in a tooltip; a click keeps the tooltip, with a link to the
 * build; Escape or a click elsewhere lets it go. Text only through
 * textContent: the history's strings are never markup.
 */
static const char script[] =
	"(function(){var t=document.createElement('div'),pin=0;t.className='tip';"
	"D.forEach(function(R){R.c=R.c.split(' ');R.d=R.d.split(' ')});"
	"document.body.appendChild(t);"
	"function el(n,s){var e=document.createElement(n);e.textContent=s;return e}"
	"function hide(){pin=0;t.style.display='none';"
	"document.querySelectorAll('circle.hl').forEach(function(c){c.remove()})}"
	"function show(g,e,keep){var f=g.getAttribute('data-f').split(' ').map(Number),"
	"q=g.closest('[data-r]'),R=D[q?+q.getAttribute('data-r'):0],"
	"v=R.v[+g.getAttribute('data-m')],s=Math.pow(10,v[0]),r=g.getBoundingClientRect(),"
	"x=(e.clientX-r.left)*g.viewBox.baseVal.width/r.width,"
	"j=f[2]+(x-f[0])/(f[1]-f[0])*(f[3]-f[2]),k=-1,b=4;"
	"for(var i=0;i<R.n.length;i++)if(R.n[i]&&v[i+1]!=null&&Math.abs(R.n[i]-1-j)<b)"
	"{b=Math.abs(R.n[i]-1-j);k=i}"
	"if(k<0){if(!pin)hide();return}"
	"var c=g.querySelector('circle.hl'),w=v[k+1]/s,y=f[4]-(w-f[6])/(f[7]-f[6])*(f[4]-f[5]);"
	"if(!c){c=document.createElementNS('http://www.w3.org/2000/svg','circle');"
	"c.setAttribute('class','hl');c.setAttribute('r','4');g.appendChild(c)}"
	"c.setAttribute('cx',f[0]+(R.n[k]-1-f[2])/(f[3]-f[2])*(f[1]-f[0]));"
	"c.setAttribute('cy',Math.min(Math.max(y,f[5]-20),f[4]+20));"
	"t.textContent='';t.appendChild(el('b','run #'+R.n[k]+': '+w));"
	"t.appendChild(el('span',' '+R.c[k]+' · '+R.d[k]+' '));"
	"if(R.u[k]!=null){var a=el('a','build');a.href=R.b+R.u[k];t.appendChild(a)}"
	"if(!keep)t.appendChild(el('i',' (click to keep)'));"
	"t.style.left=e.pageX+12+'px';t.style.top=e.pageY+14+'px';t.style.display='block';"
	"pin=keep;t.className=keep?'tip pin':'tip'}"
	"document.querySelectorAll('svg[data-m]').forEach(function(g){"
	"g.addEventListener('mousemove',function(e){if(!pin)show(g,e,0)});"
	"g.addEventListener('mouseleave',function(){if(!pin)hide()});"
	"g.addEventListener('click',function(e){e.stopPropagation();show(g,e,1)})});"
	"document.addEventListener('click',function(e){if(pin&&!t.contains(e.target))hide()});"
	"document.addEventListener('keydown',function(e){if(e.key==='Escape')hide()})})();";

/* The first n bytes of s inside a JavaScript string in a <script>: no
 * quote, backslash, '<' or control byte that could end it or the element
 * (the history's strings are anyone's who can push to it), no U+2028 or
 * U+2029 (line ends to engines before ES2019), and no space: in a list
 * (in_list) the strings are separated by spaces (a no-break space
 * instead); elsewhere, as a URL, it stays a space (\u0020). */
static bool plain(unsigned char c)
{
	return c > ' ' && c != '<' && c != '>' && c != '&' && c != '"' && c != '\\' && c != 0xe2;
}

static void js_chars(struct pg_buf *o, const char *s, size_t n, bool in_list)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t k = 0; k < n && s[k]; k++) {
		unsigned char c = (unsigned char)s[k];
		size_t run = 0;
		/* the plain bytes at once */
		while (k + run < n && plain((unsigned char)s[k + run]))
			run++;
		if (run) {
			pg_buf_add(o, s + k, run);
			k += run - 1;
			continue;
		}
		if (c == ' ') {
			pg_buf_puts(o, in_list ? "\\u00a0" : "\\u0020");
		} else if (c == 0xe2 && k + 2 < n && (unsigned char)s[k + 1] == 0x80 &&
			   ((unsigned char)s[k + 2] == 0xa8 || (unsigned char)s[k + 2] == 0xa9)) {
			pg_buf_puts(o, (unsigned char)s[k + 2] == 0xa8 ? "\\u2028" : "\\u2029");
			k += 2;
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == '"' || c == '\\') {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			pg_buf_add(o, e, sizeof(e));
		} else {
			pg_buf_putc(o, (char)c);
		}
	}
}

static void js_str(struct pg_buf *o, const char *s, size_t n)
{
	pg_buf_putc(o, '"');
	js_chars(o, s, n, false);
	pg_buf_putc(o, '"');
}

static bool linked(const char *url)
{
	return url && (!strncmp(url, "https://", 8) || !strncmp(url, "http://", 7));
}

/*
 * Point i's values of m per record as "[D,v,,v...]": each value as "%g"
 * writes it (what the runs' table shows: g, "" a hole) times 10^D, a
 * whole number the script divides back (exactly: both are doubles, the
 * quotient the nearest one to the decimal) -- a byte less a value than
 * with its point; D = 0 and the "%g" strings when that is not shorter.
 * len and dec: scratch for n values.
 */
static void column(struct pg_buf *o, size_t n, const char (*g)[PG_FMT_DOUBLE_SIZE],
		   unsigned char *len, signed char *dec)
{
	int d_max = 0;
	size_t plain = 0, scaled = 0;

	/* each string's length and decimals (-1: an exponent's) */
	for (size_t k = 0; k < n; k++) {
		const char *c = g[k], *dot;
		size_t l = strlen(c);
		int d;
		len[k] = (unsigned char)l;
		dec[k] = 0;
		if (!l)
			continue;
		dot = memchr(c, '.', l);
		d = memchr(c, 'e', l) ? -1 : dot ? (int)(l - (size_t)(dot - c) - 1) : 0;
		dec[k] = (signed char)d;
		d_max = d < 0 || d_max < 0 ? -1 : d > d_max ? d : d_max;
	}
	for (size_t k = 0; d_max > 0 && k < n; k++) {
		/* the point out, zeros in; a leading "0" of "0.5" out too */
		plain += len[k];
		if (len[k])
			scaled += len[k] - (dec[k] > 0) + (size_t)(d_max - dec[k]) -
				  (g[k][g[k][0] == '-'] == '0');
	}
	if (d_max <= 0 || scaled >= plain)
		d_max = 0;
	pg_buf_putc(o, '[');
	pg_buf_long(o, d_max);
	for (size_t k = 0; k < n; k++) {
		const char *c = g[k], *end;
		char *b, *b0;
		bool lead = false;
		pg_buf_putc(o, ',');
		if (!d_max) {
			pg_buf_add(o, c, len[k]);
			continue;
		}
		if (!len[k])
			continue;
		/* the digits without the point and without leading zeros: "%g"
		 * writes a whole part without them, and "0" before a fraction's */
		b = b0 = pg_buf_space(o, PG_FMT_DOUBLE_SIZE + (size_t)d_max);
		end = c + len[k];
		if (*c == '-')
			*b++ = *c++;
		if (*c == '0') {
			for (c++; c < end && (*c == '.' || *c == '0'); c++)
				;
			lead = c == end;
		} else {
			size_t whole = (size_t)(end - c) - (size_t)(dec[k] > 0) - (size_t)dec[k];
			memcpy(b, c, whole);
			b += whole;
			c += whole + (dec[k] > 0);
		}
		if (lead) { /* all zeros (or -0): "0", not "00", an octal literal */
			pg_buf_putc(o, '0');
			continue;
		}
		memcpy(b, c, (size_t)(end - c));
		b += end - c;
		for (int z = dec[k]; z < d_max; z++)
			*b++ = '0';
		pg_buf_wrote(o, (size_t)(b - b0));
	}
	pg_buf_putc(o, ']');
}

void pg_trends_runs_code(struct pg_buf *o)
{
	pg_buf_puts(o, "<script>");
	pg_buf_puts(o, script);
	pg_buf_puts(o, "</script>\n");
}

void pg_trends_runs_script(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i,
			   const char (*g)[PG_FMT_DOUBLE_SIZE], size_t n_cols, long section)
{
	const struct pg_history *h = &t->hs[i];
	const char *first = NULL;
	size_t prefix = 0;
	unsigned char *len = pg_xmalloc(h->n + 1);
	signed char *dec = pg_xmalloc(h->n + 1);

	/* the builds' common prefix, to its last '/', said once */
	for (size_t k = 0; k < h->n; k++) {
		const char *u = h->recs[k].build_url;
		if (!linked(u))
			continue;
		if (!first) {
			first = u;
			prefix = strlen(u);
		}
		for (size_t p = 0; p < prefix; p++)
			if (u[p] != first[p]) {
				prefix = p;
				break;
			}
	}
	while (prefix > 0 && first[prefix - 1] != '/')
		prefix--;

	if (section < 0)
		pg_buf_puts(o, "<script>var D=[{n:[");
	else
		pg_buf_printf(o, "<script>D[%ld]={n:[", section);
	for (size_t k = 0; k < h->n; k++) {
		long j = t->a->rec_job[i][k];
		if (k)
			pg_buf_putc(o, ',');
		pg_buf_long(o, j >= 0 ? j + 1 : 0);
	}
	/* commits and dates: a string each, split at spaces */
	pg_buf_puts(o, "],\nc:\"");
	for (size_t k = 0; k < h->n; k++) {
		if (k)
			pg_buf_putc(o, ' ');
		js_chars(o, h->recs[k].commit ? h->recs[k].commit : "", 12, true);
	}
	pg_buf_puts(o, "\",\nd:\"");
	for (size_t k = 0; k < h->n; k++) {
		if (k)
			pg_buf_putc(o, ' ');
		js_chars(o, h->recs[k].date ? h->recs[k].date : "", 10, true);
	}
	pg_buf_puts(o, "\",\nb:");
	js_str(o, first ? first : "", prefix);
	pg_buf_puts(o, ",u:[");
	for (size_t k = 0; k < h->n; k++) {
		const char *u = h->recs[k].build_url;
		if (k)
			pg_buf_putc(o, ',');
		if (linked(u))
			js_str(o, u + prefix, (size_t)-1);
		else
			pg_buf_puts(o, "null");
	}
	pg_buf_puts(o, "],\nv:[");
	for (size_t m = 0; m < n_cols; m++) {
		pg_buf_puts(o, m ? ",\n" : "");
		column(o, h->n, g + m * h->n, len, dec);
	}
	pg_buf_puts(o, section < 0 ? "]}];\n" : "]};</script>\n");
	if (section < 0) {
		pg_buf_puts(o, script);
		pg_buf_puts(o, "</script>\n");
	}
	free(len);
	free(dec);
}
