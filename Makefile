# kforge -- build, test, install.
#
#   make                  build build/kforge
#   make check            CPU test suites (+ GPU suites when a GPU is present; skipped loudly otherwise)
#   make check SANITIZE=address,undefined
#   make valgrind         CPU-side tests and commands under valgrind
#   make fuzz             libFuzzer on the config/space parser (FUZZ_TIME=600 s)
#   make bench            seeds table on the GPU (configs/seeds.json)
#   make bench-tune       tuning time and where it goes, on the GPU (tools/tune_bench.sh)
#   make bench-strategies search strategies on recorded spaces, CPU only (tools/bench_strategies.sh)
#   make install PREFIX=/usr/local

CUDA      ?= /usr/local/cuda
PREFIX    ?= /usr/local
CC        ?= cc
SANITIZE  ?=
WERROR    ?=

BUILD     ?= build$(if $(SANITIZE),-san)
CFLAGS    ?= -O2 -g
SRC_DIRS  := $(sort $(patsubst %/,%,$(dir $(wildcard src/*/*.c src/*/*/*.c src/*/*.h src/*/*/*.h))))
INCLUDES  := $(addprefix -I ,$(SRC_DIRS)) -I $(BUILD)/gen
CFLAGS    += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 \
             -Wno-format-nonliteral -MMD -MP $(INCLUDES) -isystem $(CUDA)/include
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

SRC       := $(filter-out src/cmd/main.c,$(wildcard src/*/*.c src/*/*/*.c))
OBJ       := $(SRC:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/templates.o
TPL       := $(sort $(wildcard kernel_src/*.cuh kernel_src/*/*.cuh))
TESTS_SRC := $(wildcard tests/test_*.c)
TESTS     := $(TESTS_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all check test clean install bench bench-cub bench-rows bench-tune bench-real bench-strategies fuzz
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

$(BUILD)/kforge: $(BUILD)/obj/cmd/main.o $(BUILD)/libkforge.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I tests -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libkforge.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) $(CHECK_LIBS) -o $@

# The test family registered at run time (tests/family_tile: issue 22's
# worked example), with the kforge command line around it.
$(BUILD)/tests/kforge-tile: tests/family_tile/tile.c $(BUILD)/libkforge.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DKF_TILE_CUH='"$(CURDIR)/tests/family_tile/tile.cuh"' $< $(BUILD)/libkforge.a $(LDFLAGS) $(LDLIBS) -o $@

# A scripted stand-in for libnvidia-ml.so.1 that test_nvml loads from its own
# directory: with the pre-R535 name of the clock reasons query, and with the new one.
FAKE_NVML := $(BUILD)/tests/libfakenvml.so $(BUILD)/tests/libfakenvml-new.so
$(BUILD)/tests/libfakenvml.so: tests/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared $(LDFLAGS) $< -o $@
$(BUILD)/tests/libfakenvml-new.so: tests/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DFAKE_NVML_EVENT_REASONS -fPIC -shared $(LDFLAGS) $< -o $@
$(BUILD)/tests/test_nvml: | $(FAKE_NVML)
# src/exec/nvml.c declares the NVML it uses; where the toolkit has nvml.h, it checks against it.
$(BUILD)/obj/exec/nvml.o: CFLAGS += $(if $(wildcard $(CUDA)/include/nvml.h),-DKF_TOOLKIT_NVML_H='"$(CUDA)/include/nvml.h"')

