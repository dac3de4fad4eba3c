package resource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/steps"
)

// writeEnv merges the lines custody owns (machine.DotenvLines: the id,
// CUSTODY_PORT and the ledger's handles) into the worktree's .env, replacing only lines that set a key
// custody writes and leaving every other line as it was, and makes sure git
// ignores the file. A .env that git tracks is left alone. The file is
// replaced atomically, so a kill never loses the user's lines.
func writeEnv(ctx context.Context, e *steps.Env, rec machine.Record) error {
	rs, err := e.LiveResources(rec.ID)
	if err != nil || len(rs) == 0 {
		return err
	}
	if _, err := e.Git.Observe(ctx, rec.Path, "ls-files", "--error-unmatch", "--", ".env"); err == nil {
		return nil // tracked: custody does not edit a tracked file
	}
	own := machine.DotenvLines(rec, rs)
	keys := map[string]bool{}
	for _, l := range own {
		k, _, _ := strings.Cut(l, "=")
		keys[k] = true
	}
	path := filepath.Join(rec.Path, ".env")
	var lines []string
	if b, err := safefile.Read(path, observe.EnvFileLimit); err == nil {
		for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			if k, _, _ := strings.Cut(l, "="); !keys[k] && l != "" {
				lines = append(lines, l)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	lines = append(lines, own...)
	if err := steps.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if _, err := e.Git.Observe(ctx, rec.Path, "check-ignore", "-q", "--", ".env"); err != nil {
		if _, err := steps.AppendExclude(e.Repo.CommonDir, "/.env", "custody's per-worktree resource handles"); err != nil {
			return err
		}
	}
	return nil
}
