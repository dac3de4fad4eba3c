package steps

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// ConfigUpgradeResult is what `custody config upgrade` reports.
type ConfigUpgradeResult struct {
	// Path is custody.toml's path.
	Path string `json:"path"`
	// Present is false when there is no custody.toml: nothing to upgrade.
	Present bool `json:"present"`
	// Version is the version the file has after the upgrade.
	Version int `json:"version"`
	// Changed says whether the file needs rewriting (or needed it, when
	// Written).
	Changed bool `json:"changed"`
	// Written says whether the rewritten file was written (--write).
	Written bool `json:"written"`
	// Changes say what is rewritten, one line each, in document order.
	Changes []string `json:"changes"`
	// Diff is the rewrite as a unified diff of the file (a/custody.toml,
	// b/custody.toml); "" when nothing changes.
	Diff string `json:"diff,omitempty"`
	// Digest is the sha256 of the rewritten content: what custody trust
	// approves.
	Digest string `json:"digest,omitempty"`
	// NeedsApproval says whether the rewritten file declares commands, so
	// custody runs none of them until its new content is approved
	// (custody trust): an upgrade changes the bytes, and approval is of
	// the exact bytes.
	NeedsApproval bool `json:"needs_approval"`
}

// Pending reports nothing pending: the upgrade was shown, or written.
func (ConfigUpgradeResult) Pending() bool { return false }

// ErrConfigChanged is returned when custody.toml changed between the read
// that custody config upgrade rewrote and the write: nothing was written.
var ErrConfigChanged = errors.New("custody.toml changed while it was being upgraded; nothing was written")

// UpgradeConfig rewrites repo's custody.toml to the current format
// (observe.UpgradeConfig): it returns the diff and, when write is set,
// writes the rewritten file durably (WriteFile) with the mode it had. It
// writes only when the file still holds exactly the bytes it rewrote. The
// rewritten file is new content: custody runs its commands only once it is
// approved (custody trust), as any change. Running it again on an upgraded
// file changes nothing.
func UpgradeConfig(repo hostio.Repo, write bool) (ConfigUpgradeResult, error) {
	path := filepath.Join(repo.MainCheckout, machine.ConfigFile)
	res := ConfigUpgradeResult{Path: path, Version: machine.ConfigVersion, Changes: []string{}}
	old, err := safefile.Read(path, observe.MaxConfigSize)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("%w: %s cannot be read (custody reads only a regular file of at most %d bytes there): %w", observe.ErrConfig, path, observe.MaxConfigSize, err)
	}
	res.Present = true
	up, err := observe.UpgradeConfig(path, old)
	if err != nil {
		return res, err
	}
	cfg, err := observe.ParseConfig(path, up.New, filepath.Base(repo.MainCheckout))
	if err != nil {
		return res, err
	}
	sum := sha256.Sum256(up.New)
	res.Digest = hex.EncodeToString(sum[:])
	res.NeedsApproval = needsApproval(cfg)
	if bytes.Equal(up.New, old) {
		return res, nil
	}
	res.Changed, res.Changes = true, up.Changes
	res.Diff = upgradeDiff(old, up)
	if !write {
		return res, nil
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrConfigChanged, err)
	}
	f, err := CreateFile(path, fi.Mode().Perm())
	if err != nil {
		return res, err
	}
	defer f.Abort()
	if _, err := f.Write(up.New); err != nil {
		return res, err
	}
	// The rewrite is of the bytes read: a file edited since keeps its
	// edit (the check narrows the window; the rename closes none).
	if now, err := safefile.Read(path, observe.MaxConfigSize); err != nil || !bytes.Equal(now, old) {
		return res, fmt.Errorf("%w: %s", ErrConfigChanged, path)
	}
	if err := f.Commit(); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}

// diffContext is the lines of context around each change in a diff.
const diffContext = 3

// upgradeDiff is the unified diff (git's form, 3 lines of context) of the
// file old and its upgrade up. An upgrade rewrites lines in place and
// inserts lines at one place only (ConfigUpgrade), so the diff is read off
// that, exactly and in linear time, instead of searched for.
func upgradeDiff(old []byte, up observe.ConfigUpgrade) string {
	a := strings.SplitAfter(string(old), "\n")
	b := strings.SplitAfter(string(up.New), "\n")
	if len(a) > 0 && a[len(a)-1] == "" {
		a = a[:len(a)-1]
	}
	if len(b) > 0 && b[len(b)-1] == "" {
		b = b[:len(b)-1]
	}
	// oldOf[j] is the line of old that new line j stands for, -1 for an
	// inserted line.
	oldOf := make([]int, len(b))
	changed := make([]bool, len(b))
	for j := range b {
		switch {
		case j >= up.InsertedAt && j < up.InsertedAt+up.Inserted:
			oldOf[j], changed[j] = -1, true
		case j < up.InsertedAt:
			oldOf[j] = j
		default:
			oldOf[j] = j - up.Inserted
		}
		if i := oldOf[j]; i >= 0 {
			changed[j] = i >= len(a) || a[i] != b[j]
		}
	}
	var out strings.Builder
	out.WriteString("--- a/" + machine.ConfigFile + "\n+++ b/" + machine.ConfigFile + "\n")
	for j := 0; j < len(b); {
		if !changed[j] {
			j++
			continue
		}
		// A hunk: from diffContext lines before this change to
		// diffContext lines after the last change it reaches.
		start, end := max(j-diffContext, 0), j
		for k := j; k < len(b) && k < end+diffContext*2+1; k++ {
			if changed[k] {
				end = k
			}
		}
		end = min(end+diffContext, len(b)-1)
		oldStart, oldCount, newCount := -1, 0, end-start+1
		for k := start; k <= end; k++ {
			if oldOf[k] >= 0 {
				if oldStart < 0 {
					oldStart = oldOf[k]
				}
				oldCount++
			}
		}
		if oldStart < 0 {
			oldStart = max(oldOf[max(start-1, 0)], 0)
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(oldStart, oldCount), hunkRange(start, newCount))
		for k := start; k <= end; {
			if !changed[k] {
				diffLine(&out, ' ', b[k])
				k++
				continue
			}
			run := k
			for run <= end && changed[run] {
				run++
			}
			for m := k; m < run; m++ {
				if oldOf[m] >= 0 {
					diffLine(&out, '-', a[oldOf[m]])
				}
			}
			for m := k; m < run; m++ {
				diffLine(&out, '+', b[m])
			}
			k = run
		}
		j = end + 1
	}
	return out.String()
}

// hunkRange is a hunk header's "start,count" of 0-based line start.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// diffLine writes line with its mark, and says so when it has no newline.
func diffLine(out *strings.Builder, mark byte, line string) {
	out.WriteByte(mark)
	out.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		out.WriteString("\n\\ No newline at end of file\n")
	}
}