# make check runs every test binary and suite, CHECK_JOBS at a time (one more
# than the CPUs unless given: many suites wait part of the time), each with
# its whole output in $(CHECK_LOG)/NAME.log, and prints one line for each as
# it ends (tests/check_one.sh: the outcome, the counts and the seconds; below
# it the SKIP lines, and for a failure its FAIL lines and the end of its
# log), then a total; it fails if any did.  Every
# test keeps its temporary files under $(CHECK_TMP) (TMPDIR), which must be
# empty at the end when everything passed: make check leaves nothing in /tmp.
# The tests and suites that do not test the cubin cache itself share one,
# $(CHECK_CACHE) (KFORGE_TEST_CACHE), empty when the run starts: a source
# several of them compile is compiled once.  CHECK_ORDER starts the longest
# first (slurm_suite, which mostly waits on its cluster, before them; the
# rest, new ones too, follow), so that none of them starts last and runs
# alone; CHECK_LAST start last: test_codegen compiles what the
# suites have not.  What make check runs is built CHECK_JOBS at a time too.
# The suites find python3 in $(CHECK_BIN): a script that runs the
# interpreter python3 names here, without the version manager's shim in
# between (pyenv's costs about 50 ms of CPU a call, several seconds in all).
CHECK_TMP   := $(abspath $(BUILD))/check-tmp
CHECK_LOG   := $(abspath $(BUILD))/check-logs
CHECK_CACHE := $(abspath $(BUILD))/check-cache
CHECK_BIN   := $(abspath $(BUILD))/check-bin
ifeq ($(origin CHECK_JOBS),undefined)
CHECK_JOBS  := $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$((n + 1)))
endif
CHECK_ORDER := slurm_suite verify_suite export_suite robust_suite test_export multi_suite stress_suite cli_suite \
               engine_suite test_verify newcomer_suite tune_suite compare_suite regress_suite
