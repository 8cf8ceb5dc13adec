# luaperf: a Lua module over Linux perf_events.
#
#   make                  build/perf/core.so for Lua 5.4
#   make LUA=luajit       build/luajit/perf/core.so (Lua 5.1 ABI)
#   make test             both builds, the busted suite under both interpreters
#   make demo             record the bundled workload, print the top, write flame.svg
#   make bench            benchmarks (figures go to BENCHMARKS.md by hand)
#   make deps             install the Debian packages the build and tests need
#   make openresty        examples/openresty/run.sh start (make openresty-stop stops it)
#   make dist             build/dist/luaperf-VERSION-1.src.rock (luarocks install takes it offline)

LUA      ?= lua5.4
CC       ?= cc
PKG      ?= pkg-config

ifeq ($(LUA),luajit)
  LUA_PC  := luajit
  OUT     := build/luajit
else ifeq ($(LUA),lua5.4)
  LUA_PC  := lua5.4
  OUT     := build
else
  LUA_PC  := $(LUA)
  OUT     := build/$(LUA)
endif

LUA_CFLAGS := $(shell $(PKG) --cflags $(LUA_PC) 2>/dev/null)
SYS_PCS    := libelf libdw libzstd libtraceevent
SYS_CFLAGS := $(shell $(PKG) --cflags $(SYS_PCS) 2>/dev/null)
SYS_LIBS   := $(shell $(PKG) --libs $(SYS_PCS) 2>/dev/null) -lz -liberty -lm
# libiberty is a static archive: its symbols (xmalloc, ...) stay inside core.so
LINK_HIDE  := -Wl,--exclude-libs,libiberty.a

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wpointer-arith -Wwrite-strings -Wformat=2 -Wundef -Wvla \
        -Wcast-align -Wmissing-declarations -Wno-unused-parameter
OPT     ?= -O2 -g
SAN     ?=
CFLAGS_ALL := -std=gnu11 $(OPT) $(SAN) -fPIC -fvisibility=hidden -D_GNU_SOURCE $(WARN) $(CFLAGS)

CORE_SRC := $(sort $(wildcard csrc/core/*/*.c))
# The binding: one file per userdata type, a folder for a type too big for
# one (csrc/lua/luaprofile/: one file a stage, sharing luaprofile/lprof.h).
BIND_SRC := $(sort $(wildcard csrc/lua/*.c csrc/lua/*/*.c))
CORE_OBJ := $(patsubst csrc/core/%.c,$(OUT)/obj/core/%.o,$(CORE_SRC))
BIND_OBJ := $(patsubst csrc/lua/%.c,$(OUT)/obj/lua/%.o,$(BIND_SRC))
MODULE   := $(OUT)/perf/core.so

