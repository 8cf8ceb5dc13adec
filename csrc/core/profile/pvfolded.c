/*
 * Each frame's token is made once; a stack is then the array of its token
 * ids, interned in a key table with the weights summed beside it.  Only the
 * unique lines are spelled out, sorted and joined.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/keytab.h"
#include "profile/profview.h"
#include "profile/pvfolded.h"
#include "profile/stacktab.h"

/* s escaped as folded.lua's escape(), spaces as '_' when comm; interned. */
static int token(struct profview *pv, const char *s, size_t n, const char *suffix, int comm,
		 uint32_t *id)
{
	char small[512], *buf = small;
	size_t need = 2 * n + 8, o = 0, i;
	int rc;

	if (need > sizeof small && !(buf = malloc(need)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' || c == ';') {
			buf[o++] = '\\';
			buf[o++] = c;
		} else if (c == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = (char)(comm && c == ' ' ? '_' : c);
		}
	}
	if (suffix) {
		memcpy(buf + o, suffix, 4);
		o += 4;
	}
	rc = profview__intern(pv, buf, o, id);
	if (buf != small)
		free(buf);
	return rc;
}

struct line {
	const char *s;
	size_t len;
	uint64_t w;
};

static int line_order(const void *x, const void *y)
{
	const struct line *a = x, *b = y;
	int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

int profview__folded(struct profview *pv, const struct pvfolded_opts *o, char **text,
		     size_t *len)
{
	size_t nframes = profview__nframes(pv), ns = profview__nstacks(pv), i, n, out = 0;
	uint32_t *tok = malloc((nframes ? nframes : 1) * sizeof *tok);
	size_t keycap = 256, ncomm = 0, wcap = 1024;
	uint32_t *key = malloc(keycap * sizeof *key);
	uint32_t *ctok = NULL;      /* per comm string id: its token + 1 */
	uint64_t *w = calloc(wcap, sizeof *w);
	struct keytab *lines = keytab__new();
	struct line *lv = NULL;
	char *buf = NULL, *words = NULL;
	int rc = 0;

	*text = NULL;
	*len = 0;
	if (!tok || !lines || !key || !w) {
		rc = -ENOMEM;
		goto done;
	}
	for (i = 0; i < nframes && !rc; i++) {
		const struct pv_frame *f = profview__frame(pv, (uint32_t)i);
		const char *suffix = NULL;
		if (o->annotate)
			suffix = f->kind == PV_KERNEL ? "_[k]" : f->kind == PV_JIT ? "_[j]" :
				 f->kind == PV_INLINE ? "_[i]" : NULL;
		rc = token(pv, profview__str(pv, f->label), profview__strlen(pv, f->label),
			   suffix, 0, &tok[i]);
	}
	for (i = 0; i < ns && !rc; i++) {
		struct stacktab_entry e;
		const uint32_t *ids;
		unsigned nf, j, k = 0;
		uint32_t comm = profview__comm(pv, i), id;
		int added;

		if (o->keep && !o->keep[i])
			continue;
		profview__stack(pv, i, &ids, &nf);
		if (nf + 1 > keycap) {
			uint32_t *nk = realloc(key, (nf + 1) * sizeof *nk);
			if (!nk) { rc = -ENOMEM; break; }
			key = nk;
			keycap = nf + 1;
		}
		if (o->with_comm && comm != PV_NONE) {
			if (comm >= ncomm) {
				size_t nc = ncomm ? ncomm : 64;
				uint32_t *c;
				while (nc <= comm)
					nc *= 2;
				if (!(c = realloc(ctok, nc * sizeof *c))) { rc = -ENOMEM; break; }
				memset(c + ncomm, 0, (nc - ncomm) * sizeof *c);
				ctok = c;
				ncomm = nc;
			}
			if (!ctok[comm]) {
				if ((rc = token(pv, profview__str(pv, comm), profview__strlen(pv, comm),
						NULL, 1, &id)))
					break;
				ctok[comm] = id + 1;
			}
			key[k++] = ctok[comm] - 1;
		}
		for (j = 0; j < nf; j++)
			key[k++] = tok[ids[j]];
		if (k == 0)
			continue;
		if ((rc = keytab__intern(lines, key, k * sizeof *key, &id, &added)))
			break;
		if (id >= wcap) {
			size_t cap = wcap ? wcap * 2 : 1024;
			uint64_t *nw = realloc(w, cap * sizeof *nw);
			if (!nw) { rc = -ENOMEM; break; }
			w = nw;
			wcap = cap;
		}
		if (added)
			w[id] = 0;
		stacktab__get(profview__table(pv), i, &e);
		w[id] += o->by_period ? e.period : e.count;
	}
	if (rc)
		goto done;
	/* spell the lines out, sort, join */
	n = keytab__count(lines);
	lv = malloc((n ? n : 1) * sizeof *lv);
	if (!lv) {
		rc = -ENOMEM;
		goto done;
	}
	{
		size_t total = 0, at = 0;
		for (i = 0; i < n; i++) {
			size_t kl, j;
			const uint32_t *k = keytab__key(lines, (uint32_t)i, &kl);
			kl /= sizeof *k;
			for (j = 0; j < kl; j++)
				total += profview__strlen(pv, k[j]) + 1;
		}
		words = malloc(total ? total : 1);
		if (!words) {
			rc = -ENOMEM;
			goto done;
		}
		for (i = 0; i < n; i++) {
			size_t kl, j;
			const uint32_t *k = keytab__key(lines, (uint32_t)i, &kl);
			kl /= sizeof *k;
			lv[i].s = words + at;
			for (j = 0; j < kl; j++) {
				size_t l = profview__strlen(pv, k[j]);
				if (j)
					words[at++] = ';';
				memcpy(words + at, profview__str(pv, k[j]), l);
				at += l;
			}
			lv[i].len = (size_t)(words + at - lv[i].s);
			lv[i].w = w[i];
		}
	}
	qsort(lv, n, sizeof *lv, line_order);
	{
		size_t cap = 1;
		for (i = 0; i < n; i++)
			cap += lv[i].len + 24;
		buf = malloc(cap);
		if (!buf) {
			rc = -ENOMEM;
			goto done;
		}
		for (i = 0; i < n; i++) {
			memcpy(buf + out, lv[i].s, lv[i].len);
			out += lv[i].len;
			out += (size_t)snprintf(buf + out, cap - out, " %.0f\n", (double)lv[i].w);
		}
		buf[out] = '\0';
	}
	*text = buf;
	*len = out;
	buf = NULL;
done:
	free(buf);
	free(words);
	free(lv);
	free(w);
	free(key);
	free(ctok);
	free(tok);
	keytab__delete(lines);
	return rc;
}
