#!/usr/bin/env bash
# The floor `custody list` is measured against (BenchmarkList): what a
# person would type to see the state of every worktree of the repository
# in $1: `git worktree list --porcelain`, then `git status --porcelain` in
# each linked tree, one after the other, output discarded.
set -euo pipefail
cd "$1"
first=1
while IFS= read -r -d '' line; do
	case $line in
	"worktree "*)
		if [ "$first" = 1 ]; then
			first=0 # the main checkout
			continue
		fi
		git -C "${line#worktree }" status --porcelain >/dev/null
		;;
	esac
done < <(git worktree list --porcelain -z)
