/*
 * A decoded record as a Lua table.  Live sessions and perf.data files both
 * come through here, so a record looks the same from either.
 *
 *   rec.type            "SAMPLE", "MMAP2", "COMM", ... ("UNKNOWN": rec.raw holds the bytes)
 *   rec.event           the event's name (when the record maps to one)
 *   rec.misc, rec.size  the header's fields; rec.cpumode "kernel"|"user"|...
 *   pid tid time cpu id stream_id          from the sample or sample_id_all trailer
 *   SAMPLE: ip addr period (the attr's sample_period for a fixed-period
 *           event without PERF_SAMPLE_PERIOD, as perf) weight data_src
 *           transaction phys_addr cgroup
 *           data_page_size code_page_size, callchain (leaf first, as the
 *           kernel writes it; context markers removed), callchain_kernel
 *           (how many leading entries are kernel addresses), read, raw,
 *           branch_stack, regs_user, regs_intr, stack_user, aux
 */
#include <string.h>
#include "base/bits.h"
#include "binding.h"
#include "record/record.h"

static const char *cpumode(uint16_t misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL: return "kernel";
	case PERF_RECORD_MISC_USER: return "user";
	case PERF_RECORD_MISC_HYPERVISOR: return "hypervisor";
	case PERF_RECORD_MISC_GUEST_KERNEL: return "guest_kernel";
	case PERF_RECORD_MISC_GUEST_USER: return "guest_user";
	}
	return "unknown";
}

static void setlstr(lua_State *L, const char *k, const void *p, size_t n)
{
	lua_pushlstring(L, p ? (const char *)p : "", p ? n : 0);
	lua_setfield(L, -2, k);
}

static void sethex(lua_State *L, const char *k, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	char buf[2 * 64];
	size_t i;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++) {
		buf[2 * i] = hx[p[i] >> 4];
		buf[2 * i + 1] = hx[p[i] & 15];
	}
	setlstr(L, k, buf, 2 * n);
}

static uint64_t at(const uint64_t *p, size_t i)
{
	uint64_t v;
	memcpy(&v, p + i, 8);
	return v;
}

/* rec.read = { time_enabled=, time_running=, {value=, id=, lost=, event=}, ... } */
static void push_read(lua_State *L, const struct record_read *rd, const struct evtab *t)
{
	uint64_t i;

	lua_createtable(L, (int)(rd->nr < 64 ? rd->nr : 64), 2);
	lperf_setu64(L, "time_enabled", rd->time_enabled);
	lperf_setu64(L, "time_running", rd->time_running);
	for (i = 0; i < rd->nr; i++) {
		const uint64_t *e = rd->values + i * rd->stride;
		lua_createtable(L, 0, 4);
		lperf_setu64(L, "value", at(e, 0));
		if (rd->id_at) {
			uint64_t id = at(e, rd->id_at);
			lperf_setu64(L, "id", id);
			if (t && evtab__lookup(t, id) >= 0)
				lperf_setstr(L, "event", evtab__name(t, evtab__lookup(t, id)));
		}
		if (rd->lost_at)
			lperf_setu64(L, "lost", at(e, rd->lost_at));
		lua_rawseti(L, -2, (int)i + 1);
	}
}