CHECK_LAST  := test_codegen
CHECK_ALL   := $(notdir $(TESTS)) fuzz_replay $(patsubst tests/%.sh,%,$(wildcard tests/*_suite.sh))
CHECK_RUN   := $(addprefix check-run-,$(filter $(CHECK_ALL),$(CHECK_ORDER)) \
               $(filter-out $(CHECK_ORDER) $(CHECK_LAST),$(CHECK_ALL)) $(filter $(CHECK_ALL),$(CHECK_LAST)))
CHECK_DEPS  := $(TESTS) $(BUILD)/kforge $(BUILD)/fuzz_replay $(BUILD)/tests/kforge-tile $(BUILD)/strat_bench
# make -jN check: the N jobs of the make that runs it, else CHECK_JOBS
CHECK_J      = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS))
CHECK_ONE   := PATH=$(CHECK_BIN):$$PATH TMPDIR=$(CHECK_TMP) KFORGE_TEST_CACHE=$(CHECK_CACHE) KFORGE=$(BUILD)/kforge KFORGE_TILE=$(BUILD)/tests/kforge-tile STRAT_BENCH=$(abspath $(BUILD))/strat_bench CUDA=$(CUDA) \
               sh tests/check_one.sh
.PHONY: check-build check-run $(CHECK_RUN)
check-build: $(CHECK_DEPS)
	@:
check:
	@$(MAKE) --no-print-directory $(CHECK_J) check-build
	@rm -rf $(CHECK_TMP) $(CHECK_LOG) $(CHECK_CACHE) $(CHECK_BIN) && mkdir -p $(CHECK_TMP) $(CHECK_LOG) $(CHECK_BIN); \
	py=$$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null); \
	if [ -n "$$py" ] && [ -x "$$py" ]; then \
	  printf '#!/bin/sh\nexec "%s" "$$@"\n' "$$py" > $(CHECK_BIN)/python3 && chmod +x $(CHECK_BIN)/python3; fi; \
	t0=$$(date +%s); \
	{ $(MAKE) --no-print-directory -Otarget $(CHECK_J) check-run; echo $$? >$(CHECK_LOG)/.rc; } 2>&1 | \
	  tee $(CHECK_LOG)/.summary; \
	fail=$$(cat $(CHECK_LOG)/.rc); [ -z "$$(ls $(CHECK_LOG) | grep '\.failed$$')" ] || fail=1; \
	if [ $$fail = 0 ] && [ -n "$$(ls -A $(CHECK_TMP))" ]; then \
	  echo "FAIL make check left files in $(CHECK_TMP) (TMPDIR): $$(ls -A $(CHECK_TMP) | tr '\n' ' ')"; fail=1; \
	elif [ $$fail = 0 ]; then rmdir $(CHECK_TMP); rm -rf $(CHECK_CACHE); fi; \
	awk -v s=$$(( $$(date +%s) - t0 )) -v fail=$$fail '$$1 ~ /^(ok|SKIP|FAIL)$$/ && $$4 == "passed" { \
	    n++; p += $$3; f += $$5; k += $$7; if ($$1 == "FAIL") bad++ } \
	  END { printf "%s make check: %d of %d passed (checks: %d passed, %d failed, %d skipped) in %d s; logs in %s\n", \
	        fail ? "FAIL" : "ok  ", n - bad, n, p, f, k, s, "$(CHECK_LOG)" }' $(CHECK_LOG)/.summary; \
	[ $$fail = 0 ]
# A failure leaves NAME.failed (make carries on, and prints no error of its own).
check-run: $(CHECK_RUN)
$(filter check-run-test_%,$(CHECK_RUN)): check-run-test_%:
	@$(CHECK_ONE) test_$* $(CHECK_LOG) $(BUILD)/tests/test_$* || touch $(CHECK_LOG)/test_$*.failed
$(filter check-run-%_suite,$(CHECK_RUN)): check-run-%_suite:
	@$(CHECK_ONE) $*_suite $(CHECK_LOG) sh tests/$*_suite.sh || touch $(CHECK_LOG)/$*_suite.failed
check-run-fuzz_replay:
	@$(CHECK_ONE) fuzz_replay $(CHECK_LOG) sh -c '$(BUILD)/fuzz_replay tests/fuzz/regressions/* tests/fuzz/corpus/*' || \
	  touch $(CHECK_LOG)/fuzz_replay.failed
test: check

bench: $(BUILD)/kforge
	sh tools/bench.sh

bench-cub: $(BUILD)/kforge
	sh tools/bench_cub.sh

bench-rows: $(BUILD)/kforge
	KFORGE=$(BUILD)/kforge sh tools/bench_rows.sh

bench-tune: $(BUILD)/kforge
	KFORGE=$(BUILD)/kforge sh tools/tune_bench.sh

# issue 36's real target: the default search (--time 15, cold) against the
# exhaustive optimum on this GPU; KT=DIR holds Kernel Tuner's convolution.cu
# (its examples/cuda); QUICK=1: seed 1 only
bench-real: $(BUILD)/kforge
	KFORGE=$(BUILD)/kforge sh tools/real_target.sh $(if $(KT),--kt $(KT)) $(if $(QUICK),--quick)

# kforge's search strategies replayed on recorded spaces (CPU only): see
# tools/bench_strategies.sh (SEEDS=, BUDGETS=, HUB=, OUT=).
$(BUILD)/strat_bench: tools/strat_bench.c $(BUILD)/libkforge.a
	$(CC) $(CFLAGS) $< $(BUILD)/libkforge.a $(LDFLAGS) $(LDLIBS) -o $@

bench-strategies: $(BUILD)/strat_bench
	STRAT_BENCH=$(BUILD)/strat_bench sh tools/bench_strategies.sh

# The binary, its man page and completion, and what the man page's EXAMPLES
# use: the configs, tools/plot.sh (which finds plot.py next to itself), the
# Slurm job array and the program built against an exported header.
install: $(BUILD)/kforge
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/share/kforge/configs $(DESTDIR)$(PREFIX)/share/kforge/tools
	install -m 755 $(BUILD)/kforge $(DESTDIR)$(PREFIX)/bin/kforge
	install -m 644 man/kforge.1 $(DESTDIR)$(PREFIX)/share/man/man1/kforge.1
	install -m 644 completion/kforge.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kforge
	install -m 644 configs/*.json $(DESTDIR)$(PREFIX)/share/kforge/configs/
	install -m 755 tools/plot.sh $(DESTDIR)$(PREFIX)/share/kforge/tools/plot.sh
	install -m 644 tools/plot.py $(DESTDIR)$(PREFIX)/share/kforge/tools/plot.py
	install -m 755 tools/slurm-tune.sbatch $(DESTDIR)$(PREFIX)/share/kforge/tools/slurm-tune.sbatch
	install -m 755 tools/slurm-compile.sbatch $(DESTDIR)$(PREFIX)/share/kforge/tools/slurm-compile.sbatch
	install -m 644 tools/export_example.cu $(DESTDIR)$(PREFIX)/share/kforge/tools/export_example.cu
	install -m 644 tools/export_rows_example.cu $(DESTDIR)$(PREFIX)/share/kforge/tools/export_rows_example.cu

# Fuzzing (clang libFuzzer) and valgrind runs of the CPU side (issue 5).
.PHONY: valgrind
FUZZ_SRC  := tests/fuzz_config.c src/core/config.c src/core/t1.c src/core/expr.c src/core/space.c src/core/param.c \
             src/core/family.c src/core/kforge.c src/core/util.c src/core/stats.c src/core/key.c src/core/cli.c src/core/ranges.c \
             src/compile/codegen.c \
             src/compile/rtc.c src/compile/deps.c \
             $(wildcard src/families/*/*.c) \
             src/exec/bench.c src/exec/buffers.c src/exec/checks.c src/exec/energy_gpu.c src/exec/inputs.c \
             src/exec/module.c src/exec/reference.c src/exec/runner.c src/exec/timing.c \
             src/exec/energy.c src/exec/outcheck.c src/exec/data.c src/exec/datashare.c src/exec/launch.c src/exec/gpu.c \
             src/exec/nvml.c src/exec/leave.c
FUZZ_TIME ?= 600
VALGRIND  := valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
             --errors-for-leak-kinds=definite,indirect
$(BUILD)/fuzz_config: $(FUZZ_SRC) $(BUILD)/gen/templates.c
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -std=c11 -D_GNU_SOURCE \
	  $(INCLUDES) -isystem $(CUDA)/include $^ -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64 -lcjson -lnvrtc -ldl -lm -lpthread -o $@
$(BUILD)/fuzz_replay: tests/fuzz_replay.c $(FUZZ_SRC) $(BUILD)/gen/templates.c
	$(CC) -g -O1 -std=c11 -D_GNU_SOURCE $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-sanitize-recover=all) \
	  $(INCLUDES) -isystem $(CUDA)/include $^ -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64 -lcjson -lnvrtc -ldl -lm -lpthread -o $@