PROG_SRC := $(sort $(wildcard spec/progs/*.c))
PROGS    := $(patsubst spec/progs/%.c,build/progs/%,$(PROG_SRC))

.PHONY: all deps test demo bench progs clean check-exports test-asan test-valgrind fuzz lint dist
all: $(MODULE)

# The core is plain C: it never sees a Lua header.  One folder a stage of
# the pipeline (csrc/core/README.md); includes name the stage ("sample/ring.h").
$(OUT)/obj/core/%.o: csrc/core/%.c $(wildcard csrc/core/*/*.h csrc/core/*/*.inc)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(SYS_CFLAGS) -Icsrc/core -c $< -o $@

$(OUT)/obj/lua/%.o: csrc/lua/%.c $(wildcard csrc/lua/*.h csrc/lua/*/*.h csrc/core/*/*.h csrc/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA_CFLAGS) $(SYS_CFLAGS) -Icsrc/core -Icsrc/lua -Icsrc/include -c $< -o $@

$(MODULE): $(CORE_OBJ) $(BIND_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared $(SAN) -o $@ $^ $(SYS_LIBS) $(LINK_HIDE) $(LDFLAGS)

# Only luaopen_perf_core and the C API of csrc/include/luaperf.h leave the module.
check-exports: $(MODULE)
	@syms=$$(nm -D --defined-only $(MODULE) | awk '$$2 ~ /[TDBR]/ {print $$3}' | grep -v '^_' | sort); \
	api=$$(sed -n 's/^LUAPERF_API .*[ *]\(luaperf_[a-z_]*\)(.*/\1/p' csrc/include/luaperf.h | sort); \
	want=$$(printf '%s\n' luaopen_perf_core $$api | sort); \
	if [ "$$syms" != "$$want" ]; then echo "unexpected exports: $$syms (want: $$want)"; exit 1; fi

# Test programs: frame pointers on, so fp call chains are deep.
build/progs/%: spec/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fno-omit-frame-pointer -fno-inline -o $@ $< -lpthread -lm

progs: $(PROGS)

# examples/embed: a C host embedding Lua 5.4 that profiles itself through
# perf.luaprofile (it loads build/perf/core.so); frame pointers on, so the
# host's own frames show in the profile.
.PHONY: embed
embed: build/embed/embed
	$(MAKE) LUA=lua5.4 all

# It links perf/core.so for the C API (csrc/include/luaperf.h); require
# "perf" then finds the same file already loaded.
build/embed/embed: examples/embed/embed.c csrc/include/luaperf.h build/perf/core.so
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer -fno-inline \
		$(shell $(PKG) --cflags lua5.4) -Icsrc/include -o $@ $< $(shell $(PKG) --libs lua5.4) \
		-L$(CURDIR)/build/perf -l:core.so -Wl,-rpath,$(CURDIR)/build/perf

deps:
	sh .ci/deps.sh

# examples/openresty: nginx + its Lua module on 127.0.0.1 (PORT, WORKERS, PREFIX).
.PHONY: openresty openresty-stop
openresty:
	sh examples/openresty/run.sh start
openresty-stop:
	sh examples/openresty/run.sh stop

test: 
	$(MAKE) LUA=lua5.4 all check-exports
	$(MAKE) LUA=luajit all
	$(MAKE) progs
	sh spec/run.sh

# From a fresh machine: install what is missing, build, then run the demo.
demo:
	sh .ci/deps.sh
	$(MAKE) all progs
	sh examples/demo.sh

bench: all progs
	sh bench/run.sh

# Quality gates (issue 9).  The sanitizer build lives beside the others;
# the suite runs under Lua 5.4 with the runtime preloaded into the interpreter.
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# libelf and libdw are preloaded too: their thread-local error codes are
# then static TLS.  Loaded with the module (dlopen) they are dynamic TLS,
# and LeakSanitizer (GCC 12) takes a 16-byte block at 16 mod 4096 for a
# glibc 2.19 header: garbage bounds, its tracer crashes at exit.
test-asan:
	$(MAKE) LUA=lua5.4 OUT=build/asan SAN="$(ASAN_FLAGS)" OPT="-O1 -g" all
	$(MAKE) progs
	LUAPERF_ONLY=lua5.4 LUAPERF_BUILD54=build/asan \
	LUAPERF_PRELOAD="$$($(CC) -print-file-name=libasan.so):$$($(CC) -print-file-name=libubsan.so):$$($(CC) -print-file-name=libelf.so):$$($(CC) -print-file-name=libdw.so)" \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/spec/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	sh spec/run.sh $(SPECS)

# A representative part (about 2.5 minutes): memcheck makes the whole suite
# too slow for CI.  Counters, sessions and their rings, records, the
# luaprofile signal path, and the fault and leak cycles of faults_spec.
VALGRIND_SPECS ?= spec/module_spec.lua spec/counter_spec.lua spec/session_spec.lua \
                  spec/record_spec.lua spec/luaprofile_spec.lua spec/faults_spec.lua
test-valgrind: all progs
	LUAPERF_ONLY=lua5.4 LUAPERF_VALGRIND=1 sh spec/run.sh $(or $(SPECS),$(VALGRIND_SPECS))

FUZZ_SECONDS ?= 60
fuzz:
	sh fuzz/run.sh $(FUZZ_SECONDS)

# Soak (issue 9; not in CI): SOAK_SECONDS of sampling at the maximum rate
# with inherit over a fork+exec loop; RSS and lost records checked.
SOAK_SECONDS ?= 600
.PHONY: soak
soak: all progs
	sh bench/soak.sh $(SOAK_SECONDS)

# Static checks (issue 9).  cppcheck gets Lua's API from its own library
# file (Lua's headers make it trip on luaconf.h); clang-tidy reads .clang-tidy,
# and sees Lua's error functions as noreturn through tools/lint/lua_noreturn.h;
# one file per clang-tidy run (given several, its analyzer reports false
# va_list findings), two at a time.  Every tool runs; any finding fails.
LINT_LUA_CFLAGS := $(shell $(PKG) --cflags lua5.4 2>/dev/null)
lint:
	@st=0; \
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
	  --library=posix,gnu,lua,zlib --inline-suppr --suppressions-list=.cppcheck-suppress \
	  -D__linux__ -D__x86_64__ -I csrc/core -I csrc/lua -I csrc/include csrc || st=1; \
	printf '%s\n' $(CORE_SRC) | xargs -P2 -I{} clang-tidy --quiet {} -- \
	  -std=gnu11 -D_GNU_SOURCE -Icsrc/core $(SYS_CFLAGS) || st=1; \
	printf '%s\n' $(BIND_SRC) | xargs -P2 -I{} clang-tidy --quiet {} -- \
	  -std=gnu11 -D_GNU_SOURCE -Icsrc/core -Icsrc/lua -Icsrc/include $(LINT_LUA_CFLAGS) $(SYS_CFLAGS) \
	  -include tools/lint/lua_noreturn.h || st=1; \
	exit $$st

# The source rock, as `luarocks pack` makes it from the release rockspec:
# the rockspec and the source tarball it names, in one zip (luarocks pack
# itself would fetch the tarball's relative file:// URL from a temporary
# directory).
VERSION   := $(shell sed -n 's/^\#define LUAPERF_VERSION "\(.*\)"/\1/p' csrc/lua/binding.h)
DIST_DIR  := build/dist
DIST_TREE := csrc lua bin tools examples Makefile README.md LICENSE .busted luaperf-scm-1.rockspec luaperf-$(VERSION)-1.rockspec
dist:
	lua5.4 tools/gen-rockspec.lua --check
	rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)/luaperf-$(VERSION)
	cp -r $(DIST_TREE) $(DIST_DIR)/luaperf-$(VERSION)/
	rm -rf $(DIST_DIR)/luaperf-$(VERSION)/examples/*/build
	tar -C $(DIST_DIR) -czf $(DIST_DIR)/luaperf-$(VERSION).tar.gz luaperf-$(VERSION)
	rm -rf $(DIST_DIR)/luaperf-$(VERSION)
	cp luaperf-$(VERSION)-1.rockspec $(DIST_DIR)/
	cd $(DIST_DIR) && zip -q luaperf-$(VERSION)-1.src.rock luaperf-$(VERSION)-1.rockspec luaperf-$(VERSION).tar.gz
	@echo "$(DIST_DIR)/luaperf-$(VERSION)-1.src.rock"

clean:
	rm -rf build
