# custody's recipes; `go` is the only tool inside.

# Build the custody binary into ./custody: without cgo, statically linked (decision 0153).
build:
    CGO_ENABLED=0 go build -o custody ./cmd/custody

# Run the whole test suite (the README's test command, and what CI runs).
test:
    go test ./...

# Time `custody new`, `plan` and `apply` on a fleet of realistic worktrees (2,050 files each) at
# 25/100/400 trees against raw git (the floor script, `git worktree add -b`, a bare
# `git worktree remove` loop) and plan against an lstat of every entry of every tree (one `find`):
# wall and CPU ratios and git processes per tree. Under ten minutes;
# CUSTODY_BENCH_MAX=1000 just bench adds 1,000 trees, CUSTODY_BENCH_MAX=25 is a quick look.
# Then `custody list` beside `git worktree list` and one `git status` per tree (bench-list), and
# plan on a real project's history (~950 advertised refs) against the floor script (bench-history).
bench:
    go test ./cmd/custody/ -run '^$' -bench Fleet -benchtime 3x -timeout 60m
    go test ./cmd/custody/ -run '^$' -bench 'List$' -benchtime 5x -timeout 60m
    go test ./cmd/custody/ -run '^$' -bench '^BenchmarkRealHistory$' -benchtime 3x -timeout 60m

# Time `custody plan` on a repository shaped like a real public project's (~3,200 commits with
# merges, ~950 advertised branches and tags, a 2,000-file checkout; built by `git fast-import`)
# with 25 managed trees in mixed states (CUSTODY_BENCH_MAX=100 adds 100) against the floor script
# and an lstat of every tree, interleaved: wall and CPU ratios and git processes per tree
# (target ≤ 1.2× the floor script). About a minute.
bench-history:
    go test ./cmd/custody/ -run '^$' -bench '^BenchmarkRealHistory$' -benchtime 3x -timeout 60m

# Run every fuzz target for a short while (FUZZTIME=1m just fuzz for longer).
fuzz fuzztime="20s":
    go test ./observe/gitfiles/ -run '^$' -fuzz '^FuzzParseWorktreeList$' -fuzztime {{fuzztime}}
    go test ./observe/ -run '^$' -fuzz '^FuzzParseStatus$' -fuzztime {{fuzztime}}
    go test ./observe/proof/ -run '^$' -fuzz '^FuzzParseLsRemote$' -fuzztime {{fuzztime}}
    go test ./observe/gitfiles/ -run '^$' -fuzz '^FuzzParseLsFiles$' -fuzztime {{fuzztime}}
    go test ./observe/gitfiles/ -run '^$' -fuzz '^FuzzParseIndex$' -fuzztime {{fuzztime}}
    go test ./observe/proof/ -run '^$' -fuzz '^FuzzParsePatchIDs$' -fuzztime {{fuzztime}}
    go test ./observe/ -run '^$' -fuzz '^FuzzParseProcStat$' -fuzztime {{fuzztime}}
    go test ./observe/ -run '^$' -fuzz '^FuzzParseConfig$' -fuzztime {{fuzztime}}
    go test ./machine/ -run '^$' -fuzz '^FuzzSlug$' -fuzztime {{fuzztime}}
    go test ./machine/ -run '^$' -fuzz '^FuzzParsePlan$' -fuzztime {{fuzztime}}
    go test ./store/ -run '^$' -fuzz '^FuzzVerify$' -fuzztime {{fuzztime}}
    go test ./store/ -run '^$' -fuzz '^FuzzOpenStore$' -fuzztime {{fuzztime}}
    go test ./observe/proof/tests/remotes/ -run '^$' -fuzz '^FuzzLocalRemotePath$' -fuzztime {{fuzztime}}
    go test ./observe/proof/tests/remotes/ -run '^$' -fuzz '^FuzzParseAlternates$' -fuzztime {{fuzztime}}
    go test ./machine/ -run '^$' -fuzz '^FuzzAccountContent$' -fuzztime {{fuzztime}}
    go test ./machine/ -run '^$' -fuzz '^FuzzFreeze$' -fuzztime {{fuzztime}}
    go test ./machine/ -run '^$' -fuzz '^FuzzRedactCredentials$' -fuzztime {{fuzztime}}
    go test ./steps/agents/ -run '^$' -fuzz '^FuzzEditCodexEnvironment$' -fuzztime {{fuzztime}}
    go test ./observe/ -run '^$' -fuzz '^FuzzParseLsof$' -fuzztime {{fuzztime}}
    go test ./machine/ -run '^$' -fuzz '^FuzzParseHookPayload$' -fuzztime {{fuzztime}}
    go test ./cmd/custody/ -run '^$' -fuzz '^FuzzFastHook$' -fuzztime {{fuzztime}}
    go test ./observe/gitfiles/ -run '^$' -fuzz '^FuzzParseGitFile$' -fuzztime {{fuzztime}}
    go test ./observe/ -run '^$' -fuzz '^FuzzParseStatusBranch$' -fuzztime {{fuzztime}}
    go test ./observe/ -run '^$' -fuzz '^FuzzParseRevListParents$' -fuzztime {{fuzztime}}
    go test ./observe/gitfiles/ -run '^$' -fuzz '^FuzzParseUpstreams$' -fuzztime {{fuzztime}}
    go test ./machine/ -run '^$' -fuzz '^FuzzParseRepositoryIndex$' -fuzztime {{fuzztime}}