fuzz: $(BUILD)/fuzz_config
	$(BUILD)/fuzz_config tests/fuzz/regressions/*
	mkdir -p $(BUILD)/fuzz-corpus && cp tests/fuzz/corpus/* $(BUILD)/fuzz-corpus/
	$(BUILD)/fuzz_config -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
	  -dict=tests/fuzz/config.dict -artifact_prefix=$(BUILD)/ $(BUILD)/fuzz-corpus
valgrind: $(BUILD)/kforge $(BUILD)/fuzz_replay $(TESTS)
	$(VALGRIND) $(BUILD)/fuzz_replay tests/fuzz/regressions/* tests/fuzz/corpus/*
	for t in $(filter-out %/test_codegen %/test_rtc %/test_export,$(TESTS)); do CK_FORK=no $(VALGRIND) $$t || exit 1; done
	$(VALGRIND) $(BUILD)/kforge check configs/seeds.json configs/fast.json > /dev/null
	$(VALGRIND) $(BUILD)/kforge gen configs/seeds.json > /dev/null
	d=$$(mktemp -d) && export KFORGE_CACHE_DIR=$$d/cache KFORGE_FAKE_GPU=1 && \
	  $(BUILD)/kforge run configs/fast.json --no-results --quiet > /dev/null && \
	  $(VALGRIND) $(BUILD)/kforge run configs/fast.json --results $$d/r.jsonl --quiet > /dev/null; \
	  rc=$$?; rm -rf $$d; exit $$rc

clean:
	rm -rf build build-san

-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d $(BUILD)/tests/*.d)
