# proctor: one non-recursive Makefile. `make` builds ./proctor; `make test`
# runs unit, fuzz-corpus and integration tests, plain and under ASan+UBSan;
# `make fuzz` runs the fuzz harnesses under libFuzzer (clang).

CC      ?= cc
PKGS    := ncursesw libuv jansson libseccomp zlib
# libcurl: headers only; it is loaded at run time by exec/http (dlopen).
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) libcurl 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

VERSION := 0.1.0
# `make install` puts the binary, the bundled themes, the man page and the
# shell completions under $(DESTDIR)$(PREFIX). The binary finds the themes
# from where it is installed (BIN/../share/proctor/themes), or at DATADIR,
# compiled in, when it is copied elsewhere.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/proctor
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wformat=2 -Wshadow -Wvla
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -DPROCTOR_VERSION='"$(VERSION)"' \
              -DPROCTOR_DATADIR='"$(DATADIR)"' \
              -I. -Ibuild/gen $(PKG_CFLAGS) $(CFLAGS)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# Every shared library costs each process its mapping and symbol binding
# (0.05-0.15 ms apiece here), and `proctor exec` is one whole process per
# command (tests/bench/cli.c): --as-needed drops any the binary does not
# call. STATIC_LIBS="ncursesw tinfo jansson seccomp" links those whose
# archive is installed into the binary (about 0.25 ms less per process
# here), at the price of rebuilding proctor for their security fixes; the
# default keeps every library shared, as the distribution ships it.
STATIC_LIBS ?=
LINK_STATIC := $(foreach l,$(STATIC_LIBS),$(if $(wildcard $(shell $(CC) -print-file-name=lib$(l).a)),-l$(l)))
LIBS    := $(filter-out $(LINK_STATIC),$(PKG_LIBS)) -Wl,-Bstatic $(LINK_STATIC) -Wl,-Bdynamic \
           -ldl -lm
LDFLAGS ?= -Wl,-O1,--as-needed