#if defined(__x86_64__)
/* x86-64's perf_regs order (arch/x86/include/uapi/asm/perf_regs.h). */
static const char *const x86_64_regs[24] = {
	"ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "ip", "flags", "cs", "ss",
	"ds", "es", "fs", "gs", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
#endif

/* The values in mask order. */
static void push_regs(lua_State *L, const char *k, uint64_t abi, const uint64_t *r, unsigned n)
{
	unsigned i;

	lua_createtable(L, (int)n, 1);
	lperf_setu64(L, "abi", abi);
	for (i = 0; i < n; i++) {
		lperf_pushu64(L, at(r, i));
		lua_rawseti(L, -2, (int)i + 1);
	}
	lua_setfield(L, -2, k);
}

/*
 * rec.regs: the user registers by name (regs.di is a probed function's
 * first argument on x86-64), for samples that asked for registers alone
 * (sample = {"regs"}); a DWARF session's registers stay an array.
 */
static void push_named_regs(lua_State *L, const struct record_sample *s, uint64_t mask)
{
#if defined(__x86_64__)
	unsigned i, bit;

	if (s->regs_user_abi != PERF_SAMPLE_REGS_ABI_64 || mask == 0 || (mask >> 24) ||
	    (unsigned)bits_count(mask) != s->nr_regs_user)
		return;
	lua_createtable(L, 0, (int)s->nr_regs_user);
	for (i = 0, bit = 0; bit < 24; bit++) {
		if (!(mask & (1ULL << bit)))
			continue;
		lperf_setu64(L, x86_64_regs[bit], at(s->regs_user, i));
		i++;
	}
	lua_setfield(L, -2, "regs");
#else
	(void)L;
	(void)s;
	(void)mask;
#endif
}

static void push_callchain(lua_State *L, const struct record_sample *s)
{
	uint64_t i, ctx = 0;
	int n = 0, nk = 0, leading = 1;
	/* perf discards a chain with a context it does not know */
	uint64_t nr = record__callchain_usable(s->callchain, s->nr_callchain) ? s->nr_callchain : 0;

	lua_createtable(L, (int)(nr < 256 ? nr : 256), 0);
	for (i = 0; i < nr; i++) {
		uint64_t a = at(s->callchain, i);
		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = a;
			continue;
		}
		if (record__kernel_context(ctx)) {
			if (leading)
				nk++;
		} else {
			leading = 0;
		}
		lperf_pushu64(L, a);
		lua_rawseti(L, -2, ++n);
	}
	lua_setfield(L, -2, "callchain");
	lperf_setint(L, "callchain_kernel", nk);
}

static void push_branches(lua_State *L, const struct record_sample *s)
{
	uint64_t i;

	lua_createtable(L, (int)(s->nr_branches < 64 ? s->nr_branches : 64), 0);
	for (i = 0; i < s->nr_branches; i++) {
		const uint64_t *e = (const uint64_t *)(const void *)(s->branches + i);
		lua_createtable(L, 0, 3);
		lperf_setu64(L, "from", at(e, 0));
		lperf_setu64(L, "to", at(e, 1));
		lperf_setu64(L, "flags", at(e, 2));
		lua_rawseti(L, -2, (int)i + 1);
	}
	lua_setfield(L, -2, "branch_stack");
	if (s->branch_hw_idx)
		lperf_setu64(L, "branch_hw_idx", s->branch_hw_idx);
}

