package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/sweep"
)

// SweepCmd discards the build output of idle trees and archives finished
// work, unattended; it never removes a tree.
type SweepCmd struct {
	Idle           time.Duration `name:"idle" default:"24h" help:"How long nothing in a tree may have changed (and no lease or process held it) for the tree to count as idle."`
	DryRun         bool          `name:"dry-run" help:"Say what sweep would discard and archive, and the bytes it would free; change nothing."`
	MaxArchiveSize archiveSize   `name:"max-archive-size" default:"1GiB" help:"Archive a tree only when its changed, untracked and ignored files (build output left out) hold at most this many bytes (e.g. 500MiB, 2GiB, 0 for no bound)."`
	InstallTimer   bool          `name:"install-timer" xor:"timer" help:"Write a daily timer that runs this sweep (a systemd user timer on Linux, a launchd agent on macOS), print where it went, and sweep nothing."`
	UninstallTimer bool          `name:"uninstall-timer" xor:"timer" help:"Remove the timer --install-timer wrote for this repository, and sweep nothing."`
}

// Help is the long help of sweep.
func (SweepCmd) Help() string {
	return `Keeps a fleet's disks in check without removing anything. A tree is idle when
no session holds a live lease on it, no process stands in it or holds a file
there open, and no file or directory in it changed for --idle (24h). For each
idle tree, sweep discards the build output plan recognises by its structure
(Cargo target/, node_modules/ beside a tracked lockfile, Python virtualenvs
and bytecode, Flutter output, directories with a CACHEDIR.TAG, and the
[cleanup] disposable patterns of an approved custody.toml). Just before it
deletes, it looks at the tree again: the directory must still be that build
output, and no lease or process may have come; it then deletes entry by
entry what a walk found just before that look, each only while it is
unchanged, so a file written into the directory meanwhile stays. Each
deletion is journaled: an intent entry (path, kind, bytes) before, and what
was freed and kept after.

An idle tree that is finished, or whose agent's lease expired, and that plan
keeps only for work no remote holds (commits, changed, untracked or ignored
files, nested repositories) is archived as custody archive create does, when
that work fits in --max-archive-size; plan then removes it on the archive's
proof. sweep never removes a tree and changes no record's state (an archive
is a record of its own).

--install-timer writes a daily timer for this repository (on Linux
$XDG_CONFIG_HOME/systemd/user/custody-sweep-<id>.service and .timer, on macOS
~/Library/LaunchAgents/sh.custody.sweep-<id>.plist), plain files that run
custody -C <main checkout> sweep; it prints where they went and the command
that starts the timer. --uninstall-timer removes them. Neither overwrites or
removes a file custody did not write.

EXIT STATUS: 0 done (busy trees are not a failure); 1 an error; 3 an archive
sweep tried was refused.`
}

// archiveSize is a size in bytes given with an optional binary unit.
type archiveSize int64

// UnmarshalText reads "1048576", "500MiB", "2G", "0".
func (s *archiveSize) UnmarshalText(b []byte) error {
	n, err := parseSize(string(b))
	if err != nil {
		return err
	}
	*s = archiveSize(n)
	return nil
}

// parseSize reads a byte count with an optional unit: B, K/KiB, M/MiB,
// G/GiB, T/TiB (KB, MB, GB and TB are read as the binary units too).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a size: give a number of bytes with an optional unit (500MiB, 2GiB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: %w", s, err)
	}
	shift := map[string]uint{"": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20,
		"g": 30, "gb": 30, "gib": 30, "t": 40, "tb": 40, "tib": 40}
	sh, ok := shift[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%q is not a size: the unit must be B, KiB, MiB, GiB or TiB", s)
	}
	if n > (1<<63-1)>>sh {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n << sh, nil
}

// Run sweeps, or installs or removes the timer.
func (c *SweepCmd) Run(a *App) error {
	if c.InstallTimer || c.UninstallTimer {
		return c.timer(a)
	}
	if c.Idle <= 0 {
		return fmt.Errorf("--idle %s: give a positive duration (24h, 90m)", c.Idle)
	}
	env := a.mutatingEnv
	if c.DryRun {
		env = func() (*steps.Env, error) { return a.env(false) }
	}
	e, err := env()
	if err != nil {
		return err
	}
	res, err := sweep.Sweep(a.Ctx, e, sweep.Options{Idle: c.Idle, DryRun: c.DryRun, MaxArchiveSize: int64(c.MaxArchiveSize)})
	if err != nil {
		return err
	}
	a.done(sweepResult{res}, func(w io.Writer) { renderSweep(w, res) })
	return nil
}