# Formatting and vet; run before every commit.
lint:
    test -z "$(gofmt -l .)"
    go vet ./...

# Module tidiness and generated docs are current.
verify:
    go mod tidy -diff
    go test ./machine/ -run TestDocsFresh
    go test ./cmd/custody/ -run 'TestCLIDocsFresh|TestSchemasFresh'

# Vet and build for the other systems custody supports (darwin) or must
# compile on (windows), as CI does: a linux-only call breaks this.
cross:
    GOOS=darwin GOARCH=arm64 go vet ./...
    GOOS=darwin go build ./...
    GOOS=windows go vet ./...

# What tombstones cost: list, show, plan, doctor, journal export and verify on a repository with
# a few live trees, then again once its state file holds 3,000 records (10,000 under
# CUSTODY_TEST_FULL=1): wall, CPU, peak RSS and their ratios. Growing the file takes minutes.
bench-scale:
    go test ./cmd/custody/ -run '^$' -bench '^BenchmarkScale$' -benchtime 1x -timeout 60m

# Time journal export, verify and report (of the export and of the live journal) on a journal of a
# million entries the store writes (CUSTODY_BENCH_JOURNAL_ENTRIES sets another size): wall, CPU
# and peak RSS (target: verify and report under 64 MiB). About twelve minutes.
bench-journal:
    go test ./cmd/custody/ -run '^$' -bench '^BenchmarkJournal$' -benchtime 1x -timeout 60m

# Time a session hook (heartbeat, session-start) on a repository of 100 trees against a bare
# `git rev-parse --show-toplevel` in the same tree, alternately: wall and CPU ratios (target ≤ 2×
# wall), then one line naming both hooks with both ratios and the machine's load average.
bench-hook:
    go test ./cmd/custody/ -run '^$' -bench Hook -benchtime 200x

# Time `custody list` beside `git worktree list` and one `git status --porcelain` per tree on a
# fleet of realistic trees at 25 and 100 trees (CUSTODY_TEST_FULL=1 adds 400 and 1,000;
# CUSTODY_BENCH_LIST_MAX names the largest): wall and CPU ratios and git processes per tree.
bench-list:
    go test ./cmd/custody/ -run '^$' -bench 'List$' -benchtime 5x -timeout 60m

# Time `custody new` alone beside `git worktree add -b` as a fleet of realistic trees grows to
# 1,000 (CUSTODY_BENCH_MAX lowers the top).
bench-new:
    go test ./cmd/custody/ -run '^$' -bench NewAtScale -benchtime 1x -timeout 60m

# Run the whole test suite with the large randomized and cost-growth tests at
# their full size (CUSTODY_TEST_FULL=1); it takes far longer than `just test`.
test-full:
    CUSTODY_TEST_FULL=1 go test -timeout 60m ./...