/* The identity fields every record can carry (sample or trailer). */
static void push_ident(lua_State *L, const struct record_sample *s)
{
	uint64_t st = s->type;

	if (st & PERF_SAMPLE_TID) {
		lperf_setint(L, "pid", (lua_Integer)(int32_t)s->pid);
		lperf_setint(L, "tid", (lua_Integer)(int32_t)s->tid);
	}
	if (st & PERF_SAMPLE_TIME)
		lperf_setu64(L, "time", s->time);
	if (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
		lperf_setu64(L, "id", s->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		lperf_setu64(L, "stream_id", s->stream_id);
	if (st & PERF_SAMPLE_CPU)
		lperf_setint(L, "cpu", s->cpu);
}

static void push_sample(lua_State *L, const struct record *r, const struct evtab *t)
{
	const struct record_sample *s = &r->s;
	uint64_t st = s->type;
	const struct perf_event_attr *attr = NULL;

	if (t && r->evidx >= 0 && r->evidx < evtab__count(t))
		attr = evtab__attr(t, r->evidx);
	if (st & PERF_SAMPLE_IP)
		lperf_setu64(L, "ip", s->ip);
	if (st & PERF_SAMPLE_ADDR)
		lperf_setu64(L, "addr", s->addr);
	if (st & PERF_SAMPLE_PERIOD) {
		lperf_setu64(L, "period", s->period);
	} else if (t && r->evidx >= 0 && r->evidx < evtab__count(t)) {
		/* a fixed-period event's samples weigh its period, as in perf */
		const struct perf_event_attr *a = evtab__attr(t, r->evidx);
		if (a && !a->freq && a->sample_period)
			lperf_setu64(L, "period", a->sample_period);
	}
	if (st & PERF_SAMPLE_READ) {
		push_read(L, &s->read, t);
		lua_setfield(L, -2, "read");
	}
	if (st & PERF_SAMPLE_CALLCHAIN)
		push_callchain(L, s);
	if (st & PERF_SAMPLE_RAW)
		setlstr(L, "raw", s->raw, s->raw_size);
	if (st & PERF_SAMPLE_BRANCH_STACK)
		push_branches(L, s);
	if (st & PERF_SAMPLE_REGS_USER) {
		push_regs(L, "regs_user", s->regs_user_abi, s->regs_user, s->nr_regs_user);
		if (attr != NULL && !(st & PERF_SAMPLE_STACK_USER))
			push_named_regs(L, s, attr->sample_regs_user);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		/* Only dyn_size bytes were really copied from the user stack. */
		setlstr(L, "stack_user", s->stack_user, (size_t)s->stack_user_dyn_size);
		lperf_setu64(L, "stack_user_size", s->stack_user_size);
	}
	if (st & PERF_SAMPLE_WEIGHT)
		lperf_setu64(L, "weight", s->weight);
	if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
		/* union perf_sample_weight, little endian: var1_dw, var2_w, var3_w */
		lperf_setu64(L, "weight", s->weight & 0xffffffffu);
		lperf_setint(L, "weight_var2", (lua_Integer)((s->weight >> 32) & 0xffff));
		lperf_setint(L, "weight_var3", (lua_Integer)(s->weight >> 48));
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		lperf_setu64(L, "data_src", s->data_src);
	if (st & PERF_SAMPLE_TRANSACTION)
		lperf_setu64(L, "transaction", s->transaction);
	if (st & PERF_SAMPLE_REGS_INTR)
		push_regs(L, "regs_intr", s->regs_intr_abi, s->regs_intr, s->nr_regs_intr);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		lperf_setu64(L, "phys_addr", s->phys_addr);
	if (st & PERF_SAMPLE_CGROUP)
		lperf_setu64(L, "cgroup", s->cgroup);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		lperf_setu64(L, "data_page_size", s->data_page_size);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		lperf_setu64(L, "code_page_size", s->code_page_size);
	if (st & PERF_SAMPLE_AUX)
		setlstr(L, "aux", s->aux, (size_t)s->aux_size);
}

static void push_body(lua_State *L, const struct record *r, const struct evtab *t)
{
	uint64_t i;

	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		lperf_setint(L, "pid", (lua_Integer)(int32_t)r->u.mmap.pid);
		lperf_setint(L, "tid", (lua_Integer)(int32_t)r->u.mmap.tid);
		lperf_setu64(L, "start", r->u.mmap.start);
		lperf_setu64(L, "len", r->u.mmap.len);
		lperf_setu64(L, "pgoff", r->u.mmap.pgoff);
		lperf_setstr(L, "filename", r->u.mmap.filename);
		lperf_setbool(L, "data", r->misc & PERF_RECORD_MISC_MMAP_DATA);
		if (r->type == PERF_RECORD_MMAP2) {
			if (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				sethex(L, "build_id", r->u.mmap.build_id, r->u.mmap.build_id_size);
			} else {
				lperf_setint(L, "maj", r->u.mmap.maj);
				lperf_setint(L, "min", r->u.mmap.min);
				lperf_setu64(L, "ino", r->u.mmap.ino);
				lperf_setu64(L, "ino_generation", r->u.mmap.ino_generation);
			}
			lperf_setint(L, "prot", r->u.mmap.prot);
			lperf_setint(L, "flags", r->u.mmap.flags);
		}
		break;
	case PERF_RECORD_LOST:
		lperf_setu64(L, "id", r->u.lost.id);
		lperf_setu64(L, "lost", r->u.lost.lost);
		break;
	case PERF_RECORD_COMM:
		lperf_setint(L, "pid", (lua_Integer)(int32_t)r->u.comm.pid);
		lperf_setint(L, "tid", (lua_Integer)(int32_t)r->u.comm.tid);
		lperf_setstr(L, "comm", r->u.comm.comm);
		lperf_setbool(L, "exec", r->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		lperf_setint(L, "pid", (lua_Integer)(int32_t)r->u.task.pid);
		lperf_setint(L, "ppid", (lua_Integer)(int32_t)r->u.task.ppid);
		lperf_setint(L, "tid", (lua_Integer)(int32_t)r->u.task.tid);
		lperf_setint(L, "ptid", (lua_Integer)(int32_t)r->u.task.ptid);
		lperf_setu64(L, "time", r->u.task.time);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		lperf_setu64(L, "time", r->u.throttle.time);
		lperf_setu64(L, "id", r->u.throttle.id);
		lperf_setu64(L, "stream_id", r->u.throttle.stream_id);
		break;
	case PERF_RECORD_READ:
		lperf_setint(L, "pid", (lua_Integer)(int32_t)r->u.read.pid);
		lperf_setint(L, "tid", (lua_Integer)(int32_t)r->u.read.tid);
		push_read(L, &r->u.read.read, t);
		lua_setfield(L, -2, "read");
		break;
	case PERF_RECORD_AUX:
		lperf_setu64(L, "aux_offset", r->u.aux.offset);
		lperf_setu64(L, "aux_size", r->u.aux.size);
		lperf_setu64(L, "flags", r->u.aux.flags);
		break;
	case PERF_RECORD_ITRACE_START:
		lperf_setint(L, "pid", (lua_Integer)(int32_t)r->u.itrace_start.pid);
		lperf_setint(L, "tid", (lua_Integer)(int32_t)r->u.itrace_start.tid);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		lperf_setu64(L, "lost", r->u.lost_samples.lost);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		lperf_setint(L, "next_prev_pid", (lua_Integer)(int32_t)r->u.switch_cpu_wide.next_prev_pid);
		lperf_setint(L, "next_prev_tid", (lua_Integer)(int32_t)r->u.switch_cpu_wide.next_prev_tid);
		/* fall through */
	case PERF_RECORD_SWITCH:
		lperf_setbool(L, "out", r->misc & PERF_RECORD_MISC_SWITCH_OUT);
		lperf_setbool(L, "preempt", r->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		break;
	case PERF_RECORD_NAMESPACES:
		lperf_setint(L, "pid", (lua_Integer)(int32_t)r->u.namespaces.pid);
		lperf_setint(L, "tid", (lua_Integer)(int32_t)r->u.namespaces.tid);
		lua_createtable(L, (int)(r->u.namespaces.nr < 16 ? r->u.namespaces.nr : 16), 0);
		for (i = 0; i < r->u.namespaces.nr; i++) {
			lua_createtable(L, 0, 2);
			lperf_setu64(L, "dev", at(r->u.namespaces.link_info, 2 * i));
			lperf_setu64(L, "ino", at(r->u.namespaces.link_info, 2 * i + 1));
			lua_rawseti(L, -2, (int)i + 1);
		}
		lua_setfield(L, -2, "namespaces");
		break;
	case PERF_RECORD_KSYMBOL:
		lperf_setu64(L, "addr", r->u.ksymbol.addr);
		lperf_setint(L, "len", r->u.ksymbol.len);
		lperf_setint(L, "ksym_type", r->u.ksymbol.ksym_type);
		lperf_setint(L, "flags", r->u.ksymbol.flags);
		lperf_setstr(L, "name", r->u.ksymbol.name);
		break;
	case PERF_RECORD_BPF_EVENT:
		lperf_setint(L, "bpf_type", r->u.bpf_event.bpf_type);
		lperf_setint(L, "flags", r->u.bpf_event.flags);
		lperf_setint(L, "bpf_id", r->u.bpf_event.id);
		sethex(L, "tag", r->u.bpf_event.tag, 8);
		break;
	case PERF_RECORD_CGROUP:
		lperf_setu64(L, "cgroup_id", r->u.cgroup.id);
		lperf_setstr(L, "path", r->u.cgroup.path);
		break;
	case PERF_RECORD_TEXT_POKE:
		lperf_setu64(L, "addr", r->u.text_poke.addr);
		setlstr(L, "old_bytes", r->u.text_poke.bytes, r->u.text_poke.old_len);
		setlstr(L, "new_bytes", r->u.text_poke.bytes + r->u.text_poke.old_len,
			r->u.text_poke.new_len);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		lperf_setu64(L, "hw_id", r->u.aux_output_hw_id.hw_id);
		break;
	case PERF_RECORD_SAMPLE:
		break;
	default:
		/* Unknown kernel types and perf.data user records: the bytes
		 * after the header, for whoever knows the layout. */
		setlstr(L, "raw", (const uint8_t *)r->data + sizeof(struct perf_event_header),
			r->size - sizeof(struct perf_event_header));
		break;
	}
}

void lperf_push_record(lua_State *L, const struct record *r, const struct evtab *t)
{
	luaL_checkstack(L, 8, "pushing a record");
	lua_createtable(L, 0, 16);
	lperf_setstr(L, "type", record__type_name(r->type));
	lperf_setint(L, "type_id", r->type);
	lperf_setint(L, "misc", r->misc);
	lperf_setint(L, "size", r->size);
	lperf_setstr(L, "cpumode", cpumode(r->misc));
	if (t && r->evidx >= 0 && evtab__name(t, r->evidx))
		lperf_setstr(L, "event", evtab__name(t, r->evidx));
	push_ident(L, &r->s);
	if (r->type == PERF_RECORD_SAMPLE)
		push_sample(L, r, t);
	push_body(L, r, t);
}

/*
 * perf.core.decode_record(bytes, events): decodes one record from a string
 * against events = { {sample_type=, read_format=, sample_id_all=,
 * branch_sample_type=, sample_regs_user=, sample_regs_intr=, name=,
 * ids={...}}, ... }.  Returns the record table or nil, message.  For tests
 * and tools that build or carry records themselves.
 */
#define EVTAB_HOLDER "perf.EvtabHolder"

static int holder_gc(lua_State *L)
{
	struct evtab **t = luaL_checkudata(L, 1, EVTAB_HOLDER);

	evtab__delete(*t);
	*t = NULL;
	return 0;
}

static int decode_record(lua_State *L)
{
	size_t len, i, n;
	const char *bytes = luaL_checklstring(L, 1, &len);
	struct evtab **t;
	uint64_t *buf;
	struct record r;
	char err[256];

	luaL_checktype(L, 2, LUA_TTABLE);
	n = lua_rawlen(L, 2);
	if (len > 65536)
		return lperf_fail(L, "a record is at most 65535 bytes", 0);
	/* An aligned copy: the decoder hands out u64 pointers. */
	buf = lua_newuserdatauv(L, len ? len : 1, 0);
	memcpy(buf, bytes, len);
	t = lua_newuserdatauv(L, sizeof *t, 0);
	*t = NULL;
	luaL_setmetatable(L, EVTAB_HOLDER);
	*t = evtab__new();
	if (!*t)
		return lperf_fail(L, "out of memory", 0);
	for (i = 1; i <= n; i++) {
		struct perf_event_attr a;
		int idx;
		size_t j, nids;
		lua_rawgeti(L, 2, (int)i);
		luaL_checktype(L, -1, LUA_TTABLE);
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
#define U64F(f) do { lua_getfield(L, -1, #f); if (!lua_isnil(L, -1)) a.f = lperf_checku64(L, -1); lua_pop(L, 1); } while (0)
		U64F(sample_type);
		U64F(read_format);
		U64F(branch_sample_type);
		U64F(sample_regs_user);
		U64F(sample_regs_intr);
#undef U64F
		a.sample_id_all = lperf_optfield_bool(L, -1, "sample_id_all", 0) ? 1 : 0;
		idx = evtab__add(*t, &a, lperf_optfield_str(L, -1, "name", ""));
		if (idx < 0)
			return lperf_fail(L, "out of memory", 0);
		lua_getfield(L, -1, "ids");
		nids = lua_istable(L, -1) ? lua_rawlen(L, -1) : 0;
		for (j = 1; j <= nids; j++) {
			lua_rawgeti(L, -1, (int)j);
			if (evtab__add_id(*t, idx, lperf_checku64(L, -1)))
				return lperf_fail(L, "out of memory", 0);
			lua_pop(L, 1);
		}
		lua_pop(L, 2);
	}
	if (record__decode(*t, buf, len, &r, err, sizeof err))
		return lperf_fail(L, err, 0);
	lperf_push_record(L, &r, *t);
	return 1;
}

void lperf_open_record(lua_State *L)
{
	luaL_newmetatable(L, EVTAB_HOLDER);
	lua_pushcfunction(L, holder_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	lua_pushcfunction(L, decode_record);
	lua_setfield(L, -2, "decode_record");
}