// timer installs or removes the sweep timer of the repository.
func (c *SweepCmd) timer(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	sched, ok := sweep.SchedulerFor(runtime.GOOS)
	if !ok {
		return fmt.Errorf("custody writes sweep timers for systemd (Linux) and launchd (macOS), not for %s: schedule %s daily with this system's scheduler",
			runtime.GOOS, machine.CommandOn([]string{"custody", "-C", e.Repo.MainCheckout}, "sweep"))
	}
	var t sweep.Timer
	if c.InstallTimer {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("the path of this custody binary: %w", err)
		}
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		t, err = sweep.InstallTimer(e, sched, exe, os.Getenv)
		if err != nil {
			return err
		}
	} else if t, err = sweep.UninstallTimer(e, sched, os.Getenv); err != nil {
		return err
	}
	a.done(t, func(w io.Writer) {
		verb := "wrote"
		switch {
		case c.InstallTimer && !t.Changed:
			verb = "already there"
		case c.UninstallTimer && t.Changed:
			verb = "removed"
		case c.UninstallTimer:
			fmt.Fprintln(w, "no sweep timer of this repository was installed")
			return
		}
		for _, f := range t.Files {
			fmt.Fprintf(w, "%s %s\n", verb, machine.EscapeControl(f))
		}
		if c.InstallTimer {
			fmt.Fprintf(w, "next: %s\n", t.Next)
		} else {
			fmt.Fprintf(w, "if the timer was started, stop it: %s\n", t.Next)
		}
	})
	return nil
}

// sweepResult is sweep's --json result: exit 3 when an archive it tried
// was refused.
type sweepResult struct{ sweep.Result }

// Pending reports an archive sweep tried and was refused.
func (r sweepResult) Pending() bool {
	for _, t := range r.Trees {
		if t.ArchiveRefusal != nil {
			return true
		}
	}
	return false
}

// renderSweep prints a sweep: one line a tree, then the totals.
func renderSweep(w io.Writer, res sweep.Result) {
	idle := 0
	for _, t := range res.Trees {
		id := machine.EscapeControl(t.ID)
		if !t.Idle {
			fmt.Fprintf(w, "left %s: %s\n", id, t.Why)
			continue
		}
		idle++
		var parts []string
		for _, d := range t.Discard {
			if res.DryRun {
				parts = append(parts, fmt.Sprintf("would discard %s (%s, %s)", machine.EscapeControl(d.Path), d.Kind, byteSize(d.Bytes)))
			}
		}
		for _, d := range t.Discarded {
			switch {
			case d.Skipped != "":
				parts = append(parts, fmt.Sprintf("kept %s: %s", machine.EscapeControl(d.Path), d.Skipped))
			case len(d.Kept) > 0:
				parts = append(parts, fmt.Sprintf("discarded %s (%s, %s freed; %d entries written since the check kept)", machine.EscapeControl(d.Path), d.Kind, byteSize(d.Freed), len(d.Kept)))
			default:
				parts = append(parts, fmt.Sprintf("discarded %s (%s, %s freed)", machine.EscapeControl(d.Path), d.Kind, byteSize(d.Freed)))
			}
		}
		switch {
		case t.Archive && res.DryRun:
			parts = append(parts, "would archive its unpublished work")
		case t.ArchiveID != "":
			parts = append(parts, "archived as "+machine.EscapeControl(t.ArchiveID))
		case t.ArchiveRefusal != nil:
			parts = append(parts, "not archived (below)")
		case t.ArchiveWhy != "":
			parts = append(parts, "not archived: "+t.ArchiveWhy)
		}
		if len(parts) == 0 {
			parts = []string{"nothing to discard"}
		}
		fmt.Fprintf(w, "idle %s: %s\n", id, strings.Join(parts, "; "))
		if t.ArchiveRefusal != nil {
			writeRefusal(w, "not archived "+id, t.ArchiveRefusal)
		}
	}
	verb, arch := "freed", "archived"
	if res.DryRun {
		verb, arch = "would free", "would archive"
	}
	fmt.Fprintf(w, "%d trees, %d idle: %s %s, %s %d\n", len(res.Trees), idle, verb, byteSize(res.Bytes), arch, res.Archived)
}