LIB_SRC := $(sort $(wildcard exec/*.c exec/*/*.c core/*/*.c tui/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC := $(sort $(wildcard tests/bench/*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

OBJ      := $(LIB_SRC:%.c=build/obj/%.o)
ASAN_OBJ := $(LIB_SRC:%.c=build/asan/%.o)
UNITS      := $(UNIT_SRC:tests/unit/%.c=build/tests/%)
ASAN_UNITS := $(UNIT_SRC:tests/unit/%.c=build/asan/tests/%)
BENCHES    := $(BENCH_SRC:tests/bench/%.c=build/bench/%)
FUZZ_DRIVERS := $(FUZZ_SRC:tests/fuzz/%.c=build/asan/fuzz/%)

# `make test` runs each harness through tests/fuzz/driver.c (gcc, ASan) on
# its corpus and FUZZ_INPUTS generated inputs. `make fuzz` builds them
# with libFuzzer instead and runs each for FUZZ_TIME seconds.
FUZZ_INPUTS ?= 10000
FUZZ_CC     ?= clang
FUZZ_TIME   ?= 60
FUZZ_SAN    := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# clang only: SANDBOX_SELF + 1 (exec/native/sandbox.c) skips the path's '/' on purpose.
FUZZ_WARN   := -Wno-string-plus-int
FUZZ_OBJ    := $(LIB_SRC:%.c=build/fuzz/obj/%.o)
FUZZERS     := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)

.PHONY: all deps test unit unit-asan integration bench fuzz format format-check check-layers run \
        clean screenshots \
        install uninstall FORCE

all: proctor

deps:
	@./install-deps.sh

proctor: build/obj/main.o build/libproctor.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

build/asan/proctor: build/asan/main.o build/asan/libproctor.a
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

build/libproctor.a: $(OBJ)
	@rm -f $@
	ar rcs $@ $^

build/asan/libproctor.a: $(ASAN_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The seccomp policy is compiled with libseccomp at build time; proctor
# loads the generated BPF (see exec/native/gen/seccomp_gen.c).
build/gen/seccomp_gen: exec/native/gen/seccomp_gen.c exec/native/seccomp.c exec/native/seccomp.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DSECCOMP_GENERATOR -o $@ exec/native/gen/seccomp_gen.c exec/native/seccomp.c $(LIBS)

build/gen/seccomp_policy.inc: build/gen/seccomp_gen
	build/gen/seccomp_gen $@

build/obj/exec/native/seccomp.o build/asan/exec/native/seccomp.o build/fuzz/obj/exec/native/seccomp.o: \
        build/gen/seccomp_policy.inc

# Only tui/datadir.c uses PROCTOR_DATADIR: it is rebuilt when DATADIR (or
# PREFIX) differs from the last build's, which the stamp records.
build/gen/datadir.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(DATADIR)' | cmp -s - $@ || echo '$(DATADIR)' >$@

build/obj/tui/datadir.o build/asan/tui/datadir.o build/fuzz/obj/tui/datadir.o: build/gen/datadir.stamp

build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

build/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP -c -o $@ $<

# -MMD: a test is rebuilt when a header it includes (exec_fixture.h) changes;
# those headers become prerequisites, hence the filter.
build/tests/%: tests/unit/%.c build/libproctor.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $(filter %.c %.a,$^) $(LIBS) $(CMOCKA_LIBS)

build/asan/tests/%: tests/unit/%.c build/asan/libproctor.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP -o $@ $(filter %.c %.a,$^) $(LIBS) $(CMOCKA_LIBS)

build/bench/%: tests/bench/%.c build/libproctor.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# The harness comes last: with -MMD the dependency file is the last source's.
build/asan/fuzz/%: tests/fuzz/driver.c tests/fuzz/%.c build/asan/libproctor.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP -o $@ $(filter %.c %.a,$^) $(LIBS)

# libFuzzer wants its own instrumentation in the library too: a third build.
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(ALL_CFLAGS) $(FUZZ_WARN) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

build/fuzz/libproctor.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

build/fuzz/%: tests/fuzz/%.c build/fuzz/libproctor.a
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(ALL_CFLAGS) $(FUZZ_WARN) $(FUZZ_SAN) -fsanitize=fuzzer -MMD -MP -o $@ $(filter %.c %.a,$^) $(LIBS)

test: deps
	@$(MAKE) --no-print-directory format-check
	@tests/check-layers.sh
	@$(MAKE) --no-print-directory -j$$(nproc) proctor build/asan/proctor $(UNITS) $(ASAN_UNITS) \
		$(FUZZ_DRIVERS)
	@tests/run-unit.sh $(UNITS) $(ASAN_UNITS)
	@tests/fuzz/run.sh $(FUZZ_INPUTS) $(FUZZ_DRIVERS)
	@tests/integration/run.sh ./proctor build/asan/proctor

unit: $(UNITS)
	@tests/run-unit.sh $(UNITS)

integration: proctor
	@tests/integration/run.sh ./proctor

# Not part of `make test`: it needs clang, and it runs until FUZZ_TIME is up.
# Each harness works on a scratch copy of its corpus; a crash leaves the
# input in build/fuzz/NAME-crash-* and stops here.
fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do \
		n=$${f##*/}; rm -rf build/fuzz/corpus/$$n; mkdir -p build/fuzz/corpus/$$n; \
		cp tests/fuzz/corpus/$$n/* build/fuzz/corpus/$$n/; \
		echo "fuzz: $$n for $(FUZZ_TIME)s"; \
		$$f -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -artifact_prefix=build/fuzz/$$n- \
			build/fuzz/corpus/$$n || exit 1; \
	done

# Targets that compile run make again after deps: the package flags above are
# read when make starts, before install-deps could have installed anything.
bench: deps
	@$(MAKE) --no-print-directory proctor $(BENCHES)
	@tests/bench/run.sh

run: deps
	@$(MAKE) --no-print-directory proctor
	./proctor run --mode sandbox "Show me what proctor does."

screenshots: deps
	@$(MAKE) --no-print-directory proctor
	@tests/screenshots.sh

format:
	clang-format -i $(wildcard *.c */*.c */*.h */*/*.c */*/*.h exec/*/gen/*.c)

# Every include points down the layers (exec, core's folders, tui, main.c).
check-layers:
	@tests/check-layers.sh

format-check:
	@clang-format --dry-run -Werror $(wildcard *.c */*.c */*.h */*/*.c */*/*.h exec/*/gen/*.c) && echo "format-check: ok"

install: proctor
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/themes $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 proctor $(DESTDIR)$(BINDIR)/proctor
	install -m 644 themes/*.theme $(DESTDIR)$(DATADIR)/themes/
	install -m 644 docs/proctor.1 $(DESTDIR)$(MANDIR)/man1/proctor.1
	install -m 644 completions/proctor.bash $(DESTDIR)$(BASHCOMPDIR)/proctor
	install -m 644 completions/_proctor $(DESTDIR)$(ZSHCOMPDIR)/_proctor

# Removes what install put there, and the themes directories when that
# leaves them empty (a theme added there by hand stays).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/proctor $(DESTDIR)$(MANDIR)/man1/proctor.1 \
		$(DESTDIR)$(BASHCOMPDIR)/proctor $(DESTDIR)$(ZSHCOMPDIR)/_proctor \
		$(addprefix $(DESTDIR)$(DATADIR)/themes/,$(notdir $(wildcard themes/*.theme)))
	rmdir $(DESTDIR)$(DATADIR)/themes $(DESTDIR)$(DATADIR) 2>/dev/null || true

clean:
	rm -rf build proctor

-include $(OBJ:.o=.d) $(ASAN_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) build/obj/main.d build/asan/main.d \
         $(addsuffix .d,$(UNITS) $(ASAN_UNITS) $(FUZZ_DRIVERS) $(FUZZERS))
