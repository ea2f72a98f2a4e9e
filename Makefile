# kforge -- build, test, install.
#
#   make                  build build/kforge
#   make check            CPU test suites (+ GPU suites when a GPU is present; skipped loudly otherwise)
#   make check SANITIZE=address,undefined
#   make bench            seeds table on the GPU (configs/seeds.json)
#   make install PREFIX=/usr/local

CUDA      ?= /usr/local/cuda
PREFIX    ?= /usr/local
CC        ?= cc
SANITIZE  ?=
WERROR    ?=

BUILD     ?= build$(if $(SANITIZE),-san)
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 \
             -Wno-format-nonliteral -MMD -MP -I src -I $(BUILD)/gen -isystem $(CUDA)/include
ifneq ($(WERROR),)
CFLAGS    += -Werror
endif
LDFLAGS   += -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64
LDLIBS    += -lcjson -lnvrtc -ldl -lm -lpthread
ifneq ($(SANITIZE),)
CFLAGS    += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS   += -fsanitize=$(SANITIZE)
endif
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm -lpthread)

SRC       := $(filter-out src/main.c,$(wildcard src/*.c))
OBJ       := $(SRC:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/templates.o
TPL       := $(sort $(wildcard kernel_src/*.cuh))
TESTS_SRC := $(wildcard tests/test_*.c)
TESTS     := $(TESTS_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all check test clean install bench bench-cub fuzz
.SECONDARY:
all: $(BUILD)/kforge

$(BUILD)/gen/templates.c: $(TPL) tools/embed.sh
	@mkdir -p $(@D)
	sh tools/embed.sh $(TPL) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/templates.o: $(BUILD)/gen/templates.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libkforge.a: $(OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/kforge: $(BUILD)/obj/main.o $(BUILD)/libkforge.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I tests -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libkforge.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) $(CHECK_LIBS) -o $@

# Every test binary runs even if an earlier one fails; the target fails if any did.
check: $(TESTS) $(BUILD)/kforge
	@fail=0; for t in $(TESTS); do \
	  echo "== $$t"; KFORGE=$(BUILD)/kforge $$t || fail=1; \
	done; \
	KFORGE=$(BUILD)/kforge sh tests/tune_suite.sh || fail=1; \
	KFORGE=$(BUILD)/kforge sh tests/gpu_suite.sh || fail=1; \
	exit $$fail
test: check

bench: $(BUILD)/kforge
	sh tools/bench.sh

bench-cub: $(BUILD)/kforge
	sh tools/bench_cub.sh

install: $(BUILD)/kforge
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(BUILD)/kforge $(DESTDIR)$(PREFIX)/bin/kforge
	install -m 644 man/kforge.1 $(DESTDIR)$(PREFIX)/share/man/man1/kforge.1
	install -m 644 completion/kforge.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kforge

clean:
	rm -rf build build-san

-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/tests/*.d)
